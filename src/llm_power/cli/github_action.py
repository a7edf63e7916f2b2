"""The GitHub Action's step: run the gate, publish its outputs, post or update the PR comment.

``python -m llm_power.cli.github_action`` reads the action's inputs from ``INPUT_*`` environment
variables (as the composite ``action.yml`` passes them), runs ``llm-power gate``, writes
``verdict`` and ``exit-code`` to ``$GITHUB_OUTPUT`` and the comment to the job summary, and — in a
pull request, with a token — creates the comment or updates the one it wrote before (found by a
hidden marker), through the GitHub REST API at ``$GITHUB_API_URL``. It exits with the gate's
code (0 PASS, 3 INCONCLUSIVE, 4 FAIL; 3 becomes 0 with ``allow-inconclusive``).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import tempfile
import urllib.request
from pathlib import Path
from typing import Any

__all__ = ["MARKER", "main"]

#: the hidden line that identifies the comment this action wrote (updated, not duplicated)
MARKER = "<!-- llm-power-gate -->"


def _input(name: str, default: str = "") -> str:
    return os.environ.get(f"INPUT_{name.upper().replace('-', '_')}", default).strip()


def _api(method: str, url: str, token: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={  # noqa: S310 - the API URL of the runner
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "Content-Type": "application/json", "User-Agent": "llm-power-gate"})
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310
        text = resp.read().decode()
    return json.loads(text) if text else None


def _pull_number() -> int | None:
    """The pull request of the event that started the run (None outside pull requests)."""
    path = os.environ.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return None
    event = json.loads(Path(path).read_text(encoding="utf-8"))
    number = (event.get("pull_request") or {}).get("number")
    return int(number) if number is not None else None


def post_comment(body: str, *, token: str, repo: str, number: int, api: str) -> str:
    """Create the PR comment, or update the one carrying :data:`MARKER`; returns "created"/"updated"."""
    base = f"{api.rstrip('/')}/repos/{repo}/issues"
    text = f"{MARKER}\n{body}"
    page = 1
    while True:
        comments = _api("GET", f"{base}/{number}/comments?per_page=100&page={page}", token) or []
        for comment in comments:
            if MARKER in (comment.get("body") or ""):
                _api("PATCH", f"{base}/comments/{comment['id']}", token, {"body": text})
                return "updated"
        if len(comments) < 100:
            break
        page += 1
    _api("POST", f"{base}/{number}/comments", token, {"body": text})
    return "created"


def main() -> int:
    """Run the step; returns the exit code."""
    from .main import main as cli

    baseline, candidate = _input("baseline"), _input("candidate")
    if not baseline or not candidate:
        print("llm-power gate action: inputs 'baseline' and 'candidate' are required", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        md = Path(tmp) / "comment.md"
        args = ["gate", baseline, candidate, "--margin", _input("margin", "0.01"), "--markdown", str(md),
                *shlex.split(_input("args"))]
        code = cli(args)
        body = md.read_text(encoding="utf-8") if md.is_file() else ""
    verdict = {0: "PASS", 3: "INCONCLUSIVE", 4: "FAIL"}.get(code, "ERROR")
    out = os.environ.get("GITHUB_OUTPUT")
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(f"verdict={verdict}\nexit-code={code}\n")
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary and body:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(body)
    token, number = _input("github-token"), _pull_number()
    if body and token and number is not None and _input("comment", "true").lower() == "true":
        action = post_comment(body, token=token, repo=os.environ["GITHUB_REPOSITORY"], number=number,
                              api=os.environ.get("GITHUB_API_URL", "https://api.github.com"))
        print(f"llm-power gate action: PR comment {action}")
    if code == 3 and _input("allow-inconclusive", "false").lower() == "true":
        return 0
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
