"""The inspect_ai extension, run for real: ``inspect_ai.eval`` with ``mockllm`` models (no
network) on a small task with the llm-power metrics, the report hook and early stopping.
Oracles: the metrics equal proportion_ci / cluster_robust_se / mde on the log's scores; the
report is diagnose of the two logs as read_results reads them.
"""

from __future__ import annotations

import math
import re
import sys
from importlib.metadata import entry_points
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("inspect_ai")

import llm_power as lp  # noqa: E402

FIXTURE = Path(__file__).parents[1] / "fixtures" / "inspect"


def _model(name: str, right_every: int):
    """A mock model answering 'x' on every ``right_every``-th question, else the right digit (with
    its token usage given: mockllm would otherwise count tokens with an encoding it downloads).
    """
    from inspect_ai.model import ModelOutput, ModelUsage, get_model

    def answer(messages, tools, tool_choice, config):
        i = int(re.search(r"Question (\d+)", messages[-1].text).group(1))
        out = ModelOutput.from_content(model=name, content=str(i % 10) if i % right_every else "x")
        out.usage = ModelUsage(input_tokens=10, output_tokens=1, total_tokens=11)
        return out

    return get_model(f"mockllm/{name}", custom_outputs=answer)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    from inspect_ai import eval as inspect_eval

    sys.path.insert(0, str(FIXTURE))
    from task import digits

    log_dir = tmp_path_factory.mktemp("logs")
    mp = pytest.MonkeyPatch()
    mp.setenv("LLM_POWER_REPORT", "1")
    logs = inspect_eval(digits(), model=[_model("good", 10), _model("weak", 3)], log_dir=str(log_dir),
                        display="none")
    mp.undo()
    sys.path.remove(str(FIXTURE))
    return logs, log_dir


def test_entry_point_lists_the_extension():
    from inspect_ai._util.registry import registry_lookup

    assert "llm_power.integrations.inspect" in [ep.value for ep in entry_points(group="inspect_ai")]
    # inspect resolves the names through the entry point, as a task file naming them would
    from llm_power.integrations import inspect as ext

    assert registry_lookup("metric", "llm_power/interval") is ext.interval
    assert registry_lookup("metric", "llm_power/mde") is ext.mde


def test_metrics_equal_llm_power_on_the_logged_scores(run):
    logs, _ = run
    for log in logs:
        assert log.status == "success"
        scores = np.array([1.0 if s.scores["match"].value == "C" else 0.0 for s in log.samples])
        subjects = [s.metadata["subject"] for s in log.samples]
        metrics = log.results.scores[0].metrics
        ci = lp.proportion_ci(int(scores.sum()), scores.size)
        assert metrics["ci_low"].value == pytest.approx(ci.low, rel=1e-12)
        assert metrics["ci_high"].value == pytest.approx(ci.high, rel=1e-12)
        assert metrics["mde"].value == pytest.approx(lp.mde(scores.size, p=scores.mean()), rel=1e-12)
        se = lp.cluster_robust_se(scores, subjects)
        from scipy import stats

        half = stats.t.isf(0.025, 5) * se  # 6 subjects: t with 5 df
        assert metrics["ci_low_subject"].value == pytest.approx(scores.mean() - half, rel=1e-12)
        assert metrics["ci_high_subject"].value == pytest.approx(scores.mean() + half, rel=1e-12)


def test_hook_writes_the_resolution_report_next_to_the_logs(run, tmp_path):
    logs, log_dir = run
    html = log_dir / "llm-power-digits.html"
    md = log_dir / "llm-power-digits.md"
    assert html.is_file() and md.is_file()
    frame = lp.read_results([Path(log.location) for log in logs])
    aligned = lp.align_results(frame, on_missing="intersect")
    diag = lp.diagnose(aligned.scores, models=aligned.models, rng=0)
    text = md.read_text()
    assert all(name in text for name in diag.models)
    assert f"{abs(diag.columns['delta'][0]) * 100:.2f}" in text  # the gap, in points
    # the hook's report is diagnose's (the same p, q, verdicts and rankings), seeded: the same on every run
    from llm_power.integrations.inspect import write_reports
    from llm_power.report.markdown import render_markdown

    want = render_markdown(diag, title="Resolution report: digits", rankings=lp.rank_report(diag, rng=0))
    assert text == want
    again = tmp_path / "again"
    write_reports(logs, str(again))
    assert (again / "llm-power-digits.md").read_text() == text


