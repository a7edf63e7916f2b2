"""What people see when a command fails (issue 42): one exit code per kind of error in every command
(the commands are read from the parser, so a new one fails here until it is listed), "did you mean"
for a misspelled command, flag, choice, column, model or judge, and no note after an error.
"""

from __future__ import annotations

import argparse
import random
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest

from llm_power._core.suggest import close_matches, did_you_mean, no_column
from llm_power.cli.main import EXIT_CODES, _parsers, build_parser, main

ROOT = Path(__file__).resolve().parents[2]
CATEGORIES = ("algebra", "biology", "chemistry", "history")


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Small inputs of every kind the commands read (each command runs in well under a second)."""
    d = tmp_path_factory.mktemp("errors")
    r = random.Random(42)
    rows = [f"q{i},{CATEGORIES[i % 4]},{r.randint(0, 1)},{r.randint(0, 1)},{r.randint(0, 1)}" for i in range(40)]
    (d / "wide.csv").write_text("item,category,m-a,m-b,m-c\n" + "\n".join(rows) + "\n", encoding="utf-8")
    rows = [f"{m},{run},q{i},{r.randint(0, 1)}" for m in ("m-a", "m-b") for run in ("r1", "r2") for i in range(20)]
    (d / "runs.csv").write_text("model,run,item,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    battles = []
    for i in range(60):
        a, b = r.sample(["m-a", "m-b", "m-c"], 2)
        battles += [f"q{i},{a},{b},{r.choice(['model_a', 'model_b', 'tie'])},{j}" for j in ("judge-x", "judge-y")]
    (d / "battles.csv").write_text("question_id,model_a,model_b,winner,judge\n" + "\n".join(battles) + "\n",
                                   encoding="utf-8")
    rows = [f"{m},q{i},{s},{r.randint(0, 1)}" for m in ("m-a", "m-b") for i in range(20) for s in range(3)]
    (d / "samples.csv").write_text("model,item,sample,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    rows = [f"q{i},{r.randint(0, 1)},{r.randint(0, 1)}" for i in range(20)]
    (d / "labeled.csv").write_text("item,label,judge\n" + "\n".join(rows) + "\n", encoding="utf-8")
    rows = [f"q{i},{r.randint(0, 1)}" for i in range(20, 80)]
    (d / "unlabeled.csv").write_text("item,judge\n" + "\n".join(rows) + "\n", encoding="utf-8")
    (d / "board.csv").write_text("model,score\nm-a,0.61\nm-b,0.55\n", encoding="utf-8")
    (d / "empty.csv").write_text("", encoding="utf-8")
    return d


def run(capsys, argv: list[str]) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of one command, whether argparse exits or ``main`` returns."""
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def one_error_line(err: str, command: str) -> str:
    """The error is one line on stderr, the only one (no note before or after it), naming the command."""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"llm-power {command}: error: "), err
    return lines[0]


# ---- one exit code per kind of error, in every command ---------------------------------------------------------


class Spec(NamedTuple):
    """How to run a command: a valid command line, a value the command checks after parsing, and the
    command line with a given input file (None where the command has no such case).
    """

    ok: Callable[[Path], list[str]]
    late: Callable[[Path], list[str]] | None
    reading: Callable[[Path, str], list[str]] | None


