"""Receipts (issue 47, part 5): the statistics behind every verdict, and ``verify`` recomputing every
verdict from them alone, bit for bit.

The expected values come from elsewhere: the full diagnose on the items (its columns, compared with
``np.array_equal``, not through the receipt's own comparison) and the discordant counts counted item by
item with numpy -- never a snapshot of a receipt.
"""

from __future__ import annotations

import copy
import json
import warnings

import numpy as np
import pytest

import llm_power as lp
from llm_power import DataError
from llm_power.cli.main import main
from llm_power.io.demo import load_mmlu_pro, mmlu_pro_path
from llm_power.resolution import ReceiptSource, diagnose_source
from llm_power.resolution import dump_receipt as dumps
from llm_power.resolution import receipt_digest as content_digest


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.fixture(scope="module")
def mmlu():
    """The bundled MMLU-Pro (26 models, 12,032 items, 14 categories) under IID, Holm, cluster, anytime."""
    data = load_mmlu_pro()
    diag = _quiet(lp.diagnose, data, correction="holm", anytime=True, rng=0, cluster_resamples=200,
                  cluster_nstar_sims=100)  # fewer draws than the defaults (the demo's test runs those)
    doc = lp.receipt(diag, inputs=[mmlu_pro_path()], cluster_field="category")
    return data, diag, doc


@pytest.fixture(scope="module")
def mmlu_check(mmlu):
    return lp.verify_receipt(mmlu[2])


def _rediagnose(doc):
    """The receipt's statistics through diagnose's own code path (independent of verify's comparison)."""
    options = lp.DiagnoseOptions.create(**doc["settings"]["options"]).replace(top=None)
    src = ReceiptSource(doc["statistics"], "<test>")
    return _quiet(diagnose_source, src, list(src.models), options, rng=doc["settings"]["seed"])


def _assert_same_columns(fresh, diag):
    assert list(fresh.columns) == list(diag.columns)
    for key in diag.columns:
        a, b = np.asarray(fresh.columns[key]), np.asarray(diag.columns[key])
        if a.dtype.kind == "f":
            assert np.array_equal(a.view(np.int64), b.view(np.int64)), key  # the same bits
        else:
            assert np.array_equal(a, b), key
    assert fresh.n_unresolved == diag.n_unresolved
    assert fresh.tie_groups == diag.tie_groups
    assert fresh.rank_intervals == diag.rank_intervals
    assert fresh.cluster_robustness == diag.cluster_robustness


# ---- MMLU-Pro: every verdict, bit for bit ------------------------------------------------------------


def test_verify_reproduces_every_verdict_of_mmlu_pro(mmlu, mmlu_check):
    _, diag, _ = mmlu
    check = mmlu_check
    assert check.ok and check.digest_ok and check.mismatches == ()
    assert check.regimes == ("iid", "corrected", "cluster", "anytime")
    assert check.n_pairs == len(diag.columns["delta"]) == 25
    assert check.values_checked > 1_000
    assert "OK: every verdict reproduced bit for bit" in check.summary()


def test_the_receipts_statistics_give_the_full_diagnosis_bit_for_bit(mmlu):
    _, diag, doc = mmlu
    _assert_same_columns(_rediagnose(json.loads(dumps(doc))), diag)  # through the file's text


def test_the_receipts_counts_are_the_items_counts(mmlu):
    data, _, doc = mmlu
    stats = doc["statistics"]
    x = data.scores
    col = {m: k for k, m in enumerate(data.models)}
    labels = sorted(set(data.clusters))
    cl = np.array([labels.index(c) for c in data.clusters])
    assert stats["n"] == x.shape[0] and stats["binary"] is True
    assert stats["model_correct"] == [int(x[:, col[m]].sum()) for m in stats["models"]]
    assert stats["clusters"]["sizes"] == np.bincount(cl).tolist()
    assert len(stats["pairs"]) == 26 * 25 // 2  # every pair: the tie groups use them all
    for row in stats["pairs"][:30]:
        a, b = x[:, col[row["model_a"]]], x[:, col[row["model_b"]]]
        assert (row["b"], row["c"]) == (int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1))))
        for g in range(len(labels)):
            sel = cl == g
            assert row["cluster_b"][g] == int(np.sum((a[sel] == 1) & (b[sel] == 0)))
            assert row["cluster_c"][g] == int(np.sum((a[sel] == 0) & (b[sel] == 1)))


