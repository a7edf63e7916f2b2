"""Issue 40, unbounded work and memory: every size that scales work or memory with an argument is
checked before anything is allocated, with the limit and the environment variable that raises it named.
Each fails on 7302bb3 (``plan runs --max-runs 1e9`` took 22.8 GB; plan weights of 1e15 allocated
petabytes; ``subset_plan(10**9)`` built 10^9 ids; ``LeaderboardMonitor`` had no size guard).
"""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest

import llm_power as lp

import _cli  # tests/_cli.py


def _run(args, cwd, **env):
    return _cli.run(args, cwd=cwd, env=env)  # main() in process, seen as a subprocess sees it (tests/_cli.py)


def _one_line(out, command):
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert out.returncode in (1, 2) and len(lines) == 1, out.stderr
    assert lines[0].startswith(f"llm-power {command}: error: ") and "Traceback" not in out.stderr
    return lines[0]


def test_plan_runs_refuses_a_huge_max_runs_by_its_flag(tmp_path):
    rng = np.random.default_rng(0)
    rows = ["model,run,item,score"] + [f"{m},{r},q{i},{int(rng.random() < 0.6)}" for m in "ab" for r in range(3)
                                       for i in range(60)]
    path = tmp_path / "runs.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    line = _one_line(_run(["plan", "runs", str(path), "--run", "run", "--delta", "0.05", "--max-runs", "1000000000"],
                          tmp_path), "plan runs")
    assert "--max-runs" in line and "LLM_POWER_MAX_PLAN_RUNS" in line and "1,000,000,000" in line, line
    ok = _run(["plan", "runs", str(path), "--run", "run", "--delta", "0.05", "--max-runs", "200"], tmp_path,
              LLM_POWER_MAX_PLAN_RUNS="100")
    assert "200 is more than the limit of 100" in _one_line(ok, "plan runs")  # the variable sets the limit


