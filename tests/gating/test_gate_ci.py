"""What a gate does to a CI run (issue 47, part 6): the INCONCLUSIVE policy's one table, held over every
verdict x policy; the items that flipped, held against an item-by-item loop, the kernel's discordant
counts and the gate's own gap; and both through ``llm-power gate`` (exit codes, JSON, the comment).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from llm_power import gate
from llm_power._core.options import INCONCLUSIVE_POLICIES, MAX_FLIPS
from llm_power._kernel.sufficient import discordant_counts
from llm_power.cli.main import main
from llm_power.gating import FlipTable, GateOutcome, flipped_items, gate_outcome

# ---- the policy table -------------------------------------------------------------------------------

#: the whole table, written out by hand (docs/integrations.md shows the same one)
TABLE = {
    ("PASS", "block"): (0, "success", None),
    ("PASS", "warn"): (0, "success", None),
    ("PASS", "pass"): (0, "success", None),
    ("INCONCLUSIVE", "block"): (3, "failure", "error"),
    ("INCONCLUSIVE", "warn"): (0, "neutral", "warning"),
    ("INCONCLUSIVE", "pass"): (0, "success", None),
    ("FAIL", "block"): (4, "failure", "error"),
    ("FAIL", "warn"): (4, "failure", "error"),
    ("FAIL", "pass"): (4, "failure", "error"),
}


@pytest.mark.parametrize(("verdict", "policy"), sorted(TABLE))
def test_the_policy_table(verdict, policy):
    out = gate_outcome(verdict, policy)
    assert isinstance(out, GateOutcome)
    assert (out.exit_code, out.conclusion, out.annotation) == TABLE[verdict, policy]
    assert out.verdict == verdict and out.inconclusive == policy
    assert out.to_dict() == {"verdict": verdict, "inconclusive": policy, "exit_code": TABLE[verdict, policy][0],
                             "conclusion": TABLE[verdict, policy][1], "annotation": TABLE[verdict, policy][2]}


def test_the_table_covers_every_policy_and_only_those():
    assert set(INCONCLUSIVE_POLICIES) == {p for _, p in TABLE}
    assert gate_outcome("INCONCLUSIVE").exit_code == 3  # the default blocks, as before the policy existed
    # the default's exit codes are the verdict's own (GateResult.exit_code)
    assert all(gate_outcome(v).exit_code == code for v, code in {"PASS": 0, "INCONCLUSIVE": 3, "FAIL": 4}.items())


def test_policy_validation():
    with pytest.raises(ValueError, match=r"`inconclusive` must be one of 'block', 'pass', 'warn'; got 'allow'"):
        gate_outcome("INCONCLUSIVE", "allow")
    with pytest.raises(TypeError, match="`inconclusive` must be one of"):
        gate_outcome("INCONCLUSIVE", True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="`verdict` must be one of 'FAIL', 'INCONCLUSIVE', 'PASS'; got 'pass'"):
        gate_outcome("pass")


# ---- the items that flipped -------------------------------------------------------------------------

def _loop(base, cand, items):
    """The obviously correct version: one item at a time."""
    regressed, fixed = [], []
    for b, c, item in zip(base, cand, items, strict=True):
        if b == 1 and c == 0:
            regressed.append(str(item))
        elif b == 0 and c == 1:
            fixed.append(str(item))
    return tuple(regressed), tuple(fixed)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_flips_equal_a_loop_the_kernel_counts_and_the_gap(seed):
    rng = np.random.default_rng(seed)
    n = 500
    base = (rng.random(n) < 0.6).astype(int)
    cand = np.where(rng.random(n) < 0.8, base, (rng.random(n) < 0.6).astype(int))
    items = [f"task:{k}" for k in rng.permutation(n)]
    flips = flipped_items(base, cand, items)
    assert isinstance(flips, FlipTable)
    assert (flips.regressed, flips.fixed) == _loop(base, cand, items)
    assert (flips.n_regressed, flips.n_fixed) == discordant_counts(base, cand)
    assert (flips.n_fixed - flips.n_regressed) / n == pytest.approx(gate(base, cand).delta, abs=1e-15)
    # swapping the models swaps the sides
    swapped = flipped_items(cand, base, items)
    assert (swapped.regressed, swapped.fixed) == (flips.fixed, flips.regressed)


def test_error_flags_flip_the_other_way():
    errors_base, errors_cand = [0, 0, 1, 1], [0, 1, 0, 1]  # 1 = wrong
    flips = flipped_items(errors_base, errors_cand, ["a", "b", "c", "d"], higher_is_better=False)
    assert flips.regressed == ("b",) and flips.fixed == ("c",)


def test_flips_to_dict_limits_the_ids_not_the_counts():
    flips = flipped_items([1] * 5 + [0] * 3, [0] * 5 + [1] * 3, list("abcdefgh"))
    assert flips.to_dict() == {"n": 8, "n_regressed": 5, "n_fixed": 3, "regressed": list("abcde"),
                               "fixed": list("fgh")}
    assert flips.to_dict(limit=2) == {"n": 8, "n_regressed": 5, "n_fixed": 3, "regressed": ["a", "b"],
                                      "fixed": ["f", "g"]}


def test_flips_validation():
    with pytest.raises(ValueError, match="must be 0/1 scores"):
        flipped_items([0.5, 1.0], [1.0, 0.0], ["a", "b"])
    with pytest.raises(ValueError, match=r"`items` must have one id per item \(2\); got 3"):
        flipped_items([0, 1], [1, 0], ["a", "b", "c"])


# ---- through the command line -----------------------------------------------------------------------

def _wide(tmp_path, base, cand, names=("base-model", "cand-model"), items=None):
    items = items if items is not None else [f"q{k}" for k in range(len(base))]
    path = tmp_path / "scores.csv"
    path.write_text("item," + ",".join(names) + "\n" + "".join(f"{i},{b},{c}\n" for i, b, c in
                                                              zip(items, base, cand, strict=True)))
    return path


def _undecided(n=60):
    base = np.tile([1, 1, 0, 0, 1], n // 5)
    cand = np.tile([1, 0, 1, 0, 1], n // 5)  # as many fixes as regressions: INCONCLUSIVE at margin 0.01
    return base, cand


@pytest.mark.parametrize("policy", INCONCLUSIVE_POLICIES)
def test_the_command_exits_as_the_table_says(tmp_path, capsys, policy):
    base, cand = _undecided()
    data = _wide(tmp_path, base, cand)
    js = tmp_path / "gate.json"
    code = main(["gate", "base-model", "cand-model", "--data", str(data), "--inconclusive", policy, "--json", str(js)])
    payload = json.loads(js.read_text())
    assert payload["verdict"] == "INCONCLUSIVE"
    assert code == payload["exit_code"] == TABLE["INCONCLUSIVE", policy][0]
    assert payload["conclusion"] == TABLE["INCONCLUSIVE", policy][1] and payload["inconclusive"] == policy
    err = capsys.readouterr().err
    assert ("warning: the gate is INCONCLUSIVE" in err) == (policy == "warn")
    # a FAIL is a FAIL under every policy
    fail = _wide(tmp_path, [1] * 60, [1] * 30 + [0] * 30)
    assert main(["gate", "base-model", "cand-model", "--data", str(fail), "--inconclusive", policy]) == 4


def test_the_json_and_the_comment_list_the_flips(tmp_path):
    base, cand = _undecided()
    items = [f"@org/team-{k}" if k == 1 else f"q{k}" for k in range(len(base))]
    items[6] = "x" * 500  # a long id: cut in the comment, whole in the JSON
    data = _wide(tmp_path, base, cand, items=items)
    md, js = tmp_path / "comment.md", tmp_path / "gate.json"
    main(["gate", "base-model", "cand-model", "--data", str(data), "--markdown", str(md), "--json", str(js),
          "--max-flips", "3"])
    flips = json.loads(js.read_text())["flips"]
    expected = flipped_items(base, cand, items)
    assert flips["n_regressed"] == flips["n_fixed"] == 12 and flips["n"] == 60
    # every id, whole, in the JSON (in the order the reader gives the items)
    assert sorted(flips["regressed"]) == sorted(expected.regressed) and "x" * 500 in flips["regressed"]
    assert sorted(flips["fixed"]) == sorted(expected.fixed)
    text = md.read_text()
    assert "#### Items that flipped (24 of 60)" in text
    row = next(line for line in text.splitlines() if line.startswith("| correct in baseline, wrong in candidate"))
    assert "| 12 |" in row and "@&#8203;org/team-1" in row and "x" * 500 not in row and "and 9 more" in row
    assert "@org/team" not in text  # the mention is inert


def test_graded_scores_have_no_flips(tmp_path):
    rng = np.random.default_rng(4)
    base = rng.random(50).round(3)
    data = _wide(tmp_path, base, (base + rng.normal(0, 0.01, 50)).clip(0, 1).round(3))
    md, js = tmp_path / "comment.md", tmp_path / "gate.json"
    main(["gate", "base-model", "cand-model", "--data", str(data), "--markdown", str(md), "--json", str(js)])
    assert json.loads(js.read_text())["flips"] is None and "flipped" not in md.read_text()


@pytest.mark.parametrize("bad", ["-1", str(MAX_FLIPS + 1), "two"])
def test_max_flips_is_bounded(tmp_path, capsys, bad):
    data = _wide(tmp_path, *_undecided())
    with pytest.raises(SystemExit) as exc:
        main(["gate", "base-model", "cand-model", "--data", str(data), "--max-flips", bad])
    assert exc.value.code == 2 and "--max-flips" in capsys.readouterr().err
