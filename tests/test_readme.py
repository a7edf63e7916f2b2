"""The README is true: every console block's commands run and print what the README shows.

(The README's Python blocks are doctests: pytest collects README.md with --doctest-glob=*.md.)
Regenerate deliberately with ``.venv/bin/python tests/readme_console.py`` and review the diff.
"""

from __future__ import annotations

import pytest
from readme_console import README, blocks, normalise, run, scratch

CASES = [(command, expected) for _, pairs in blocks(README.read_text()) for command, expected in pairs]


def test_the_readme_has_console_blocks():
    commands = [c for c, _ in CASES]
    assert "llm-power demo" in commands and any(c.startswith("llm-power compare") for c in commands)
    assert all(expected for _, expected in CASES), "every console command shows its output"


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[c for c, _ in CASES])
def test_console_block_output_is_what_the_command_prints(command, expected):
    with scratch() as cwd:
        got = normalise(run(command, cwd))
    assert got == normalise(expected), "\n".join(["README shows:", *expected, "", "the command prints:", *got])
