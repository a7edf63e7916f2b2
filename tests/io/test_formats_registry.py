"""The readers' FORMATS registry is the only list of formats: detection, folder search, the
``format=`` values, the CLI's ``--input-format`` choices and the "known formats" of errors all
come from it -- and a format is one module of ``llm_power/io/formats``.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import llm_power as lp
import llm_power.io.formats as formats
from llm_power.cli._types import INPUT_FORMATS
from llm_power.io import FORMATS, read_results
from llm_power.io.detect import detect_format, expand_paths
from llm_power.io.records import Format

FIXTURES = Path(__file__).parents[1] / "fixtures"


def test_every_list_of_formats_is_the_registry():
    assert tuple(FORMATS) == ("auto", *formats.FORMATS)
    assert tuple(INPUT_FORMATS) == tuple(FORMATS)
    assert set(formats.FORMATS) == {"csv", "deepeval", "every_eval_ever", "helm", "inspect", "lighteval", "lm_eval",
                                    "mlflow", "opencompass", "parquet", "promptfoo"}
    assert all(isinstance(f, Format) and f.name == name for name, f in formats.FORMATS.items())


@pytest.mark.parametrize(("path", "name"), [
    ("lm_eval/model-a", "lm_eval"), ("inspect/model-a.eval", "inspect"), ("inspect/model-b.json", "inspect"),
    ("helm/toy,model=model-a", "helm"), ("long.csv", "csv"), ("wide.parquet", "parquet"),
])
def test_each_fixture_is_claimed_by_its_format_first(path, name):
    target = FIXTURES / path
    files = expand_paths([target]) if target.is_dir() and name == "lm_eval" else [target]
    assert {detect_format(f) for f in files} == {name}
    claimers = [f.name for f in formats.by_order() if f.claims(files[0])]
    assert claimers[0] == name  # the first in detection order wins (csv also claims a .jsonl)


def test_a_format_is_one_module(tmp_path, monkeypatch):
    # the worked example of docs/architecture.md: a toy format in its own module is picked up by
    # detection, reading and the error messages, with no other file touched
    package = tmp_path / "toyformats"
    package.mkdir()
    (package / "toy.py").write_text(textwrap.dedent('''
        from llm_power.io.records import AggregateReader, BattleReader, Format, Record, SampleReader

        def read(path, options):
            for line in path.read_text().split():
                model, item, score = line.split(":")
                yield Record(model, item, float(score), None, None, str(path))

        FORMATS = (Format(name="toy", summary="toy .toy", read=read, order=5,
                          claims=lambda path: path.suffix == ".toy", patterns=("*.toy",),
                          finds=lambda folder: [(0, p) for p in sorted(folder.rglob("*.toy"))]),)

        def read_samples(path, options):  # model:item:sample:score, several samples per item
            for line in path.read_text().split():
                model, item, sample, score = line.split(":")
                yield {"model": model, "item": item, "sample": sample, "score": float(score), "cluster": None}

        SAMPLES = (SampleReader("toy", "toy .toys", read_samples, lambda path: path.suffix == ".toys", order=5),)

        def read_aggregates(files, options):  # model:task:score:items
            from llm_power.io.aggregate import AggregateScore

            return [AggregateScore(m, t, "acc", "", float(v), None, int(n), str(f))
                    for f in files for m, t, v, n in (line.split(":") for line in f.read_text().split())]

        AGGREGATES = (AggregateReader("toy", "toy .toya", read_aggregates, lambda path: path.suffix == ".toya",
                                      order=5),)

        def read_battles(path):  # winner>loser
            import pandas as pd

            rows = [line.split(">") for line in path.read_text().split()]
            return pd.DataFrame({"model_a": [a for a, _ in rows], "model_b": [b for _, b in rows],
                                 "winner": ["model_a"] * len(rows)}), 0

        BATTLES = (BattleReader("toy", "toy .toyb", read_battles, lambda path: path.suffix == ".toyb", order=5,
                                finds=lambda folder: sorted(folder.rglob("*.toyb"))),)
    '''))
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    try:
        registry = formats._discover()  # noqa: SLF001 - what the package does when it is imported
    finally:
        sys.modules.pop("llm_power.io.formats.toy", None)
    assert "toy" in registry
    monkeypatch.setattr(formats, "FORMATS", registry)
    import llm_power.io.harness as harness

    monkeypatch.setattr(harness, "REGISTRY", registry)
    data = tmp_path / "run.toy"
    data.write_text("a:q1:1 a:q2:0 b:q1:1 b:q2:1")
    assert detect_format(data) == "toy"
    frame = read_results(data)
    assert frame.groupby("model")["score"].mean().to_dict() == {"a": 0.5, "b": 1.0}
    with pytest.raises(Exception, match=r"known: toy \.toy, lm-eval"):
        detect_format(tmp_path / "x.unknown")
    # ... every command that reads per-item scores ...
    from llm_power.cli.main import main

    folder = tmp_path / "board"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for model, p in (("a", 0.8), ("b", 0.6), ("c", 0.5)):
        (folder / f"{model}.toy").write_text(" ".join(f"{model}:q{i}:{int(rng.random() < p)}" for i in range(120)))
    for argv, code in ((["diagnose", str(folder)], 0), (["compare", str(folder), "--models", "a", "b"], 0),
                       (["rank", str(folder)], 0), (["gate", str(folder / "a.toy"), str(folder / "b.toy")], 4),
                       (["subset", "plan", str(folder), "--budget", "40", "--out", str(tmp_path / "plan.csv")], 0)):
        assert main([*argv, "--format", "json", "--quiet"]) == code, argv  # gate: 4 is its FAIL verdict
    assert (tmp_path / "plan.csv").read_text().count("\n") == 41  # 40 items and the header
    local = lp.diagnose_files(folder)
    assert local.models == ["a", "b", "c"]
    # ... and the Dask engine (in-process workers: they see this throwaway module)
    from distributed import Client, LocalCluster  # the dask extra: make test installs it

    with LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster, Client(cluster) as client:
        dask = lp.diagnose_files(folder, engine="dask", scheduler=client)
    np.testing.assert_array_equal(dask.columns["pvalue"], local.columns["pvalue"])
    # the same module's samples reader reaches read_samples and the passk command
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    try:
        samples = formats._discover("SAMPLES")  # noqa: SLF001
    finally:
        sys.modules.pop("llm_power.io.formats.toy", None)
    monkeypatch.setattr(formats, "SAMPLE_READERS", samples)
    runs = tmp_path / "runs.toys"
    runs.write_text("a:q1:0:1 a:q1:1:0 a:q2:0:1 a:q2:1:1 b:q1:0:0 b:q1:1:0 b:q2:0:1 b:q2:1:0")
    from llm_power.io.samples import read_samples

    frame = read_samples(runs)
    assert frame.groupby("model")["score"].mean().to_dict() == {"a": 0.75, "b": 0.25}
    from llm_power.cli.main import main

    assert main(["passk", str(runs), "--k", "1", "--format", "json"]) == 0
    # and its aggregate reader reaches read_aggregates and the aggregate command
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    try:
        aggregates = formats._discover("AGGREGATES")  # noqa: SLF001
    finally:
        sys.modules.pop("llm_power.io.formats.toy", None)
    monkeypatch.setattr(formats, "AGGREGATE_READERS", aggregates)
    board = tmp_path / "board.toya"
    board.write_text("a:mmlu:0.7:1000 b:mmlu:0.65:1000")
    from llm_power.io.aggregate import read_aggregates

    assert [(s.model, s.value, s.n) for s in read_aggregates(board)] == [("a", 0.7, 1000), ("b", 0.65, 1000)]
    assert main(["aggregate", str(board), "--format", "json"]) == 0
    # and its battles reader reaches read_battles (a folder too) and the arena command
    monkeypatch.setattr(formats, "__path__", [*formats.__path__, str(package)])
    try:
        battles = formats._discover("BATTLES")  # noqa: SLF001
    finally:
        sys.modules.pop("llm_power.io.formats.toy", None)
    monkeypatch.setattr(formats, "BATTLE_READERS", battles)
    arena = tmp_path / "arena"
    arena.mkdir()
    (arena / "votes.toyb").write_text(" ".join(["a>b"] * 30 + ["b>a"] * 10 + ["a>c"] * 25 + ["c>b"] * 20))
    from llm_power.io import read_battles

    assert len(read_battles(arena)) == 85
    assert main(["arena", str(arena), "--format", "json"]) == 0


def test_discovery_finds_the_modules_of_the_folder():
    found = formats._discover()  # noqa: SLF001 - the discovery itself is what is tested
    assert found.keys() == formats.FORMATS.keys()
    assert formats._discover("SAMPLES").keys() == formats.SAMPLE_READERS.keys()  # noqa: SLF001
    modules = sorted(p.stem for p in Path(formats.__file__).parent.glob("*.py") if p.stem != "__init__")
    assert modules == ["deepeval", "evalplus", "every_eval_ever", "helm", "hf_eval_results", "inspect", "lighteval",
                       "lm_eval", "mlflow", "opencompass", "promptfoo", "swebench", "table"]
    assert formats._discover("AGGREGATES").keys() == formats.AGGREGATE_READERS.keys()  # noqa: SLF001
    assert formats._discover("BATTLES").keys() == formats.BATTLE_READERS.keys() == {"opencompass", "table"}  # noqa: SLF001
    # every module declares readers of at least one kind: per-item scores, repeated samples, aggregates
    import importlib

    for name in modules:
        module = importlib.import_module(f"llm_power.io.formats.{name}")
        assert any(getattr(module, kind, ()) for kind in ("FORMATS", "SAMPLES", "AGGREGATES", "BATTLES")), name