def test_the_receipt_records_settings_version_and_inputs(mmlu):
    _, diag, doc = mmlu
    assert doc["receipt_version"] == 1 and doc["llm_power_version"] == lp.__version__
    opts = doc["settings"]["options"]
    assert (opts["correction"], opts["anytime"], opts["cluster_method"], opts["alpha"]) == ("holm", True, "cr2", 0.05)
    assert doc["settings"]["seed"] == 0 and doc["settings"]["cluster_field"] == "category"
    assert doc["settings"]["regimes"] == ["iid", "corrected", "cluster", "anytime"]
    import hashlib
    from pathlib import Path

    expected = hashlib.sha256(Path(mmlu_pro_path()).read_bytes()).hexdigest()
    assert [i["sha256"] for i in doc["inputs"]] == [expected]
    body = {k: v for k, v in doc.items() if k != "digest"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    assert doc["digest"] == {"algorithm": "sha256", "value": hashlib.sha256(canonical.encode()).hexdigest()}
    assert doc["report"]["n_unresolved"] == diag.n_unresolved
    assert lp.receipt(diag, inputs=[mmlu_pro_path()], cluster_field="category") == doc  # deterministic


# ---- edited receipts are refused ------------------------------------------------------------------------


def test_a_changed_b_is_refused_by_the_digest_and_the_recomputed_verdict(mmlu):
    doc = copy.deepcopy(mmlu[2])
    pair = doc["statistics"]["pairs"][0]
    pair["b"] += 40
    check = lp.verify_receipt(doc)
    assert not check.ok and not check.digest_ok
    lines = check.mismatches
    assert lines[0].startswith("digest: recorded sha256")
    assert any("statistics.pairs[0].cluster_b: sum to" in m for m in lines)
    first = f"pair 1 ({mmlu[1].columns['model_a'][0]} > {mmlu[1].columns['model_b'][0]})"
    assert any(m.startswith(f"{first}, regime iid, field pvalue: recorded") for m in lines)
    assert any(m.startswith(f"{first}, regime iid, field b: recorded") for m in lines)


def test_a_consistent_forgery_with_a_fresh_digest_is_refused_by_the_recomputation(mmlu):
    """b and c both moved (the pair stays consistent with the models' totals), a cluster's counts with
    them, and the digest recomputed: only the recomputed verdicts can tell."""
    doc = copy.deepcopy(mmlu[2])
    pair = doc["statistics"]["pairs"][0]
    for key in ("b", "c"):
        pair[key] += 25
        pair[f"cluster_{key}"][0] += 25
    doc["digest"]["value"] = content_digest({k: v for k, v in doc.items() if k != "digest"})
    check = lp.verify_receipt(doc)
    assert check.digest_ok and not check.ok
    assert any(", regime iid, field pvalue: recorded" in m for m in check.mismatches)
    assert any(", regime cluster, field pvalue_cluster: recorded" in m for m in check.mismatches)


def test_a_changed_input_hash_is_refused(mmlu):
    doc = copy.deepcopy(mmlu[2])
    doc["inputs"][0]["sha256"] = "0" * 64
    check = lp.verify_receipt(doc)
    assert not check.ok and not check.digest_ok
    assert len(check.mismatches) == 1 and check.mismatches[0].startswith("digest:")


def test_a_changed_recorded_verdict_is_refused(mmlu):
    doc = copy.deepcopy(mmlu[2])
    flags = doc["report"]["pairs"]["resolved_cluster"]
    flags[3] = not flags[3]
    check = lp.verify_receipt(doc)
    assert not check.ok
    assert any(m.startswith("pair 4 (") and ", regime cluster, field resolved_cluster: " in m for m in check.mismatches)


# ---- other designs: graded scores, few items, other clustered tests, all pairs ---------------------------


def _graded(n, m=5, clusters=None, seed=3):
    rng = np.random.default_rng(seed)
    skill = np.linspace(0.62, 0.5, m)
    x = np.clip(skill + rng.normal(0, 0.25, (n, m)), 0, 1)  # graded scores in [0, 1]
    return x, None if clusters is None else rng.integers(0, clusters, n)


@pytest.mark.parametrize(("n", "clusters", "settings"), [
    (400, 12, {"correction": "bh", "anytime": True, "pairs": "all"}),
    (400, 12, {"cluster_method": "cv3", "correction": "by"}),
    (20, None, {"correction": "holm"}),  # few items: the permutation test of the differences
])
def test_graded_receipts_reproduce_the_full_diagnosis(n, clusters, settings):
    x, cl = _graded(n, clusters=clusters)
    diag = _quiet(lp.diagnose, x, cluster=cl, rng=5, cluster_resamples=50, cluster_nstar_sims=20, **settings)
    doc = json.loads(dumps(lp.receipt(diag)))
    assert doc["statistics"]["binary"] is False and "mean_d" in doc["statistics"]["pairs"][0]
    assert (doc["statistics"]["scores"] is not None) == (n < 30)
    check = lp.verify_receipt(doc)
    assert check.ok, check.mismatches[:5]
    _assert_same_columns(_rediagnose(doc), diag)
    row = doc["statistics"]["pairs"][0]  # the recorded sums are the items' (to rounding: another summation order)
    a, b = list(diag.models).index(row["model_a"]), list(diag.models).index(row["model_b"])
    d = x[:, diag.order[a]] - x[:, diag.order[b]]
    assert row["mean_d"] == pytest.approx(d.mean(), rel=1e-12)
    assert row["ss_d"] == pytest.approx(np.sum((d - d.mean()) ** 2), rel=1e-12)


def test_the_wild_cluster_bootstrap_is_replayed_from_its_seed():
    rng = np.random.default_rng(8)
    x = (rng.random((600, 4)) < [0.7, 0.66, 0.6, 0.5]).astype(int)
    cl = rng.integers(0, 10, 600)
    diag = _quiet(lp.diagnose, x, cluster=cl, cluster_method="wild", rng=11, cluster_resamples=50,
                  cluster_nstar_sims=20)
    doc = lp.receipt(diag)
    assert lp.verify_receipt(doc).ok
    _assert_same_columns(_rediagnose(doc), diag)
    doc["settings"]["seed"] = 12  # another seed: other wild draws, other p-values -- and another digest
    check = lp.verify_receipt(doc)
    assert not check.ok and any("field pvalue_cluster" in m for m in check.mismatches)


def test_top_k_and_the_method_on_a_diagnosis():
    rng = np.random.default_rng(9)
    x = (rng.random((800, 6)) < [0.7, 0.68, 0.6, 0.55, 0.5, 0.4]).astype(int)
    diag = lp.diagnose(x, top=4, rng=0)
    doc = lp.receipt(diag)
    assert doc["settings"]["options"]["top"] == 4
    assert len(doc["statistics"]["models"]) == 4 and lp.verify_receipt(doc).ok


def test_a_diagnosis_that_cannot_be_replayed_is_refused():
    rng = np.random.default_rng(4)
    x = (rng.random((600, 3)) < [0.7, 0.65, 0.6]).astype(int)
    cl = rng.integers(0, 12, 600)
    diag = _quiet(lp.diagnose, x, cluster=cl, rng=np.random.default_rng(1), cluster_resamples=50,
                  cluster_nstar_sims=20)
    with pytest.raises(ValueError, match="cannot be replayed .* integer `rng` seed"):
        lp.receipt(diag)
    with pytest.raises(TypeError, match="`diagnosis` must be a Diagnosis"):
        lp.receipt(object())


def test_runs_are_not_covered():
    from llm_power.io.demo import load_reruns

    diag = _quiet(lp.diagnose, runs=load_reruns(), rng=0, cluster_resamples=0, cluster_nstar_sims=0)
    with pytest.raises(ValueError, match="run regime"):
        lp.receipt(diag)


# ---- the receipt is untrusted input ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_doc():
    rng = np.random.default_rng(2)
    x = (rng.random((300, 3)) < [0.7, 0.6, 0.5]).astype(int)
    return lp.receipt(lp.diagnose(x, models=["a", "b", "c"], rng=0))


@pytest.mark.parametrize(("edit", "field"), [
    (lambda d: d.update(receipt_version=2), "receipt_version"),
    (lambda d: d.pop("statistics"), "statistics"),
    (lambda d: d["statistics"]["pairs"][0].update(b="12"), "statistics.pairs[0].b"),
    (lambda d: d["statistics"]["pairs"][0].update(b=-1), "statistics.pairs[0].b"),
    (lambda d: d["statistics"]["pairs"][1].update(model_a="zzz"), "statistics.pairs[1].model_a"),
    (lambda d: d["statistics"].update(model_correct=[1, 2]), "statistics.model_correct"),
    (lambda d: d["statistics"].update(n=True), "statistics.n"),
    (lambda d: d["settings"]["options"].update(alpha=2), "settings.options"),
    (lambda d: d["settings"].update(seed="0"), "settings.seed"),
    (lambda d: d["digest"].update(algorithm="md5"), "digest.algorithm"),
    (lambda d: d["statistics"].update(pairs=d["statistics"]["pairs"][:1]), "statistics.pairs"),
])
def test_malformed_receipts_are_one_error_naming_the_field(small_doc, edit, field):
    doc = copy.deepcopy(small_doc)
    edit(doc)
    with pytest.raises(DataError) as info:
        lp.verify_receipt(doc)
    assert info.value.field == field and "\n" not in str(info.value)


def test_a_receipt_file_is_bounded_and_parsed_strictly(small_doc, tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    path.write_text(dumps(small_doc), encoding="utf-8")
    assert lp.verify_receipt(path).ok
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (2 << 20) + dumps(small_doc).encode())
    monkeypatch.setenv("LLM_POWER_MAX_RECEIPT_MB", "1")
    with pytest.raises(DataError, match="LLM_POWER_MAX_RECEIPT_MB"):
        lp.verify_receipt(big)
    dup = tmp_path / "dup.json"
    dup.write_text('{"receipt_version": 1, "receipt_version": 1}', encoding="utf-8")
    with pytest.raises(DataError, match="a key appears twice"):
        lp.verify_receipt(dup)
    for text in ("[1, 2]", "not json"):
        (tmp_path / "bad.json").write_text(text, encoding="utf-8")
        with pytest.raises(DataError, match="bad.json"):
            lp.verify_receipt(tmp_path / "bad.json")


# ---- the command line --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wide_csv(tmp_path_factory):
    rng = np.random.default_rng(6)
    d = tmp_path_factory.mktemp("receipt")
    x = (rng.random((900, 4)) < [0.72, 0.7, 0.62, 0.5]).astype(int)
    rows = [f"q{i},{'abcdefghij'[i % 10]}," + ",".join(map(str, r)) for i, r in enumerate(x)]
    (d / "scores.csv").write_text("item,category,m-a,m-b,m-c,m-d\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return d


def test_cli_diagnose_receipt_then_verify(wide_csv, capsys):
    scores, receipt = wide_csv / "scores.csv", wide_csv / "receipt.json"
    argv = ["diagnose", str(scores), "--cluster", "category", "--correction", "holm", "--anytime",
            "--receipt", str(receipt), "--cluster-resamples", "100", "--cluster-nstar-sims", "50"]
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["verify", str(receipt), "--items", str(scores)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "OK: every verdict reproduced bit for bit" and "inputs: 1 file(s)" in out
    assert main(["verify", str(receipt), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True
    doc = json.loads(receipt.read_text("utf-8"))
    doc["statistics"]["pairs"][0]["c"] += 5
    (wide_csv / "edited.json").write_text(json.dumps(doc), encoding="utf-8")
    assert main(["verify", str(wide_csv / "edited.json"), "--max-lines", "3"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("REFUSED: ") and sum(line.startswith("MISMATCH ") for line in out) == 3
    (wide_csv / "other.csv").write_text("item,m-a\nq1,1\n", encoding="utf-8")
    assert main(["verify", str(receipt), "--items", str(wide_csv / "other.csv")]) == 1
    out = capsys.readouterr().out
    assert "other.csv: sha256" in out and "recorded, not among the files given" in out


def test_cli_demo_receipt(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--no-html", "--top", "5", "--receipt", "r.json"]) == 0
    capsys.readouterr()
    assert main(["verify", "r.json", "--items", mmlu_pro_path()]) == 0
    assert "OK: every verdict" in capsys.readouterr().out


def test_mmlu_pro_tiger_by_source(shared_data, tmp_path):
    """The published MMLU-Pro results (29 models; the items every model has), the top 8 with 91 source
    clusters and the cluster jackknife."""
    path = shared_data / "mmlu_pro_tiger" / "mmlu_pro_correct.csv.gz"
    import pandas as pd

    frame = pd.read_csv(path).dropna()
    items = pd.read_csv(shared_data / "mmlu_pro_tiger" / "items.csv").set_index("question_id")
    models = [c for c in frame.columns if c not in ("question_id", "category")]
    x = frame[models].to_numpy(dtype=float)
    src = items.loc[frame["question_id"], "src"].to_numpy()
    diag = _quiet(lp.diagnose, x, models=models, cluster=src, correction="holm", anytime=True, top=8,
                  cluster_method="cv3", rng=0, cluster_resamples=100, cluster_nstar_sims=20)
    out = tmp_path / "tiger.json"
    lp.write_receipt(diag, out, inputs=[path], cluster_field="src")
    check = lp.verify_receipt(out, items=[path])
    assert check.ok and check.inputs_checked == 1, check.mismatches[:5]
    assert check.regimes == ("iid", "corrected", "cluster", "anytime")
    assert check.n_pairs == len(diag.columns["delta"]) == 7
