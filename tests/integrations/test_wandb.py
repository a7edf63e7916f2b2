"""Weights & Biases out, offline (issue 47, part 3): ``lp.log_wandb`` and ``diagnose --wandb`` with
``WANDB_MODE=offline`` (no network, no login), read back from the offline run's own files: the run's
``.wandb`` log (its records, parsed with wandb's protobuf classes) names the table file it logged, and
that file holds the pairs table.
"""

from __future__ import annotations

import json
import math
import struct
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _cli import run

pytest.importorskip("wandb")
import wandb  # noqa: E402
from wandb.proto import wandb_internal_pb2  # noqa: E402

import llm_power as lp  # noqa: E402
from llm_power.integrations._outputs import flat_metrics  # noqa: E402
from llm_power.io.demo import load_mmlu_pro  # noqa: E402

MODELS = ("Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B", "gemma-7b")


def _records(path: Path) -> Iterator[bytes]:
    """The records of a ``.wandb`` file: a 7-byte header (``:W&B``, magic, version), then LevelDB's
    log format (32 KiB blocks; each chunk a CRC, a length and a type: full, first, middle, last).
    """
    data = path.read_bytes()
    assert data[:4] == b":W&B"
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        left = block - pos % block
        if left < 7:  # the block's zero padding
            pos += left
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos:pos + 7])
        if length == 0 and kind == 0:
            pos += left
            continue
        chunk = data[pos + 7:pos + 7 + length]
        pos += 7 + length
        if kind == 1:
            yield chunk
        elif kind == 2:
            pending = chunk
        elif kind == 3:
            pending += chunk
        elif kind == 4:
            yield pending + chunk
            pending = b""


def _read_offline_run(run_dir: Path) -> tuple[dict[str, object], dict[str, object]]:
    """(history, summary) of an offline run: the last value of each key (nested keys joined by ``/``),
    decoded from JSON. wandb's service process writes the log behind the run's ``finish()``: read once
    its exit record is in (within 30 s).
    """
    (log,) = run_dir.glob("run-*.wandb")
    deadline = time.monotonic() + 30
    while True:
        history: dict[str, object] = {}
        summary: dict[str, object] = {}
        done = False
        for raw in _records(log):
            record = wandb_internal_pb2.Record()
            record.ParseFromString(raw)
            kind = record.WhichOneof("record_type")
            done = done or kind == "exit"
            if kind == "history":
                for item in record.history.item:
                    history[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
            elif kind == "summary":
                for item in record.summary.update:
                    summary[item.key or "/".join(item.nested_key)] = json.loads(item.value_json)
        if done or time.monotonic() > deadline:
            return history, summary
        time.sleep(0.1)


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_SILENT", "true")
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    wandb.teardown()  # wandb keeps its settings (WANDB_DIR) in a process-wide singleton: a fresh one
    yield tmp_path
    wandb.teardown()


def _diagnosis() -> lp.Diagnosis:
    m = load_mmlu_pro()
    cols = [m.models.index(name) for name in MODELS]
    return lp.diagnose(m.scores[::24, cols], models=list(MODELS), correction="holm")


def _table_equals(table: dict[str, object], frame: pd.DataFrame) -> None:
    assert table["columns"] == list(frame.columns)
    rows = table["data"]
    assert isinstance(rows, list) and len(rows) == len(frame)
    for got, (_, want) in zip(rows, frame.iterrows()):
        for value, expected in zip(got, want.tolist()):
            if isinstance(expected, float) and math.isnan(expected):
                assert value is None or (isinstance(value, float) and math.isnan(value))
            else:
                assert value == expected


def test_log_wandb_offline_reads_back(offline: Path) -> None:
    diag = _diagnosis()
    logged = lp.log_wandb(diag, project="llm-power-test")
    (run_dir,) = (offline / "wandb").glob(f"offline-run-*-{logged.id}")
    history, summary = _read_offline_run(run_dir)
    assert history["llm_power/pairs/_type"] == "table-file"
    table = json.loads((run_dir / "files" / str(history["llm_power/pairs/path"])).read_text("utf-8"))
    _table_equals(table, diag.to_frame())
    assert history["llm_power/report/_type"] == "html-file"
    html = (run_dir / "files" / str(history["llm_power/report/path"])).read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>") and MODELS[0] in html
    for key, value in flat_metrics(diag).items():
        assert summary[key] == pytest.approx(value, rel=1e-12), key
    assert summary[f"llm_power/{diag.models[0]}_vs_{diag.models[1]}/verdict"] in (0, 1)


def test_diagnose_wandb_flag(offline: Path, tmp_path: Path) -> None:
    m = load_mmlu_pro()
    cols = [m.models.index(name) for name in MODELS]
    frame = pd.DataFrame(m.scores[::24, cols], columns=list(MODELS))
    frame.insert(0, "item", np.asarray(m.items)[::24])
    csv = tmp_path / "wide.csv"
    frame.to_csv(csv, index=False)
    out = run(["diagnose", csv, "--correction", "holm", "--ranks", "off", "--wandb", "--format", "json"])
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)  # the trackers' lines never reach stdout
    run_id = next(line.rsplit(" ", 1)[1] for line in out.stderr.splitlines() if "Weights & Biases run" in line)
    (run_dir,) = (offline / "wandb").glob(f"offline-run-*-{run_id}")
    history, summary = _read_offline_run(run_dir)
    table = json.loads((run_dir / "files" / str(history["llm_power/pairs/path"])).read_text("utf-8"))
    assert [row[table["columns"].index("model_a")] for row in table["data"]] == [p["model_a"] for p in
                                                                                report["pairs"]]
    assert summary["llm_power/n_items"] == report["n"]


def test_validation() -> None:
    with pytest.raises(TypeError, match="`result` of log_wandb must be a Diagnosis"):
        lp.log_wandb(object())
