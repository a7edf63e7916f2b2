"""The GitHub Action's step: run the gate, publish its outputs, post or update the PR comment.

``python -m llm_power.integrations.github_action`` reads the action's inputs from ``INPUT_*`` environment
variables (as the composite ``action.yml`` passes them), runs ``llm-power gate``, writes
``verdict``, ``exit-code`` and ``conclusion`` to ``$GITHUB_OUTPUT`` and the comment to the job summary,
and -- in a pull request, with a token -- creates the comment or updates the one it wrote before (found
by a hidden marker, one per ``comment-id``, *and* written by the token's own identity), through the
GitHub REST API at ``$GITHUB_API_URL``; a body over GitHub's 65,536 characters is cut with a note.
It exits as :func:`llm_power.gating.gate_outcome` says for the verdict under the ``inconclusive``
policy (0 PASS; 4 FAIL; INCONCLUSIVE: 3 with "block", the default, 0 with a warning annotation with
"warn", 0 with "pass"); bad inputs are ``verdict=ERROR`` with exit 2 (usage) or 1 (the gate's input).

The threat model (docs/security.md): the step runs with a repository token on untrusted pull
requests. So the token is only ever sent to the origin of ``$GITHUB_API_URL`` (a redirect elsewhere
is refused, never followed with the header); only a comment the token itself wrote is edited (a
marker pasted by anyone else is ignored); the runner's files (``$GITHUB_OUTPUT``,
``$GITHUB_STEP_SUMMARY``) are written under the rules of every other output (no symlink, no
special file, never an input); and everything after the gate ran is best effort -- an API that
fails, hangs, redirects, paginates forever or answers nonsense costs one ``warning:`` line, never
the gate's verdict.
"""

from __future__ import annotations

import json
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["MARKER", "MAX_COMMENT_CHARS", "bound_body", "main", "marker"]

#: the hidden line that identifies the comment this action wrote (updated, not duplicated); with a
#: ``comment-id``, :func:`marker` gives one per id (several gates in one pull request)
MARKER = "<!-- llm-power-gate -->"
#: GitHub refuses a comment body longer than this (characters)
MAX_COMMENT_CHARS = 65_536
_COMMENT_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: at most this many pages of comments are read (100 each): an API that never ends stops here
MAX_PAGES = 20
#: seconds one API request may take (``LLM_POWER_API_TIMEOUT``)
API_TIMEOUT = 20.0
#: the login of the default ``GITHUB_TOKEN`` (``GET /user`` is not open to it)
ACTIONS_BOT = "github-actions[bot]"
#: an event file larger than this is not read (the runner's are a few kB)
MAX_EVENT_BYTES = 25 << 20
_REPOSITORY = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_PREFIX = "llm-power gate action"


class ActionError(Exception):
    """Something the comment step could not do (reported as one warning line)."""


class _UsageError(Exception):
    """A bad input of the action (``verdict=ERROR``, exit 2)."""


def _input(name: str, default: str = "") -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip()


def _flag(name: str, default: str) -> bool:
    value = _input(name, default).lower()
    if value not in ("true", "false"):
        msg = f"input '{name}' must be true or false; got {value!r}"
        raise _UsageError(msg)
    return value == "true"


def _warn(message: str) -> None:
    from ..report.terminal import safe_text

    print(f"{_PREFIX}: warning: {safe_text(message)}", file=sys.stderr)


# ---- the API: the token goes to one origin only -------------------------------------------------

def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    port = parts.port or {"https": 443, "http": 80}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def _api_base() -> str:
    """``$GITHUB_API_URL`` checked: https (plain http only on the loopback), no credentials, no query."""
    api = os.environ.get("GITHUB_API_URL", "https://api.github.com").strip().rstrip("/")
    parts = urllib.parse.urlsplit(api)
    loopback = parts.hostname in ("127.0.0.1", "localhost", "::1")
    if parts.scheme not in ("https", "http") or (parts.scheme == "http" and not loopback) or not parts.hostname \
            or parts.username or parts.password or parts.query or parts.fragment:
        msg = f"GITHUB_API_URL {api!r} is not an https URL of an API"
        raise ActionError(msg)
    return api


class _SameOrigin(urllib.request.HTTPRedirectHandler):
    """Follow a redirect only within the API's origin; anywhere else is refused (the request carries
    the token, and urllib would copy the header to the new host).
    """

    def __init__(self, origin: tuple[str, str, int | None]) -> None:
        super().__init__()
        self.origin = origin

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        target = urllib.parse.urljoin(req.full_url, newurl)
        if _origin(target) != self.origin:
            message = f"the API redirected to another origin ({_origin(target)[1]}); not followed with the token"
            raise ActionError(message)
        return super().redirect_request(req, fp, code, msg, headers, target)


