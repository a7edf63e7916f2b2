"""The command line: output, JSON, exit codes and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from llm_power import coverage, half_width, proportion_ci
from llm_power.cli.main import main

BIN = Path(sys.executable).parent


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_ci_table(capsys):
    code, out, err = run_cli(capsys, "ci", "17", "20", "--method", "all")
    assert code == 0 and err == ""
    for method, lo, hi in [("wilson", "0.6396", "0.9476"), ("clopper_pearson", "0.6211", "0.9679"),
                           ("jeffreys", "0.6514", "0.9559"), ("agresti_coull", "0.6312", "0.9561")]:
        line = next(line for line in out.splitlines() if method in line)
        assert lo in line and hi in line
    assert "1.0065" in out  # the raw Wald bound that leaves [0, 1]


def test_ci_json_equals_api(capsys):
    code, out, _ = run_cli(capsys, "ci", "3", "40", "--method", "all", "--format", "json",
                           "--confidence-level", "0.9", "--alternative", "less")
    assert code == 0
    payload = json.loads(out)
    assert payload["k"] == 3 and payload["n"] == 40 and payload["alternative"] == "less"
    for row in payload["intervals"]:
        ci = proportion_ci(3, 40, method=row["method"], confidence_level=0.9, alternative="less")
        assert row["low"] == ci.low == 0.0
        assert row["high"] == ci.high
    assert list(payload) == sorted(payload)  # deterministic key order


def test_ci_json_keeps_the_raw_bounds_a_clipped_interval_left_as_an_interval(capsys):
    code, out, _ = run_cli(capsys, "ci", "3", "40", "--method", "wald", "--format", "json")
    assert code == 0
    row = json.loads(out)["intervals"][0]
    half = 1.959963984540054 * (3 / 40 * 37 / 40 / 40) ** 0.5  # Wald, by hand
    assert row["raw"] == pytest.approx({"low": 3 / 40 - half, "high": 3 / 40 + half})
    assert row["low"] == 0.0 and row["raw"]["low"] < 0 and "clipped" in row["note"]


def test_coverage_json_equals_api(capsys):
    code, out, _ = run_cli(capsys, "coverage", "--n", "10", "30", "--p", "0.02", "0.5", "--format", "json")
    assert code == 0
    payload = json.loads(out)
    assert len(payload["results"]) == 4
    for rec in payload["results"]:
        for method, value in rec["coverage"].items():
            assert value == coverage(rec["n"], rec["p"], method=method)


def test_coverage_table_flags_wald(capsys):
    code, out, _ = run_cli(capsys, "coverage", "--n", "10", "--p", "0.02")
    assert code == 0
    assert "0.1829 ✗" in out


def test_demo_error_bars_table_and_json(capsys):
    code, out, _ = run_cli(capsys, "demo", "--error-bars")
    assert code == 0
    # the reach below and above 80%: Wilson's interval is asymmetric there (statsmodels' Wilson bounds)
    from statsmodels.stats.proportion import proportion_confint

    for n in (30, 164, 198, 1319, 14042):
        k = round(0.8 * n)
        lo, hi = proportion_confint(k, n, method="wilson")
        below, above = f"{100 * (k / n - lo):.1f}", f"{100 * (hi - k / n):.1f}"
        line = next(line for line in out.splitlines() if f" {n:,} " in line)
        assert (f"±{above}" if below == above else f"−{below} / +{above}") in line
    code, out, _ = run_cli(capsys, "demo", "--error-bars", "--format", "json")
    rows = json.loads(out)["benchmarks"]
    # the half-widths of SPEC section 5 (Wilson at 80%: n = 30 ±13.9 points, ... 14,042 ±0.7)
    assert [round(100 * r["half_width_at_0_8"], 1) for r in rows] == [13.9, 8.7, 6.1, 5.6, 2.2, 0.7]
    assert [r["n"] for r in rows] == [30, 80, 164, 198, 1319, 14042]
    for r in rows:
        assert r["half_width_at_0_8"] == half_width(r["n"], 0.8)
        assert r["half_width_at_0_5"] == half_width(r["n"], 0.5)


def test_demo_resolution_report_on_bundled_data(tmp_path, capsys, monkeypatch):
    report = tmp_path / "report.html"
    code, out, _ = run_cli(capsys, "demo", "--html", str(report))
    assert code == 0 and report.exists()
    assert "Meta-Llama-3_1-70B-Instruct" in out and "unresolved" in out and f"report: {report.resolve()}" in out
    # inside the working folder the path is shown relative (short, still usable from here)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli(capsys, "demo", "--html", "sub.html")
    assert code == 0 and "report: sub.html\n" in out and (tmp_path / "sub.html").exists()
    assert out.rstrip().splitlines()[-1].startswith("next: ")  # make demo ends with the path and one next line
    code, out, _ = run_cli(capsys, "demo", "--html", str(report), "--format", "json")
    payload = json.loads(out)
    assert len(payload["pairs"]) == 9 and set(payload["n_unresolved"]) == {"iid", "corrected", "cluster", "anytime"}


def test_demo_without_html_prints_the_report_and_loads_no_plotting(tmp_path):
    code = ("import sys\nfrom llm_power.cli.main import main\nrc = main(['demo', '--no-html'])\n"
            "print('MPL', 'matplotlib' in sys.modules, rc)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert "MPL False 0" in out.stdout
    assert "MMLU-Pro" in out.stdout and "unresolved" in out.stdout and "report: " not in out.stdout
    assert not (tmp_path / "report.html").exists()


def test_demo_data_reproduces_published_accuracies(shared_data):
    # bundled copy == ../shared/data/mmlu_pro_tiger/models.csv acc_strict
    import csv

    from llm_power.io.demo import load_mmlu_pro

    data = load_mmlu_pro()
    models, x = data.models, data.scores
    with open(shared_data / "mmlu_pro_tiger" / "models.csv", encoding="utf-8") as fh:
        published = {r["model"]: float(r["acc_strict"]) for r in csv.DictReader(fh)}
    assert len(models) == 26
    for k, name in enumerate(models):
        assert round(x[:, k].mean(), 6) == pytest.approx(published[name], abs=1e-6)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["ci", "21", "20"], "llm-power ci: error: K must not exceed N; got k=21 > n=20.\n"),  # the CLI's names
        (["ci", "-1", "20"], "llm-power ci: error: K must be non-negative; got -1.\n"),
        (["ci", "3", "0"], "llm-power ci: error: N must be >= 1; got 0.\n"),
        (["coverage", "--n", "10", "--p", "1.5"], "llm-power coverage: error: --p must be in [0, 1]; got 1.5.\n"),
    ],
)
def test_bad_values_checked_after_parsing_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)  # usage errors as argparse's, whether found while parsing or after
    assert code == 2 and out == "" and err == message


@pytest.mark.parametrize(
    "argv",
    [["ci", "x", "20"], ["ci", "17"], ["ci", "17", "20", "--method", "wilsn"], ["nosuch"],
     ["ci", "3", "20", "--confidence-level", "1.5"],
     ["coverage", "--p", "0.5"], ["ci", "17", "20", "--format", "xml"]],
)
def test_usage_errors_exit_2(capsys, argv):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    # one line: the error and where to look, no usage block
    assert len(err.strip().splitlines()) == 1 and ": error: " in err and "--help)" in err


def test_traceback_flag_reraises():
    with pytest.raises(ValueError, match="must not exceed"):
        main(["ci", "21", "20", "--traceback"])


def _console(*args):
    exe = BIN / "llm-power"
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env={**os.environ, "COLUMNS": "100"})


def test_console_script_and_module_entry_points():
    res = _console("ci", "17", "20", "--format", "json")
    assert res.returncode == 0
    assert json.loads(res.stdout)["intervals"][0]["low"] == proportion_ci(17, 20).low
    mod = subprocess.run([sys.executable, "-m", "llm_power", "--version"], capture_output=True, text=True)
    assert mod.returncode == 0 and mod.stdout.startswith("llm-power ")


def test_console_script_bad_value_has_no_traceback():
    res = _console("ci", "21", "20")
    assert res.returncode == 2
    assert res.stderr.count("\n") == 1 and "Traceback" not in res.stderr
    res = _console("ci", "abc", "20")
    assert res.returncode == 2 and "Traceback" not in res.stderr
