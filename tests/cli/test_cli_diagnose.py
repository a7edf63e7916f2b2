"""llm-power diagnose on wide CSV and Parquet files."""

from __future__ import annotations

import json

import numpy as np
import pytest

from llm_power import diagnose
from llm_power.cli.main import main


@pytest.fixture
def wide(tmp_path):
    rng = np.random.default_rng(90)
    n = 1500
    cluster = rng.integers(0, 6, size=n)
    x = (rng.random((n, 4)) < np.array([0.7, 0.69, 0.6, 0.5])).astype(int)
    path = tmp_path / "scores.csv"
    lines = ["item,subject,alpha,beta,gamma,delta"]
    lines += [f"q{i},s{cluster[i]}," + ",".join(str(v) for v in x[i]) for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path, x, cluster


def test_json_equals_api(wide, capsys):
    path, x, cluster = wide
    assert main(["diagnose", str(path), "--cluster", "subject", "--correction", "holm", "--anytime",
                 "--format", "json", "--cluster-resamples", "100"]) == 0
    payload = json.loads(capsys.readouterr().out)
    ref = diagnose(x, models=["alpha", "beta", "gamma", "delta"], cluster=[f"s{c}" for c in cluster],
                   correction="holm", anytime=True, cluster_resamples=100, rng=0).to_dict()
    assert payload["models"] == ref["models"] and payload["n_unresolved"] == ref["n_unresolved"]
    assert [p["q"] for p in payload["pairs"]] == [p["q"] for p in ref["pairs"]]


def test_table_and_parquet(wide, tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    path, x, cluster = wide
    assert main(["diagnose", str(path), "--cluster", "subject", "--anytime"]) == 0
    out = capsys.readouterr().out  # compact: a verdict per regime, q of the strictest
    flat = " ".join(out.split())
    assert "too small for this benchmark" in flat and "clustered by subject" in flat
    line = next(line for line in out.splitlines() if line.startswith("#") and "model A" in line)
    assert " p IID " in line  # beside other regimes' verdicts, the IID p says so
    header = line.replace(" p IID ", " ").split()
    assert [w for w in header if w in ("IID", "cluster", "anytime")][:3] == ["IID", "cluster", "anytime"]
    assert main(["diagnose", str(path), "--cluster", "subject", "--anytime", "--wide"]) == 0
    out = capsys.readouterr().out  # wide: every regime's N* and q
    assert "q cluster" in out and "q anytime" in out and "N* anytime" in out
    frame = pd.read_csv(path)
    pq = tmp_path / "scores.parquet"
    frame.to_parquet(pq)
    assert main(["diagnose", str(pq), "--cluster", "subject", "--format", "json", "--cluster-resamples", "0"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["models"][0] == "alpha" and len(payload["pairs"]) == 3


@pytest.mark.parametrize(
    ("content", "argv", "message"),
    [
        ("item,a,b\nq1,1,0\nq2,0,x\n", [], "record line 3, field 'b': score 'x' is not a number"),
        ("item,a,b\nq1,1,0\nq2,0,1\n", ["--cluster", "topic"], "no cluster column 'topic'"),
        ("item,s,a,b\nq1,k,1,0\nq2,k,0,1\n", ["--cluster", "s"], "every item in one cluster"),
        ("item,a,b\nq1,1,0\nq1,0,1\n", [], "duplicate item 'q1'"),
    ],
)
def test_bad_files_exit_1(tmp_path, capsys, content, argv, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    assert main(["diagnose", str(path), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_not_a_parquet_file(tmp_path, capsys):
    path = tmp_path / "fake.parquet"
    path.write_text("not parquet")
    assert main(["diagnose", str(path)]) == 1
    assert "fake.parquet: not readable as Parquet" in capsys.readouterr().err


def test_multiple_harness_inputs_and_outputs(tmp_path, capsys):
    fix = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"
    out_json, out_md, out_html = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.html"
    out_html.write_text("old report")  # an existing output is replaced only when the new one is complete
    assert main(["diagnose", str(fix / "lm_eval"), "--cluster", "subject", "--correction", "holm",
                 "--json", str(out_json), "--markdown", str(out_md), "--html", str(out_html),
                 "--cluster-resamples", "50"]) == 0
    out = capsys.readouterr().out
    assert "report:" in out and "org/model-a" in out
    payload = json.loads(out_json.read_text())
    assert payload["models"] == ["org/model-a", "org/model-b"] and len(payload["pairs"]) == 1
    assert "| 1 | org/model-a | org/model-b |" in out_md.read_text()
    html = out_html.read_text()
    assert html.startswith("<!DOCTYPE html>") and html.count("<svg") == 5  # leaderboard, ranks, forest, q, MDE
    assert "<script" not in html and 'href="http' not in html and 'src="http' not in html
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary files left behind


def test_mixed_formats_in_one_call(capsys):
    fix = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"
    # inspect .eval (model-a) + inspect .json (model-b): item ids agree (task:id)
    assert main(["diagnose", str(fix / "inspect" / "model-a.eval"), str(fix / "inspect" / "model-b.json"),
                 "--format", "json", "--cluster-resamples", "0"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["n"] == 40 and payload["models"] == ["openai/model-a", "openai/model-b"]


def test_on_missing_intersect_reports_drops(tmp_path, capsys):
    path = tmp_path / "long.csv"
    path.write_text("model,item,score\nA,q1,1\nA,q2,0\nA,q3,1\nB,q1,0\nB,q2,0\n")
    assert main(["diagnose", str(path)]) == 1
    assert "B lacks 1 of 3 items" in capsys.readouterr().err
    assert main(["diagnose", str(path), "--on-missing", "intersect", "--format", "json"]) == 0
    assert "2 of 3 kept" in json.loads(capsys.readouterr().out)["note"]


def test_refuses_to_overwrite_an_input(tmp_path, capsys):
    path = tmp_path / "long.csv"
    content = "model,item,score\nA,q1,1\nA,q2,0\nB,q1,0\nB,q2,0\n"
    path.write_text(content)
    assert main(["diagnose", str(path), "--html", str(path)]) == 2  # a usage error, found before reading
    assert "it is the input" in capsys.readouterr().err
    assert path.read_text() == content


@pytest.mark.parametrize(
    ("name", "content", "extra", "message"),
    [
        ("samples_t_2026-01-01T00-00-00.000000.jsonl", '{"doc_id": 0, "metrics": ["acc"], "acc": 1}\n{"doc_i',
         [], "record line 2: not valid JSON"),
        ("empty.csv", "", [], "empty.csv: the file is empty"),
        ("x.unknown", "data", [], "x.unknown: unknown format '.unknown'"),
        ("long.csv", "model,item,score\nA,q1,1\nB,q1,0\n", ["--metric", "f1"], "no score column 'f1'; columns are"),
        ("dup.csv", "model,item,score\nA,q1,1\nA,q1,0\nB,q1,1\n", [], "model 'A' has item 'q1' more than once"),
        ("disjoint.csv", "model,item,score\nA,q1,1\nB,q2,1\n", ["--on-missing", "intersect"], "no item is shared by all models"),
    ],
)
def test_bad_inputs_one_line_no_traceback(tmp_path, capsys, name, content, extra, message):
    path = tmp_path / name
    path.write_text(content)
    assert main(["diagnose", str(path), *extra]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


def test_zip_that_is_not_an_inspect_log_cli(tmp_path, capsys):
    import zipfile

    path = tmp_path / "log.eval"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("x.txt", "x")
    assert main(["diagnose", str(path)]) == 1
    err = capsys.readouterr().err
    assert "log.eval: not an inspect .eval log" in err and err.count("\n") == 1


def test_render_html_leaves_the_callers_matplotlib_state_alone():
    import matplotlib

    from llm_power.report.html import render_html

    rng = np.random.default_rng(2)
    res = diagnose((rng.random((300, 3)) < [0.7, 0.6, 0.5]).astype(float), models=["a$1", "b", "c"])
    backend = matplotlib.get_backend()
    before = {k: matplotlib.rcParams[k] for k in ("font.size", "svg.fonttype", "text.parse_math", "svg.hashsalt")}
    assert matplotlib.rcParams["text.parse_math"]  # the report must not need it off globally
    import matplotlib.pyplot as plt

    open_before = plt.get_fignums()
    html = render_html(res)
    assert "a$1" in html
    assert matplotlib.get_backend() == backend and plt.get_fignums() == open_before
    assert {k: matplotlib.rcParams[k] for k in before} == before
