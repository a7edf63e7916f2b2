"""The live monitor in the arena report (issue 46, part 5): ``arena_diagnose(monitor=)`` and
``llm-power arena --monitor BATTLES [--order COLUMN]``.

Oracles: ``monitor_battles`` run directly on the same battles (the report must show that state), the
fixed-n fit of the same battles (at the end of the stream the monitor's gap is the fixed-n gap and its
anytime interval contains the fixed-n interval: the monitor never decides a pair the fixed-n test does
not reject), and the decision rule itself (a pair is decided exactly when its printed interval leaves
out 0).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import llm_power as lp

from .._cli import run


def _log(n: int, seed: int, *, models: int = 6, reverse: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.9, -0.9, models)[::-1 if reverse else 1]  # reversed: the pairs join worst first
    i = rng.integers(0, models, n)
    j = (i + rng.integers(1, models, n)) % models
    prompt = rng.integers(0, n // 5, n)
    p = 1 / (1 + np.exp(-(skill[i] - skill[j])))
    names = [f"model-{k}" for k in range(models)]
    return pd.DataFrame({"model_a": np.take(names, i), "model_b": np.take(names, j),
                         "winner": np.where(rng.random(n) < p, "model_a", "model_b"), "prompt": prompt,
                         "time": rng.permutation(n)})


@pytest.mark.parametrize(("cluster", "reverse"), [(None, False), ("prompt", True)])
def test_the_report_shows_the_monitors_state_and_never_decides_what_the_fixed_n_test_does_not(
        cluster: str | None, reverse: bool) -> None:
    log = _log(6000, 1, reverse=reverse)
    diag = lp.arena_diagnose(log, cluster=cluster, pairs="all", monitor=1000)
    units = len(log) if cluster is None else log["prompt"].nunique()
    ref = lp.monitor_battles(log, batch=1000, cluster=cluster, tuned_for=units)
    mon = diag.monitor
    assert mon.looks == ref.looks == 6 and mon.decided == ref.decided
    np.testing.assert_array_equal(mon.columns["e_value"], ref.columns["e_value"])
    from llm_power.report.arena import monitor_rows

    rows = monitor_rows(diag)
    c = mon.columns
    where = {(a, b): k for k, (a, b) in enumerate(zip(c["model_a"], c["model_b"], strict=True))}
    test = "cluster" if cluster else ""
    for row, a, b, gap, lo, hi in zip(rows, diag.columns["model_a"], diag.columns["model_b"], diag.columns["gap_elo"],
                                      diag.columns[f"{test}_elo_ci_low".lstrip("_")],
                                      diag.columns[f"{test}_elo_ci_high".lstrip("_")], strict=True):
        k, sign = (where[a, b], 1.0) if (a, b) in where else (where[b, a], -1.0)
        m_lo, m_hi = sorted((sign * c["elo_ci_low"][k], sign * c["elo_ci_high"][k]))
        # at the end of the stream the monitor's fit is the fixed-n fit of all the battles
        assert sign * c["estimate_elo"][k] == pytest.approx(gap, abs=1e-6)
        # one verdict: decided exactly when the printed interval leaves out 0, in the direction printed
        decided = bool(c["decided"][k])
        assert decided == (m_lo > 0 or m_hi < 0) == (row[5] != "undecided")
        if decided:
            assert row[5] == ("A better" if m_lo > 0 else "B better")
        shown = [float(v) for v in row[3].strip("[]").replace("−", "-").split(", ")]
        assert shown == pytest.approx([m_lo, m_hi], abs=0.5)  # the printed interval is A − B's
        # never looser than the fixed-n test: the anytime interval contains the fixed-n one
        assert m_lo <= lo + 1e-9 and m_hi >= hi - 1e-9
    assert any(r[5] != "undecided" for r in rows)
    assert reverse == any((b, a) in where for a, b in zip(diag.columns["model_a"], diag.columns["model_b"],
                                                          strict=True))  # both orientations are exercised


def test_a_given_state_must_be_of_these_battles() -> None:
    log = _log(3000, 2)
    state = lp.monitor_battles(log.iloc[:2000], batch=500)
    with pytest.raises(lp.DataError, match="saw 2,000 battles, the report has 3,000"):
        lp.arena_diagnose(log, monitor=state)
    same = lp.monitor_battles(log, batch=500)
    assert lp.arena_diagnose(log, monitor=same).monitor is same
    with pytest.raises(ValueError, match="without them"):
        lp.arena_diagnose(log.assign(x=1.0), monitor=500, covariates=["x"])
    with pytest.raises(ValueError, match="monitor"):
        lp.arena_diagnose(log, monitor=0)


def test_the_arena_command_replays_the_log_in_its_arrival_order(tmp_path: object) -> None:
    log = _log(4000, 3)
    path = tmp_path / "votes.csv"  # type: ignore[operator]
    log.to_csv(path, index=False)
    out = run(["arena", str(path), "--monitor", "800", "--order", "time", "--cluster", "prompt", "--json",
               tmp_path / "a.json", "--html", tmp_path / "a.html"], env={"COLUMNS": "80"})  # type: ignore[operator]
    assert out.returncode == 0, out.stderr
    assert "Live monitor" in out.stdout and "anytime interval" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 80
    payload = json.loads((tmp_path / "a.json").read_text())  # type: ignore[operator]
    ref = lp.monitor_battles(log.sort_values("time", kind="stable"), batch=800, cluster="prompt",
                             tuned_for=log["prompt"].nunique())
    assert payload["monitor"]["looks"] == 5
    np.testing.assert_allclose(payload["monitor"]["columns"]["e_value"], ref.columns["e_value"], rtol=1e-12)
    assert 'id="monitor-table"' in (tmp_path / "a.html").read_text()  # type: ignore[operator]


def test_the_arena_command_refuses_monitor_combinations_it_cannot_fit(tmp_path: object) -> None:
    log = _log(1000, 4)
    path = tmp_path / "votes.csv"  # type: ignore[operator]
    log.to_csv(path, index=False)
    out = run(["arena", str(path), "--order", "time"])
    assert out.returncode == 2 and "give --monitor BATTLES too" in out.stderr
    out = run(["arena", str(path), "--monitor", "100", "--order", "tme"])
    assert out.returncode != 0 and "--order 'tme': the battles have no such column" in out.stderr
    out = run(["arena", str(path), "--monitor", "0"])
    assert out.returncode == 2
