"""The GitHub Action: action.yml runs ``python -m llm_power.cli.github_action``, which gates, writes
the step outputs and summary, and creates then updates one PR comment — tested against a local
HTTP server standing in for the GitHub REST API (no network).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from llm_power.cli import github_action

ROOT = Path(__file__).resolve().parents[1]


def test_action_yml_is_a_composite_running_the_module():
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    gate_step = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    assert gate_step["run"] == "python -m llm_power.cli.github_action"
    # every input reaches the script under the name it reads (INPUT_<NAME>, dashes as underscores)
    for name in action["inputs"]:
        if name in ("python-version", "version"):
            continue
        assert f"INPUT_{name.upper().replace('-', '_')}" in gate_step["env"], name
    assert set(action["outputs"]) == {"verdict", "exit-code"}


class FakeGitHub(BaseHTTPRequestHandler):
    comments: list[dict] = []
    log: list[tuple[str, str, str, dict | None]] = []

    def _reply(self, payload):
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else None

    def do_GET(self):  # noqa: N802
        self.log.append(("GET", self.path, self.headers["Authorization"], None))
        self._reply(self.comments)

    def do_POST(self):  # noqa: N802
        body = self._body()
        self.log.append(("POST", self.path, self.headers["Authorization"], body))
        self.comments.append({"id": 99, "body": body["body"]})
        self._reply(self.comments[-1])

    def do_PATCH(self):  # noqa: N802
        body = self._body()
        self.log.append(("PATCH", self.path, self.headers["Authorization"], body))
        self.comments[0]["body"] = body["body"]
        self._reply(self.comments[0])

    def log_message(self, *args):  # quiet
        pass


@pytest.fixture
def api():
    FakeGitHub.comments, FakeGitHub.log = [], []
    server = HTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}", FakeGitHub
    server.shutdown()


def _env(monkeypatch, tmp_path, api_url, **inputs):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    outputs, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    for key, value in {"GITHUB_EVENT_PATH": str(event), "GITHUB_OUTPUT": str(outputs),
                       "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_API_URL": api_url,
                       "GITHUB_REPOSITORY": "org/repo", "INPUT_GITHUB_TOKEN": "secret-token",
                       "INPUT_BASELINE": "Yi-34B", "INPUT_CANDIDATE": "mathstral-7B", "INPUT_MARGIN": "0.005",
                       "INPUT_ARGS": "--demo", **{f"INPUT_{k.upper()}": v for k, v in inputs.items()}}.items():
        monkeypatch.setenv(key, value)
    return outputs, summary


def test_the_step_gates_and_creates_then_updates_one_comment(monkeypatch, tmp_path, api):
    url, fake = api
    outputs, summary = _env(monkeypatch, tmp_path, url)
    assert github_action.main() == 3  # INCONCLUSIVE fails the step by default
    assert "verdict=INCONCLUSIVE\nexit-code=3\n" in outputs.read_text()
    assert "**INCONCLUSIVE**" in summary.read_text()
    methods = [(m, p) for m, p, _, _ in fake.log]
    assert methods == [("GET", "/repos/org/repo/issues/7/comments?per_page=100&page=1"),
                       ("POST", "/repos/org/repo/issues/7/comments")]
    assert all(auth == "Bearer secret-token" for _, _, auth, _ in fake.log)
    posted = fake.log[-1][3]["body"]
    assert posted.startswith(github_action.MARKER) and "mathstral-7B vs Yi-34B" in posted
    # the next run (another commit) updates the same comment instead of adding one
    monkeypatch.setenv("INPUT_ALLOW_INCONCLUSIVE", "true")
    assert github_action.main() == 0
    assert [m for m, *_ in fake.log][-2:] == ["GET", "PATCH"] and fake.log[-1][1] == "/repos/org/repo/issues/comments/99"
    assert len(fake.comments) == 1


def test_outside_a_pull_request_no_comment(monkeypatch, tmp_path, api):
    url, fake = api
    _env(monkeypatch, tmp_path, url, baseline="Meta-Llama-3_1-70B", candidate="Meta-Llama-3_1-70B-Instruct",
         margin="0.01")
    (tmp_path / "event.json").write_text(json.dumps({"push": {}}))
    assert github_action.main() == 0
    assert fake.log == []


def test_missing_inputs_are_a_usage_error(monkeypatch, capsys):
    monkeypatch.delenv("INPUT_BASELINE", raising=False)
    monkeypatch.setenv("INPUT_CANDIDATE", "x")
    assert github_action.main() == 2
    assert "required" in capsys.readouterr().err
