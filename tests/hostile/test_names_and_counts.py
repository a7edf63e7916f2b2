"""Issue 40: invisible characters by Unicode category, and counts past what floating point holds exactly.

Each test fails on 7302bb3: its escaper was a list that let U+0600, U+13430 and U+1BCA1 (format
characters, category Cf) through raw; ``proportion_ci(10**19 - 1, 10**19)`` returned (1.0, 1.0) through
the one-count fast path; ``aggregate --items 10**30`` printed a zero-width interval.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest

import llm_power as lp
from llm_power.report.terminal import safe_text

import _cli  # tests/_cli.py

#: the categories no terminal line may carry raw (control, format, surrogate, private use, unassigned,
#: line and paragraph separators): the issue's rule, from the Unicode database itself
HIDDEN = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}


def test_every_character_of_the_hidden_categories_is_escaped():
    """All 1,114,112 code points: none of the hidden categories survives safe_text (brute force over the
    database, not a list); printable letters, marks and spaces of every script pass unchanged."""
    hidden = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) in HIDDEN]
    assert len(hidden) > 900_000  # unassigned and private use are most of the code space
    text = "a".join(hidden[::97]) + "".join(hidden[:5000])  # a sample in one string, and the first 5,000
    out = safe_text(text)
    assert not any(unicodedata.category(ch) in HIDDEN for ch in out)
    for ch in ("\u0600", "\U00013430", "\U0001bca1", "\u2066", "\U000e0041", "\u2028"):
        assert safe_text(f"m{ch}x") == f"m\\{'u' if ord(ch) < 0x10000 else 'U'}{ord(ch):0{4 if ord(ch) < 0x10000 else 8}x}x"
    shown = "Qwen2.5 – 日本語 – café – e\u0301 – Ελληνικά – עברית – 🙂"
    assert safe_text(shown) == shown


def _run(args, cwd):
    return _cli.run(args, cwd=cwd)  # main() in process, seen as a subprocess sees it (tests/_cli.py)


def test_format_characters_in_model_names_reach_the_terminal_escaped(tmp_path):
    """Model names with U+0600 (Arabic number sign), U+13430 (Egyptian hieroglyph joiner) and U+1BCA1
    (shorthand format control), through the real command: escaped in stdout, the input untouched."""
    rng = np.random.default_rng(0)
    names = ["alpha\u0600", "beta\U00013430", "gamma\U0001bca1"]
    rows = ["item," + ",".join(names)]
    rows += [f"q{i}," + ",".join(str(int(v)) for v in rng.random(3) < [0.7, 0.6, 0.5]) for i in range(300)]
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    out = _run(["diagnose", str(path)], tmp_path)
    assert out.returncode == 0, out.stderr
    for raw, shown in zip(names, ("alpha\\u0600", "beta\\U00013430", "gamma\\U0001bca1"), strict=True):
        assert raw not in out.stdout + out.stderr
        assert shown in out.stdout
    assert not any(unicodedata.category(ch) in HIDDEN - {"Cc"} for ch in out.stdout)
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before


@pytest.mark.parametrize(("k", "n"), [(10**19 - 1, 10**19), (2**53, 2**53 + 1), (np.uint64(10**19), np.uint64(10**19))])
def test_counts_past_two_to_the_53_are_refused_on_every_path(k, n):
    """The documented limit holds on the one-count fast path (Wilson, Python ints) as on the arrays."""
    with pytest.raises(ValueError, match=r"at most 2\*\*53"):
        lp.proportion_ci(k, n)
    with pytest.raises(ValueError, match=r"at most 2\*\*53"):
        lp.proportion_ci(k, n, method="clopper_pearson")
    low, high = lp.proportion_ci(2**53 - 1, 2**53)  # the largest count: an interval, not a point
    assert 0.999 < low < high <= 1.0


def test_items_past_two_to_the_53_is_a_usage_error(tmp_path):
    """``aggregate --items 10**30`` names the flag and the limit instead of printing a zero-width interval."""
    card = tmp_path / "org" / "model" / ".eval_results"
    card.mkdir(parents=True)
    (card / "mmlu.yaml").write_text("- dataset: {id: cais/mmlu, task_id: mmlu}\n  value: 71.3\n", encoding="utf-8")
    ok = _run(["aggregate", str(tmp_path / "org"), "--items", "14042", "--format", "json"], tmp_path)
    assert ok.returncode == 0, ok.stderr  # the precondition: the file is read with a sane count
    assert json.loads(ok.stdout)
    out = _run(["aggregate", str(tmp_path / "org"), "--items", str(10**30)], tmp_path)
    assert out.returncode != 0
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "--items" in lines[0] and "2**53" in lines[0], out.stderr
    assert "Traceback" not in out.stderr
    assert Path(card / "mmlu.yaml").read_text(encoding="utf-8").startswith("- dataset")
