"""The GitHub Action: action.yml runs ``python -m llm_power.integrations.github_action``, which gates, writes
the step outputs and summary, and creates then updates one PR comment -- tested against local HTTP
servers on 127.0.0.1 standing in for the GitHub REST API (no network): one that behaves, and ones
that redirect elsewhere, paginate forever, fail, hang or answer nonsense. The token must never reach
any origin but the API's, only the token's own comment is edited, and after the gate has run every
API failure is one warning line with the gate's exit code kept.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from llm_power.integrations import github_action

ROOT = Path(__file__).resolve().parents[2]
BOT = {"login": "github-actions[bot]", "type": "Bot"}


def test_action_yml_is_a_composite_running_the_module():
    import yaml

    action = yaml.safe_load((ROOT / "action.yml").read_text())
    assert action["runs"]["using"] == "composite"
    gate_step = next(s for s in action["runs"]["steps"] if s.get("id") == "gate")
    assert gate_step["run"] == "python -m llm_power.integrations.github_action"
    # every input reaches the script under the name it reads (INPUT_<NAME>, dashes as underscores)
    for name in action["inputs"]:
        if name in ("python-version", "version"):
            continue
        assert f"INPUT_{name.upper().replace('-', '_')}" in gate_step["env"], name
    assert set(action["outputs"]) == {"verdict", "exit-code", "conclusion"}


class FakeGitHub(BaseHTTPRequestHandler):
    """The REST API as the step uses it, with switchable misbehaviour (``mode``)."""

    comments: list[dict] = []
    log: list[tuple[str, str, str | None, dict | None]] = []
    mode = "ok"
    redirect_to = ""
    user: dict | None = None  # what GET /user answers (None: 403, as for the Actions token)

    def _reply(self, payload, status=200):
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length)) if length else None

    def _misbehave(self) -> bool:
        if self.mode == "redirect":
            self.send_response(307)
            self.send_header("Location", f"{self.redirect_to}{self.path}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return True
        if self.mode == "error":
            self._reply({"message": "boom"}, status=500)
            return True
        if self.mode == "unauthorized":
            self._reply({"message": "Bad credentials"}, status=401)
            return True
        if self.mode == "hang":
            time.sleep(3)
            self._reply([])
            return True
        return False

    def do_GET(self):  # noqa: N802
        self.log.append(("GET", self.path, self.headers["Authorization"], None))
        if self._misbehave():
            return
        if self.path == "/user":
            if self.user is None:
                self._reply({"message": "Resource not accessible by integration"}, status=403)
            else:
                self._reply(self.user)
            return
        if self.mode == "endless":  # every page full: an API whose pagination never ends
            self._reply([{"id": k, "body": "x", "user": {"login": "someone", "type": "User"}} for k in range(100)])
        elif self.mode == "dict":
            self._reply({"comments": []})
        elif self.mode == "garbage":
            self._reply(b"<html>not json")
        else:
            self._reply(self.comments)

    def do_POST(self):  # noqa: N802
        body = self._body()
        self.log.append(("POST", self.path, self.headers["Authorization"], body))
        if self._misbehave():
            return
        self.comments.append({"id": 900 + len(self.comments), "body": body["body"], "user": dict(BOT)})
        self._reply(self.comments[-1])

    def do_PATCH(self):  # noqa: N802
        body = self._body()
        self.log.append(("PATCH", self.path, self.headers["Authorization"], body))
        cid = int(self.path.rsplit("/", 1)[1])
        for c in self.comments:
            if c["id"] == cid:
                c["body"] = body["body"]
                self._reply(c)
                return
        self._reply({}, status=404)

    def log_message(self, *args):  # quiet
        pass


class Elsewhere(BaseHTTPRequestHandler):
    """Another origin (another port): it must never see a request carrying the token."""

    log: list[tuple[str, str | None]] = []

    def do_GET(self):  # noqa: N802
        self.log.append((self.path, self.headers.get("Authorization")))
        data = b"[]"
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_POST = do_PATCH = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # a client that gave up (a timeout): not news
        pass


def _serve(handler):
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server


@pytest.fixture
def api():
    FakeGitHub.comments, FakeGitHub.log, FakeGitHub.mode, FakeGitHub.user = [], [], "ok", None
    Elsewhere.log = []
    server, other = _serve(FakeGitHub), _serve(Elsewhere)
    FakeGitHub.redirect_to = f"http://127.0.0.1:{other.server_port}"
    yield f"http://127.0.0.1:{server.server_port}", FakeGitHub
    for srv in (server, other):  # stop serving and close the listening socket: a leaked socket is
        srv.shutdown()           # collected later, inside another test's run, as a stray note
        srv.server_close()


def _env(monkeypatch, tmp_path, api_url, event=None, **inputs):
    path = tmp_path / "event.json"
    path.write_text(json.dumps({"pull_request": {"number": 7}} if event is None else event)
                    if not isinstance(event, str) else event)
    outputs, summary = tmp_path / "out.txt", tmp_path / "summary.md"
    for key, value in {"GITHUB_EVENT_PATH": str(path), "GITHUB_OUTPUT": str(outputs),
                       "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_API_URL": api_url,
                       "GITHUB_REPOSITORY": "org/repo", "INPUT_GITHUB_TOKEN": "secret-token",
                       "INPUT_BASELINE": "Yi-34B", "INPUT_CANDIDATE": "mathstral-7B", "INPUT_MARGIN": "0.005",
                       "INPUT_ARGS": "--demo", "LLM_POWER_API_TIMEOUT": "1",
                       **{f"INPUT_{k.upper()}": v for k, v in inputs.items()}}.items():
        monkeypatch.setenv(key, value)
    return outputs, summary


def test_the_step_gates_and_creates_then_updates_one_comment(monkeypatch, tmp_path, api):
    url, fake = api
    outputs, summary = _env(monkeypatch, tmp_path, url)
    assert github_action.main() == 3  # INCONCLUSIVE fails the step by default
    assert "verdict=INCONCLUSIVE\nexit-code=3\n" in outputs.read_text()
    assert "**INCONCLUSIVE**" in summary.read_text()
    methods = [(m, p) for m, p, _, _ in fake.log]
    assert methods == [("GET", "/user"), ("GET", "/repos/org/repo/issues/7/comments?per_page=100&page=1"),
                       ("POST", "/repos/org/repo/issues/7/comments")]
    assert all(auth == "Bearer secret-token" for _, _, auth, _ in fake.log)
    posted = fake.log[-1][3]["body"]
    assert posted.startswith(github_action.MARKER) and "mathstral-7B vs Yi-34B" in posted
    # the next run (another commit) updates the same comment instead of adding one
    monkeypatch.setenv("INPUT_ALLOW_INCONCLUSIVE", "true")
    assert github_action.main() == 0
    assert [m for m, *_ in fake.log][-2:] == ["GET", "PATCH"] and fake.log[-1][1] == "/repos/org/repo/issues/comments/900"
    assert len(fake.comments) == 1


def test_a_marker_pasted_by_someone_else_is_never_edited(monkeypatch, tmp_path, api):
    """A PR author posts the hidden marker with a fake PASS: the action leaves it alone and writes its
    own comment; with a personal token (GET /user answers a login) only that login's comment counts."""
    url, fake = api
    fake.comments = [{"id": 1, "body": f"{github_action.MARKER}\nPASS (trust me)", "user": {"login": "mallory",
                                                                                               "type": "User"}},
                     {"id": 2, "body": f"{github_action.MARKER}\nold", "user": {"login": "github-actions",
                                                                                  "type": "User"}}]
    _env(monkeypatch, tmp_path, url)
    github_action.main()
    assert [m for m, *_ in fake.log] == ["GET", "GET", "POST"]
    assert fake.comments[0]["body"].endswith("PASS (trust me)")  # untouched
    fake.log.clear()
    fake.user = {"login": "release-bot"}
    fake.comments.append({"id": 3, "body": f"{github_action.MARKER}\nmine", "user": {"login": "release-bot",
                                                                                      "type": "User"}})
    github_action.main()
    assert fake.log[-1][:2] == ("PATCH", "/repos/org/repo/issues/comments/3")


