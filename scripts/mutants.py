"""Mutation check: apply single-line mutants one at a time to a copy of the tree and run fast-tier tests.

Each mutant is a plausible bug (a formula written wrongly); a mutant *survives* when every selected test
still passes. This is how issue 49's survivors were re-checked: each listed mutant, applied by hand, must
fail at least one fast-tier test. Usage::

    .venv/bin/python scripts/mutants.py                 # every mutant below
    .venv/bin/python scripts/mutants.py sizes-abs runs  # the ones whose id contains a word given

The copy lives in a temporary directory (the working tree is never touched) and is imported first
through PYTHONPATH (the editable install's path comes after it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = "src/llm_power/"


@dataclass(frozen=True)
class Mutant:
    id: str
    file: str  # under src/llm_power/ (or a repository path starting with ".")
    old: str  # must occur exactly once
    new: str
    tests: tuple[str, ...]  # test paths (fast tier) expected to catch it


MUTANTS = [
    # --- issue 49's survivors (the audit at 7302bb3), restated on today's code
    Mutant("sizes-abs", "_kernel/sizes.py", "k * var / (d * d)", "k * var / np.abs(d)",
           ("tests/kernel", "tests/planning")),
    Mutant("runs-resdf-independent", "_kernel/crossed.py",
           "(np.where(on, -ms_res / (n * r), 0.0), (n - 1.0) * (r - 1.0))",
           "(np.where(on, -ms_res / (n * r), 0.0), (n - 1.0) * r)", ("tests/runs", "tests/kernel")),
    Mutant("runs-resdf-property", "_kernel/crossed.py", "return (self.n - 1.0) * (self.runs - 1.0)",
           "return (self.n - 1.0) * self.runs", ("tests/runs", "tests/kernel")),
    Mutant("runs-msres-matched", "_kernel/crossed.py",
           "ms_res[start:start + step] = np.sum(resid * resid, axis=(1, 2)) / ((n - 1.0) * (r - 1.0))",
           "ms_res[start:start + step] = np.sum(resid * resid, axis=(1, 2)) / ((n - 1.0) * r)",
           ("tests/runs", "tests/kernel")),
    Mutant("runs-tau-level", "runs/_noise.py", "return float(np.quantile(stats, level))",
           "return float(np.quantile(stats, 1.0 - 2.0 * (1.0 - level)))", ("tests/runs",)),
    Mutant("runs-adjacent-swapped", "runs/_variance.py", "return order[:-1], order[1:]",
           "return order[1:], order[:-1]", ("tests/runs",)),
    Mutant("subsets-between-strata", "_kernel/survey.py",
           "+ (big_n * (m_h - mean) ** 2).sum(axis=-1)) / (big - 1.0)", ") / (big - 1.0)",
           ("tests/subsets",)),
    Mutant("subsets-plan-cv-price", "subsets/_plan.py",
           "return float((a * sd**2).sum() * factor + first)", "return float((a * sd**2).sum() + first)",
           ("tests/subsets",)),
    Mutant("subsets-plan-df-nhp", "subsets/_plan.py",
           "        df = max(n - sizes.size - p, 1)\n        if half_width",
           "        df = max(n - p, 1)\n        if half_width", ("tests/subsets",)),
    Mutant("subsets-sequence-alpha", "subsets/_sequential.py", "tail = (1.0 - self.level) / 2.0",
           "tail = 1.0 - self.level", ("tests/subsets",)),
    Mutant("subsets-sequence-wor", "subsets/_sequential.py",
           "population=self.n_items if self.target == \"benchmark\" else None)", "population=None)",
           ("tests/subsets",)),
    Mutant("rankings-cr0", "_kernel/ranks.py", "w = 1.0 / np.maximum(1.0 - sizes / n, 1e-12)", "w = 1.0 + 0.0 * sizes",
           ("tests/rankings", "tests/kernel")),
    Mutant("readers-inspect-partial", "io/formats/inspect.py", '"P": 0.5', '"P": 1.0', ("tests/io",)),
    Mutant("action-allow-fail", "integrations/github_action.py", "if code == 3 and allow:",
           "if code in (3, 4) and allow:", ("tests/integrations/test_github_action.py",)),
    Mutant("ci-guard-true", "./tests/_ci_plugin.py",
           'return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")',
           'return os.environ.get("CI", "") == "1"', ("tests/test_ci_guard.py",)),
    Mutant("ci-run-export", "./.ci/run", "export CI=1\n", "\n", ("tests/test_ci_guard.py",)),
    # --- issue 40's last classes (2026-12-05)
    Mutant("hostile-rounding-off", "_kernel/verdict.py", "ROUNDING = 2.0 ** -40", "ROUNDING = 0.0",
           ("tests/hostile/test_extremes.py",)),
    Mutant("hostile-rounding-loose", "_kernel/verdict.py", "ROUNDING = 2.0 ** -40", "ROUNDING = 2.0 ** -20",
           ("tests/hostile/test_extremes.py",)),
    Mutant("hostile-zero-width-t", "paired/_registry.py", "var / p.n if var > 0 else math.nan", "var / p.n",
           ("tests/hostile/test_extremes.py",)),
    Mutant("hostile-nstar-floor", "_kernel/sizes.py", "float(max(math.ceil(value - 1e-9), 1))",
           "float(math.ceil(value - 1e-9))", ("tests/hostile/test_extremes.py",)),
    Mutant("hostile-long-words", "cli/main.py", "    text = short_words(text)\n", "\n",
           ("tests/hostile/test_messages.py",)),
    Mutant("hostile-resample-env", "paired/_resampling.py", 'cap = limit("LLM_POWER_MAX_RESAMPLES")',
           "cap = 50_000_000", ("tests/hostile/test_limits.py",)),
    Mutant("parse-once-off", "io/safe.py", "    if session is None or key is None:\n", "    if True:\n",
           ("tests/io/test_parse_once.py",)),
    Mutant("parse-once-take", "io/safe.py", "        if not take:\n            session.put(", "        if True:\n            session.put(",
           ("tests/io/test_parse_once.py",)),
    # --- issue 41's seams (2026-12-05)
    Mutant("registry-samples-order", "io/formats/__init__.py",
           "return sorted(SAMPLE_READERS.values(), key=lambda r: (r.order, r.name))",
           "return sorted(SAMPLE_READERS.values(), key=lambda r: (-r.order, r.name))",
           ("tests/io/test_formats_registry.py", "tests/samples", "tests/io/test_io_samples.py")),
    Mutant("registry-aggregate-claims", "io/aggregate.py", "claimed = next((r for r in readers if is_regular(path) and r.claims(path)), None)",
           "claimed = readers[-1]", ("tests/io",)),
    Mutant("loader-one-model", "cli/_reader.py", "            if one_model and len(names) == 1:", "            if False:",
           ("tests/cli",)),
    Mutant("reader-options-split", "cli/_reader.py", 'split=get("split", "test") or "test"', 'split="test"',
           ("tests/cli/test_reader_options.py", "tests/cli")),
    Mutant("interval-level-check", "_core/results.py",
           "if stored is None or not math.isclose(float(asked), stored, rel_tol=0.0, abs_tol=1e-12):", "if False:",
           ("tests/test_intervals_one_way.py",)),
    Mutant("hostile-dup-file", "io/samples.py", 'side="right"', 'side="left"', ("tests/hostile/test_collisions.py",)),
]


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".pytest_cache", "*.egg-info", "site",
                                    ".ruff_cache", ".hypothesis")
    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)


def _path(work: Path, m: Mutant) -> Path:
    return work / (m.file[2:] if m.file.startswith("./") else PKG + m.file)


def run(mutants: list[Mutant]) -> int:
    """Run each mutant's tests on a mutated copy; print one line per mutant; the number surviving."""
    survivors = 0
    with tempfile.TemporaryDirectory(prefix="llmp-mutants-") as tmp:
        work = Path(tmp) / "tree"
        _copy_tree(work)
        # the shared data sits beside the repository (../shared): a link beside the copy
        shared = ROOT.parent / "shared"
        if shared.is_dir():
            (Path(tmp) / "shared").symlink_to(shared)
        env = {**os.environ, "PYTHONPATH": str(work / "src")}
        env.pop("CI", None)
        for m in mutants:
            target = _path(work, m)
            text = target.read_text(encoding="utf-8")
            if text.count(m.old) != 1:
                print(f"{m.id:28s} STALE (the original text occurs {text.count(m.old)} times)")
                survivors += 1
                continue
            target.write_text(text.replace(m.old, m.new), encoding="utf-8")
            start = time.perf_counter()
            try:
                out = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
                     "-n", "2", *m.tests],
                    cwd=work, env=env, capture_output=True, text=True, check=False)
            finally:
                target.write_text(text, encoding="utf-8")
            took = time.perf_counter() - start
            failed = [line.split(" - ")[0] for line in out.stdout.splitlines() if line.startswith("FAILED")]
            if out.returncode == 0:
                survivors += 1
                print(f"{m.id:28s} SURVIVED ({took:.0f} s)")
            elif failed:
                print(f"{m.id:28s} killed by {failed[0]} ({took:.0f} s)")
            else:
                tail = out.stdout.strip().splitlines()[-1:] or out.stderr.strip().splitlines()[-1:]
                print(f"{m.id:28s} killed (exit {out.returncode}: {tail[0] if tail else ''}) ({took:.0f} s)")
            sys.stdout.flush()
    return survivors


def main(argv: list[str]) -> int:
    chosen = [m for m in MUTANTS if not argv or any(word in m.id for word in argv)]
    left = run(chosen)
    print(f"{len(chosen) - left} of {len(chosen)} killed")
    return 1 if left else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