def test_early_stopping_stops_once_the_sequence_is_narrow(tmp_path):
    from inspect_ai import eval as inspect_eval

    sys.path.insert(0, str(FIXTURE))
    from task import digits

    (log,) = inspect_eval(digits(stop=0.2), model=_model("good", 10), log_dir=str(tmp_path), display="none",
                          max_samples=4)  # few in flight: samples are scheduled as others finish
    sys.path.remove(str(FIXTURE))
    summary = log.results.early_stopping
    scored = [s for s in log.samples if s.scores]
    assert summary.manager == "llm_power_anytime" and summary.early_stops
    assert 20 <= len(scored) < 120 and len(scored) + len(summary.early_stops) == 120
    assert all(float(stop.reason.split("half-width ")[1].split(" <=")[0]) <= 0.2 for stop in summary.early_stops)
    assert summary.metadata["half_width"] <= 0.2  # the betting sequence of the scored samples (test below)


def test_streaming_sequence_equals_the_batch_betting_sequence():
    """The early-stopping sequence, fed one score at a time, is the batch betting sequence of the same
    scores in the same order (conservative by at most its grid spacing); a score outside [0, 1] turns
    it off (never a stop on an invalid sequence); identical scores give a wide sequence, not width 0."""
    from llm_power._kernel.betting import bets, betting_bound
    from llm_power.integrations.inspect import _Running

    rng = np.random.default_rng(2)
    x = (rng.random(150) < 0.8).astype(float)
    run = _Running()
    for v in x:
        run.add(float(v), 150, 0.05)
    _, lo, hi = run.sequence()
    lam = bets(x, 0.025, 150)
    want_lo, want_hi = (betting_bound(x, lam, 0.025, side, running=True) for side in ("lower", "upper"))
    assert want_lo - 6e-4 <= lo <= want_lo and want_hi <= hi <= want_hi + 6e-4
    same = _Running()
    for _ in range(60):
        same.add(1.0, 500, 0.05)
    assert same.sequence()[1] < 0.9  # 60 right answers in a row do not make the score certain
    bad = _Running()
    bad.add(3.0, 10, 0.05)
    assert bad.sequence()[1:] == (-math.inf, math.inf) and bad.invalid


def test_early_stopping_on_a_resolved_pair(tmp_path):
    """Two models, one right on 90% of the questions and one on 67%: both runs stop once the
    confidence sequence of the paired difference excludes 0; the reported difference and
    half-width are those of the samples both scored.
    """
    from inspect_ai import eval as inspect_eval

    sys.path.insert(0, str(FIXTURE))
    from task import digits

    logs = inspect_eval(digits(resolve=True), model=[_model("good", 10), _model("weak", 3)], log_dir=str(tmp_path),
                        display="none", max_samples=4)  # few in flight: samples are scheduled as others finish
    sys.path.remove(str(FIXTURE))
    by_model = {}
    stops = [stop for log in logs for stop in log.results.early_stopping.early_stops]
    assert stops and all(stop.reason.startswith("pair decided") for stop in stops)
    for log in logs:
        by_model[log.eval.model] = {s.id: 1.0 if s.scores["match"].value == "C" else 0.0
                                    for s in log.samples if s.scores}
    first, second = "mockllm/good", "mockllm/weak"  # the pair's order: by name
    common = sorted(set(by_model[first]) & set(by_model[second]))
    d = np.array([by_model[first][i] - by_model[second][i] for i in common])
    assert 20 <= len(common) < 120
    # each run's summary is a snapshot when that run finished: the later one has every pair
    meta = max((log.results.early_stopping.metadata for log in logs), key=lambda m: m["pairs"])
    assert meta["pair_models"] == [first, second]
    assert meta["pairs"] == len(common) and meta["difference"] == pytest.approx(d.mean(), rel=1e-12)
    # resolved: the betting sequence of the differences excludes 0 (its bounds are in each stop's reason)
    lo, hi = (float(v) for v in re.search(r"\[([-+.\deE]+), ([-+.\deE]+)\]", stops[0].reason).groups())
    assert lo > 0 or hi < 0
    assert meta["difference_half_width"] <= (hi - lo) / 2 + 1e-12  # the sequence only narrows


def _drive(stopper, streams: dict[str, np.ndarray]) -> tuple[int | None, str | None]:
    """Feed the stopping manager one sample of each model in turn (sample i of every model, then
    i + 1), as inspect would with the runs interleaved; returns (the sample at which it first
    stopped, the reason)."""
    import asyncio

    from inspect_ai.scorer import Score, SampleScore

    n = len(next(iter(streams.values())))

    async def go() -> tuple[int | None, str | None]:
        for name in streams:
            stopper._model = lambda name=name: name
            await stopper.start_task(type("T", (), {"model": name})(), list(range(n)), 1)
        for i in range(n):
            for name, x in streams.items():
                stopper._model = lambda name=name: name
                if await stopper.schedule_sample(i, 1) is not None:
                    return i, stopper._pair_stop
                await stopper.complete_sample(i, 1, {"s": SampleScore(score=Score(value=float(x[i])))})
        return None, None

    return asyncio.run(go())