def test_the_token_never_follows_a_redirect_to_another_origin(monkeypatch, tmp_path, api, capsys):
    url, fake = api
    fake.mode = "redirect"
    outputs, _ = _env(monkeypatch, tmp_path, url)
    assert github_action.main() == 3  # the gate's verdict stands
    err = capsys.readouterr().err
    assert Elsewhere.log == []  # the other port never saw a request, with or without the token
    assert "warning: the PR comment was not posted" in err and "another origin" in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "verdict=INCONCLUSIVE" in outputs.read_text()


@pytest.mark.parametrize(("mode", "phrase"), [("error", "HTTP 500"), ("unauthorized", "HTTP 401"),
                                              ("hang", "timed out"), ("dict", "did not answer a list"),
                                              ("garbage", "not JSON")])
def test_a_failing_api_costs_one_warning_not_the_verdict(monkeypatch, tmp_path, api, capsys, mode, phrase):
    """The work is bounded, not timed: at most two requests (GET /user, then the first page of comments,
    where the failure stops the step), no retry, each with the configured timeout (1 s), so a hanging API
    costs at most two timeouts whatever the machine's load."""
    url, fake = api
    fake.mode = mode
    _env(monkeypatch, tmp_path, url, baseline="Meta-Llama-3_1-70B", candidate="Meta-Llama-3_1-70B-Instruct",
         margin="0.01")
    timeouts = []
    opener_open = urllib.request.OpenerDirector.open

    def recording_open(self, req, data=None, timeout=None):
        timeouts.append(timeout)
        return opener_open(self, req, data, timeout)

    monkeypatch.setattr(urllib.request.OpenerDirector, "open", recording_open)
    assert github_action.main() == 0  # PASS, whatever the API does
    assert [(m, p.split("?")[0]) for m, p, *_ in fake.log] == [("GET", "/user"),
                                                                ("GET", "/repos/org/repo/issues/7/comments")]
    assert timeouts == [1.0, 1.0]  # LLM_POWER_API_TIMEOUT, on every request
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("llm-power gate action: warning:") and phrase in lines[0], err


