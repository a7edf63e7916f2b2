"""Leaderboards at scale (issue 13): the fast paths of diagnose equal slow, obvious computations.

Every fast path (pair counts without the Gram matrix, the float32 Gram in row blocks, per-cluster
counts by matrix products, per-pair arithmetic in cache-sized blocks, pair-chunked cluster
resampling, vectorised rank intervals) is checked against a slow implementation written here from
the definition, or against the same function forced down its other path.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from llm_power._kernel import sufficient as _sufficient, verdict as _verdict
from llm_power import diagnose
from llm_power._kernel.sufficient import both_counts, gram_f32, pair_sums_binary, pair_sums_graded
from llm_power._kernel.paired_intervals import newcombe_arrays
from llm_power.resolution import tie_groups_and_rank_intervals


def _binary(rng, n=400, m=12, clusters=7):
    x = (rng.random((n, m)) < rng.uniform(0.2, 0.9, m)).astype(float)
    return x, rng.integers(0, clusters, size=n)


def test_both_counts_equal_brute_force_on_both_paths(monkeypatch):
    monkeypatch.setattr(_sufficient, "DIRECT_MIN_MODELS", 2)  # small matrices down the many-model path too
    rng = np.random.default_rng(1)
    x, _ = _binary(rng, m=30)
    few_i, few_j = np.arange(29), np.arange(1, 30)  # 29 pairs < 30^2 / 100: direct products
    all_i, all_j = np.triu_indices(30, k=1)  # 435 pairs: the Gram matrix
    for i, j in ((few_i, few_j), (all_i, all_j)):
        slow = np.array([int(np.sum((x[:, a] == 1) & (x[:, b] == 1))) for a, b in zip(i, j, strict=True)])
        assert np.array_equal(both_counts(x, i, j), slow)


def test_gram_in_row_blocks_is_exact(monkeypatch):
    rng = np.random.default_rng(2)
    x, _ = _binary(rng, n=101, m=9)
    exact = (x.astype(np.int64).T @ x.astype(np.int64)).astype(float)
    assert np.array_equal(gram_f32(x), exact)  # one block
    monkeypatch.setattr(_sufficient, "F32_EXACT_ROWS", 7)  # 15 blocks of at most 7 rows
    assert np.array_equal(gram_f32(x), exact)


@pytest.mark.parametrize("many", [False, True])
def test_per_cluster_counts_equal_the_differences(many, monkeypatch):
    """0/1 pair sums per cluster (counts by matrix products) = the graded path on the differences."""
    monkeypatch.setattr(_sufficient, "DIRECT_MIN_MODELS", 2)
    rng = np.random.default_rng(3)
    x, codes = _binary(rng, m=12)
    i, j = (np.triu_indices(12, k=1) if many else (np.arange(11), np.arange(1, 12)))
    n = x.shape[0]
    b = np.array([np.sum((x[:, a] == 1) & (x[:, c] == 0)) for a, c in zip(i, j, strict=True)], dtype=float)
    c = np.array([np.sum((x[:, a] == 0) & (x[:, cc] == 1)) for a, cc in zip(i, j, strict=True)], dtype=float)
    fast = pair_sums_binary(x, i, j, codes, 7, b, c)
    slow = pair_sums_graded(x, i, j, codes, 7)
    for name in ("delta", "ss", "sizes", "resid", "resid_sq"):
        np.testing.assert_allclose(getattr(fast, name), getattr(slow, name), rtol=0, atol=1e-9)
    assert fast.resid is not None and fast.resid.shape == (7, i.size) and n == x.shape[0]


def _newcombe_paper(n11, n10, n01, n00, level=0.95):
    """Newcombe (1998), method 10, from the paper's text, one table at a time."""
    n = n11 + n10 + n01 + n00
    z = stats.norm.isf((1 - level) / 2)

    def wilson(k):
        p = k / n
        centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)

    p1, p2 = (n11 + n10) / n, (n11 + n01) / n
    (l1, u1), (l2, u2) = wilson(n11 + n10), wilson(n11 + n01)
    a, b, c, d = n11, n10, n01, n00
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    ad_bc = a * d - b * c
    if denom == 0:
        phi = 0.0
    elif ad_bc > n / 2:
        phi = (ad_bc - n / 2) / math.sqrt(denom)
    elif ad_bc >= 0:
        phi = 0.0
    else:
        phi = ad_bc / math.sqrt(denom)
    delta = p1 - p2
    low = delta - math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0))
    high = delta + math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0))
    return max(-1.0, low), min(1.0, high)