SPECS: dict[str, Spec] = {
    "ci": Spec(lambda d: ["ci", "17", "20"], lambda d: ["ci", "30", "20"], None),
    "coverage": Spec(lambda d: ["coverage", "--n", "10", "--p", "0.5"],
                     lambda d: ["coverage", "--n", "10", "--p", "1.5"], None),
    "compare": Spec(lambda d: ["compare", str(d / "wide.csv"), "--models", "m-a", "m-b"],
                    lambda d: ["compare", str(d / "wide.csv"), "--models", "m-a", "m-a"],
                    lambda d, f: ["compare", f]),
    "plan sample-size": Spec(lambda d: ["plan", "sample-size", "--pa", "0.6", "--pb", "0.5"],
                             lambda d: ["plan", "sample-size", "--pa", "0.6", "--pb", "0.6"], None),
    "plan mde": Spec(lambda d: ["plan", "mde", "--n", "100"], lambda d: ["plan", "mde", "--n", "100", "--p", "1.5"],
                     None),
    "plan power": Spec(lambda d: ["plan", "power", "--n", "100", "--pa", "0.6", "--pb", "0.5"],
                       lambda d: ["plan", "power", "--n", "0", "--pa", "0.6", "--pb", "0.5"], None),
    "plan shortcut": Spec(lambda d: ["plan", "shortcut", "--pa", "0.65", "--pb", "0.6", "--rho", "0.3"],
                          lambda d: ["plan", "shortcut", "--pa", "0.65", "--pb", "0.6", "--rho", "0.95"], None),
    "plan runs": Spec(lambda d: ["plan", "runs", str(d / "runs.csv"), "--run", "run"],
                      lambda d: ["plan", "runs", str(d / "runs.csv"), "--run", "run", "--max-runs", "0"],
                      lambda d, f: ["plan", "runs", f, "--run", "run"]),
    "plan leaderboard": Spec(lambda d: ["plan", "leaderboard", str(d / "wide.csv"), "--simulations", "200"],
                             lambda d: ["plan", "leaderboard", str(d / "wide.csv"), "--at-least", "x"],
                             lambda d, f: ["plan", "leaderboard", f]),
    "adjust": Spec(lambda d: ["adjust", "0.01", "0.2"], lambda d: ["adjust", "0.01", "1.5"], None),
    "diagnose": Spec(lambda d: ["diagnose", str(d / "wide.csv")],
                     lambda d: ["diagnose", str(d / "wide.csv"), "--fragile-share", "2"],
                     lambda d, f: ["diagnose", f]),
    "rank": Spec(lambda d: ["rank", str(d / "wide.csv")], lambda d: ["rank", str(d / "wide.csv"), "--fragile-share", "2"],
                 lambda d, f: ["rank", f]),
    "noise": Spec(lambda d: ["noise", str(d / "runs.csv"), "--run", "run"], lambda d: ["noise"],
                  lambda d, f: ["noise", f, "--run", "run"]),
    "gate": Spec(lambda d: ["gate", "m-a", "m-b", "--data", str(d / "wide.csv")],
                 lambda d: ["gate", "m-a", "m-b", "--data", str(d / "wide.csv"), "--margin", "-1"],
                 lambda d, f: ["gate", "m-a", "m-b", "--data", f]),
    "aggregate": Spec(lambda d: ["aggregate", str(d / "board.csv"), "--items", "100"],
                      lambda d: ["aggregate", str(d / "board.csv"), "--items", "0"], lambda d, f: ["aggregate", f]),
    "arena": Spec(lambda d: ["arena", str(d / "battles.csv")], lambda d: ["arena"], lambda d, f: ["arena", f]),
    "judges": Spec(lambda d: ["judges", str(d / "battles.csv")],
                   lambda d: ["judges", str(d / "battles.csv"), "--resamples", "-1"], lambda d, f: ["judges", f]),
    "ppi": Spec(lambda d: ["ppi", "--labeled", str(d / "labeled.csv"), "--unlabeled", str(d / "unlabeled.csv")], None,
                lambda d, f: ["ppi", "--labeled", f, "--unlabeled", f]),
    "passk": Spec(lambda d: ["passk", str(d / "samples.csv")], lambda d: ["passk", str(d / "samples.csv"), "--k", "0"],
                  lambda d, f: ["passk", f]),
    "subset plan": Spec(lambda d: ["subset", "plan", str(d / "wide.csv"), "--out", str(d / "plan.csv"), "--budget", "20"],
                        lambda d: ["subset", "plan", str(d / "wide.csv"), "--out", str(d / "plan.csv"), "--budget", "2"],
                        lambda d, f: ["subset", "plan", f, "--out", str(d / "plan.csv"), "--budget", "20"]),
    "subset estimate": Spec(lambda d: ["subset", "estimate", str(d / "wide.csv"), "--plan", str(d / "plan.csv")], None,
                            lambda d, f: ["subset", "estimate", str(d / "wide.csv"), "--plan", f]),
    "demo": Spec(lambda d: ["demo", "--no-html"], None, None),
    "verify": Spec(lambda d: ["verify", _receipt(d)], None, lambda d, f: ["verify", f]),
}


