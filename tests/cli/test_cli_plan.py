"""llm-power plan: tables and JSON equal the API; the seeds' tables; errors."""

from __future__ import annotations

import json

import pytest

from llm_power import mde, power, sample_size
from llm_power.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sample_size_json(capsys):
    code, out, _ = run(capsys, "plan", "sample-size", "--pa", "0.65", "--pb", "0.60", "--rho", "0.30", "--format", "json")
    assert code == 0
    payload = json.loads(out)
    got = {r["method"]: r["n"] for r in payload["results"]}
    assert got == {"wald": 1028, "connor": 1034, "exact": sample_size(0.65, 0.6, rho=0.3, method="exact")}
    assert payload["shortcut"] == 515


def test_sample_size_table_mode_reproduces_seed_table(capsys):
    code, out, _ = run(capsys, "plan", "sample-size", "--table", "--p", "0.8", "--delta", "0.02")
    assert code == 0
    for n in ("6,277", "4,394", "3,138", "1,882", "626", "6,280"):
        assert n in out


def test_mde_table_mode_reproduces_seed_table(capsys):
    code, out, _ = run(capsys, "plan", "mde", "--table", "--format", "json")
    rows = json.loads(out)["rows"]
    assert [r["n"] for r in rows] == [80, 164, 198, 1319, 14000]
    assert [round(100 * r["unpaired"], 2) for r in rows] == [17.72, 12.38, 11.26, 4.36, 1.34]
    assert [round(100 * r["paired_rho_0.7"], 2) for r in rows] == [9.56, 6.73, 6.13, 2.39, 0.73]


def test_mde_and_power_json_equal_api(capsys):
    _, out, _ = run(capsys, "plan", "mde", "--n", "1319", "--p", "0.8", "--rho", "0.7", "--format", "json")
    assert json.loads(out)["rows"][0]["mde"] == mde(1319, p=0.8, rho=0.7, method="connor")
    _, out, _ = run(capsys, "plan", "power", "--n", "400", "800", "--pa", "0.70", "--pb", "0.75", "--method", "exact",
                    "--format", "json")
    rows = json.loads(out)["rows"]
    assert rows[1]["power"] == pytest.approx(power(800, 0.70, 0.75, method="exact"), rel=1e-12)


def test_shortcut_command(capsys):
    code, out, _ = run(capsys, "plan", "shortcut", "--pa", "0.65", "--pb", "0.60", "--rho", "0.3", "--format", "json")
    payload = json.loads(out)
    assert payload["shortcut"] == 515 and payload["n_star"] == 1028
    assert payload["ratio"] == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["plan", "sample-size", "--pa", "0.65", "--pb", "0.6", "--rho", "0.95"], "admissible range [-0.60, 0.90]"),
        (["plan", "sample-size", "--pa", "0.6", "--pb", "0.6"], "delta = 0"),
        (["plan", "sample-size", "--pa", "0.6"], "--pb required"),
        (["plan", "power", "--n", "0", "--pa", "0.7", "--pb", "0.6"], "--n must be >= 1"),
        (["plan", "mde", "--n", "100", "--p", "1.5"], "--p must be in (0, 1)"),  # errors name the flag, not the Python parameter
    ],
)
def test_bad_values_checked_after_parsing_are_usage_errors(capsys, argv, message):
    code, out, err = run(capsys, *argv)  # the command line alone is wrong: exit 2, as argparse's usage errors
    assert code == 2 and out == "" and message in err and err.count("\n") == 1
    assert err.startswith(f"llm-power plan {argv[1]}: error:")


def test_power_at_alpha_is_a_usage_error_naming_both_flags(capsys):
    """The rule every public function has (issue 39): power above the tests' level, checked while parsing."""
    with pytest.raises(SystemExit) as info:
        main(["plan", "sample-size", "--pa", "0.7", "--pb", "0.6", "--power", "0.04"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and err.count("\n") == 1
    assert err.startswith("llm-power plan sample-size: error: argument --power: must be greater than --alpha (0.05)")


def test_plan_alone_prints_what_it_can_plan(capsys):
    assert main(["plan"]) == 0  # an overview, not an error (issue 24)
    out = capsys.readouterr().out
    assert all(what in out for what in ("sample-size", "mde", "power", "shortcut")) and "(N*)" in out


def test_usage_errors_exit_2(capsys):
    for argv in (["plan", "nothing"], ["plan", "power", "--pa", "0.7"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
