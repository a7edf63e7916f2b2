"""What people see, every command (issue 42): each command's output on the bundled and shared data,
laid out for an 80-column pipe, has no line over 80 columns, no ambiguous shortened name, and none of
the forms docs/glossary.md forbids (``+-``, "1 items", "runs by run", nan/inf shown as values, a
shown quantity in raw scientific notation, a bare variance beside a score).

The commands run in-process once (module fixture); a real terminal at 80 columns is
tests/cli/test_tmux_widths.py (slow tier).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from llm_power.cli.main import main

BUNDLED = Path(__file__).resolve().parents[1] / "src" / "llm_power" / "data"
MMLU = BUNDLED / "mmlu_pro_correct.csv.gz"
RERUNS = BUNDLED / "llm_stability_long.csv.gz"
A, B = "Meta-Llama-3_1-70B-Instruct", "Meta-Llama-3_1-70B"


def commands(tmp: Path, shared: Path, *, write: bool = True) -> dict[str, list[str]]:
    """Every command (and sub-command) on real data, as the README and --help show them (``write``: the
    small input files too).
    """
    rng = np.random.default_rng(0)
    rows = [(m, f"q{i}", s, int(rng.random() < p * 2 * rng.beta(2, 2)))
            for m, p in (("Mistral-7B-Instruct-v0.1", 0.3), ("Mistral-7B-v0.1", 0.25))
            for i in range(80) for s in range(6)]
    y = (rng.random(300) < 0.7).astype(int)
    judge = np.where(rng.random(300) < 0.85, y, 1 - y)
    if write:
        pd.DataFrame(rows, columns=["model", "item", "sample", "score"]).to_csv(tmp / "samples.csv", index=False)
        pd.DataFrame({"label": y[:100], "judge": judge[:100]}).to_csv(tmp / "labeled.csv", index=False)
        pd.DataFrame({"judge": judge[100:]}).to_csv(tmp / "unlabeled.csv", index=False)
    lm_eval = shared / "formats" / "lm_eval" / "results_2026-01-21T03-44-18.458309.json"
    eee = shared / "formats" / "every_eval_ever" / "converted_v0.3.0"
    return {
        "ci": ["ci", "17", "20", "--method", "all"],
        "coverage": ["coverage", "--n", "10", "30", "--p", "0.02", "0.5"],
        "compare": ["compare", str(MMLU), "--models", A, B],
        "compare --cluster": ["compare", str(MMLU), "--models", A, B, "--cluster", "category"],
        "plan sample-size": ["plan", "sample-size", "--pa", "0.8", "--pb", "0.75", "--rho", "0.5"],
        "plan mde": ["plan", "mde", "--p", "0.7", "--n", "500", "1000"],
        "plan power": ["plan", "power", "--pa", "0.8", "--pb", "0.75", "--n", "500", "1000"],
        "plan shortcut": ["plan", "shortcut", "--pa", "0.8", "--pb", "0.75", "--rho", "0.5"],
        "plan runs": ["plan", "runs", str(RERUNS), "--run", "run", "--delta", "0.05", "--on-missing", "intersect"],
        "plan leaderboard": ["plan", "leaderboard", "--demo", "--top", "6", "--at-least", "4", "--simulations", "2000"],
        "adjust": ["adjust", "0.01", "0.02", "0.03", "0.2"],
        "diagnose": ["diagnose", str(MMLU)],
        "diagnose --cluster": ["diagnose", str(MMLU), "--cluster", "category"],
        "diagnose --run": ["diagnose", str(RERUNS), "--run", "run", "--on-missing", "intersect"],
        "rank": ["rank", "--demo"],
        "noise": ["noise", "--demo"],
        "gate": ["gate", B, A, "--demo"],
        "aggregate": ["aggregate", str(lm_eval)],
        "aggregate, two models": ["aggregate", str(eee / "arc_easy_claude-sonnet-4.json"),
                                  str(eee / "arc_easy_qwen2.5-0.5b.json")],
        "arena": ["arena", "--demo"],
        "judges": ["judges", str(shared / "preferences" / "pandalm_testset" / "battles.csv.gz"), "--humans",
                   "annotator*"],
        "judges --humans crowd": ["judges", str(shared / "preferences" / "llmfao" / "battles.csv.gz"), "--humans",
                                  "crowd_*", "--where", "in_crowd_subset=1"],
        "ppi": ["ppi", "--labeled", str(tmp / "labeled.csv"), "--unlabeled", str(tmp / "unlabeled.csv")],
        "passk": ["passk", str(tmp / "samples.csv"), "--k", "1", "3"],
        "subset plan": ["subset", "plan", str(MMLU), "--budget", "400", "--cluster", "category", "--seed", "0",
                        "--out", str(tmp / "plan.csv")],
        "subset estimate": ["subset", "estimate", str(tmp / "new.csv"), "--plan", str(tmp / "plan.csv")],
        "demo": ["demo", "--no-html"],
    }


@pytest.fixture(scope="module")
def outputs(tmp_path_factory, shared_data_dir):
    tmp = tmp_path_factory.mktemp("glossary")
    runs: dict[str, tuple[int, str, str]] = {}
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        for name, argv in commands(tmp, shared_data_dir).items():
            if name == "subset estimate":  # two models run on the plan's items
                plan = pd.read_csv(tmp / "plan.csv", dtype={"item_id": str})
                full = pd.read_csv(MMLU, dtype={"question_id": str})
                full[full["question_id"].isin(set(plan["item_id"]))][["question_id", "category", A, B]].to_csv(
                    tmp / "new.csv", index=False)
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                code = main(argv)
            runs[name] = (code, out.getvalue(), err.getvalue())
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    return runs


def _data_names(shared: Path) -> dict[str, list[str]]:
    """The models (and judges) of each command's input: a shortened name must name one of them."""
    mmlu = [c for c in pd.read_csv(MMLU, nrows=1).columns if c not in ("question_id", "category")]
    reruns = sorted(pd.read_csv(RERUNS, usecols=["model"])["model"].unique())
    battles = pd.read_csv(shared / "preferences" / "pandalm_testset" / "battles.csv.gz")
    judges = sorted({str(v) for c in battles.columns if c.startswith(("model", "judge", "annotator")) for v in
                     battles[c].astype(str).unique()} | set(battles.columns))
    arena = pd.read_csv(BUNDLED / "mtbench_swap_battles.csv.gz")
    arena_names = sorted({str(v) for c in ("model_a", "model_b") for v in arena[c].unique()})
    crowd = sorted(pd.read_csv(shared / "preferences" / "llmfao" / "battles.csv.gz", usecols=["judge"])["judge"]
                   .astype(str).unique())
    by = {"judges --humans crowd": crowd, "aggregate, two models": ["anthropic/claude-sonnet-4-20250514",
                                                                    "ollama/qwen2.5-0.5b"], "subset estimate": [A, B], "plan runs": reruns, "noise": reruns, "diagnose --run": reruns,
          "arena": arena_names, "judges": judges, "passk": ["Mistral-7B-Instruct-v0.1", "Mistral-7B-v0.1"]}
    return {name: by.get(name, mmlu) for name in commands(Path("/nonexistent"), shared, write=False)}


