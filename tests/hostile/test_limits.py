"""Issue 40, unbounded work and memory: every size that scales work or memory with an argument is
checked before anything is allocated, with the limit and the environment variable that raises it named.
Each fails on 7302bb3 (``plan runs --max-runs 1e9`` took 22.8 GB; plan weights of 1e15 allocated
petabytes; ``subset_plan(10**9)`` built 10^9 ids; ``LeaderboardMonitor`` had no size guard).
"""

from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import llm_power as lp


def _run(args, cwd, **env):
    import os

    return subprocess.run([sys.executable, "-m", "llm_power", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, **env})


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
    monkeypatch.setattr(samples, "_long", exhausted)
    with pytest.raises(lp.DataError, match=r"samples\.jsonl: too large to read into the memory available"):
        samples.read_samples([long])