class GitHubAPI:
    """The few REST calls the step makes, bound to one origin, each with a timeout."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token
        self.opener = urllib.request.build_opener(_SameOrigin(_origin(base)))
        try:
            self.timeout = float(os.environ.get("LLM_POWER_API_TIMEOUT", API_TIMEOUT))
        except ValueError:
            self.timeout = API_TIMEOUT
        if not (math.isfinite(self.timeout) and self.timeout > 0):
            self.timeout = API_TIMEOUT

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = f"{self.base}{path}"
        if _origin(url) != _origin(self.base):  # pragma: no cover - paths are built here
            msg = "refusing a request outside the API's origin"
            raise ActionError(msg)
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method, headers={  # noqa: S310 - origin checked above
            "Authorization": f"Bearer {self.token}", "Accept": "application/vnd.github+json",
            "Content-Type": "application/json", "User-Agent": "llm-power-gate"})
        try:
            with self.opener.open(req, timeout=self.timeout) as resp:
                text = resp.read(16 << 20).decode("utf-8", errors="replace")
        except urllib.error.HTTPError as exc:
            exc.close()  # the error carries the open response; close it now, not at garbage collection
            msg = f"{method} {path.split('?')[0]}: HTTP {exc.code}"
            raise ActionError(msg) from None
        except (urllib.error.URLError, OSError, ValueError) as exc:  # refused, timed out, TLS, bad URL
            reason = getattr(exc, "reason", exc)
            msg = f"{method} {path.split('?')[0]}: {reason}"
            raise ActionError(msg) from None
        if not text:
            return None
        try:
            return json.loads(text)
        except (ValueError, RecursionError):
            msg = f"{method} {path.split('?')[0]}: the API's answer is not JSON"
            raise ActionError(msg) from None

    def login(self) -> str:
        """The token's own login: ``GET /user`` for a personal token; the Actions bot otherwise."""
        try:
            me = self.call("GET", "/user")
        except ActionError:
            return ACTIONS_BOT
        login = me.get("login") if isinstance(me, dict) else None
        return login if isinstance(login, str) and login else ACTIONS_BOT


def marker(comment_id: str = "") -> str:
    """The hidden first line of the comment of one gate: :data:`MARKER`, or one per ``comment-id``."""
    if not comment_id:
        return MARKER
    if not _COMMENT_ID.fullmatch(comment_id):
        msg = f"input 'comment-id' must be 1 to 64 letters, digits, '.', '_' or '-'; got {comment_id!r}"
        raise _UsageError(msg)
    return f"<!-- llm-power-gate:{comment_id} -->"


def bound_body(text: str, limit: int = MAX_COMMENT_CHARS) -> str:
    """``text`` cut to at most ``limit`` characters at a line break, with a note saying so (GitHub
    refuses a longer comment; the job summary keeps the whole text).
    """
    if len(text) <= limit:
        return text
    note = (f"\n\n*The comment was cut at {limit:,} characters (GitHub's limit) from {len(text):,}: the job "
            "summary and `--json` have it all.*\n")
    room = max(limit - len(note), 0)
    cut = text.rfind("\n", 0, room + 1)
    head = text[:cut] if cut >= room // 2 else text[:room]
    return head + note


def _own(comment: Any, login: str, mark: str = MARKER) -> bool:
    """A comment this action may edit: its first line is the marker and the token's identity wrote it."""
    if not isinstance(comment, dict) or not isinstance(comment.get("body"), str) \
            or comment["body"].split("\n", 1)[0].strip() != mark:
        return False
    user = comment.get("user")
    if not isinstance(user, dict) or user.get("login") != login:
        return False
    return login != ACTIONS_BOT or user.get("type") == "Bot"


def post_comment(body: str, *, token: str, repo: str, number: int, api: str, mark: str = MARKER) -> str:  # noqa: PLR0913
    """Create the PR comment, or update the one this token wrote before (its first line is ``mark``,
    :data:`MARKER` by default); the body is cut to GitHub's limit. Returns "created" or "updated".
    Raises :class:`ActionError` for anything the API does wrong.
    """
    if not _REPOSITORY.match(repo):
        msg = f"GITHUB_REPOSITORY {repo!r} is not OWNER/NAME"
        raise ActionError(msg)
    client = GitHubAPI(api, token)
    base = f"/repos/{repo}/issues"
    text = bound_body(f"{mark}\n{body}")
    login = client.login()
    for page in range(1, MAX_PAGES + 1):
        comments = client.call("GET", f"{base}/{number}/comments?per_page=100&page={page}")
        if not isinstance(comments, list):
            msg = "the comments API did not answer a list"
            raise ActionError(msg)
        for comment in comments:
            cid = comment.get("id") if isinstance(comment, dict) else None
            if _own(comment, login, mark) and isinstance(cid, int) and not isinstance(cid, bool):
                client.call("PATCH", f"{base}/comments/{cid}", {"body": text})
                return "updated"
        if len(comments) < 100:
            break
    client.call("POST", f"{base}/{number}/comments", {"body": text})
    return "created"