def test_every_command_ran(outputs):
    failed = {name: err for name, (code, _, err) in outputs.items() if code not in (0, 3, 4)}  # gate: 3/4 verdicts
    assert failed == {}


def test_no_line_is_wider_than_80_columns(outputs):
    wide = {name: line for name, (_, out, _) in outputs.items() for line in out.splitlines() if len(line) > 80
            # gate's verdict stays one line in a pipe (a CI log is grepped for it); on a terminal it wraps
            and not (name == "gate" and line.startswith(("PASS ", "FAIL ", "INCONCLUSIVE ")))}
    assert wide == {}


def test_a_crowd_of_humans_is_one_row(outputs):
    """124 crowd workers were listed one per line; the JSON keeps every one."""
    out = outputs["judges --humans crowd"][1]
    judges_table = out.split("\n\n")[0]
    assert "124 humans" in judges_table and "crowd_58 " not in judges_table and len(judges_table.splitlines()) < 12


def test_no_shortened_name_is_ambiguous(outputs, shared_data_dir):
    data_names = _data_names(shared_data_dir)
    seen = 0
    for name, (_, out, _) in outputs.items():
        names = data_names[name]
        for token in re.findall(r"[\w.\-/()]*…[\w.\-/()]*", out):
            head, tail = token.split("…", 1)
            matches = [n for n in names if n.startswith(head) and n.endswith(tail) and len(n) > len(token) - 1]
            if head or tail:
                seen += 1
                assert len(matches) == 1, (name, token, matches)
    assert seen > 0  # the 80-column layouts do shorten names: the check is not vacuous