def test_allow_inconclusive_never_swallows_a_fail(monkeypatch, tmp_path, api):
    """The demo's 70B base model against its Instruct baseline regresses by about 10 points (FAIL, exit 4;
    tests/gating/test_gate.py): allow-inconclusive turns only INCONCLUSIVE (3) into 0, never FAIL."""
    url, _ = api
    outputs, _ = _env(monkeypatch, tmp_path, url, baseline="Meta-Llama-3_1-70B-Instruct", candidate="Meta-Llama-3_1-70B",
                      margin="0.01", allow_inconclusive="true")
    assert github_action.main() == 4
    assert "verdict=FAIL\nexit-code=4\n" in outputs.read_text()


def test_pagination_stops(monkeypatch, tmp_path, api, capsys):
    url, fake = api
    fake.mode = "endless"
    _env(monkeypatch, tmp_path, url)
    assert github_action.main() == 3
    gets = [p for m, p, *_ in fake.log if m == "GET" and "comments" in p]
    assert len(gets) == github_action.MAX_PAGES == 20
    assert fake.log[-1][0] == "POST"  # none of those was ours: one new comment


@pytest.mark.parametrize("event", ['{"pull_request": {"number": "abc"}}', '{"pull_request": {"number": true}}',
                                   '{"pull_request": {"number": 1.9}}', '{"pull_request": {"number": -3}}',
                                   '{"pull_request": 5}', '[1, 2]', 'not json', '[' * 100_000])
def test_odd_events_give_no_comment_and_keep_the_verdict(monkeypatch, tmp_path, api, capsys, event):
    url, fake = api
    _env(monkeypatch, tmp_path, url, event=event)
    assert github_action.main() == 3
    assert not [m for m, *_ in fake.log if m in ("POST", "PATCH")]
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("repo", ["", "org", "org/repo/../../users", "org/repo?x=1", "o r/g"])
def test_an_odd_repository_is_never_pasted_into_the_url(monkeypatch, tmp_path, api, capsys, repo):
    url, fake = api
    _env(monkeypatch, tmp_path, url)
    monkeypatch.setenv("GITHUB_REPOSITORY", repo)
    assert github_action.main() == 3
    assert fake.log == [] and "GITHUB_REPOSITORY" in capsys.readouterr().err


def test_the_api_url_must_be_https(monkeypatch, tmp_path, api, capsys):
    url, fake = api
    _env(monkeypatch, tmp_path, "http://example.com")
    assert github_action.main() == 3
    assert "not an https URL" in capsys.readouterr().err


