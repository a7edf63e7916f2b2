"""Reading several runs per model: the real LLM-stability reruns (oracle values from their README and
the authors' own per-run counts), lm-eval folders per seed and inspect logs per seed built from the
real harness files in ../shared/data/formats, and the errors.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import llm_power as lp


@pytest.fixture
def reruns(shared_data: Path) -> Path:
    path = shared_data / "reruns" / "llm_stability_long.csv.gz"
    assert path.is_file()
    return path


def test_reruns_oracle_values(reruns: Path) -> None:
    """README oracle: per-model means over all items and runs, and on the 500 shared items."""
    df = pd.read_csv(reruns)
    for model, want, n_items, n_runs in (("gpt-3.5-turbo", 0.927600, 500, 10), ("gpt-4o", 0.807107, 1407, 5)):
        one = lp.align_runs(df[df["model"] == model], run="run")
        assert one.n == n_items and one.runs.tolist() == [n_runs]
        assert float(one.blocks[0].mean()) == pytest.approx(want, abs=5e-7)
    shared = lp.read_runs(reruns, run="run", cluster="cluster", on_missing="intersect")
    assert shared.n == 500 and shared.models == ["gpt-3.5-turbo", "gpt-4o"]
    assert [round(float(b.mean()), 6) for b in shared.blocks] == [0.9276, 0.8348]
    assert "kept the 500 items" in shared.note
    assert sorted(set(shared.clusters)) == ["logical_deduction", "navigate"]


def test_reruns_per_run_counts_equal_the_authors(reruns: Path, shared_data: Path) -> None:
    """gpt-4o, each of its 7 tasks: correct count per run, best / worst possible counts = the authors'
    ``correct_count_per_run``, ``best_possible_count``, ``worst_possible_count`` (their csv); gpt-3.5-turbo's
    logical_deduction counts from the README.
    """
    import ast

    df = pd.read_csv(reruns)
    with (shared_data / "reruns" / "stability_eval_strict_json_schema.csv").open(newline="") as fh:
        upstream = {row["task"]: row for row in csv.DictReader(fh)}
    assert len(upstream) == 7
    for task, row in upstream.items():
        part = df[(df["model"] == "gpt-4o") & (df["cluster"] == task)]
        rs = lp.align_runs(part, run="run")
        assert rs.blocks[0].sum(axis=0).astype(int).tolist() == ast.literal_eval(row["correct_count_per_run"])
        f = lp.noise(rs).flakiness[0]
        assert round(f["best_possible"] * rs.n) == int(row["best_possible_count"])
        assert round(f["worst_possible"] * rs.n) == int(row["worst_possible_count"])
    part = df[(df["model"] == "gpt-3.5-turbo") & (df["cluster"] == "logical_deduction")]
    counts = lp.align_runs(part, run="run").blocks[0].sum(axis=0).astype(int).tolist()
    assert counts == [224, 224, 224, 225, 225, 223, 224, 223, 223, 223]


def test_reruns_flakiness_matches_the_readme(reruns: Path) -> None:
    """Items whose correctness differs between runs (2 of 500; 300 of 1,407) and gpt-4o's best / worst
    possible counts on navigate (232 / 132) and logical_deduction (244 / 217).
    """
    df = pd.read_csv(reruns)
    for model, unstable in (("gpt-3.5-turbo", 2), ("gpt-4o", 300)):
        rep = lp.noise(lp.align_runs(df[df["model"] == model], run="run"))
        assert rep.flakiness[0]["unstable"] == unstable
    for task, best, worst in (("navigate", 232, 132), ("logical_deduction", 244, 217)):
        part = df[(df["model"] == "gpt-4o") & (df["cluster"] == task)]
        f = lp.noise(lp.align_runs(part, run="run")).flakiness[0]
        assert round(f["best_possible"] * 250) == best and round(f["worst_possible"] * 250) == worst


def _lm_eval_runs(src: Path, dest: Path) -> list[Path]:
    """Four lm-eval output folders from the real one: models m1, m2 x random_seed 0, 1 (scores of m2 and
    of seed 1 changed on some documents so the runs differ)."""
    results = next(src.glob("results_*.json"))
    samples = next(src.glob("samples_*.jsonl"))
    folders = []
    for model in ("m1", "m2"):
        for seed in (0, 1):
            folder = dest / f"{model}_seed{seed}"
            folder.mkdir(parents=True)
            meta = json.loads(results.read_text())
            meta["model_name"] = model
            meta["config"]["random_seed"] = seed
            (folder / results.name).write_text(json.dumps(meta))
            lines = []
            for k, line in enumerate(samples.read_text().splitlines()):
                rec = json.loads(line)
                for key in rec:
                    if key in ("exact_match", "acc", "math_verify") and isinstance(rec[key], (int, float)):
                        rec[key] = float((k + seed + (model == "m2")) % 2)
                lines.append(json.dumps(rec))
            (folder / samples.name).write_text("\n".join(lines) + "\n")
            folders.append(folder)
    return folders


def test_lm_eval_folders_per_seed(shared_data: Path, tmp_path: Path) -> None:
    folders = _lm_eval_runs(shared_data / "formats" / "lm_eval", tmp_path)
    rs = lp.read_runs(folders, run="seed")
    assert rs.models == ["m1", "m2"] and rs.runs.tolist() == [2, 2]
    assert rs.run_labels == [["0", "1"], ["0", "1"]] and rs.runs_by == "seed"
    assert rs.n == 10
    # the dotted path names the same field
    assert lp.read_runs(folders, run="config.random_seed").run_labels == rs.run_labels
    with pytest.raises(lp.DataError, match="no run field 'nonexistent.field'"):
        lp.read_runs(folders, run="nonexistent.field")
    folder_runs = lp.read_runs(folders, run="folder")
    assert folder_runs.run_labels == [["m1_seed0", "m1_seed1"], ["m2_seed0", "m2_seed1"]]


def test_inspect_logs_per_seed(shared_data: Path, tmp_path: Path) -> None:
    src = shared_data / "formats" / "inspect_ai" / "data_arc_qwen.json"
    log = json.loads(src.read_text())
    paths = []
    for seed in (1, 2, 3):
        log["eval"]["model_generate_config"] = {"seed": seed}
        path = tmp_path / f"arc_seed{seed}.json"
        path.write_text(json.dumps(log))
        paths.append(path)
    rs = lp.read_runs(paths, run="seed")
    assert rs.runs.tolist() == [3] and rs.run_labels == [["1", "2", "3"]]
    assert rs.n == 3


def test_a_run_lacking_items_is_an_error_naming_it() -> None:
    df = pd.DataFrame({"model": ["a"] * 5, "seed": [1, 1, 1, 2, 2], "item": ["q1", "q2", "q3", "q1", "q2"],
                       "score": [1, 0, 1, 1, 1]})
    with pytest.raises(lp.DataError, match=r"model 'a': run '2' lacks 1 of the 3 items .* \(first: 'q3'\)"):
        lp.align_runs(df, run="seed")
    kept = lp.align_runs(df, run="seed", on_missing="intersect")
    assert kept.items == ["q1", "q2"] and "not scored in every run" in kept.note
    dup = pd.concat([df, df.iloc[:1]])
    with pytest.raises(lp.DataError, match="item 'q1' appears 2 times"):
        lp.align_runs(dup, run="seed", on_missing="intersect")
    with pytest.raises(lp.DataError, match="no 'seed' column"):
        lp.align_runs(df.drop(columns="seed"), run="seed")


def test_read_runs_cli_file_errors_are_one_line(tmp_path: Path) -> None:
    from _cli import run  # main() in process, seen as a subprocess sees it

    path = tmp_path / "runs.csv"
    path.write_text("model,seed,item,score\na,1,q1,1\na,1,q2,0\na,2,q1,1\n")
    out = run(["noise", str(path), "--run", "seed"], check=False)
    assert out.returncode == 1
    assert out.stderr.count("\n") == 1 and "run '2' lacks 1 of the 2 items" in out.stderr


def test_noise_cli_and_plan_runs_cli(reruns: Path) -> None:
    from _cli import run  # main() in process, seen as a subprocess sees it

    out = run(["noise", str(reruns), "--run", "run", "--on-missing", "intersect", "--format", "json"], check=True)
    payload = json.loads(out.stdout)
    assert payload["models"] == ["gpt-3.5-turbo", "gpt-4o"]
    assert [f["unstable"] for f in payload["flakiness"]] == [2, 127]  # 100 navigate + 27 logical_deduction
    text = run(["noise", str(reruns), "--run", "run", "--on-missing", "intersect"], check=True).stdout
    assert "Signal-to-noise" in text and "Flakiness" in text
    plan = run(["plan", "runs", str(reruns), "--run", "run", "--on-missing", "intersect", "--format", "json"],
               check=True)
    got = json.loads(plan.stdout)
    api = lp.plan_runs(lp.read_runs(reruns, run="run", on_missing="intersect"))
    assert got["best_items"] == api.best_items and got["runs_needed"] == api.runs_needed


def test_run_scores_validation() -> None:
    with pytest.raises(ValueError, match="items x runs x models"):
        lp.RunScores.from_array(np.zeros((3, 2)))
    with pytest.raises(lp.DataError, match="not finite"):
        lp.RunScores.from_array(np.full((3, 2, 2), np.nan))
    rs = lp.RunScores.from_array(np.arange(24.0).reshape(4, 3, 2), models=["a", "b"])
    assert rs.averaged().scores.tolist() == [[2.0, 3.0], [8.0, 9.0], [14.0, 15.0], [20.0, 21.0]]


@pytest.mark.parametrize("suffix", ["csv", "jsonl", "json", "parquet"])
def test_long_tables_with_a_run_column_in_every_plain_format(tmp_path: Path, suffix: str) -> None:
    rows = [{"model": m, "seed": s, "item": f"q{i}", "score": (i + s + (m == "b")) % 2}
            for m in "ab" for s in range(3) for i in range(4)]
    path = tmp_path / f"runs.{suffix}"
    frame = pd.DataFrame(rows)
    if suffix == "csv":
        frame.to_csv(path, index=False)
    elif suffix == "parquet":
        frame.to_parquet(path)
    elif suffix == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    else:
        path.write_text(json.dumps(rows))
    rs = lp.read_runs(path, run="seed")
    assert rs.models == ["a", "b"] and rs.runs.tolist() == [3, 3] and rs.items == ["q0", "q1", "q2", "q3"]
    assert rs.blocks[0][:, 0].tolist() == [0.0, 1.0, 0.0, 1.0]


def test_gate_cli_with_runs_is_the_api_gate(tmp_path: Path) -> None:
    from _cli import run  # main() in process, seen as a subprocess sees it

    rng = np.random.default_rng(4)
    y = (rng.random((400, 3, 2)) < np.array([0.70, 0.72])).astype(int)
    for k, name in enumerate(("base", "cand")):
        rows = [{"model": "same-model", "seed": s, "item": f"q{i}", "score": int(y[i, s, k])}
                for s in range(3) for i in range(400)]
        pd.DataFrame(rows).to_csv(tmp_path / f"{name}.csv", index=False)
    out = run(["gate", str(tmp_path / "base.csv"), str(tmp_path / "cand.csv"), "--run", "seed", "--margin", "0.02",
               "--format", "json"], check=False)
    payload = json.loads(out.stdout)
    api = lp.gate(y[:, :, 0], y[:, :, 1], margin=0.02)
    assert out.returncode == api.exit_code
    assert payload["test"] == "run_t" and payload["verdict"] == api.verdict
    assert payload["pvalue_noninferiority"] == pytest.approx(api.pvalue_noninferiority, rel=1e-12)
    assert payload["baseline"] == "same-model (baseline)"


def test_hostile_names_and_run_fields(tmp_path: Path) -> None:
    """Untrusted model names reach no output raw (terminal, Markdown, HTML), and a run field that is not
    one (a unique id per row) is refused before the items x runs table is allocated."""
    from _cli import run  # main() in process, seen as a subprocess sees it

    names = ["evil\x1b[2Jclear\nname", "<script>alert(1)</script>"]
    rows = [{"model": m, "run": s, "item": f"q{i}", "score": (i * (k + 2) + s) % 3 // 2}
            for k, m in enumerate(names) for s in range(3) for i in range(60)]
    src = tmp_path / "hostile.csv"
    pd.DataFrame(rows).to_csv(src, index=False)
    before = src.read_bytes()
    noise = run(["noise", str(src), "--run", "run"], check=True)
    assert "\x1b" not in noise.stdout and "\\x1b[2Jclear" in noise.stdout
    md, html = tmp_path / "r.md", tmp_path / "r.html"
    diag = run(["diagnose", str(src), "--run", "run", "--markdown", str(md), "--html", str(html)], check=True)
    assert "\x1b" not in diag.stdout
    assert "<script>alert" not in html.read_text() and "&lt;script&gt;alert(1)&lt;/script&gt;" in html.read_text()
    assert "<script>" not in md.read_text() and "\x1b" not in md.read_text()
    assert src.read_bytes() == before
    sparse = tmp_path / "ids.csv"
    pd.DataFrame([{"model": "m", "run": k, "item": f"q{k}", "score": 1} for k in range(3000)]).to_csv(sparse,
                                                                                                     index=False)
    out = run(["noise", str(sparse), "--run", "run", "--on-missing", "intersect"], check=False)
    assert out.returncode == 1 and "far from one score per run and item" in out.stderr and out.stderr.count("\n") == 1