# ---- the event and the runner's files ---------------------------------------------------------------

def _pull_number() -> int | None:
    """The pull request of the event that started the run (None outside pull requests). An event
    file that cannot be read, or a number that is not a positive whole number, is a warning.
    """
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path:
        return None
    from ..errors import DataError
    from ..io.safe import load_json_bytes, read_regular_bytes

    if not Path(path).is_file():  # absent, or not a regular file: nothing to read
        return None
    try:  # the readers' opener: a regular file only, never a read that blocks; bounded; one object per key
        event = load_json_bytes(read_regular_bytes(path, MAX_EVENT_BYTES), file=path)
    except DataError as exc:  # not JSON, too deep, too large, a key twice, swapped for a FIFO
        _warn(f"the event file cannot be read ({exc.message}); no comment")
        return None
    pull = event.get("pull_request") if isinstance(event, dict) else None
    number = pull.get("number") if isinstance(pull, dict) else None
    if number is None:
        return None
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        _warn(f"the event's pull request number {number!r} is not a positive whole number; no comment")
        return None
    return number


def _append_runner_file(variable: str, text: str, inputs: list[str]) -> None:
    """Append to a runner file (``$GITHUB_OUTPUT``, ``$GITHUB_STEP_SUMMARY``) under the rules of every
    output: never through a symlink, never into a special file or an input; failures are warnings.
    """
    from ..report.files import OutputPathError, check_outputs

    path = os.environ.get(variable)
    if not path:
        return
    try:
        check_outputs([path], inputs)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(path, flags, 0o644)
        with os.fdopen(fd, "a", encoding="utf-8") as fh:
            fh.write(text)
    except OutputPathError as exc:
        _warn(f"${variable}: {exc}")
    except OSError as exc:
        _warn(f"${variable}: cannot write ({exc.strerror or type(exc).__name__})")


def _inputs(baseline: str, candidate: str, args: list[str]) -> list[str]:
    return [p for p in (baseline, candidate, *args) if p and os.path.lexists(p)]


# ---- the step --------------------------------------------------------------------------------------------

def _policy() -> str:
    """The INCONCLUSIVE policy: the input ``inconclusive`` (block, warn, pass), or -- when it is not
    given -- the former input ``allow-inconclusive`` (true: pass; false, the default: block).
    """
    from .._core.options import INCONCLUSIVE_POLICIES

    allow = _flag("allow-inconclusive", "false")
    policy = _input("inconclusive").lower()
    if not policy:
        return "pass" if allow else "block"
    if policy not in INCONCLUSIVE_POLICIES:
        msg = f"input 'inconclusive' must be one of {', '.join(INCONCLUSIVE_POLICIES)}; got {policy!r}"
        raise _UsageError(msg)
    if allow and policy != "pass":
        msg = f"inputs 'inconclusive: {policy}' and 'allow-inconclusive: true' contradict each other; give one"
        raise _UsageError(msg)
    return policy


def _json_target(extra: list[str]) -> str | None:
    """The file a ``--json`` in ``args`` names (the last one wins, as in the command line)."""
    target = None
    for k, arg in enumerate(extra):
        if arg == "--json" and k + 1 < len(extra):
            target = extra[k + 1]
        elif arg.startswith("--json="):
            target = arg.split("=", 1)[1]
    return target