def test_vectorised_newcombe_equals_the_paper_table_by_table():
    rng = np.random.default_rng(4)
    tables = rng.integers(0, 60, size=(500, 4))
    tables[:20, 1:3] = 0  # no discordant items
    tables[20:40, 0] = 0
    low, high = newcombe_arrays(*tables.T.astype(float), 0.95)
    slow = np.array([_newcombe_paper(*map(int, t)) for t in tables])
    np.testing.assert_allclose(low, slow[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(high, slow[:, 1], rtol=0, atol=1e-12)


def test_blocked_pair_arithmetic_changes_nothing(monkeypatch):
    rng = np.random.default_rng(5)
    x, codes = _binary(rng, n=600, m=25)
    x[:, 1] = x[:, 0]
    x[:12, 1] = 1 - x[:12, 0]  # a pair with few discordant items: the exact branch inside a block
    kwargs = dict(pairs="all", cluster=codes, correction="holm", anytime=True, cluster_resamples=30, rng=3)
    with pytest.warns(Warning):
        whole = diagnose(x, **kwargs)
    monkeypatch.setattr(_verdict, "PAIR_BLOCK", 37)  # 300 pairs in 9 blocks
    monkeypatch.setattr(_sufficient, "BATCH_ELEMENTS", 3_000)  # resamples and products in many chunks
    monkeypatch.setattr(_sufficient, "DIRECT_MIN_MODELS", 2)
    with pytest.warns(Warning):
        blocked = diagnose(x, **kwargs)
    assert whole.columns.keys() == blocked.columns.keys()
    for key, value in whole.columns.items():
        if value.dtype == object:
            assert value.tolist() == blocked.columns[key].tolist(), key
        else:
            np.testing.assert_array_equal(value, blocked.columns[key], err_msg=key)
    assert whole.cluster_robustness == blocked.cluster_robustness
    assert "exact" in whole.columns["regime"].tolist()


@pytest.mark.parametrize("complete", [True, False])
def test_rank_intervals_equal_the_counting_loop(complete):
    rng = np.random.default_rng(6)
    m = 15
    pair_idx = np.stack(np.triu_indices(m, k=1), axis=1)
    if not complete:  # a family without some pairs: the counts cannot be taken from the ranks
        pair_idx = pair_idx[rng.random(len(pair_idx)) < 0.7]
    resolved = rng.random(len(pair_idx)) < 0.6
    groups, intervals = tie_groups_and_rank_intervals(m, pair_idx, resolved, complete=True)
    for g in range(m):
        above = sum(1 for (a, b), ok in zip(pair_idx, resolved, strict=True) if ok and b == g)
        below = sum(1 for (a, b), ok in zip(pair_idx, resolved, strict=True) if ok and a == g)
        assert intervals[g] == (above + 1, m - below)
    hit = {(int(a), int(b)) for (a, b), ok in zip(pair_idx, resolved, strict=True) if ok}
    for grp in groups:  # runs holding no resolved pair, that one more neighbour would break
        assert not any((a, b) in hit for a in grp for b in grp if a < b)
        lo, hi = grp[0], grp[-1]
        assert lo == 0 or any((lo - 1, b) in hit for b in grp)
        assert hi == m - 1 or any((a, hi + 1) in hit for a in grp)


def test_ranking_does_not_reorder_the_callers_matrix_results():
    """x keeps the caller's column order; the report ranks by mean: a permuted input gives the same report."""
    rng = np.random.default_rng(7)
    x, codes = _binary(rng, n=500, m=8)
    names = [f"m{k}" for k in range(8)]
    perm = rng.permutation(8)
    with pytest.warns(Warning):
        one = diagnose(x, models=names, cluster=codes, rng=1)
    with pytest.warns(Warning):
        two = diagnose(x[:, perm], models=[names[k] for k in perm], cluster=codes, rng=1)
    assert one.models == two.models
    np.testing.assert_array_equal(one.model_ci_low, two.model_ci_low)
    for key, value in one.columns.items():
        if value.dtype != object:
            np.testing.assert_array_equal(value, two.columns[key], err_msg=key)


def test_wide_table_fast_path_equals_the_long_path(tmp_path):
    """A wide table read straight into the matrix = read_results + align_results, with empty cells."""
    from llm_power.io import align_results, read_results
    from llm_power.io.align import align_matrix
    from llm_power.io.harness import read_wide_table

    rng = np.random.default_rng(8)
    x, codes = _binary(rng, n=60, m=5)
    names = ["zeta", "alpha", "m-10", "m-9", "beta"]
    items = [f"q{k}" for k in rng.permutation(60)]  # natural order differs from file order
    lines = ["item,subject," + ",".join(names)]
    for r in range(60):
        cells = ["" if (r, c) in {(3, 1), (7, 4), (7, 1)} else str(int(x[r, c])) for c in range(5)]
        lines.append(f"{items[r]},s{codes[r]}," + ",".join(cells))
    path = tmp_path / "wide.csv"
    path.write_text("\n".join(lines) + "\n")
    slow = align_results(read_results(path, cluster="subject"), on_missing="intersect")
    wide = read_wide_table(path, cluster="subject")
    assert wide is not None
    fast = align_matrix(*wide, on_missing="intersect")
    assert fast.items == slow.items and fast.models == slow.models and fast.clusters == slow.clusters
    np.testing.assert_array_equal(fast.scores, slow.scores)
    assert fast.note == slow.note and fast.dropped == slow.dropped
    from llm_power._core.errors import DataError

    with pytest.raises(DataError) as a:
        align_results(read_results(path, cluster="subject"))
    with pytest.raises(DataError) as b:
        align_matrix(*wide)
    assert str(a.value) == str(b.value)
    assert read_wide_table(tmp_path / "wide.csv", metric="alpha") is None  # a named metric: not a wide table


def test_parquet_pairs_round_trip(tmp_path, capsys):
    """--parquet writes every pair's columns (and the labels) that the JSON report holds."""
    import json

    import pyarrow.parquet as pq

    from llm_power.cli.main import main

    rng = np.random.default_rng(9)
    x, codes = _binary(rng, n=300, m=14)
    path = tmp_path / "wide.csv"
    path.write_text("item,subject," + ",".join(f"m{k}" for k in range(14)) + "\n" + "".join(
        f"q{r},s{codes[r]}," + ",".join(str(int(v)) for v in x[r]) + "\n" for r in range(300)))
    out, js = tmp_path / "pairs.parquet", tmp_path / "r.json"
    assert main(["diagnose", str(path), "--pairs", "all", "--cluster", "subject", "--anytime", "--parquet", str(out),
                 "--json", str(js), "--cluster-resamples", "20"]) == 0
    capsys.readouterr()
    table = pq.read_table(out)
    payload = json.loads(js.read_text())
    assert table.num_rows == len(payload["pairs"]) == 91
    rows = table.to_pylist()
    for row, pair in zip(rows, payload["pairs"], strict=True):
        assert row["model_a"] == pair["model_a"] and row["model_b"] == pair["model_b"]
        for key in ("delta", "pvalue", "n_star", "q", "q_cluster", "resolved_anytime", "test", "regime"):
            assert row[key] == pytest.approx(pair[key]) if isinstance(pair[key], float) else row[key] == pair[key]
    meta = {k.decode(): v.decode() for k, v in table.schema.metadata.items()}
    assert json.loads(meta["llm_power.labels"]) == payload["labels"]
    assert json.loads(meta["llm_power.n_unresolved"]) == payload["n_unresolved"]


def test_many_models_html_and_markdown_summarise(monkeypatch):
    from llm_power.report import html as html_mod
    from llm_power.report import markdown as md_mod

    rng = np.random.default_rng(10)
    x, _ = _binary(rng, n=200, m=30)
    diag = diagnose(x, pairs="all")
    monkeypatch.setattr(html_mod, "MATRIX_SIDE", 8)  # 30 models: cells pool 4 ranks a side
    page = html_mod.render_html(diag)
    assert "each cell the smallest q of a 4 x 4 block of ranks" in page
    monkeypatch.setattr(md_mod, "MAX_ROWS", 50)
    text = md_mod.render_markdown(diag)
    assert "The first 50 of 435 pairs" in text
    assert sum(1 for line in text.splitlines() if line.startswith("| ") and line[2:3].isdigit()) == 50


def test_progress_reports_reach_a_listener(monkeypatch):
    from llm_power._core.progress import listening

    rng = np.random.default_rng(11)
    x, codes = _binary(rng, n=200, m=20)
    seen: list[tuple[str, int, int]] = []
    monkeypatch.setattr(_verdict, "PAIR_BLOCK", 50)  # 190 pairs in 4 blocks
    with listening(lambda task, done, total: seen.append((task, done, total))), pytest.warns(Warning):
        diagnose(x, pairs="all", cluster=codes, cluster_resamples=10, rng=0)
    fused = [(d, t) for task, d, t in seen if task == "pairs: tests, intervals, N* and q"]  # the IID pass
    assert fused == [(0, 190), (50, 190), (100, 190), (150, 190), (190, 190)]  # named from its start
    assert any(task == "cluster resamples" for task, _, _ in seen)
    seen.clear()
    diagnose(x, pairs="all")  # nobody listening: nothing reported, nothing printed
    assert seen == []


def test_progress_bar_on_a_terminal_and_quiet(monkeypatch, tmp_path):
    import io

    from llm_power.cli.main import main

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    rng = np.random.default_rng(12)
    x, _ = _binary(rng, n=100, m=12)
    path = tmp_path / "w.csv"
    path.write_text("item," + ",".join(f"m{k}" for k in range(12)) + "\n" + "".join(
        f"q{r}," + ",".join(str(int(v)) for v in x[r]) + "\n" for r in range(100)))
    monkeypatch.setattr(_verdict, "PAIR_BLOCK", 5)
    monkeypatch.setenv("LLM_POWER_PROGRESS_DELAY", "0")  # a bar even for this short job
    for quiet, expect in ((False, True), (True, False)):
        out, err = Tty(), Tty()
        monkeypatch.setattr("sys.stdout", out)
        monkeypatch.setattr("sys.stderr", err)
        assert main(["diagnose", str(path), "--pairs", "all", *(["--quiet"] if quiet else [])]) == 0
        assert ("pairs: tests, intervals, N* and q" in err.getvalue()) == expect
        assert "Verdict" in out.getvalue()


def test_compare_reads_a_wide_table_like_the_long_one(tmp_path, capsys):
    import json

    from llm_power.cli.main import main

    rng = np.random.default_rng(13)
    x, codes = _binary(rng, n=120, m=6)
    wide, long = tmp_path / "w.csv", tmp_path / "l.csv"
    wide.write_text("item,subject," + ",".join(f"m{k}" for k in range(6)) + "\n" + "".join(
        f"q{r},s{codes[r]}," + ",".join("" if (r == 5 and k == 2) else str(int(x[r, k])) for k in range(6)) + "\n"
        for r in range(120)))
    long.write_text("model,item,score,subject\n" + "".join(
        f"m{k},q{r},{int(x[r, k])},s{codes[r]}\n" for k in range(6) for r in range(120) if not (r == 5 and k == 2)))
    outs = []
    for path in (wide, long):
        assert main(["compare", str(path), "--models", "m2", "m4", "--cluster", "subject", "--on-missing",
                     "intersect", "--format", "json"]) == 0
        outs.append(json.loads(capsys.readouterr().out))
    assert outs[0] == outs[1] and outs[0]["n"] == 119


def _align_slow(frame, on_missing):
    """The aligner written from its definition with per-model sets (the implementation before
    issue 13): items every model has, in natural order; models sorted; clusters per item.
    """
    import re

    def natural(item):
        return tuple(int(t) if t.isascii() and t.isdigit() else t for t in re.split(r"([0-9]+)", str(item)))

    models = sorted(set(frame["model"]), key=str)
    per_model = {m: set(frame.loc[frame["model"] == m, "item"]) for m in models}
    all_items = set().union(*per_model.values())
    common = set.intersection(*per_model.values())
    if common != all_items and on_missing == "error":
        return ("error", {m: min(all_items - per_model[m], key=lambda i: (natural(i), str(i)))
                          for m in models if all_items - per_model[m]})
    items = sorted(common, key=lambda i: (natural(i), str(i)))
    scores = np.full((len(items), len(models)), np.nan)
    for r in frame.itertuples():
        if r.item in common:
            scores[items.index(r.item), models.index(r.model)] = r.score
    clusters = [str(frame.loc[frame["item"] == it, "cluster"].iloc[0]) for it in items]
    return items, models, scores, clusters, {m: len(per_model[m] - common) for m in models}


@pytest.mark.parametrize("on_missing", ["intersect", "error"])
def test_vectorised_aligner_equals_per_model_sets(on_missing):
    import pandas as pd

    from llm_power._core.errors import DataError
    from llm_power.io import align_results

    rng = np.random.default_rng(14)
    for trial in range(6):
        m, n = int(rng.integers(2, 7)), int(rng.integers(5, 40))
        rows = [(f"m{k}", f"t:{i}", float(rng.random() < 0.5), f"c{i % 3}")
                for k in range(m) for i in range(n) if trial % 2 == 0 or rng.random() > 0.1]
        rng.shuffle(rows)
        frame = pd.DataFrame(rows, columns=["model", "item", "score", "cluster"])
        slow = _align_slow(frame, on_missing)
        if slow[0] == "error":
            with pytest.raises(DataError) as info:
                align_results(frame, on_missing=on_missing)
            for model, first in slow[1].items():
                assert f"{model} lacks" in str(info.value) and f"first {first!r}" in str(info.value)
            continue
        fast = align_results(frame, on_missing=on_missing)
        items, models, scores, clusters, dropped = slow
        assert fast.items == items and fast.models == models and fast.clusters == clusters
        np.testing.assert_array_equal(fast.scores, scores)
        assert fast.dropped == dropped


def _lm_eval_file(folder, lines):
    import json

    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "samples_demo_2026-01-21T03-44-18.458309.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def _sample(i, **over):
    rec = {"doc_id": i, "doc": {"subject": f"s{i % 3}", "text": "x" * 50}, "target": str(i % 4),
           "arguments": {"a": [1, 2]}, "resps": [["long response"]], "filter": "none", "metrics": ["acc"],
           "acc": float(i % 2)}
    rec.update(over)
    return rec


CASES = {
    "clean": [_sample(i) for i in range(30)],
    "int targets and string ids": [_sample(i, target=i % 4, doc_id=f"d{i}") for i in range(30)],
    "two filters": [_sample(i, filter=f) for i in range(20) for f in ("strict", "flex")],
    "a bool metric": [_sample(i, acc=bool(i % 2)) for i in range(10)],
    "a duplicate doc id": [_sample(i) for i in range(10)] + [_sample(3)],
    "two filters, one (filter, doc id) twice": [_sample(i, filter=f) for i in range(8) for f in ("strict", "flex")]
    + [_sample(2, filter="flex")],
    "a missing metric": [_sample(i) for i in range(10)] + [{k: v for k, v in _sample(10).items() if k != "acc"}],
    "a numeric cluster label": [_sample(i, doc={"subject": i % 3}) for i in range(10)],
    "a missing cluster label": [_sample(i) for i in range(5)] + [_sample(5, doc={})],
    "a later line of another type": [_sample(i) for i in range(5)] + [_sample(5, target=[1, 2])],
    "a blank cluster label": [_sample(i) for i in range(5)] + [_sample(5, doc={"subject": " "})],
    "no metric names on a later line": [_sample(i) for i in range(5)] + [_sample(5, metrics=[])],
    "a later line with another first metric": [_sample(i) for i in range(5)] + [_sample(5, metrics=["em"], em=1.0)],
    "metric names as a text": [_sample(i) for i in range(5)] + [_sample(5, metrics='["acc"]')],
    "a later null doc": [_sample(i) for i in range(5)] + [_sample(5, doc=None)],
    "a later text score": [_sample(i) for i in range(5)] + [_sample(5, acc="1")],
    "a later bool score": [_sample(i) for i in range(5)] + [_sample(5, acc=True)],
    "a later null target": [_sample(i) for i in range(5)] + [_sample(5, target=None)],
    "a later text doc id": [_sample(i) for i in range(5)] + [_sample(5, doc_id="5")],
    "a metric name that is null": [_sample(i) for i in range(5)] + [_sample(5, metrics=["acc", None])],
}


#: the reading options each case is read with (a metric given: the names are still checked on every line)
READ_OPTIONS = [{}, {"cluster": "subject"}, {"filter": "strict", "cluster": "subject"}, {"metric": "acc"}]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("options", READ_OPTIONS)
def test_columnar_lm_eval_reader_equals_the_line_reader(tmp_path, monkeypatch, case, options):
    """The fast path reads what the line reader reads, or steps aside (same errors)."""
    from llm_power._core.errors import DataError
    from llm_power.io import harness, read_results

    path = _lm_eval_file(tmp_path / "model-x", CASES[case])
    results = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(harness, "_columns_fast", lambda *a, **k: None)
        try:
            results.append(read_results(path, **options))
        except DataError as exc:
            results.append(str(exc))
    fast_result, slow_result = results
    if isinstance(slow_result, str):
        assert fast_result == slow_result
    else:
        import pandas as pd

        pd.testing.assert_frame_equal(fast_result, slow_result)


def test_columnar_reader_is_used_on_clean_files(tmp_path):
    from llm_power.io.harness import _columns_fast

    path = _lm_eval_file(tmp_path / "model-x", CASES["clean"])
    cols = _columns_fast(path, format="auto", metric=None, cluster="subject", filter_name=None)
    assert cols is not None and cols["model"] == "model-x" and list(cols["item"][:2]) == ["demo:0", "demo:1"]
    assert _columns_fast(_lm_eval_file(tmp_path / "b", CASES["a bool metric"]), format="auto", metric=None,
                         cluster=None, filter_name=None) is None


def test_columnar_reader_on_the_real_lm_eval_file(shared_data, monkeypatch):
    import pandas as pd

    from llm_power.io import harness, read_results

    path = next((shared_data / "formats" / "lm_eval").glob("samples_*.jsonl"))
    fast = read_results(path, cluster="type")
    monkeypatch.setattr(harness, "_columns_fast", lambda *a, **k: None)
    pd.testing.assert_frame_equal(fast, read_results(path, cluster="type"))


def test_parallel_reading_equals_sequential(tmp_path, monkeypatch):
    """Files read in worker processes give the same table, in the same order, and the same errors."""
    import pandas as pd

    from llm_power._core.errors import DataError
    from llm_power.io import harness, read_results

    paths = [_lm_eval_file(tmp_path / f"model-{k}", [_sample(i, acc=float((i + k) % 2)) for i in range(25)])
             for k in range(3)]
    monkeypatch.setenv("LLM_POWER_POLARS", "0")  # with polars installed, lm-eval files are read in this process
    sequential = read_results(paths, cluster="subject")
    monkeypatch.setattr(harness, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    parallel = read_results(paths, cluster="subject")
    pd.testing.assert_frame_equal(parallel, sequential)
    bad = _lm_eval_file(tmp_path / "model-bad", [_sample(i) for i in range(5)] + [_sample(2)])
    with pytest.raises(DataError, match=r"line 6, field 'doc_id': duplicate doc_id 2"):
        read_results([*paths, bad])


def test_folding_parts_equals_concatenating_them():
    """concat_parts (codes against one growing list of values) gives pandas.concat's table:
    missing values, values new in later parts, int and text ids mixed, an all-missing column.
    """
    import pandas as pd

    from llm_power.io.harness import _categorical, concat_parts

    rng = np.random.default_rng(21)
    parts, plain = [], []
    for k in range(6):
        n = int(rng.integers(1, 40))
        items = [int(v) if v % 3 == 0 else f"q{v}" for v in rng.integers(0, 30 + 10 * k, size=n)]
        target = [None if rng.random() < 0.2 else str(rng.integers(0, 4)) for _ in range(n)]
        columns = {"model": f"m{k % 4}", "item": items, "score": rng.random(n), "target": target,
                   "source": None if k == 2 else f"file{k}"}
        plain.append(pd.DataFrame({key: (value if not isinstance(value, str | None) else [value] * n)
                                   for key, value in columns.items()}))
        parts.append(pd.DataFrame({key: _categorical(value, n) if key != "score" else value
                                   for key, value in columns.items()}))
    columns_parts = []  # the reader's own parts: dicts of columns, one text for a file's model and source
    for part in parts:
        columns_parts.append({key: part[key].array if key not in ("model", "source") else part[key].iloc[0]
                              for key in part.columns})
    folded = concat_parts([None, *parts[:3], None, *columns_parts[3:]])
    expected = pd.concat(plain, ignore_index=True)
    got = folded.astype({c: object for c in folded.columns if isinstance(folded[c].dtype, pd.CategoricalDtype)})
    for col in expected.columns:
        want = [None if (v is None or (isinstance(v, float) and np.isnan(v) and col != "score")) else v
                for v in expected[col].tolist()]
        have = [None if (v is None or (isinstance(v, float) and np.isnan(v) and col != "score")) else v
                for v in got[col].tolist()]
        assert have == want, col
    assert concat_parts([None, None]) is None


def test_pair_columns_are_formed_on_first_read_and_equal_the_gathers():
    import pickle

    rng = np.random.default_rng(22)
    x = (rng.random((300, 9)) < np.linspace(0.4, 0.7, 9)).astype(float)
    diag = diagnose(x, pairs="all")
    cols = diag.columns
    assert "model_a" in cols and "nope" not in cols and list(cols)[:4] == ["model_a", "model_b", "rank_a", "rank_b"]
    i, j = np.triu_indices(9, k=1)  # the pairs in rank order, as numpy forms them
    names = np.array(diag.models, dtype=object)
    assert cols["model_a"].tolist() == names[i].tolist() and cols["model_b"].tolist() == names[j].tolist()
    np.testing.assert_array_equal(cols["rank_a"], i + 1)
    np.testing.assert_array_equal(cols["mean_b"], np.asarray(diag.means)[j])
    exact = (cols["b"] + cols["c"]) < 25
    assert cols["test"].tolist() == np.where(exact, "mcnemar_exact", "mcnemar_asymptotic").tolist()
    assert set(cols["regime"].tolist()) <= {"plug-in", "exact", "degenerate"}
    again = pickle.loads(pickle.dumps(diag.columns))
    assert list(again) == list(cols) and all(np.array_equal(again[k], cols[k]) for k in cols)
    with pytest.raises(KeyError):
        cols["nope"]


#: lines where polars writes a JSON value of a text field as text that differs from the line reader's
#: ``str`` (or takes nothing from polars at all): the polars engine must step aside for each
POLARS_UNSURE = {
    "a bool target": [_sample(i) for i in range(5)] + [_sample(5, target=True)],
    "a float target": [_sample(i) for i in range(5)] + [_sample(5, target=1.5)],
    "a list target": [_sample(i) for i in range(5)] + [_sample(5, target=["1"])],
    "a float cluster label": [_sample(i) for i in range(5)] + [_sample(5, doc={"subject": 2.5})],
    "a bool filter": [_sample(i) for i in range(5)] + [_sample(5, filter=False)],
    "a metric name that is a number": [_sample(i) for i in range(5)] + [_sample(5, metrics=["acc", 1])],
}


@pytest.mark.parametrize("case", list(CASES) + list(POLARS_UNSURE))
@pytest.mark.parametrize("options", READ_OPTIONS)
def test_polars_engine_equals_the_pyarrow_engine_and_the_line_reader(tmp_path, case, options):
    """Each engine of the columnar reader gives the line reader's columns or steps aside; polars, where
    it cannot be sure, hands the file to pyarrow (same columns or None)."""
    import polars  # noqa: F401 -- in the test extra: a missing polars fails, not skips
    from llm_power._core.errors import DataError
    from llm_power.io import harness
    from llm_power.io.columnar import lm_eval_columns

    path = _lm_eval_file(tmp_path / "model-x", {**CASES, **POLARS_UNSURE}[case])
    kwargs = {"task": "demo", "model": "model-x", "metric": options.get("metric"), "filter_name": options.get("filter"),
              "cluster": options.get("cluster")}
    try:
        rows = list(harness.iter_records(path, metric=options.get("metric"), cluster=options.get("cluster"),
                                         filter_name=options.get("filter")))
    except DataError:
        rows = None
    for engine in ("pyarrow", "polars"):
        cols = lm_eval_columns(path, engine=engine, **kwargs)
        if cols is None:
            continue
        assert rows is not None, f"{engine} read a file the line reader refuses"
        assert list(cols["item"]) == [r.item for r in rows] and list(cols["score"]) == [r.score for r in rows]
        assert list(cols["target"]) == [r.target for r in rows]
        assert (cols["cluster"] is None and options.get("cluster") is None) or list(cols["cluster"]) == [
            r.cluster for r in rows]


def test_polars_engine_steps_aside_for_text_it_may_have_made(tmp_path):
    """polars writes true, 1.5 and [1] of a text field as text; those files go to pyarrow (which refuses
    them) and then to the line reader: polars' columns are never taken."""
    import polars  # noqa: F401 -- in the test extra: a missing polars fails, not skips

    from llm_power.io.columnar import _UNSURE, _polars_columns

    fields = [("doc_id", "int"), ("filter", "text"), ("acc", "float"), ("target", "text"), ("metrics", "texts"),
              ("doc", ("subject", "text"))]
    options = {"task": "demo", "model": "m", "name": "acc", "metric": None, "filter_name": None, "cluster": "subject",
               "source": "s"}
    assert _polars_columns(_lm_eval_file(tmp_path / "a", CASES["clean"]), fields, **options) is not _UNSURE
    for k, case in enumerate(POLARS_UNSURE):
        assert _polars_columns(_lm_eval_file(tmp_path / f"b{k}", POLARS_UNSURE[case]), fields, **options) is _UNSURE, case


def test_polars_reads_in_this_process_and_gives_the_same_frame(tmp_path, monkeypatch):
    """With polars installed every lm-eval file is read by it in this process (no worker processes);
    LLM_POWER_POLARS=0 gives pyarrow in processes: the same frame, the same errors."""
    import polars  # noqa: F401 -- in the test extra: a missing polars fails, not skips
    import pandas as pd

    from llm_power._core.errors import DataError
    from llm_power.io import columnar, harness, read_results

    paths = [_lm_eval_file(tmp_path / f"model-{k}", [_sample(i, acc=float((i + k) % 2)) for i in range(25)])
             for k in range(3)]
    assert harness._polars_reads_all(paths, "auto")
    engines = []
    real = columnar.lm_eval_columns
    monkeypatch.setattr(columnar, "lm_eval_columns", lambda *a, **k: engines.append(k["engine"]) or real(*a, **k))
    with_polars = read_results(paths, cluster="subject")
    assert engines == ["polars"] * 3
    monkeypatch.setenv("LLM_POWER_POLARS", "0")
    assert not harness._polars_reads_all(paths, "auto")
    monkeypatch.setattr(harness, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    pd.testing.assert_frame_equal(read_results(paths, cluster="subject"), with_polars)
    monkeypatch.delenv("LLM_POWER_POLARS")
    bad = _lm_eval_file(tmp_path / "model-bad", [_sample(i) for i in range(5)] + [_sample(2)])
    with pytest.raises(DataError, match=r"line 6, field 'doc_id': duplicate doc_id 2"):
        read_results([*paths, bad])


def test_the_pyarrow_engine_refuses_text_that_is_not_utf8(tmp_path):
    """pyarrow's reader does not check the fields it skips; the file's bytes are checked first, so a
    response that is not UTF-8 is the line reader's error, not a matrix."""
    from llm_power.io.columnar import lm_eval_columns

    path = _lm_eval_file(tmp_path / "model-x", CASES["clean"])
    head, _, last = path.read_bytes().rstrip(b"\n").rpartition(b"\n")  # the first line is read alone
    path.write_bytes(head + b"\n" + last.replace(b'"long response"', b'"long \xff response"') + b"\n")
    assert lm_eval_columns(path, task="demo", model="model-x", metric=None, filter_name=None, cluster=None) is None


def test_polars_engine_checks_only_the_scores_and_names_of_a_file_like_the_last(tmp_path, monkeypatch):
    """A file whose doc ids, filters, targets and labels equal the last clean file's takes its checked
    columns and Categoricals; its scores and metric names are still checked, and what it gives equals a
    fresh read of it."""
    import polars  # noqa: F401 -- in the test extra: a missing polars fails, not skips

    from llm_power.io import columnar

    kwargs = {"task": "demo", "model": "m", "metric": None, "filter_name": None, "cluster": "subject"}
    first = columnar.lm_eval_columns(_lm_eval_file(tmp_path / "a", CASES["clean"]), engine="polars", **kwargs)
    assert isinstance(first, dict)
    selects = []
    real_select = polars.DataFrame.select
    monkeypatch.setattr(polars.DataFrame, "select", lambda self, *a, **k: selects.append(sorted(k)) or real_select(
        self, *a, **k))
    other = [_sample(i, acc=float(i % 3 == 0)) for i in range(30)]
    second = columnar.lm_eval_columns(_lm_eval_file(tmp_path / "b", other), engine="polars", **kwargs)
    assert selects and all("ids" not in checks for checks in selects)  # the shared columns were not checked again
    assert second["item"] is first["item"] and second["target"] is first["target"]
    columnar._CLEAN.clear()
    columnar._LAST.clear()
    fresh = columnar.lm_eval_columns(tmp_path / "b" / "samples_demo_2026-01-21T03-44-18.458309.jsonl",
                                     engine="polars", **kwargs)
    for key in ("item", "target", "cluster", "score"):
        assert list(second[key]) == list(fresh[key]), key
    for k, bad in enumerate([[*CASES["clean"][:29], _sample(29, metrics=["em"], em=1.0)],  # another first name
                             [*CASES["clean"][:29], _sample(29, metrics=["acc", 1])]]):  # a name polars made
        columnar.lm_eval_columns(_lm_eval_file(tmp_path / "a", CASES["clean"]), engine="polars", **kwargs)
        path = _lm_eval_file(tmp_path / f"c{k}", bad)
        assert columnar.lm_eval_columns(path, engine="polars", **kwargs) is None


def test_natural_order_equals_sorting_by_the_natural_key():
    """The fast order of ids (a text, then digits) equals sorting by natural_key, and so does its
    fallback: ties on the number, digits inside the text, no digits, long numbers, not text."""
    from llm_power._core.order import natural_key, natural_order

    rng = np.random.default_rng(23)
    pools = [[f"mmlu:{i}" for i in range(300)], [f"{t}:{i}" for t in ("b", "a", "a_b") for i in range(40)],
             ["q1", "q01", "q2", "q10"], ["t1:1", "t1:2", "t2:1"], ["x", "y1"], [f"n{10 ** 19 + i}" for i in range(5)],
             [3, 1, 2], ["٣1", "٣2", "a10", "a9"], [f"{i}" for i in range(30)]]
    for pool in pools:
        shuffled = [pool[k] for k in rng.permutation(len(pool))]
        for items in (shuffled, shuffled[::-1]):  # a tie broken by the text, whichever comes first
            assert natural_order(items) == sorted(range(len(items)), key=lambda r: natural_key(items[r])), pool[:3]
    assert natural_order([]) == []
