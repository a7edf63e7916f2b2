"""The README is true: every console block's commands run and print what the README shows.

The blocks are written by ``scripts/readme_blocks.py`` from the real output, never by hand; this
test compares each command with that script's ``drift`` (in-process, one test per command) and runs
its ``--check``. No line is masked as variable: the commands shown print no timings, and the one
path (``report: report.html``) is relative to the scratch folder they run in. (The README's Python
blocks are doctests: pytest collects README.md with --doctest-glob=*.md.)
After a deliberate change of a command's output: ``.venv/bin/python scripts/readme_blocks.py``.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "readme_blocks.py"
_spec = importlib.util.spec_from_file_location("readme_blocks", SCRIPT)
readme_blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(readme_blocks)

CASES = [(command, shown) for _, pairs in readme_blocks.blocks(readme_blocks.README.read_text(encoding="utf-8"))
         for command, shown in pairs]
CHEAP = "llm-power ci 17 20 --method all"  # deterministic and fast: the --check tests run it


def test_the_readme_has_console_blocks():
    commands = [c for c, _ in CASES]
    assert "llm-power demo" in commands and any(c.startswith("llm-power compare") for c in commands)
    assert CHEAP in commands
    assert all(shown for _, shown in CASES), "every console command shows its output"


@pytest.mark.parametrize(("command", "shown"), CASES, ids=[c for c, _ in CASES])
def test_console_block_output_is_what_the_command_prints(command, shown):
    diff = readme_blocks.drift(command, shown)
    assert not diff, "README.md shows another output (run scripts/readme_blocks.py):\n" + "\n".join(diff)


def test_the_demo_block_ends_with_the_path_make_demo_prints():
    """``make demo`` runs in the checkout and writes report.html there: the path is shown relative to
    the working folder (absolute when the report is written outside it, tests/cli/test_cli.py)."""
    shown = dict(CASES)["llm-power demo"]
    assert shown[-2:] == ["report: report.html", "next: llm-power diagnose YOUR_RESULTS --cluster FIELD --html report.html"]


def _check(readme: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--check", "--readme", str(readme)],
                          capture_output=True, text=True, timeout=60, check=False)


def test_check_fails_when_one_character_of_a_block_drifts(tmp_path):
    """``--check`` on a README holding the real block of one cheap command passes; change one
    character of its output and it fails with a diff naming the line; regenerating restores it."""
    text = readme_blocks.README.read_text(encoding="utf-8")
    [block] = [match.group(0) for match, pairs in readme_blocks.blocks(text) if [c for c, _ in pairs] == [CHEAP]]
    readme = tmp_path / "README.md"
    readme.write_text(f"# t\n\n{block}\n", encoding="utf-8")
    assert _check(readme).returncode == 0
    true = readme.read_text(encoding="utf-8")
    readme.write_text(true.replace("64.0% – 94.8%", "64.0% – 94.9%"), encoding="utf-8")
    res = _check(readme)
    assert res.returncode == 1 and "-wilson           0.6396  0.9476   64.0% – 94.9%" in res.stdout, res.stdout
    assert "+wilson           0.6396  0.9476   64.0% – 94.8%" in res.stdout
    readme_blocks.main(["--readme", str(readme)])
    assert readme.read_text(encoding="utf-8") == true