def test_runner_files_follow_the_output_rules(monkeypatch, tmp_path, api, capsys):
    """$GITHUB_OUTPUT through a symlink, onto an input, into /dev/full or a missing folder: refused or
    failed with a warning; the file the link points to and the input are untouched."""
    url, fake = api
    _env(monkeypatch, tmp_path, url, comment="false")
    precious = tmp_path / "precious.txt"
    precious.write_text("keep\n")
    link = tmp_path / "link.txt"
    link.symlink_to(precious)
    base = tmp_path / "base.csv"
    base.write_text("model,item,score\nm,q1,1\nm,q2,0\n")
    monkeypatch.setenv("INPUT_BASELINE", str(base))
    monkeypatch.setenv("INPUT_CANDIDATE", str(base))
    monkeypatch.setenv("INPUT_ARGS", "")
    for target in (str(link), str(base), "/dev/full", str(tmp_path / "missing" / "out.txt")):
        monkeypatch.setenv("GITHUB_OUTPUT", target)
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", target)
        github_action.main()
        err = capsys.readouterr().err
        assert "warning: $GITHUB_OUTPUT" in err and "Traceback" not in err, (target, err)
    assert precious.read_text() == "keep\n"
    assert base.read_text() == "model,item,score\nm,q1,1\nm,q2,0\n"


@pytest.mark.parametrize(("inputs", "phrase"), [({"margin": "abc"}, "input 'margin'"),
                                                ({"margin": "-1"}, "input 'margin'"),
                                                ({"margin": "nan"}, "input 'margin'"),
                                                ({"args": "--cluster 'subject"}, "input 'args'"),
                                                ({"comment": "yes"}, "input 'comment'"),
                                                ({"allow_inconclusive": "maybe"}, "input 'allow-inconclusive'")])
def test_bad_inputs_are_an_error_output_and_exit_2(monkeypatch, tmp_path, api, capsys, inputs, phrase):
    url, fake = api
    outputs, _ = _env(monkeypatch, tmp_path, url, **inputs)
    assert github_action.main() == 2
    assert "verdict=ERROR\nexit-code=2\n" in outputs.read_text()
    err = capsys.readouterr().err
    assert phrase in err and "Traceback" not in err
    assert fake.log == []


def test_a_usage_error_never_appends_to_an_input(monkeypatch, tmp_path, capsys):
    base = tmp_path / "base.csv"
    base.write_text("model,item,score\nm,q1,1\nm,q2,0\n")
    monkeypatch.setenv("INPUT_BASELINE", str(base))
    monkeypatch.setenv("INPUT_CANDIDATE", str(base))
    monkeypatch.setenv("INPUT_MARGIN", "abc")
    monkeypatch.setenv("GITHUB_OUTPUT", str(base))
    assert github_action.main() == 2
    assert base.read_text() == "model,item,score\nm,q1,1\nm,q2,0\n"
    assert "warning: $GITHUB_OUTPUT" in capsys.readouterr().err


def test_mentions_and_links_in_names_are_inert_in_the_comment(monkeypatch, tmp_path, api):
    url, fake = api
    rows = ["item,@org/team,https://evil.example/x.png"] + [f"q{i},{i % 2},{(i // 2) % 2}" for i in range(40)]
    data = tmp_path / "wide.csv"
    data.write_text("\n".join(rows) + "\n")
    _env(monkeypatch, tmp_path, url, baseline="@org/team", candidate="https://evil.example/x.png", margin="0.01",
         args=f"--data {data}")
    github_action.main()
    posted = fake.log[-1][3]["body"]
    assert "@org/team" not in posted and "@&#8203;org/team" in posted
    assert "https://evil" not in posted and "https:&#8203;//evil" in posted


def test_outside_a_pull_request_no_comment(monkeypatch, tmp_path, api):
    url, fake = api
    _env(monkeypatch, tmp_path, url, baseline="Meta-Llama-3_1-70B", candidate="Meta-Llama-3_1-70B-Instruct",
         margin="0.01")
    (tmp_path / "event.json").write_text(json.dumps({"push": {}}))
    assert github_action.main() == 0
    assert fake.log == []


def test_missing_inputs_are_a_usage_error(monkeypatch, capsys, tmp_path):
    monkeypatch.delenv("INPUT_BASELINE", raising=False)
    monkeypatch.setenv("INPUT_CANDIDATE", "x")
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out.txt"))
    assert github_action.main() == 2
    assert "required" in capsys.readouterr().err
    assert (tmp_path / "out.txt").read_text() == "verdict=ERROR\nexit-code=2\nconclusion=failure\n"
    assert os.environ.get("INPUT_BASELINE") is None



def test_the_former_entry_point_runs_the_same_action():
    from llm_power.cli import github_action as former

    assert former.main is github_action.main  # `python -m llm_power.cli.github_action` keeps working
