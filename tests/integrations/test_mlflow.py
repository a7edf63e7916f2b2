"""MLflow in and out against a real tracking server (issue 47, part 2).

The module starts ``mlflow server`` on the loopback with a SQLite backend in a temporary folder (one
server per module, about 15 s of start-up on the 2-core machine), logs the per-item 0/1 of three
MMLU-Pro models (the bundled demo data) as three evaluation runs, and checks that

- ``llm-power diagnose mlflow://A mlflow://B mlflow://C`` gives the same JSON report as the same rows
  read from a CSV file, and ``lp.read_mlflow`` the same matrix;
- ``--mlflow`` logs metrics, the pairs table and the HTML report that a fresh client reads back equal to
  the diagnosis' pairs table;
- (slow) ``mlflow.genai.evaluate`` runs -- traces with a code scorer's feedback -- read the same way.

The fast-tier part is one test function, so that pytest-xdist never starts a second server.
"""

from __future__ import annotations

import json
import math
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from _cli import run

pytest.importorskip("mlflow")
for _server_module in ("sqlalchemy", "alembic", "flask", "graphene", "huey"):  # what `mlflow server` needs
    pytest.importorskip(_server_module)

import mlflow  # noqa: E402
from mlflow.tracking import MlflowClient  # noqa: E402

import llm_power as lp  # noqa: E402
from llm_power.integrations._outputs import flat_metrics  # noqa: E402
from llm_power.io.demo import load_mmlu_pro  # noqa: E402

