"""The Dask engine: files read, aligned and reduced on a 2-worker LocalCluster give the local
engine's diagnosis (0/1 scores exactly, graded to 1e-12), the same notes and the same errors.

The oracle is the local engine (read_results + align_results + diagnose on the whole matrix), an
implementation that shares none of the distributed code: the item shards, the hash split, the
tree reduction and the merge of centred sums are all on the Dask side only.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

from llm_power import diagnose_files  # noqa: E402
from llm_power._core.errors import DataError  # noqa: E402


@pytest.fixture
def client(dask_client):
    """The session's 2-worker cluster (tests/conftest.py); `--engine dask` without a scheduler starts its own."""
    return dask_client


def _same(local, dask, *, rtol=0.0):
    """Every pair column, count, tie group and robustness summary equal (floats to rtol)."""
    assert local.models == dask.models and local.n == dask.n
    assert local.columns.keys() == dask.columns.keys()
    for key, u in local.columns.items():
        v = dask.columns[key]
        if u.dtype.kind == "f":
            np.testing.assert_allclose(v, u, rtol=rtol, atol=0, equal_nan=True, err_msg=key)
        else:
            np.testing.assert_array_equal(v, u, err_msg=key)
    np.testing.assert_allclose(dask.means, local.means, rtol=rtol, atol=0)
    np.testing.assert_allclose(dask.model_ci_low, local.model_ci_low, rtol=max(rtol, 1e-14), atol=0)
    np.testing.assert_allclose(dask.model_ci_high, local.model_ci_high, rtol=max(rtol, 1e-14), atol=0)
    assert local.n_unresolved == dask.n_unresolved
    assert local.tie_groups == dask.tie_groups
    assert local.rank_intervals == dask.rank_intervals
    assert local.cluster_robustness == dask.cluster_robustness


def _csv_per_model(folder: Path, x: np.ndarray, clusters=None, *, drop=None) -> list[Path]:
    import pandas as pd

    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    n, m = x.shape
    for k in range(m):
        keep = np.ones(n, dtype=bool) if drop is None or k not in drop else ~np.isin(np.arange(n), drop[k])
        frame = pd.DataFrame({"model": f"model-{k:02d}", "item": [f"q{i}" for i in np.flatnonzero(keep)],
                              "score": x[keep, k]})
        if clusters is not None:
            frame["subject"] = np.asarray(clusters)[keep]
        path = folder / f"model-{k:02d}.csv"
        frame.to_csv(path, index=False)
        paths.append(path)
    return paths


def _both(paths, client, **kwargs):
    local = diagnose_files(paths, **kwargs)
    dask = diagnose_files(paths, engine="dask", scheduler=client, **kwargs)
    return local, dask


def _same_error(paths, client, **kwargs):
    """The DataError message of both engines, checked equal."""
    messages = []
    for engine in ("local", "dask"):
        with pytest.raises(DataError) as info:
            diagnose_files(paths, engine=engine, scheduler=client, **kwargs)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    return messages[1]


def test_binary_scores_with_unequal_clusters_all_pairs_every_regime(tmp_path, client):
    rng = np.random.default_rng(11)
    n, m = 2_400, 9
    sizes = rng.integers(5, 150, size=40)
    clusters = np.repeat([f"c{g}" for g in range(40)], sizes)[:n]
    clusters = np.r_[clusters, np.full(n - clusters.size, "c0")]
    effect = rng.normal(0, 0.8, size=(40, 1))[np.searchsorted(np.unique(clusters), clusters) % 40]
    x = (rng.random((n, m)) < 1 / (1 + np.exp(-(np.linspace(-0.2, 0.5, m) + effect)))).astype(float)
    paths = _csv_per_model(tmp_path, x, clusters)
    local, dask = _both(paths, client, cluster="subject", pairs="all", correction="holm", anytime=True,
                        cluster_resamples=300, rng=5)
    _same(local, dask)  # 0/1 scores: integer counts, so exactly equal
    assert local.n_unresolved["cluster"] >= local.n_unresolved["iid"]


def test_graded_scores_with_clusters_and_top(tmp_path, client):
    rng = np.random.default_rng(12)
    n, m = 1_500, 7
    clusters = [f"s{i % 23}" for i in range(n)]
    x = np.round(rng.normal(100.0, 5.0, size=(n, m)) + np.linspace(0, 1.5, m), 3)  # large common offset
    paths = _csv_per_model(tmp_path, x, clusters)
    local, dask = _both(paths, client, cluster="subject", top=5, design_effect="anova", rng=2)
    _same(local, dask, rtol=1e-12)


def test_small_graded_benchmark_uses_the_same_per_pair_tests(tmp_path, client):
    """Below 30 graded items the test per pair looks at the differences: the workers send them."""
    rng = np.random.default_rng(13)
    x = np.round(rng.random((18, 4)) + np.array([0.0, 0.1, 0.2, 0.6]), 2)
    paths = _csv_per_model(tmp_path, x)
    local, dask = _both(paths, client, rng=4)
    _same(local, dask, rtol=1e-12)
    assert set(local.columns["test"]) <= {"paired_t", "permutation"}


def test_missing_items_intersect_note_and_error(tmp_path, client):
    rng = np.random.default_rng(14)
    x = (rng.random((600, 4)) < [0.5, 0.55, 0.6, 0.7]).astype(float)
    paths = _csv_per_model(tmp_path, x, drop={1: [3, 70, 400], 3: [70, 599]})
    local, dask = _both(paths, client, on_missing="intersect")
    _same(local, dask)
    assert local.n == 596 and dask.settings["note"] == local.settings["note"]
    assert "model-01 3, model-03 2" in dask.settings["note"]
    assert "model-01 lacks 3 of 600 items, first 'q3'" in _same_error(paths, client)