def test_plan_weights_past_the_item_limit_name_the_file(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("item_id,stratum,weight,order\nq1,all,1e15,1\nq2,all,1e15,2\n", encoding="utf-8")
    scores = tmp_path / "s.csv"
    scores.write_text("item,a\nq1,1\nq2,0\n", encoding="utf-8")
    out = _run(["subset", "estimate", "--plan", str(plan), str(scores)], tmp_path)
    line = _one_line(out, "subset estimate")
    assert "plan.csv" in line and "field 'weight'" in line and "LLM_POWER_MAX_ITEMS" in line, line


@pytest.mark.parametrize("call", [
    lambda: lp.subset_plan(10**9, budget=100),
    lambda: lp.subset_estimate(np.ones(5), np.arange(5), n_items=10**15),
    lambda: lp.LeaderboardMonitor([f"m{k}" for k in range(400)]),
])
def test_api_sizes_are_refused_before_allocating(call):
    tracemalloc.start()
    with pytest.raises(ValueError, match=r"more than the limit of [\d,]+ \(LLM_POWER_MAX_[A-Z_]+ raises it\)"):
        call()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 50 * 2**20  # refused before the ids, the design or the 79,800 monitors exist


def test_the_environment_variable_moves_the_limit(monkeypatch):
    monkeypatch.setenv("LLM_POWER_MAX_MONITOR_PAIRS", "2")
    with pytest.raises(ValueError, match="3 is more than the limit of 2"):
        lp.LeaderboardMonitor(["a", "b", "c"])
    monkeypatch.setenv("LLM_POWER_MAX_MONITOR_PAIRS", "3")
    assert len(lp.LeaderboardMonitor(["a", "b", "c"]).pair_index) == 3


def test_running_out_of_memory_while_reading_names_the_file(tmp_path, monkeypatch):
    """A file within every size limit whose rows still do not fit (the gzip streams of the older corpus under
    a memory cap) is one DataError naming it, in both reading paths (results and pass@k samples), never a
    MemoryError traceback. The allocation that fails is simulated: one that really fails needs gigabytes."""
    from llm_power.io import harness, samples

    results = tmp_path / "big.csv.gz"
    import gzip

    results.write_bytes(gzip.compress(b"model,item,score\na,q1,1\nb,q1,0\n"))

    def exhausted(*_args, **_kwargs):
        raise MemoryError

    monkeypatch.setattr(harness, "_read_part", exhausted)
    with pytest.raises(lp.DataError, match=r"big\.csv\.gz: too large to read into the memory available"):
        lp.read_results(results)
    long = tmp_path / "samples.jsonl"
    long.write_text('{"model":"a","item":"x","sample":0,"score":1}\n', encoding="utf-8")
    from llm_power.io.formats import SAMPLE_READERS

    monkeypatch.setitem(SAMPLE_READERS, "table", dataclasses.replace(SAMPLE_READERS["table"], read=exhausted))
    with pytest.raises(lp.DataError, match=r"samples\.jsonl: too large to read into the memory available"):
        samples.read_samples([long])


def _battles(m):
    import pandas as pd

    rng = np.random.default_rng(0)
    a, b = rng.integers(0, m, 400), rng.integers(0, m - 1, 400)
    b = b + (b >= a)
    return pd.DataFrame({"model_a": [f"m{k}" for k in a], "model_b": [f"m{k}" for k in b],
                         "winner": rng.choice(["model_a", "model_b"], 400)})


_X = np.random.default_rng(1).integers(0, 2, (120, 3)).astype(float)

#: (variable, a value to set it to, the call just past it, the call at it): each limit the issue's
#: acceptance asks to be movable, and the sizes of the older tables (resamples, exact methods, arena
#: pairs) that had a fixed constant on 7302bb3
MOVABLE = {
    "LLM_POWER_MAX_RESAMPLES": ("100", lambda: lp.paired_bootstrap(_X[:, 0], _X[:, 1], n_resamples=101, rng=0),
                                lambda: lp.paired_bootstrap(_X[:, 0], _X[:, 1], n_resamples=100, rng=0)),
    "LLM_POWER_MAX_CLUSTER_RESAMPLES": (
        "10", lambda: lp.diagnose(_X, cluster=np.arange(120) % 12, cluster_resamples=11, rng=0),
        lambda: lp.diagnose(_X, cluster=np.arange(120) % 12, cluster_resamples=10, rng=0)),
    # the wild cluster bootstrap: 3 models (2 pairs) x 2^12 = 4,096 enumerated sign vectors each; top=2 is
    # 2 models (1 pair)
    "LLM_POWER_MAX_WILD_DRAWS": (
        "12287", lambda: lp.diagnose(_X, cluster=np.arange(120) % 12, cluster_method="wild", rng=0),
        lambda: lp.diagnose(_X, cluster=np.arange(120) % 12, cluster_method="wild", top=2, rng=0)),
    "LLM_POWER_MAX_EXACT_POWER_ITEMS": ("1000", lambda: lp.power(1001, 0.6, 0.5, method="exact"),
                                        lambda: lp.power(1000, 0.6, 0.5, method="exact")),
    "LLM_POWER_MAX_EXACT_SEARCH_ITEMS": ("100", lambda: lp.mde(101, p=0.5, method="exact"),
                                         lambda: lp.mde(100, p=0.5, method="exact")),
    # past 2e6 items coverage sums the pmf over mean +- 40 SD: 115,920 terms at p = 0.3, 273 at p = 1e-6
    "LLM_POWER_MAX_COVERAGE_TERMS": ("1000", lambda: lp.coverage(10**7, 0.3, method="wilson"),
                                     lambda: lp.coverage(10**7, 1e-6, method="wilson")),
    "LLM_POWER_MAX_ARENA_PAIRS": ("5", lambda: lp.arena_diagnose(_battles(4), pairs="all", rng=0),
                                  lambda: lp.arena_diagnose(_battles(4), pairs="adjacent", rng=0)),
    # the betting state of a live leaderboard's pairs (36 kB each): 30 models are 16 MB, 5 models 1 MB
    "LLM_POWER_MAX_MONITOR_MB": ("1", lambda: lp.LeaderboardMonitor([f"m{k}" for k in range(30)]),
                                 lambda: lp.LeaderboardMonitor([f"m{k}" for k in range(5)])),
}


@pytest.mark.parametrize("name", sorted(MOVABLE))
def test_each_work_limit_names_its_variable_and_moves_with_it(monkeypatch, name):
    import warnings

    value, past, within = MOVABLE[name]
    monkeypatch.setenv(name, value)
    with pytest.raises((ValueError, lp.DataError), match=name):
        past()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        within()


def test_a_long_csv_field_names_the_limit_and_its_variable(tmp_path, monkeypatch):
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\na," + "q" * (2 * 2**20) + ",1\nb,q2,0\n", encoding="utf-8")
    monkeypatch.setenv("LLM_POWER_MAX_CSV_FIELD_MB", "1")
    with pytest.raises(lp.DataError, match=r"long\.csv, record line \d+: a field is longer than the limit of 1 MB "
                                           r"\(LLM_POWER_MAX_CSV_FIELD_MB raises it\)"):
        lp.read_results(path)
    monkeypatch.setenv("LLM_POWER_MAX_CSV_FIELD_MB", "3")
    assert len(lp.read_results(path)) == 2


def test_a_large_yaml_file_names_its_variable(tmp_path):
    folder = tmp_path / "card" / ".eval_results"
    folder.mkdir(parents=True)
    (folder / "mmlu.yaml").write_text("# " + "x" * (2 * 2**20) + "\n- dataset: {id: cais/mmlu}\n  value: 0.5\n",
                                      encoding="utf-8")
    line = _one_line(_run(["aggregate", str(tmp_path / "card")], tmp_path, LLM_POWER_MAX_YAML_MB="1"), "aggregate")
    assert "mmlu.yaml" in line and "LLM_POWER_MAX_YAML_MB" in line, line


def test_every_limit_is_in_the_security_page_with_its_default():
    """docs/security.md's table is where users look: each variable of the limits, with its default."""
    from pathlib import Path

    from llm_power._core.files import DEFAULTS

    page = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text("utf-8")
    rows = {line.split("|")[-2].strip(): line for line in page.splitlines() if line.startswith("|")}
    for name, default in DEFAULTS.items():
        row = next((line for cell, line in rows.items() if f"`{name}`" in cell), None)
        assert row is not None, f"{name} is not in docs/security.md's table of limits"
        assert f"{default:,}" in row, (name, default, row)