MODELS = ("Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B", "gemma-7b")
STEP = 24  # every 24th MMLU-Pro question: 502 items over the 14 categories


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A tracking server started in the background: ``uri`` at once, ``wait()`` until it answers (the
    test does its server-free work meanwhile: the start-up is most of the module's time).
    """

    def __init__(self, root: Path) -> None:
        port = _free_port()
        self.uri = f"http://127.0.0.1:{port}"
        self.root = root
        self.log = (root / "server.log").open("wb")
        env = {**os.environ, "MLFLOW_SERVER_ENABLE_JOB_EXECUTION": "false"}  # no job workers: a faster start
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mlflow", "server", "--host", "127.0.0.1", "--port", str(port), "--workers", "1",
             "--backend-store-uri", f"sqlite:///{root / 'mlflow.db'}", "--default-artifact-root", str(root / "art")],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.ready = False

    def wait(self) -> str:
        deadline = time.monotonic() + 120
        while not self.ready:
            try:
                with urllib.request.urlopen(f"{self.uri}/health", timeout=2) as response:  # noqa: S310 - loopback
                    self.ready = response.status == 200
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if not self.ready and (self.proc.poll() is not None or time.monotonic() > deadline):
                self.log.flush()
                pytest.fail("mlflow server did not start:\n" + (self.root / "server.log").read_text()[-3000:])
            time.sleep(0 if self.ready else 0.2)
        return self.uri

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)  # the server's own process group (start_new_session)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Server:
    """A tracking server on the loopback (SQLite backend, artifacts in a temporary folder), starting."""
    started = Server(tmp_path_factory.mktemp("mlflow"))
    try:
        yield started
    finally:
        started.stop()


def _rows() -> pd.DataFrame:
    """The long table of the three models on the chosen items: model, question_id, category, correct."""
    m = load_mmlu_pro()
    keep = slice(None, None, STEP)
    frames = [pd.DataFrame({"model": name, "question_id": [str(i) for i in m.items[keep]],
                            "category": np.asarray(m.clusters)[keep],
                            "correct": m.scores[keep, m.models.index(name)].astype(int)}) for name in MODELS]
    return pd.concat(frames, ignore_index=True)


def _log_eval_runs(uri: str, rows: pd.DataFrame, experiment: str) -> list[str]:
    """One run per model, its per-row results as ``mlflow.evaluate`` logs them (eval_results_table.json)."""
    client = MlflowClient(uri)
    exp = client.create_experiment(experiment)
    ids = []
    for name in MODELS:
        run = client.create_run(exp, run_name=name)
        part = rows[rows["model"] == name].drop(columns="model").rename(columns={"correct": "exact_match/score"})
        part = part.astype({"question_id": object, "category": object}).reset_index(drop=True)
        client.log_table(run.info.run_id, part, "eval_results_table.json")
        client.set_terminated(run.info.run_id)
        ids.append(run.info.run_id)
    return ids


def _same(a: object, b: object) -> bool:
    """Equal JSON values (NaN equals NaN; floats to the last bits JSON keeps)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    return a == b


def test_mlflow_runs_in_reports_out(server: Server, tmp_path: Path) -> None:
    # the server-free part first, while the server starts: the report of the rows from a CSV file
    rows = _rows()
    csv = tmp_path / "rows.csv"
    rows.to_csv(csv, index=False)
    options = ["--cluster", "category", "--correction", "holm", "--ranks", "off", "--format", "json"]
    from_csv = run(["diagnose", csv, *options])
    assert from_csv.returncode == 0, from_csv.stderr

    # mlflow://RUN_ID... gives the same report
    uri = server.wait()
    ids = _log_eval_runs(uri, rows, "llm-power-test")
    env = {"MLFLOW_TRACKING_URI": uri}
    from_mlflow = run(["diagnose", *(f"mlflow://{i}" for i in ids), *options], env=env)
    assert from_mlflow.returncode == 0, from_mlflow.stderr
    a, b = json.loads(from_csv.stdout), json.loads(from_mlflow.stdout)
    assert b.pop("source") == ", ".join(f"mlflow://{i}" for i in ids)
    a.pop("source")
    assert "results" not in b["options"]  # the inputs are not settings: the same document from either source
    assert _same(a, b)
    assert len(b["pairs"]) == 2

    # the Python API: the same matrix
    m = lp.read_mlflow(ids, tracking_uri=uri, cluster="category")
    assert sorted(m.models) == sorted(MODELS)
    wide = rows.pivot(index="question_id", columns="model", values="correct").loc[list(m.items), list(m.models)]
    np.testing.assert_array_equal(m.scores, wide.to_numpy(dtype=float))
    by_experiment = lp.read_mlflow(experiment="llm-power-test", tracking_uri=uri, cluster="category")
    assert by_experiment.models == m.models and by_experiment.items == m.items

    # --mlflow: a fresh client reads back the metrics, the pairs table and the report
    logged = run(["diagnose", *(f"mlflow://{i}" for i in ids), *options, "--mlflow", "--mlflow-tracking-uri", uri])
    assert logged.returncode == 0, logged.stderr
    out = json.loads(logged.stdout)  # stdout: JSON only
    out.pop("source")
    assert _same(out, b)  # logging to a tracker is not a setting of the report
    run_id = next(line.rsplit(" ", 1)[1] for line in logged.stderr.splitlines() if "logged to MLflow run" in line)
    diag = lp.diagnose(m, cluster=m.clusters, correction="holm")
    fresh = MlflowClient(uri)
    got = fresh.get_run(run_id)
    assert got.data.tags["llm_power.logged"] == "true"
    assert got.data.tags["llm_power.headline"] == diag.headline.key
    expected = flat_metrics(diag)
    assert got.data.metrics.keys() == expected.keys()
    for key, value in expected.items():
        assert got.data.metrics[key] == pytest.approx(value, rel=1e-12, abs=0), key
    pair = f"llm_power/{diag.models[0]}_vs_{diag.models[1]}"
    assert got.data.metrics[f"{pair}/gap"] == pytest.approx(diag.columns["delta"][0], rel=1e-12)
    assert {f"{pair}/{k}" for k in ("ci_low", "ci_high", "q", "n_star", "verdict", "q_cluster",
                                    "q_corrected")} <= got.data.metrics.keys()
    table = fresh.load_table(got.info.experiment_id, "llm_power/pairs.json", run_ids=[run_id])
    frame = diag.to_frame()
    assert list(table.columns) == list(frame.columns)
    pd.testing.assert_frame_equal(table, frame, check_dtype=False, check_exact=False, rtol=1e-12)
    report = tmp_path / "dl"
    report.mkdir()
    html = Path(fresh.download_artifacts(run_id, "llm_power/report.html", str(report))).read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>") and diag.models[0] in html

    # the Python API logs to a given run; errors are one line
    target = fresh.create_run(got.info.experiment_id, run_name="mine").info.run_id
    assert lp.log_mlflow(diag, target, tracking_uri=uri, html=False) == target
    assert fresh.get_run(target).data.metrics.keys() == expected.keys()
    with pytest.raises(lp.DataError, match="no such MLflow run"):
        lp.read_mlflow(["0" * 32], tracking_uri=uri)
    with pytest.raises(lp.LLMPowerError, match="MLflow: "):
        lp.log_mlflow(diag, "0" * 32, tracking_uri=uri)
    bad = run(["diagnose", f"mlflow://{ids[0]}", "mlflow://" + "0" * 32], env=env)
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1 and "no such MLflow run" in bad.stderr


def test_validation() -> None:
    with pytest.raises(ValueError, match="give `runs`"):
        lp.read_mlflow()
    with pytest.raises(ValueError, match="give `runs`"):
        lp.read_mlflow(["a"], experiment="b")
    with pytest.raises(TypeError, match="`result` of log_mlflow must be a Diagnosis"):
        lp.log_mlflow(object())


@pytest.mark.slow
def test_genai_evaluate_traces(server: Server) -> None:
    """``mlflow.genai.evaluate`` with a code scorer: one trace per row, the feedback is the score."""
    from mlflow.genai.scorers import scorer

    rows = _rows()
    rows = rows[rows["question_id"].isin(rows["question_id"].unique()[:40])]

    @scorer
    def correct(outputs: str, expectations: dict[str, str]) -> bool:
        return outputs == expectations["answer"]

    uri = server.wait()
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("llm-power-genai")
    ids = []
    for name in MODELS[:2]:
        part = rows[rows["model"] == name]
        data = [{"inputs": {"question_id": q, "category": c}, "outputs": "A" if ok else "B",
                 "expectations": {"answer": "A"}} for q, c, ok in zip(part["question_id"], part["category"],
                                                                      part["correct"])]
        with mlflow.start_run(run_name=name) as active:
            mlflow.genai.evaluate(data=data, scorers=[correct])
        ids.append(active.info.run_id)
    # MLflow writes traces and their assessments in background threads: read once they are on the server
    mlflow.flush_trace_async_logging()
    mlflow.flush_async_logging()
    for _ in range(40):  # and the server has stored every assessment (at most 20 s; the last read must succeed)
        try:
            m = lp.read_mlflow(ids, tracking_uri=uri, cluster="category")
            break
        except lp.DataError as exc:
            if "no feedback" not in str(exc):
                raise
            time.sleep(0.5)
    else:
        m = lp.read_mlflow(ids, tracking_uri=uri, cluster="category")
    wide = rows.pivot(index="question_id", columns="model", values="correct").loc[list(m.items), list(m.models)]
    np.testing.assert_array_equal(m.scores, wide.to_numpy(dtype=float))
    assert m.clusters is not None and len(set(m.clusters)) > 1
