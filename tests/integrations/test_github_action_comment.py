"""The Action's sticky comment and INCONCLUSIVE policy (issue 47, part 6), against a real HTTP server on
127.0.0.1 that emulates the three endpoints the step uses -- list an issue's comments (paginated by
``page``/``per_page``, with a ``Link`` header), create one, update one -- and records every request.
A second server on another port stands for anywhere else: it must never see a request.
"""

from __future__ import annotations

import json
import os
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from llm_power.integrations import github_action

BOT = {"login": "github-actions[bot]", "type": "Bot"}


class Paginated(BaseHTTPRequestHandler):
    """``GET /repos/o/r/issues/N/comments?per_page=&page=``, ``POST`` the same, ``PATCH
    /repos/o/r/issues/comments/ID``; ``GET /user`` answers 403 (as for the Actions token)."""

    comments: list[dict] = []
    log: list[tuple[str, str, str | None, dict | None]] = []
    elsewhere = ""

    def _reply(self, payload, status=200, headers=()):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers:
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _record(self, method):
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        self.log.append((method, self.path, self.headers.get("Authorization"), body))
        return body

    def do_GET(self):  # noqa: N802
        self._record("GET")
        url = urllib.parse.urlsplit(self.path)
        if url.path == "/user":
            self._reply({"message": "Resource not accessible by integration"}, status=403)
            return
        query = urllib.parse.parse_qs(url.query)
        per_page, page = int(query.get("per_page", ["30"])[0]), int(query.get("page", ["1"])[0])
        chunk = self.comments[(page - 1) * per_page: page * per_page]
        # GitHub's Link header; here "next" points at another origin: it must not be followed with the token
        link = f'<{self.elsewhere}{url.path}?per_page={per_page}&page={page + 1}>; rel="next"'
        self._reply(chunk, headers=[("Link", link)] if page * per_page < len(self.comments) else [])

    def do_POST(self):  # noqa: N802
        body = self._record("POST")
        self.comments.append({"id": 5000 + len(self.comments), "body": body["body"], "user": dict(BOT)})
        self._reply(self.comments[-1], status=201)

    def do_PATCH(self):  # noqa: N802
        body = self._record("PATCH")
        cid = int(self.path.rsplit("/", 1)[1])
        for comment in self.comments:
            if comment["id"] == cid:
                comment["body"] = body["body"]
                self._reply(comment)
                return
        self._reply({"message": "Not Found"}, status=404)

    def log_message(self, *args):
        pass


class Elsewhere(BaseHTTPRequestHandler):
    log: list[str] = []

    def do_GET(self):  # noqa: N802
        self.log.append(self.path)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"[]")

    do_POST = do_PATCH = do_GET  # noqa: N815

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    Paginated.comments, Paginated.log, Elsewhere.log = [], [], []
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), h) for h in (Paginated, Elsewhere)]
    for srv in servers:
        srv.daemon_threads = True
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    Paginated.elsewhere = f"http://127.0.0.1:{servers[1].server_port}"
    yield f"http://127.0.0.1:{servers[0].server_port}", Paginated
    for srv in servers:
        srv.shutdown()
        srv.server_close()


def _others(k):
    return [{"id": 10 + i, "body": f"review {i}", "user": {"login": f"user{i}", "type": "User"}} for i in range(k)]


def _post(url, body, mark=github_action.MARKER):
    return github_action.post_comment(body, token="secret-token", repo="org/repo", number=7, api=url, mark=mark)