def test_conflicting_targets_are_the_same_error(tmp_path, client):
    root = _lm_eval_folders(tmp_path / "runs", m=3, n=120, seed=17)
    path = next((root / "org__model-2").glob("samples_beta_*.jsonl"))
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for i in (5, 9, 77):
        lines[i]["target"] = "changed"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert "3 item(s) disagree" in _same_error([root], client)


def _lm_eval_folders(root: Path, m: int, n: int, seed: int) -> Path:
    rng = np.random.default_rng(seed)
    for k in range(m):
        folder = root / f"org__model-{k}"
        folder.mkdir(parents=True)
        (folder / "results_2026-01-21T03-44-18.458309.json").write_text(json.dumps({"model_name": f"org/model-{k}"}))
        for task in ("alpha", "beta"):
            lines = [json.dumps({"doc_id": i, "doc": {"subject": f"{task}{i % 5}"}, "target": str(i % 4),
                                 "filter": "none", "metrics": ["acc"],
                                 "acc": float(rng.random() < 0.4 + 0.05 * k)}) for i in range(n)]
            (folder / f"samples_{task}_2026-01-21T03-44-18.458309.jsonl").write_text("\n".join(lines) + "\n")
    return root


def test_lm_eval_folders_local_paths_and_fsspec_urls(tmp_path, client):
    root = _lm_eval_folders(tmp_path / "runs", m=5, n=400, seed=15)
    local, dask = _both([root], client, cluster="subject", correction="bh", rng=1)
    _same(local, dask)
    assert local.models[0].startswith("org/model-")
    via_url = diagnose_files([root.as_uri()], engine="dask", scheduler=client, cluster="subject", correction="bh",
                             rng=1)
    _same(local, via_url)


def test_cli_engine_dask_writes_the_local_report(tmp_path):
    """`--engine dask` (its own local cluster) writes the JSON report the local engine writes."""
    from llm_power.cli.main import main

    root = _lm_eval_folders(tmp_path / "runs", m=4, n=300, seed=16)
    outs = []
    for engine in ("local", "dask"):
        out = tmp_path / f"{engine}.json"
        args = ["diagnose", str(root), "--cluster", "subject", "--json", str(out), "--quiet", "--engine", engine,
                "--rank-method", "gaussian"]  # item shards have no items to resample: the normal limit for both
        if engine == "dask":
            args += ["--workers", "2"]
        assert main(args) == 0
        outs.append(json.loads(out.read_text()))
    local, dask = (o.pop("rankings") for o in outs)
    assert "best_set" in local["ranks"] and local["ranks"]["method"] == "gaussian" and local["winner"] is not None
    _same_json(local, dask)  # the rankings from sums in another order: equal to rounding
    assert outs[0]["options"] == outs[1]["options"]  # the engine is not a setting of the report
    assert outs[0] == outs[1]


def _same_json(a: object, b: object) -> None:
    """Equal nested JSON values, floats to 1e-12 relative."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys()
        for key in a:
            _same_json(a[key], b[key])
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same_json(x, y)
    elif isinstance(a, float) and isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-12, abs=1e-15)
    else:
        assert a == b


def test_unknown_engine_and_bad_option_fail_before_any_cluster_starts(tmp_path):
    paths = _csv_per_model(tmp_path, np.eye(3))
    with pytest.raises(ValueError, match="engine"):
        diagnose_files(paths, engine="hadoop")
    with pytest.raises(ValueError, match="alpha"):
        diagnose_files(paths, engine="dask", scheduler="tcp://127.0.0.1:1", alpha=2.0)


def test_a_bad_file_is_the_same_one_line_error(tmp_path, client):
    """A worker's parse error reaches the caller as the DataError the local reader raises."""
    paths = _csv_per_model(tmp_path, np.eye(4)[:, :3].repeat(10, axis=0))
    paths[1].write_text(paths[1].read_text().replace("model-01,q3,0.0", "model-01,q3,zero"))
    message = _same_error(paths, client)
    assert "model-01.csv" in message and "zero" in message


def test_without_the_extra_the_error_names_it(tmp_path, monkeypatch, capsys):
    """No distributed installed: one line naming the extra to install (exit 1), not a traceback."""
    import builtins

    from llm_power.cli.main import main

    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed" or name.startswith("distributed."):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    paths = _csv_per_model(tmp_path, np.eye(3).repeat(5, axis=0))
    monkeypatch.setattr(builtins, "__import__", no_distributed)
    assert main(["diagnose", *map(str, paths), "--engine", "dask"]) == 1
    err = capsys.readouterr().err
    assert "pip install 'llm-power[dask]'" in err and "Traceback" not in err


def test_a_remote_folder_is_searched_by_the_registrys_patterns(shared_data):
    """The URL search took four formats from a list of its own; it takes every format's name patterns
    now: Every Eval Ever instance files, OpenCompass results and DeepEval runs too (file:// is a URL)."""
    from llm_power.engines.dask import _expand_url

    eee = shared_data / "formats" / "every_eval_ever" / "converted_v0.3.0"
    names = [u.rsplit("/", 1)[-1] for u in _expand_url(eee.as_uri())]
    assert names == sorted(p.name for p in eee.glob("*_samples.jsonl"))
    oc = Path(__file__).resolve().parents[1] / "fixtures" / "opencompass"
    found = _expand_url(oc.as_uri())
    assert found and all("/results/" in u and u.endswith(".json") for u in found)
    assert not any("/predictions/" in u for u in found)
