"""One set of reader flags (issue 41): every command that reads per-item result files takes them from
one declaration (``cli/_types.add_reader_options``), so ``rank`` and ``subset`` read what ``diagnose``
reads (``--split``, ``--filter``: they had hidden defaults) and ``plan runs`` takes the format and the
item column; the loaders get them as one typed object (``cli/_reader.ReaderOptions``), never a namespace
built by hand."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

import llm_power
from llm_power.cli.main import _parsers, build_parser, main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
READER = {"--input-format", "--metric", "--id-column", "--on-missing"}
RECORDS = {"--split", "--filter"}


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}  # noqa: SLF001


def test_every_reading_command_has_the_whole_reader_set():
    readers = {p.prog: _flags(p) for p in _parsers(build_parser()) if "--input-format" in _flags(p)}
    assert {"llm-power compare", "llm-power diagnose", "llm-power gate", "llm-power rank", "llm-power noise",
            "llm-power plan runs", "llm-power subset plan", "llm-power subset estimate"} <= set(readers)
    for prog, flags in readers.items():
        assert READER <= flags, (prog, READER - flags)
    for prog in ("llm-power compare", "llm-power diagnose", "llm-power gate", "llm-power rank",
                 "llm-power subset plan", "llm-power subset estimate"):
        assert RECORDS <= readers[prog], (prog, RECORDS - readers[prog])


def test_rank_reads_a_task_with_two_filters_once_one_is_chosen(capsys):
    folder = FIXTURES / "lm_eval_two_filters"
    assert main(["rank", str(folder)]) == 1  # two filters, none chosen: an error that names the choice
    assert "filter" in capsys.readouterr().err
    assert main(["rank", str(folder), "--filter", "strict-match", "--format", "json"]) == 0  # not a flag before


def test_no_command_builds_a_namespace_by_hand():
    for path in sorted((Path(llm_power.__file__).parent / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func).endswith("argparse.Namespace"):
                pytest.fail(f"cli/{path.name}:{node.lineno} builds an argparse.Namespace")


@pytest.mark.parametrize("command", ["diagnose", "rank"])
def test_the_split_reaches_the_reader(command, capsys):
    """HELM's toy runs hold one instance of the valid split beside the test split: asked for it, the
    command reads one item (too few), not the test split's 40."""
    folder = str(FIXTURES / "helm")
    assert main([command, folder, "--format", "json"]) == 0
    capsys.readouterr()
    assert main([command, folder, "--split", "valid"]) == 1
    assert "at least 2 items; got 1" in capsys.readouterr().err


def test_one_model_in_a_wide_table_is_summarised(tmp_path, capsys):
    path = tmp_path / "one.csv"
    path.write_text("item,solo\nq1,1\nq2,0\nq3,1\nq4,1\n", encoding="utf-8")
    assert main(["diagnose", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("One model (solo): nothing to compare") and "4 items" in out
