"""One verdict by construction (issue 39, point 1): the rule that makes a gap *resolved* -- q >= 1, the
reported test rejects at alpha, N* finite -- is written once, in ``_kernel/verdict.resolved`` (with
its halves ``big_enough`` and ``rejects``), and "resolved" means that one thing in every result type.

The source scan is derived from the tree: any comparison of a q (``q``, ``q_any``, ``res.q``,
``cols["q_cluster"]``...) with 1, and any value of a ``resolved...`` name, keyword or key that is
computed from a comparison, outside those kernel functions, fails the test. It was checked against
7302bb3, where it finds the seven places the issue lists and pass@k's band-excludes-0 "resolved".
"""

from __future__ import annotations

import ast
import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest

import llm_power as lp
from llm_power._kernel import verdict as kv

SRC = Path(lp.__file__).resolve().parent
#: the only functions allowed to write the rule's comparisons
KERNEL_RULE = {("_kernel/verdict.py", "big_enough"), ("_kernel/verdict.py", "rejects"),
               ("_kernel/verdict.py", "resolved")}
_Q = re.compile(r"(?<![\w])q(_[a-z0-9]+)*(?![\w(])")


def _is_one(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and not isinstance(node.value, bool) and node.value in (1, 1.0)


def _functions(tree: ast.Module) -> dict[ast.AST, str]:
    """Each node -> the name of the outermost function that holds it."""
    owner: dict[ast.AST, str] = {}
    for top in ast.walk(tree):
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(top):
                owner.setdefault(node, top.name)
    return owner


def rule_violations(root: Path) -> list[str]:
    """Where the verdict's rule is restated outside the kernel function (``root`` a package tree)."""
    bad = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        owner = _functions(tree)
        for node in ast.walk(tree):
            if (rel, owner.get(node, "")) in KERNEL_RULE:
                continue
            if isinstance(node, ast.Compare):
                ops = [node.left, *node.comparators]
                if any(_is_one(o) for o in ops) and any(_Q.search(ast.unparse(o)) for o in ops if not _is_one(o)):
                    bad.append(f"{rel}:{node.lineno}: q compared with 1: {ast.unparse(node)}")
            pairs: list[tuple[str, ast.AST]] = []
            if isinstance(node, ast.Assign):
                pairs = [(ast.unparse(t), node.value) for t in node.targets]
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
                pairs = [(ast.unparse(node.target), node.value)]
            elif isinstance(node, ast.keyword) and node.arg:
                pairs = [(node.arg, node.value)]
            elif isinstance(node, ast.Dict):
                pairs = [(k.value, v) for k, v in zip(node.keys, node.values, strict=True)
                         if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            for name, value in pairs:
                if "resolved" in name and "unresolved" not in name and any(
                        isinstance(n, ast.Compare) for n in ast.walk(value)):
                    bad.append(f"{rel}:{getattr(value, 'lineno', '?')}: {name} computed from a comparison: "
                               f"{ast.unparse(value)[:90]}")
    return bad


def test_the_rule_is_written_only_in_the_kernel():
    bad = rule_violations(SRC)
    assert not bad, "\n".join(bad)


def test_the_scan_finds_a_restated_rule(tmp_path):
    """The scan's precondition: it sees the rule when a module restates it (the shapes found at 7302bb3)."""
    pkg = tmp_path / "pkg"
    (pkg / "_kernel").mkdir(parents=True)
    (pkg / "_kernel" / "verdict.py").write_text("def resolved(q, p, a):\n    return (q >= 1.0) & (p <= a)\n")
    (pkg / "wing.py").write_text(
        "def f(q_any, res, cols, lo, hi, verdict):\n"
        "    resolved = (q_any >= 1) & verdict.resolved\n"
        "    ok = res.q >= 1 and res.pvalue > res.alpha\n"
        "    flags = np.asarray(cols['q_cluster']) < 1\n"
        "    return Result(resolved=(lo > 0) | (hi < 0))\n")
    found = rule_violations(pkg)
    assert len(found) == 5, found
    assert all(line.startswith("wing.py") for line in found)


def test_resolved_is_the_rule():
    q = np.array([0.5, 1.0, 2.0, 2.0, np.nan, np.inf, 3.0])
    p = np.array([0.01, 0.05, 0.051, 0.01, 0.01, 0.0, 0.0])
    n_star = np.array([200.0, 100.0, 50.0, 50.0, np.nan, 0.0, np.inf])
    expected = [False, True, False, True, False, True, False]  # written out by hand from the rule
    assert kv.resolved(q, n_star, pvalue=p, alpha=0.05).tolist() == expected
    assert kv.resolved(q, n_star, rejected=p <= 0.05).tolist() == expected
    out = np.zeros(7, dtype=bool)
    kv.resolved(q, n_star, pvalue=p, alpha=0.05, out=out)
    assert out.tolist() == expected
    with pytest.raises(TypeError, match="pvalue"):
        kv.resolved(q, n_star)


@pytest.mark.parametrize(("q", "n_star", "p", "iid", "key"), [
    (2.0, 50.0, 0.01, True, "resolved"), (0.4, 250.0, 0.2, True, "too_small"),
    (0.9, 111.0, 0.01, True, "too_small"), (1.5, 67.0, 0.2, True, "no_rejection"),
    (0.0, math.inf, 1.0, True, "unreachable"), (math.nan, math.nan, 1.0, True, "undefined"),
    (2.0, 50.0, 0.01, False, "iid_unresolved")])
def test_verdict_reason_names_the_part_that_decides(q, n_star, p, iid, key):
    assert kv.verdict_reason(q, n_star, pvalue=p, alpha=0.05, iid_resolved=iid) == key
    assert key in kv.REASONS


def test_compare_explains_its_verdict_with_the_rule():
    """A significant gap below 80% power: the sentence says q < 1, not "the test does not reject"."""
    a = np.r_[np.ones(150), np.zeros(50)]
    b = np.r_[np.ones(141), np.zeros(9), np.ones(1), np.zeros(49)]
    res = lp.compare(a, b)
    assert res.pvalue < 0.05 and res.q < 1 and not res.resolved  # SPEC's McNemar example, exact p 0.0215
    assert res.verdict_reason == "too_small" and "too small" in res.summary()
    # four graded items: T = 3.05 gives q = T^2 / K = 1.19 >= 1, but t_3 needs 3.18 (scipy's p 0.055)
    base = np.array([0.3, 0.2, 0.6, 0.5])
    res = lp.compare(base + np.array([0.4, 1.0, 0.2, 1.1]), base)
    assert res.method == "paired_t" and res.q >= 1 and res.pvalue > 0.05 and not res.resolved
    assert res.verdict_reason == "no_rejection" and "does not reject" in res.summary()


def test_pass_at_k_does_not_call_its_band_resolved():
    """Issue 39: on the same 500 one-sample questions compare said not resolved (p 0.019, q 0.79) while
    compare_pass_at_k said ``resolved`` (its band excludes 0). The band has its own name now."""
    rng = np.random.default_rng(7)
    a = (rng.random(500) < 0.62).astype(float)
    b = np.where(rng.random(500) < 0.15, 1 - a, a)
    cmp = lp.compare_pass_at_k(a[:, None], b[:, None], k=1, rng=0)
    fields = {f.name for f in dataclasses.fields(cmp)}
    assert "resolved" not in fields and "band_excludes_zero" in fields
    band = (cmp.band_ci_low > 0) | (cmp.band_ci_high < 0)
    assert cmp.band_excludes_zero.tolist() == band.tolist()


def test_resolved_means_one_thing_in_every_result_type():
    """Every public result type with a ``resolved`` field is one whose flag comes from the kernel's rule
    (the source scan above); other decisions have other words ("decided", "band_excludes_zero")."""
    carriers = set()
    for name in lp.__all__:
        obj = getattr(lp, name)
        if isinstance(obj, type) and dataclasses.is_dataclass(obj):
            if any(f.name == "resolved" or f.name.startswith("resolved_") for f in dataclasses.fields(obj)):
                carriers.add(name)
    assert carriers == {"Comparison", "PairResolution"}
