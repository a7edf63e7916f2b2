"""compare(): decision tree, resolution quantities and the SPEC §5 planning values."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy import stats

from conftest import table_arrays
from llm_power._kernel.paired_intervals import mcnemar_interval
from llm_power import FewClustersWarning, compare, mcnemar, paired_t, permutation_test
from llm_power.cli.main import main


def test_spec_resolution_from_counts():
    # SPEC §5: from counts b = 3000, c = 2000, n = 10000 -> N* 385; MDE 0.0196111
    a, b = table_arrays(2500, 3000, 2000, 2500)
    res = compare(a, b)
    assert res.n_star == 385
    assert round(res.mde, 7) == 0.0196111
    assert res.b == 3000 and res.c == 2000


def test_q_equals_t_squared_over_k():
    k = (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) ** 2  # 7.84888
    assert k == pytest.approx(7.84888, abs=1e-5)
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = int(rng.integers(50, 2000))
        a = (rng.random(n) < 0.7).astype(float)
        b = np.where(rng.random(n) < 0.8, a, 1 - a)
        res = compare(a, b)
        d = a - b
        t = np.sqrt(n) * d.mean() / d.std(ddof=0)  # plug-in sigma for 0/1 data
        assert res.q == pytest.approx(t**2 / k, rel=1e-10)
        assert res.resolved == (t**2 >= k)
        x = rng.random(n)
        y = 0.8 * x + 0.2 * rng.random(n)
        g = compare(x, y)
        tg = paired_t(x, y).statistic
        assert g.q == pytest.approx(tg**2 / k, rel=1e-10)


def test_decision_tree_choices():
    a, b = table_arrays(141, 9, 1, 49)
    res = compare(a, b)
    assert res.method == "mcnemar_exact" and "b + c = 10 < 25" in res.reason
    assert res.pvalue == mcnemar(a, b).pvalue
    a2, b2 = table_arrays(117, 33, 25, 25)
    res2 = compare(a2, b2)
    assert res2.method == "mcnemar_asymptotic"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert res2.pvalue == mcnemar(a2, b2, method="asymptotic").pvalue
    rng = np.random.default_rng(1)
    x = rng.random(100)
    y = x - 0.05 + 0.1 * rng.random(100)
    assert compare(x, y).method == "paired_t"
    # few items, clearly non-normal differences -> permutation
    xs = np.r_[np.zeros(10), 5.0, 6.0]
    ys = np.r_[np.full(10, 0.1), 0.0, 0.0]
    small = compare(xs, ys)
    assert small.method == "permutation" and "Shapiro-Wilk" in small.reason
    assert small.pvalue == permutation_test(xs, ys).pvalue
    with pytest.warns(FewClustersWarning, match="only 20 clusters"):
        clustered = compare(a, b, cluster=np.arange(200) % 20, rng=0)
    assert clustered.method == "cluster_t" and clustered.n_clusters == 20 and clustered.regime == "cluster"
    assert compare(a, b, method="permutation").pvalue == pytest.approx(mcnemar(a, b).pvalue)


def test_confidence_interval_methods():
    a, b = table_arrays(141, 9, 1, 49)
    res = compare(a, b)  # exact McNemar: the melded interval that inverts it (oracles in test_kernel.py)
    assert res.ci_method.startswith("exact McNemar")
    assert res.confidence_interval() == mcnemar_interval(9, 1, 200, variant="exact", level=0.95)
    assert res.confidence_interval(0.9) == mcnemar_interval(9, 1, 200, variant="exact", level=0.9)
    assert res.pvalue <= 0.05 and res.confidence_interval().low > 0  # p = 0.0215: the interval excludes 0
    rng = np.random.default_rng(2)
    x = rng.random(60)
    y = x - 0.05 + 0.1 * rng.random(60)
    g = compare(x, y)
    d = x - y
    half = stats.t.ppf(0.975, 59) * d.std(ddof=1) / np.sqrt(60)
    assert g.confidence_interval() == pytest.approx((d.mean() - half, d.mean() + half))


def test_to_dict_is_plain_json_and_summary_mentions_verdict():
    a, b = table_arrays(141, 9, 1, 49)
    res = compare(a, b)
    payload = json.loads(json.dumps(res.to_dict()))
    for key in ("n", "mean_a", "mean_b", "delta", "method", "statistic", "pvalue", "se_paired", "se_unpaired",
                "phi", "n_star", "mde", "q", "resolved", "b", "c", "ci", "confidence_interval"):
        assert key in payload
    assert "NOT resolved" in res.summary()
    assert "Comparison(" in repr(res) and "\n" not in repr(res)


# --- CLI -------------------------------------------------------------------------------------------

@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(3)
    ids = [f"q{i}" for i in range(120)]
    a = (rng.random(120) < 0.75).astype(int)
    b = np.where(rng.random(120) < 0.8, a, 1 - a)
    subj = [f"s{i % 6}" for i in range(120)]
    fa = tmp_path / "a.csv"
    fa.write_text("item,correct,subject\n" + "".join(f"{i},{x},{s}\n" for i, x, s in zip(ids, a, subj)))
    fb = tmp_path / "b.jsonl"
    fb.write_text("".join(json.dumps({"doc_id": i, "correct": bool(x)}) + "\n" for i, x in reversed(list(zip(ids, b)))))
    wide = tmp_path / "wide.csv"
    wide.write_text("id,m1,m2\n" + "".join(f"{i},{x},{y}\n" for i, x, y in zip(ids, a, b)))
    return fa, fb, wide, a.astype(float), b.astype(float)


def test_cli_compare_two_files_json_equals_api(files, capsys):
    fa, fb, _, a, b = files
    assert main(["compare", str(fa), str(fb), "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    ref = compare(a, b).to_dict()
    for key in ("pvalue", "delta", "n_star", "q", "b", "c", "method"):
        assert payload[key] == ref[key]
    assert payload["model_a"] == fa.stem  # one file per model: the model is named after the file


def test_cli_compare_wide_file_and_cluster(files, capsys):
    fa, _, wide, a, b = files
    assert main(["compare", str(wide), "--models", "m1", "m2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["pvalue"] == compare(a, b).pvalue
    assert main(["compare", str(fa), str(files[1]), "--cluster", "subject", "--format", "json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    # the warning reaches the user as one note line, not as a raw Python warning
    assert "llm-power compare: note: only 6 clusters" in captured.err and "Warning" not in captured.err
    assert payload["method"] == "cluster_t" and payload["n_clusters"] == 6


def test_cli_compare_table(files, capsys):
    fa, fb, *_ = files
    assert main(["compare", str(fa), str(fb)]) == 0
    out = capsys.readouterr().out
    assert "q = N / N*" in out and "N* for this gap" in out


@pytest.mark.parametrize(
    ("content_b", "message"),
    [
        ("item,correct\nq0,1\nq1,0\n", r"not run on the same items \(b lacks 1 of 3 items, first 'q2'\)"),
        ("item,correct\nq0,1\nq0,0\n", r"b\.csv, record line 3, field 'item': duplicate item 'q0' \(first at line 2\)"),
        ("item,correct\nq0,1\nq1,maybe\n", r"b\.csv, record line 3, field 'correct': score 'maybe' is not a number"),
        ("item,correct\nq0,1\nq1,\n", r"b\.csv, record line 3, field 'correct': empty score"),
        # no score column: a wide file whose one model is 'other' -- the same rule as diagnose
        ("item,other\nq0,1\n", r"other lacks 2 of 3 items, first 'q1'"),
        ("", r"b\.csv: the file is empty"),
    ],
)
def test_cli_compare_bad_files_exit_1_one_line(tmp_path, capsys, content_b, message):
    fa = tmp_path / "a.csv"
    fa.write_text("item,correct\nq0,1\nq1,0\nq2,1\n")
    fb = tmp_path / "b.csv"
    fb.write_text(content_b)
    assert main(["compare", str(fa), str(fb)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    import re

    assert re.search(message, err), err


def test_cli_compare_truncated_jsonl(tmp_path, capsys):
    fa = tmp_path / "a.jsonl"
    fa.write_text('{"item": "q0", "score": 1}\n{"item": "q1", "sco')
    fb = tmp_path / "b.jsonl"
    fb.write_text('{"item": "q0", "score": 1}\n')
    assert main(["compare", str(fa), str(fb)]) == 1
    assert "a.jsonl, record line 2: not valid JSON" in capsys.readouterr().err


def test_cli_compare_missing_file_and_usage(tmp_path, capsys):
    assert main(["compare", str(tmp_path / "nope.csv"), str(tmp_path / "b.csv")]) == 1
    assert "nope.csv: file or folder not found" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "one.csv")]) == 1
    with pytest.raises(SystemExit) as info:
        main(["compare", "a.csv", "b.csv", "--method", "ttest"])
    assert info.value.code == 2


def test_cli_does_not_modify_inputs(files, capsys):
    fa, fb, *_ = files
    before = fa.read_bytes(), fb.read_bytes()
    main(["compare", str(fa), str(fb), "--format", "json"])
    assert (fa.read_bytes(), fb.read_bytes()) == before


@pytest.mark.parametrize("kwargs", [{}, {"method": "bootstrap", "rng": 0, "n_resamples": 500},
                                    {"cluster": np.arange(200) % 40}, {"alternative": "greater"}])
def test_comparison_pickles_with_its_interval(kwargs):
    import pickle

    a, b = table_arrays(141, 9, 1, 49)
    res = compare(a, b, **kwargs)
    back = pickle.loads(pickle.dumps(res))
    for level in (0.9, 0.95, 0.99):
        assert back.confidence_interval(level) == res.confidence_interval(level)
    assert back.to_dict() == res.to_dict()


def test_cli_compare_reads_everything_diagnose_reads(capsys):
    # one reader stack (issue 11): harness folders, inspect logs, HELM, lighteval go through
    # read_results -> align_results exactly as in diagnose, and give diagnose's numbers
    fix = __import__("pathlib").Path(__file__).resolve().parents[1] / "fixtures"
    for args, models in [([str(fix / "lm_eval")], None),
                         ([str(fix / "inspect" / "model-a.eval"), str(fix / "inspect" / "model-b.json")], None),
                         ([str(fix / "helm")], None), ([str(fix / "lighteval")], None),
                         ([str(fix / "long.csv")], ["model-a", "model-b"])]:
        assert main(["diagnose", *args, "--format", "json", "--cluster-resamples", "0"]) == 0
        pair = json.loads(capsys.readouterr().out)["pairs"][0]
        argv = ["compare", *args, "--format", "json"] + (["--models", *models] if models else [])
        assert main(argv) == 0, capsys.readouterr().err
        one = json.loads(capsys.readouterr().out)
        sign = 1 if one["model_a"] == pair["model_a"] else -1
        assert one["delta"] == pytest.approx(sign * pair["delta"]) and one["pvalue"] == pytest.approx(pair["pvalue"])


def test_interpreter_housekeeping_warnings_are_not_notes(files, capsys, monkeypatch):
    # a ResourceWarning (an unclosed socket or file collected mid-run, maybe not even ours) is the
    # interpreter's housekeeping: it never becomes a "note" line beside the user's data notes
    import warnings

    import llm_power.cli.main as cli_main

    real = cli_main._run

    def noisy(args):
        warnings.warn("unclosed <socket.socket fd=19>", ResourceWarning, stacklevel=1)
        warnings.warn("a data note", UserWarning, stacklevel=1)
        return real(args)

    monkeypatch.setattr(cli_main, "_run", noisy)
    fa, fb, *_ = files
    assert main(["compare", str(fa), str(fb), "--format", "json"]) == 0
    err = capsys.readouterr().err
    assert "a data note" in err  # the filter is not "drop every note"
    assert "unclosed" not in err