def test_the_second_run_updates_the_first_comment_across_pages(monkeypatch, server):
    url, api = server
    monkeypatch.setenv("LLM_POWER_API_TIMEOUT", "5")
    api.comments = _others(130)  # a busy pull request: the list is two pages of 100
    assert _post(url, "first verdict") == "created"
    created = api.comments[-1]
    assert created["body"] == f"{github_action.MARKER}\nfirst verdict"
    pages = [p for m, p, *_ in api.log if m == "GET" and "comments" in p]
    assert pages == ["/repos/org/repo/issues/7/comments?per_page=100&page=1",
                     "/repos/org/repo/issues/7/comments?per_page=100&page=2"]  # every page read before creating
    api.comments.extend(_others(90))  # 90 more reviews after it: ours is on page 2 of 3
    api.log.clear()
    assert _post(url, "second verdict") == "updated"
    assert [(m, p) for m, p, *_ in api.log] == [
        ("GET", "/user"),
        ("GET", "/repos/org/repo/issues/7/comments?per_page=100&page=1"),
        ("GET", "/repos/org/repo/issues/7/comments?per_page=100&page=2"),
        ("PATCH", f"/repos/org/repo/issues/comments/{created['id']}")]
    assert created["body"] == f"{github_action.MARKER}\nsecond verdict"
    assert sum(github_action.MARKER in c["body"] for c in api.comments) == 1  # one comment, updated in place
    # the token went to the API, every time, and nowhere else (the Link header's other origin never saw us)
    assert all(auth == "Bearer secret-token" for _, _, auth, _ in api.log)
    assert Elsewhere.log == []


def test_each_comment_id_keeps_its_own_comment(monkeypatch, server):
    url, api = server
    monkeypatch.setenv("LLM_POWER_API_TIMEOUT", "5")
    math_mark, code_mark = github_action.marker("math"), github_action.marker("code")
    assert math_mark == "<!-- llm-power-gate:math -->" and github_action.marker("") == github_action.MARKER
    assert [_post(url, "math v1", math_mark), _post(url, "code v1", code_mark), _post(url, "plain v1")] == \
        ["created"] * 3
    assert [_post(url, "code v2", code_mark), _post(url, "math v2", math_mark), _post(url, "plain v2")] == \
        ["updated"] * 3
    assert [c["body"] for c in api.comments] == [f"{math_mark}\nmath v2", f"{code_mark}\ncode v2",
                                                 f"{github_action.MARKER}\nplain v2"]
    # a marker quoted further down someone's own comment is not a first line: never ours
    api.comments.insert(0, {"id": 1, "body": f"> quoting\n{math_mark}", "user": dict(BOT)})
    _post(url, "math v3", math_mark)
    assert api.comments[0]["body"] == f"> quoting\n{math_mark}" and api.comments[1]["body"].endswith("math v3")


@pytest.mark.parametrize("bad", ["a b", "x" * 65, "../x", "a-->b"])
def test_a_bad_comment_id_is_a_usage_error(monkeypatch, tmp_path, capsys, bad):
    monkeypatch.setenv("INPUT_BASELINE", "a")
    monkeypatch.setenv("INPUT_CANDIDATE", "b")
    monkeypatch.setenv("INPUT_COMMENT_ID", bad)
    monkeypatch.setenv("GITHUB_OUTPUT", str(tmp_path / "out.txt"))
    assert github_action.main() == 2
    assert "input 'comment-id'" in capsys.readouterr().err


def test_a_long_body_is_cut_to_githubs_limit(monkeypatch, server):
    url, api = server
    monkeypatch.setenv("LLM_POWER_API_TIMEOUT", "5")
    body = "".join(f"| q{k} | {'@team ' * 5} |\n" for k in range(4000))  # about 150,000 characters
    assert len(body) > github_action.MAX_COMMENT_CHARS
    _post(url, body)
    sent = api.log[-1][3]["body"]
    assert len(sent) <= github_action.MAX_COMMENT_CHARS == 65_536
    assert sent.startswith(github_action.MARKER + "\n") and "cut at 65,536 characters" in sent
    kept = sent.split("\n\n*The comment was cut")[0]
    assert kept.endswith("|") and body.startswith(kept.split("\n", 1)[1])  # cut at a line break, nothing added
    assert github_action.bound_body("short") == "short"
    assert len(github_action.bound_body("y" * 70_000)) <= github_action.MAX_COMMENT_CHARS  # no line break at all


# ---- the step, end to end -------------------------------------------------------------------------------