#: (pattern, what docs/glossary.md says instead)
FORBIDDEN = [
    (re.compile(r"\+-"), "± or the interval"),
    (re.compile(r"(?<![\d.,])1 (items|runs|models|pairs|battles|questions|labels)\b"), "one item, 1 item"),
    (re.compile(r"runs by run\b"), "the field a run comes from"),
    (re.compile(r"(?<![\w'\"])(nan|NaN|inf)(?![\w'\"])"), "— or ∞"),
    (re.compile(r"\bitem \d\.\d+, item x run"), "an SD in the score's unit"),
]
_SCIENTIFIC = re.compile(r"(?<![\w.])\d+(\.\d+)?e[-+]?\d+\b")
#: where scientific notation is a p-value: after "p", "p =", "p:", "p-value" on the line (or at the end of
#: the line before, for a wrapped sentence), or in a table column whose heading names a p-value
_P_BEFORE = re.compile(r"(\bp\b|p-value)[^,;.]{0,22}$")
_P_HEADING = re.compile(r"^(p|p-value|p [A-Za-z]+)$")


def _heading(lines: list[str], k: int) -> str | None:
    """The heading line of the table that line ``k`` is a row of (the line above its ─── rule)."""
    for j in range(k - 1, 0, -1):
        if lines[j].strip() and set(lines[j].strip()) <= {"─"}:
            return lines[j - 1]
        if not lines[j].strip():
            return None
    return None


def _in_p_column(heading: str | None, start: int, end: int) -> bool:
    """Whether the span is under a p-value heading (right- or left-aligned with it)."""
    if heading is None:
        return False
    for col in re.finditer(r"\S+(?: \S+)*", heading):
        if (col.end() == end or col.start() == start) and _P_HEADING.match(col.group(0)):
            return True
    return False


def test_the_glossary_forms_are_used_everywhere(outputs):
    found = []
    for name, (_, out, err) in outputs.items():
        text = out + err
        for pattern, instead in FORBIDDEN:
            for m in pattern.finditer(text):
                line = text[text.rfind("\n", 0, m.start()) + 1:text.find("\n", m.end())]
                found.append((name, m.group(0), instead, line))
        lines = out.splitlines()
        for k, line in enumerate(lines):
            for m in _SCIENTIFIC.finditer(line):
                before = line[:m.start()]
                if not before.strip() and k > 0:  # a wrapped sentence: the words before are on the line above
                    before = lines[k - 1] + " "
                if not (_P_BEFORE.search(before) or _in_p_column(_heading(lines, k), m.start(), m.end())):
                    found.append((name, m.group(0), "a p-value only", line))
    assert found == [], "\n".join(map(repr, found))


def test_the_scan_finds_what_it_forbids():
    """The patterns themselves, on the forms the issue quoted (so the scan cannot pass vacuously)."""
    quoted = ["+-0.0337", "on 1 items", "runs by run", "φ = nan", "item 0.124, item x run 0.0652"]
    for text, (pattern, _) in zip(quoted, FORBIDDEN, strict=True):
        assert pattern.search(text), text
    assert _SCIENTIFIC.search("run 3.56e-07") and not _P_BEFORE.search("run ")
    assert _P_BEFORE.search("two-sided p = ")


def test_every_help_says_it_the_glossarys_way():
    """The --help of every command and sub-command (walked from the parser) at 80 columns."""
    import argparse

    from llm_power.cli.main import build_parser

    def walk(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, str]]:
        found = [(name, parser.format_help())]
        for action in parser._actions:  # noqa: SLF001 - argparse keeps sub-parsers here
            if isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
                for sub_name, sub in action.choices.items():
                    found += walk(sub, f"{name} {sub_name}")
        return found

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        helps = walk(build_parser(), "llm-power")
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old
    assert len(helps) > 20
    found = [(name, m.group(0)) for name, text in helps for pattern, _ in FORBIDDEN[:3] for m in pattern.finditer(text)]
    assert found == []
    wide = [(name, line) for name, text in helps for line in text.splitlines() if len(line) > 80]
    assert wide == []
