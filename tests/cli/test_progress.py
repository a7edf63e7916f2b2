"""Progress that follows the work (issue 42): every long step of a command reports its start and its
end, and the bar shows the steps that are running -- never a finished one at 100% under the next.

The pseudo-terminal check of the whole demo (the step names drawn while it runs, nothing left on
the final screen) is in tests/report/test_terminal_screen.py; here the steps are recorded in process
and the bar is drawn into a fake terminal read by a terminal emulator (pyte).
"""

from __future__ import annotations

import argparse
import io
import sys
import time

import pyte
import pytest

from llm_power._core.progress import advance, listening, step
from llm_power.cli import _bar
from llm_power.cli.main import main


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def _screen(text: str, columns: int = 100) -> list[str]:
    screen = pyte.Screen(columns, 20)
    pyte.Stream(screen).feed(text)
    return [line.rstrip() for line in screen.display if line.strip()]


def test_demo_reports_each_long_step_in_order(capsys, tmp_path):
    seen: list[tuple[str, int, int]] = []
    with listening(lambda task, done, total: seen.append((task, done, total))):
        assert main(["demo", "--top", "4", "--html", str(tmp_path / "r.html")]) == 0
    assert "Verdict" in capsys.readouterr().out
    started = [task for task, done, total in seen if done == 0]
    steps = ["diagnose: pairs and regimes", "cluster resamples", "rank intervals", "winner and fragile gaps",
             "HTML report: charts"]
    assert [task for task in started if task in steps] == steps  # each once, in the order they run
    # each step is over before the next one of the command starts (a bar never shows a finished one)
    ends = {task: k for k, (task, done, total) in enumerate(seen) if done == total}
    starts = {task: seen.index((task, 0, total)) for task, _, total in seen if (task, 0, total) in seen}
    for task in {t for t, _, _ in seen}:
        assert task in ends, f"{task} never reported its end"
    for before, after in zip(["diagnose: pairs and regimes", "rank intervals", "winner and fragile gaps"],
                             ["rank intervals", "winner and fragile gaps", "HTML report: charts"], strict=True):
        assert ends[before] < starts[after]
    # the rank intervals' own loops are counted inside their step
    inner = [t for t in started if t.startswith("max-t")]
    assert inner and all(starts["rank intervals"] < starts[t] for t in inner)


def test_a_finished_step_leaves_the_screen_and_a_silent_step_is_shown():
    stream = Tty()
    live = _bar._Live(stream, delay=0.0)
    with listening(live.listener):
        advance("cluster resamples", 0, 3)
        advance("cluster resamples", 3, 3)
        with step("rank intervals"):  # no count: a spinner with its name
            live.progress.refresh()
            lines = _screen(stream.getvalue())
    live.stop()
    assert any("rank intervals" in line for line in lines), lines
    assert not any("cluster resamples" in line or "100%" in line for line in lines), lines
    assert _screen(stream.getvalue()) == []  # stopped: the bar's lines are erased


def test_the_bar_appears_after_its_delay_while_a_step_reports_nothing():
    stream = Tty()
    live = _bar._Live(stream, delay=0.2)
    with listening(live.listener), step("HTML report: charts"):
        assert stream.getvalue() == ""  # within the delay: nothing
        deadline = time.monotonic() + 1.5
        while live.progress is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert live.progress is not None  # the timer started it: the step itself reported only its start
        live.progress.refresh()
        assert any("HTML report: charts" in line for line in _screen(stream.getvalue()))
    live.stop()


@pytest.mark.parametrize("stderr_tty", [True, False])
def test_the_bar_writes_only_to_a_terminal(monkeypatch, stderr_tty):
    out, err = Tty(), (Tty() if stderr_tty else io.StringIO())
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with _bar.progress_bar(argparse.Namespace(quiet=False), delay=0.0), step("rank intervals"):
        advance("max-t: resamples", 0, 10)
        time.sleep(0.15)  # rich's own refresh
    assert out.getvalue() == ""
    assert ("rank intervals" in err.getvalue()) == stderr_tty  # the terminal case: not vacuous


def test_nobody_listening_costs_nothing_and_prints_nothing(capsys):
    with step("rank intervals"):
        advance("max-t: resamples", 1, 2)
    assert capsys.readouterr() == ("", "")