def _env(monkeypatch, tmp_path, url, **inputs):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": 7}}))
    rows = "".join(f"q{k},{b},{c}\n" for k, (b, c) in enumerate(zip([1, 1, 0, 0, 1] * 12, [1, 0, 1, 0, 1] * 12,
                                                                       strict=True)))
    data = tmp_path / "scores.csv"
    data.write_text("item,base-model,cand-model\n" + rows)
    out = tmp_path / "out.txt"
    for key, value in {"GITHUB_EVENT_PATH": str(event), "GITHUB_OUTPUT": str(out), "GITHUB_API_URL": url,
                       "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"), "GITHUB_REPOSITORY": "org/repo",
                       "INPUT_GITHUB_TOKEN": "secret-token", "INPUT_BASELINE": "base-model",
                       "INPUT_CANDIDATE": "cand-model", "INPUT_ARGS": f"--data {data}", "LLM_POWER_API_TIMEOUT": "5",
                       **{f"INPUT_{k.upper()}": v for k, v in inputs.items()}}.items():
        monkeypatch.setenv(key, value)
    return out


def test_warn_passes_with_a_warning_and_one_comment_with_the_flips(monkeypatch, tmp_path, server, capfd):
    url, api = server
    out = _env(monkeypatch, tmp_path, url, inconclusive="warn", max_flips="2")
    assert github_action.main() == 0
    assert out.read_text() == "verdict=INCONCLUSIVE\nexit-code=3\nconclusion=neutral\n"
    stdout = capfd.readouterr().out
    assert "::warning title=llm-power gate::INCONCLUSIVE  cand-model vs base-model" in stdout
    body = api.comments[0]["body"]
    assert body.startswith(github_action.MARKER + "\n") and "Policy for INCONCLUSIVE: **warn**" in body
    assert "#### Items that flipped (24 of 60)" in body and "| correct in baseline, wrong in candidate | 12 |" in body
    assert "and 10 more" in body
    # the next push, blocking this time: the same comment, updated; the step fails with exit 3
    monkeypatch.setenv("INPUT_INCONCLUSIVE", "block")
    assert github_action.main() == 3
    assert out.read_text().endswith("verdict=INCONCLUSIVE\nexit-code=3\nconclusion=failure\n")
    assert "::error title=llm-power gate::" in capfd.readouterr().out
    assert len(api.comments) == 1 and api.log[-1][0] == "PATCH" and "**block**" in api.comments[0]["body"]


@pytest.mark.parametrize(("inputs", "phrase"), [
    ({"inconclusive": "ignore"}, "input 'inconclusive' must be one of block, warn, pass"),
    ({"inconclusive": "warn", "allow_inconclusive": "true"}, "contradict"),
    ({"args": "--inconclusive pass"}, "set the input 'inconclusive'"),
    ({"args": "--json -"}, "--json needs a file"),
    ({"max_flips": "201"}, "input 'max-flips'"),
    ({"max_flips": "²"}, "input 'max-flips'"),
])
def test_bad_policy_inputs_are_usage_errors(monkeypatch, tmp_path, server, capsys, inputs, phrase):
    url, api = server
    out = _env(monkeypatch, tmp_path, url, **inputs)
    assert github_action.main() == 2
    assert out.read_text() == "verdict=ERROR\nexit-code=2\nconclusion=failure\n"
    assert phrase in capsys.readouterr().err and api.log == []


def test_allow_inconclusive_is_the_pass_policy_and_a_json_in_args_is_read(monkeypatch, tmp_path, server):
    url, _ = server
    mine = tmp_path / "mine.json"
    out = _env(monkeypatch, tmp_path, url, allow_inconclusive="true", comment="false")
    monkeypatch.setenv("INPUT_ARGS", f"{os.environ['INPUT_ARGS']} --json {mine}")
    assert github_action.main() == 0
    assert out.read_text() == "verdict=INCONCLUSIVE\nexit-code=3\nconclusion=success\n"
    assert json.loads(mine.read_text())["inconclusive"] == "pass"
