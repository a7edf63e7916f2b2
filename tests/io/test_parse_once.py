"""Detection and reading parse each JSON file once (issue 41). Every format that tells its files by
content used to parse a file once per test, and detection ran up to three times per command: one
OpenCompass result was parsed 5 times by ``read_results(file)``, 9 by ``read_results(folder)`` and 13
by ``diagnose FOLDER`` (counted at 553cb5c). Here every whole-file JSON parse is counted, by file.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

import llm_power as lp
from llm_power.io import safe

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def parses(monkeypatch):
    counts: Counter[str] = Counter()
    real = safe._load_json_file  # noqa: SLF001 - the one place a JSON file is parsed

    def counted(path):
        counts[str(Path(path).resolve())] += 1
        return real(path)

    monkeypatch.setattr(safe, "_load_json_file", counted)
    return counts


def _opencompass(tmp_path):
    src = FIXTURES / "opencompass" / "outputs" / "default" / "20260301_101500"
    root = tmp_path / "oc"
    for model in ("qwen2.5-7b-instruct-hf", "internlm2_5-7b-chat-hf"):
        (root / "results" / model).mkdir(parents=True)
        shutil.copy(src / "results" / model / "ARC-c.json", root / "results" / model / "ARC-c.json")
    return root


def _inspect(tmp_path):
    root = tmp_path / "insp"
    root.mkdir()
    shutil.copy(FIXTURES / "inspect" / "model-b.json", root / "model-b.json")
    shutil.copy(FIXTURES / "inspect" / "model-a.eval", root / "model-a.eval")
    return root


def _lm_eval(tmp_path):
    root = tmp_path / "lm"
    shutil.copytree(FIXTURES / "lm_eval", root)
    return root


def _deepeval(tmp_path, shared_data):
    body = json.loads((shared_data / "formats" / "deepeval" / "latest_test_run_beeai_f8b9dba.json").read_text("utf-8"))
    root = tmp_path / "de"
    for model in ("a", "b"):
        path = root / model / ".deepeval" / ".latest_test_run.json"
        path.parent.mkdir(parents=True)
        path.write_text(json.dumps(body), encoding="utf-8")
    return root


def _promptfoo(tmp_path, shared_data):
    root = tmp_path / "pf"
    root.mkdir()
    shutil.copy(shared_data / "formats" / "promptfoo" / "sample-export.json", root / "results.json")
    return root


BUILDERS = {"opencompass": _opencompass, "inspect": _inspect, "lm_eval": _lm_eval, "deepeval": _deepeval,
            "promptfoo": _promptfoo}


def _build(name, tmp_path, shared_data):
    builder = BUILDERS[name]
    return builder(tmp_path, shared_data) if builder in (_deepeval, _promptfoo) else builder(tmp_path)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_reading_a_folder_parses_each_file_once(name, tmp_path, shared_data, parses):
    root = _build(name, tmp_path, shared_data)
    frame = lp.read_results(root)
    assert len(frame) > 0
    assert parses and max(parses.values()) == 1, dict(parses)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_command_on_a_folder_parses_each_file_once(name, tmp_path, shared_data, parses, capsys):
    """The command line searched the folder, probed for a wide table and detected again before reading."""
    from llm_power.cli.main import main

    root = _build(name, tmp_path, shared_data)
    code = main(["diagnose", str(root)])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert parses and max(parses.values()) == 1, dict(parses)


def test_one_file_is_parsed_once_and_a_changed_file_again(tmp_path, parses):
    root = _opencompass(tmp_path)
    one = root / "results" / "qwen2.5-7b-instruct-hf" / "ARC-c.json"
    lp.read_results(one)
    assert parses[str(one.resolve())] == 1
    lp.read_results(one)  # a new session: parsed again (nothing is kept between calls)
    assert parses[str(one.resolve())] == 2
    with safe.parse_once():
        assert safe.peek_json(one) is not None
        one.write_text(one.read_text("utf-8") + " ", encoding="utf-8")  # changed: size and time differ
        safe.peek_json(one)
    assert parses[str(one.resolve())] == 4


def test_a_reader_takes_its_document_out_of_the_session(tmp_path, parses):
    """A session holds a document only until its reader has it (memory as before: the reader's copy is
    the only one), and never more file bytes than LLM_POWER_PARSE_CACHE_MB."""
    root = _opencompass(tmp_path)
    files = sorted(root.rglob("*.json"))
    with safe.parse_once():
        session = safe._SESSION.get()  # noqa: SLF001
        for path in files:
            safe.peek_json(path)
        assert session.held == sum(p.stat().st_size for p in files)
        safe.load_json_file(files[0], take=True)
        assert session.held == files[1].stat().st_size
        safe.load_json_file(files[0], take=True)  # taken: parsed again, not kept
        assert session.held == files[1].stat().st_size
    assert parses[str(files[0].resolve())] == 2


def test_the_session_budget_bounds_what_it_keeps(tmp_path, monkeypatch, parses):
    root = _opencompass(tmp_path)
    files = sorted(root.rglob("*.json"))
    monkeypatch.setenv("LLM_POWER_PARSE_CACHE_MB", "1")
    big = tmp_path / "big.json"
    big.write_text(json.dumps(["x" * 1000] * 1100), encoding="utf-8")  # past 1 MB: never kept
    with safe.parse_once():
        session = safe._SESSION.get()  # noqa: SLF001
        safe.peek_json(big)
        safe.peek_json(files[0])
        assert session.held == files[0].stat().st_size
        safe.peek_json(big)
    assert parses[str(big.resolve())] == 2 and parses[str(files[0].resolve())] == 1
