"""Every command in a real terminal 80 columns wide (tmux), as a user runs it: no line of what the
screen shows is wider than 80 columns once tmux's own wrapping is undone (``capture-pane -J``), with
stdout and stderr on the terminal, and with stdout redirected to a file while the notes stay on the
terminal (each stream is laid out at its own width).

Slow tier: one tmux session per command (the in-process scan of the same commands is
tests/test_glossary.py, in the fast tier).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_glossary import A, B, MMLU, commands  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is installed by .ci/run")]

WIDTH = 80
END = "__llm_power_done__"


def _screen(command: str, tmp: Path) -> str:
    """What a tmux pane WIDTH columns wide shows after ``command`` ran (tmux's wraps joined)."""
    sock, name = f"llmp-{uuid.uuid4().hex[:8]}", "w"
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}
    script = tmp / f"{name}-{uuid.uuid4().hex[:6]}.sh"
    script.write_text(f"cd {shlex.quote(str(tmp))}\n{command}\necho {END}\nsleep 60\n")
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", str(WIDTH), "-y", "50", "-s", name,
                    f"sh {shlex.quote(str(script))}"], check=True, env=env)
    try:
        subprocess.run(["tmux", "-L", sock, "set-option", "-t", name, "history-limit", "20000"], check=True, env=env)
        deadline = time.monotonic() + 240
        while True:
            shown = subprocess.run(["tmux", "-L", sock, "capture-pane", "-p", "-J", "-S", "-", "-t", name],
                                   capture_output=True, text=True, check=True, env=env).stdout
            if END in shown or time.monotonic() > deadline:
                return shown.split(END)[0]
            time.sleep(0.3)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], check=False, env=env)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, shared_data_dir):
    import pandas as pd

    tmp = tmp_path_factory.mktemp("tmux")
    cmds = commands(tmp, shared_data_dir)
    from llm_power.cli.main import main

    assert main([*cmds["subset plan"], "--quiet"]) == 0  # the plan the estimate reads
    plan = pd.read_csv(tmp / "plan.csv", dtype={"item_id": str})
    full = pd.read_csv(MMLU, dtype={"question_id": str})
    full[full["question_id"].isin(set(plan["item_id"]))][["question_id", "category", A, B]].to_csv(
        tmp / "new.csv", index=False)
    return tmp, cmds


def _llm_power(argv: list[str]) -> str:
    return " ".join(shlex.quote(a) for a in [sys.executable, "-m", "llm_power", *argv])


@pytest.mark.parametrize("redirected", [False, True], ids=["on the terminal", "stdout to a file"])
def test_every_command_fits_an_80_column_terminal(inputs, redirected):
    tmp, cmds = inputs
    wide = {}
    for name, argv in cmds.items():
        command = _llm_power(argv) + (" > out.txt" if redirected else "")
        shown = _screen(command, tmp)
        assert "Traceback" not in shown, (name, shown)
        lines = [line for line in shown.splitlines() if len(line.rstrip()) > WIDTH]
        if lines:
            wide[name] = lines[0]
    assert wide == {}


def test_the_pane_is_80_columns_and_a_long_line_would_show(tmp_path):
    """The check above can fail: an 81-character line printed in the pane is seen as one line."""
    tmp = tmp_path
    shown = _screen("python3 -c \"print('x' * 81)\"", tmp)
    assert "x" * 81 in shown