def _gate_args(baseline: str, candidate: str, md: Path, js: Path, policy: str) -> tuple[list[str], Path]:
    """The command line of the gate and the JSON file it writes (``args``' own ``--json`` if it has one)."""
    from .._core.options import MAX_FLIPS

    margin_text = _input("margin", "0.01")
    try:
        margin = float(margin_text)
    except ValueError:
        margin = math.nan
    if not (math.isfinite(margin) and margin >= 0):
        msg = f"input 'margin' must be a number >= 0; got {margin_text!r}"
        raise _UsageError(msg)
    try:
        extra = shlex.split(_input("args"))
    except ValueError as exc:
        msg = f"input 'args' cannot be split into arguments ({exc})"
        raise _UsageError(msg) from None
    if any(a == "--inconclusive" or a.startswith("--inconclusive=") for a in extra):
        msg = "input 'args' must not hold --inconclusive: set the input 'inconclusive'"
        raise _UsageError(msg)
    own = _json_target(extra)
    if own == "-":
        msg = "input 'args': --json needs a file here, not '-'"
        raise _UsageError(msg)
    flips = _input("max-flips", "20") or "20"
    if not (re.fullmatch(r"[0-9]{1,4}", flips) and int(flips) <= MAX_FLIPS):
        msg = f"input 'max-flips' must be a whole number from 0 to {MAX_FLIPS}; got {flips!r}"
        raise _UsageError(msg)
    args = ["gate", baseline, candidate, "--margin", margin_text, "--markdown", str(md), "--inconclusive", policy,
            "--max-flips", flips, *extra, *([] if own else ["--json", str(js)])]
    return args, Path(own) if own else js


def _verdict(code: int, js: Path) -> tuple[str, str]:
    """(verdict, verdict line) from the gate's JSON; ERROR when it exited with 1 or 2 or wrote none."""
    if code not in (0, 3, 4):
        return "ERROR", ""
    try:
        result = json.loads(js.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        result = None
    verdict = result.get("verdict") if isinstance(result, dict) else None
    if verdict not in ("PASS", "FAIL", "INCONCLUSIVE"):
        _warn("the gate's JSON result cannot be read: verdict ERROR")
        return "ERROR", ""
    line = result.get("verdict_line") if isinstance(result, dict) else None
    return verdict, line if isinstance(line, str) else verdict


def _annotate(level: str, text: str) -> None:
    """A workflow annotation (``::warning::`` / ``::error::``), its text escaped as the runner reads it."""
    from ..report.terminal import safe_text

    data = safe_text(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    print(f"::{level} title=llm-power gate::{data}", flush=True)


def main() -> int:
    """Run the step; returns the exit code."""
    from ..gating import EXIT_CODES, gate_outcome

    baseline, candidate = _input("baseline"), _input("candidate")
    try:
        if not baseline or not candidate:
            msg = "inputs 'baseline' and 'candidate' are required"
            raise _UsageError(msg)
        comment = _flag("comment", "true")
        policy = _policy()
        mark = marker(_input("comment-id"))
        with tempfile.TemporaryDirectory() as tmp:
            md = Path(tmp) / "comment.md"
            args, js = _gate_args(baseline, candidate, md, Path(tmp) / "gate.json", policy)
            # the gate runs as the command line does, in its own interpreter (the Action sits beside the
            # CLI, not on top of it: no import of cli/ from here)
            # the gate never needs the token: the child process does not get it
            env = {k: v for k, v in os.environ.items() if k not in ("INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN")}
            code = subprocess.run([sys.executable, "-m", "llm_power", *args], check=False, env=env).returncode
            body = md.read_text(encoding="utf-8") if md.is_file() else ""
            verdict, line = _verdict(code, js)
    except _UsageError as exc:
        print(f"{_PREFIX}: error: {exc}", file=sys.stderr)
        _append_runner_file("GITHUB_OUTPUT", "verdict=ERROR\nexit-code=2\nconclusion=failure\n",
                            _inputs(baseline, candidate, []))
        return 2
    if verdict == "ERROR":
        step = gate_code = code if code not in (0, 3, 4) else 1
        conclusion = "failure"
    else:
        outcome = gate_outcome(verdict, policy)
        step, gate_code, conclusion = outcome.exit_code, EXIT_CODES[verdict], outcome.conclusion
        if outcome.annotation is not None:
            _annotate(outcome.annotation, line + ("" if verdict != "INCONCLUSIVE" else
                                                  f" (inconclusive: {policy})"))
    inputs = _inputs(baseline, candidate, args[1:])
    _append_runner_file("GITHUB_OUTPUT", f"verdict={verdict}\nexit-code={gate_code}\nconclusion={conclusion}\n",
                        inputs)
    if body:
        _append_runner_file("GITHUB_STEP_SUMMARY", body, inputs)
    token, number = _input("github-token"), _pull_number()
    if body and token and number is not None and comment:
        try:
            action = post_comment(body, token=token, repo=os.environ.get("GITHUB_REPOSITORY", ""), number=number,
                                  api=_api_base(), mark=mark)
            print(f"{_PREFIX}: PR comment {action}")
        except ActionError as exc:
            _warn(f"the PR comment was not posted: {exc}")
    return step


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