def _receipt(d: Path) -> str:
    """A receipt of wide.csv's diagnosis (written once, through the Python API: no output to capture)."""
    path = d / "receipt.json"
    if not path.exists():
        import csv

        import numpy as np

        import llm_power as lp

        with (d / "wide.csv").open(encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        x = np.array([[int(r[m]) for m in ("m-a", "m-b", "m-c")] for r in rows])
        lp.write_receipt(lp.diagnose(x, models=["m-a", "m-b", "m-c"], rng=0), path, inputs=[d / "wide.csv"])
    return str(path)


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every command that runs, from the parser: "ci", "plan mde", ... -> its parser."""
    out = {}
    for parser in _parsers(build_parser())[1:]:
        if not any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):  # noqa: SLF001
            out[parser.prog.removeprefix("llm-power ")] = parser
    return out


COMMANDS = _commands()


def test_every_command_is_checked():
    assert sorted(SPECS) == sorted(COMMANDS)  # a new command is listed here, with its error cases


def _typed_option(parser: argparse.ArgumentParser) -> str:
    """A flag of the command whose value argparse converts (a number): the bad-value case, from the parser."""
    for action in parser._actions:  # noqa: SLF001
        if action.option_strings and action.type not in (None, str) and action.nargs in (None, "?", "+", "*", 1):
            return next(o for o in action.option_strings if o.startswith("--"))
    raise AssertionError(f"{parser.prog}: no typed option")


@pytest.mark.parametrize("command", sorted(SPECS))
def test_usage_errors_exit_2_naming_the_command(command, data, capsys):
    spec, words = SPECS[command], command.split()
    cases = [spec.ok(data) + ["--no-such-flag"], spec.ok(data) + [_typed_option(COMMANDS[command]), "abc"]]
    flags = {o for a in COMMANDS[command]._actions for o in a.option_strings}  # noqa: SLF001
    cases += [spec.ok(data) + [flag, value] for flag, value in (("--confidence-level", "1.5"), ("--alpha", "2"))
              if flag in flags]
    if spec.late is not None:  # a value argparse lets through and the command (or the library) refuses
        cases.append(spec.late(data))
    for argv in cases:
        code, out, err = run(capsys, argv)
        assert code == 2 and out == "", (argv, code, err)
        one_error_line(err, " ".join(words))


@pytest.mark.parametrize("command", sorted(c for c, s in SPECS.items() if s.reading is not None))
def test_input_errors_exit_1_naming_the_file(command, data, capsys):
    reading = SPECS[command].reading
    assert reading is not None
    for name in ("missing.csv", "empty.csv"):  # a file that is not there; a file with nothing in it
        code, out, err = run(capsys, reading(data, str(data / name)))
        assert code == 1 and out == "", (command, name, code, err)
        assert name in one_error_line(err, command)


@pytest.mark.parametrize("command", ["ci", "coverage", "compare", "diagnose", "gate", "judges", "passk", "subset plan"])
def test_the_valid_command_lines_above_run(command, data, capsys):
    code, _, err = run(capsys, SPECS[command].ok(data))  # so that the error cases differ from them by one thing
    assert code in (0, 3, 4), err


def test_options_missing_are_a_usage_error_found_before_reading(data, capsys):
    code, _, err = run(capsys, ["subset", "plan", str(data / "missing.csv"), "--out", str(data / "plan.csv")])
    assert code == 2 and "give a --budget, a --half-width or a --gap" in one_error_line(err, "subset plan")


def test_the_exit_codes_are_documented():
    page = (ROOT / "docs" / "reference" / "errors.md").read_text(encoding="utf-8")
    section = page[page.index("## On the command line: exit codes"):]
    for code in EXIT_CODES:
        assert f"\n| {code} |" in section


# ---- did you mean -------------------------------------------------------------------------------------------


def test_close_matches_rule():
    assert close_matches("categroy", ["question_id", "category", "gemma-7b"]) == ["category"]
    assert close_matches("CATEGORY", ["category"]) == ["category"]  # case ignored
    assert close_matches("--clusters", ["--cluster", "--cluster-resamples", "--filter"]) == ["--cluster"]
    assert close_matches("lm-eval", ["lighteval", "lm_eval"]) == ["lm_eval"]  # within 0.1 of the best only
    assert close_matches("zzz", ["category"]) == [] and did_you_mean("zzz", ["category"]) == ""
    assert did_you_mean("m-x", ["m-a", "m-b"]) == "did you mean 'm-a' or 'm-b'?"
    assert did_you_mean("--alpah", ["--alpha", "--help"], quote=False) == "did you mean --alpha?"
    assert no_column("cluster", "subjec", ["item", "subject"]) == (
        "no cluster column 'subjec' (did you mean 'subject'?); columns are 'item', 'subject'")


@pytest.mark.parametrize(("argv", "command", "hint"), [
    (["diagnose", "{wide}", "--clusters", "category"], "diagnose", "did you mean --cluster?"),
    (["diagnose", "{wide}", "--clusters=category"], "diagnose", "did you mean --cluster?"),
    (["compare", "{wide}", "--modles", "m-a", "m-b"], "compare", "did you mean --models?"),
    (["ci", "17", "20", "--methd", "wilson"], "ci", "did you mean --method?"),
    (["ci", "17", "20", "--method", "wilsn"], "ci", "did you mean 'wilson'?"),
    (["diagnos", "{wide}"], "", "did you mean 'diagnose'?"),
    (["plan", "sample-siz", "--pa", "0.6"], "plan", "did you mean 'sample-size'?"),
    (["diagnose", "{wide}", "--input-format", "lm-eval"], "diagnose", "did you mean 'lm_eval'?"),
])
def test_a_misspelled_flag_command_or_choice_is_a_usage_error_with_its_close_match(argv, command, hint, data, capsys):
    code, _, err = run(capsys, [a.format(wide=data / "wide.csv") for a in argv])
    line = one_error_line(err, command) if command else err.strip()
    assert code == 2 and hint in line and line.endswith("--help)") and "\n" not in err.strip()


def test_an_unknown_flag_is_reported_by_its_command_without_a_guess_when_nothing_is_close(data, capsys):
    code, _, err = run(capsys, ["diagnose", str(data / "wide.csv"), "--zzzz"])
    line = one_error_line(err, "diagnose")
    assert code == 2 and "unrecognized arguments: --zzzz" in line and "did you mean" not in line


@pytest.mark.parametrize(("argv", "hint", "names_file"), [
    (["diagnose", "{wide}", "--cluster", "categroy"], "(did you mean 'category'?)", True),
    (["diagnose", "{wide}", "--id-column", "itme"], "(did you mean 'item'?)", True),
    (["compare", "{long}", "--metric", "scor"], "(did you mean 'score'?)", True),
    (["compare", "{long}", "--cluster", "subjec"], "(did you mean 'subject'?)", True),  # was "missing cluster label"
    (["compare", "{long}", "--id-column", "itme"], "(did you mean 'item'?)", True),
    (["noise", "{runs}", "--run", "rnu"], "no run column 'rnu' (did you mean 'run'?)", True),
    (["rank", "{wide}", "--run", "categroy"], "no run column 'categroy' (did you mean 'category'?)", True),
    (["compare", "{wide}", "--models", "m-a", "m-x"], "(did you mean 'm-a', 'm-b' or 'm-c'?)", False),
    (["gate", "m-a", "m-bb", "--data", "{wide}"], "(did you mean 'm-b'?)", False),
    (["arena", "{battles}", "--judge", "judge-z"], "(did you mean 'judge-x' or 'judge-y'?)", False),
    (["arena", "{battles}", "--cluster", "question"], "(did you mean 'question_id'?)", False),
    (["judges", "{battles}", "--item", "question"], "(did you mean 'question_id'?)", False),
    (["ppi", "--labeled", "{labeled}", "--unlabeled", "{unlabeled}", "--label-column", "labl"],
     "(did you mean 'label'?)", True),
    (["passk", "{samples}", "--baseline", "m-aa"], "(did you mean 'm-a'?)", False),
])
def test_a_misspelled_column_model_or_judge_lists_its_close_match_in_one_line(argv, hint, names_file, data, capsys):
    files = {name: data / f"{name}.csv" for name in ("wide", "runs", "battles", "labeled", "unlabeled", "samples")}
    files["long"] = ROOT / "tests" / "fixtures" / "long.csv"
    argv = [a.format(**files) for a in argv]
    code, _, err = run(capsys, argv)
    command = " ".join(argv[:2]) if argv[0] in ("plan", "subset") else argv[0]
    line = one_error_line(err, command)
    assert code == 1 and hint in line, line
    if names_file:
        assert Path(argv[1] if argv[0] != "ppi" else argv[2]).name in line


def test_no_guess_when_no_column_is_close(data, capsys):
    code, _, err = run(capsys, ["diagnose", str(data / "wide.csv"), "--cluster", "zzz"])
    line = one_error_line(err, "diagnose")
    assert code == 1 and "no cluster column 'zzz'; columns are" in line


# ---- no unrelated note after an error -----------------------------------------------------------------------


def test_the_label_note_is_given_when_it_helps(data, capsys):
    # the precondition of the tests below: a text column is a label, and the note says how to cluster by it
    code, _, err = run(capsys, ["diagnose", str(data / "wide.csv")])
    assert code == 0 and "column 'category' (e.g. 'algebra') holds text" in err and "--cluster category" in err
    code, _, err = run(capsys, ["diagnose", str(data / "wide.csv"), "--cluster", "category"])
    assert code == 0 and "holds text" not in err  # the user named it already


@pytest.mark.parametrize("argv", [
    ["diagnose", "{wide}", "--fragile-share", "2"],  # an error after the file was read (its note was issued)
    ["diagnose", "{wide}", "--cluster", "categroy"],
    ["rank", "{wide}", "--run", "rn"],
    ["compare", "{wide}", "--models", "m-a", "m-x"],
    ["subset", "plan", "{wide}", "--out", "{out}", "--budget", "2"],
])
def test_an_error_is_the_last_and_only_line(argv, data, capsys):
    argv = [a.format(wide=data / "wide.csv", out=data / "out.csv") for a in argv]
    code, _, err = run(capsys, argv)
    assert code in (1, 2) and "holds text" not in err and "note:" not in err
    one_error_line(err, " ".join(argv[:2]) if argv[0] == "subset" else argv[0])


def test_reading_runs_names_no_label_the_user_gave_as_the_cluster(data):
    # runs_frame reads the file a second time for the run column: that read must not report the user's
    # --cluster column as a text column that --cluster could cluster by
    from llm_power.io.runs import runs_frame

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        frame = runs_frame([data / "wide.csv"], run="item", cluster="category")
    assert sorted(set(frame["cluster"].astype(str))) == list(CATEGORIES)
    assert not [w for w in caught if "holds text" in str(w.message)], [str(w.message) for w in caught]