@pytest.mark.parametrize("target", ["top", "all"])
def test_leaderboard_stop_is_e_bh_over_the_pairs_betting_e_values(target):
    """Four models: the manager stops at the first sample after which e-BH (at FDR 1 - level) over
    the six pairs' e-values resolves every pair ("all") or puts one model ahead of the others
    ("top"); the oracle is llm-power's own SequentialMonitor per pair (betting, the same horizon)
    and lp.e_bh, recomputed after every complete row, each claim's direction the monitor's."""
    from llm_power.integrations.inspect import AnytimeEarlyStopping

    rng = np.random.default_rng(7)
    n, q = 1500, 0.1  # streams in name order, so the manager's pair order is the oracle's
    truth = [0.9, 0.75, 0.6, 0.45]
    streams = {f"m{k}": (rng.random(n) < p).astype(float) for k, p in enumerate(truth)}
    stopper = AnytimeEarlyStopping(resolve=target, confidence_level=1 - q, min_samples=30)
    at, reason = _drive(stopper, streams)
    names = sorted(streams)
    keys = [(a, b) for i, a in enumerate(names) for b in names[i + 1:]]
    mons = {k: lp.SequentialMonitor(alpha=q, tuned_for=n, method="betting") for k in keys}
    want = None
    for i in range(n):  # as the manager sees them: a sample enters the pairs once every model has scored it
        states = {k: mons[k].update(streams[k[0]][i:i + 1], streams[k[1]][i:i + 1]) for k in keys}
        if i + 1 < 30:
            continue
        found = lp.e_bh([states[k].e_value for k in keys], q=q)
        wins = {(a, b) if mons[(a, b)].leans_a() else (b, a) for (a, b), f in zip(keys, found, strict=True) if f}
        done = len(wins) == len(keys) if target == "all" else any(
            all((t, o) in wins for o in names if o != t) for t in names)
        if done:
            want = i + 1  # the row completes with the last model's sample i: stopped from sample i + 1 on
            break
    assert want is not None and at == want, (at, want)
    assert reason.startswith("e-BH at FDR 0.1") and ("m0 ahead of every other model" in reason if target == "top"
                                                      else reason.endswith("m0 > m1 > m2 > m3"))


def test_leaderboard_stop_in_a_real_run_and_margin_needs_two_models(tmp_path):
    """Three mock models in one inspect run: resolve="top" stops every run with a reason naming the
    best; the summary's pairs are the samples every model scored (complete rows). margin= with a third model is an error."""
    from inspect_ai import eval as inspect_eval

    from llm_power.integrations.inspect import AnytimeEarlyStopping

    sys.path.insert(0, str(FIXTURE))
    from task import digits

    logs = inspect_eval(digits(resolve="top"), model=[_model("good", 10), _model("weak", 3), _model("bad", 2)],
                        log_dir=str(tmp_path), display="none", max_samples=4)
    sys.path.remove(str(FIXTURE))
    stops = [stop for log in logs for stop in log.results.early_stopping.early_stops]
    assert stops and all("mockllm/good ahead of every other model" in stop.reason for stop in stops)
    right = {log.eval.model: {s.id: 1.0 if s.scores["match"].value == "C" else 0.0 for s in log.samples if s.scores}
             for log in logs}
    meta = max((log.results.early_stopping.metadata for log in logs), key=lambda m: len(m.get("leaderboard", {})))
    assert meta["models"] == ["mockllm/bad", "mockllm/good", "mockllm/weak"]
    rows = sorted(set.intersection(*(set(r) for r in right.values())))  # the samples every model scored
    for key, pair in meta["leaderboard"].items():
        a, b = key.split(" vs ")
        common = rows
        assert pair["pairs"] == len(common)
        assert pair["difference"] == pytest.approx(np.mean([right[a][i] - right[b][i] for i in common]), rel=1e-12)
    with pytest.raises(ValueError, match="must be True, False, 'all' or 'top'"):
        AnytimeEarlyStopping(resolve="best")
    with pytest.raises(ValueError, match="compares two models"):
        _drive(AnytimeEarlyStopping(margin=0.05), {k: np.ones(5) for k in "abc"})


def test_leaderboard_stop_direction_is_the_capitals_side():
    """a right on the first 300 samples and wrong on the next 310, b the reverse, c never right:
    the a-b evidence is on a's side although a's mean is lower; the stop names a > b, as the pair's
    own sequence does."""
    from llm_power.integrations.inspect import AnytimeEarlyStopping

    a, b = np.r_[np.ones(300), np.zeros(310)], np.r_[np.zeros(300), np.ones(310)]
    stopper = AnytimeEarlyStopping(resolve="all", confidence_level=0.95, min_samples=610)
    _drive(stopper, {"a": a, "b": b, "c": np.zeros(610)})
    pair = stopper.pairs()["a vs b"]
    assert pair["difference"] < 0 < pair["low"]
    assert stopper._pair_stop is not None and stopper._pair_stop.endswith("a > b > c")
