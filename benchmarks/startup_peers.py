"""Start-up of the command line, warm (files in the page cache), best of 5 fresh processes each,
interleaved, against the import of the libraries a user's own script would start with.

- ``llm-power --help``, and a usage error (``llm-power diagnose --bogus``): neither may import numpy
  or scipy (checked here: ``-X importtime``).
- ``llm-power demo`` (the resolution report on the bundled MMLU-Pro results, report.html written to
  a temporary folder) and ``llm-power demo --no-html`` (the text alone: no matplotlib, checked).
- ``python -c "import numpy, scipy.stats, pandas"``: the floor of any Python eval script.

Run: ``python benchmarks/startup_peers.py [--load K]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from _common import fmt_s, loaded, md_table  # noqa: E402


def exe() -> str:
    found = Path(sys.executable).with_name("llm-power")
    return str(found) if found.exists() else (shutil.which("llm-power") or "llm-power")


def timed(cmd: list[str], cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)  # noqa: S603
    if done.returncode != 0 and "--bogus" not in cmd:
        raise RuntimeError(f"{cmd} failed: {done.stderr.decode()[-300:]}")
    return time.perf_counter() - start


def imports(args: list[str], names: tuple[str, ...]) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run([sys.executable, "-X", "importtime", "-m", "llm_power", *args], capture_output=True,  # noqa: S603
                             text=True, check=False, cwd=tmp)
    return any(line.rstrip().endswith(tuple(" " + n for n in names)) for line in out.stderr.splitlines())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--load", type=int, default=16)
    args = parser.parse_args()
    lp = exe()
    jobs = {
        "llm-power --help": [lp, "--help"],
        "llm-power diagnose --bogus (usage error)": [lp, "diagnose", "--bogus"],
        "llm-power demo (writes report.html)": [lp, "demo"],
        "llm-power demo --no-html (text only)": [lp, "demo", "--no-html"],
        'python -c "import numpy, scipy.stats, pandas"': [sys.executable, "-c", "import numpy, scipy.stats, pandas"],
    }
    heavy = {"llm-power --help": imports(["--help"], ("numpy", "scipy")),
             "llm-power diagnose --bogus (usage error)": imports(["diagnose", "--bogus"], ("numpy", "scipy")),
             "llm-power demo --no-html (text only)": imports(["demo", "--no-html"], ("matplotlib",)),
             "llm-power demo (writes report.html)": imports(["demo"], ("matplotlib",))}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in jobs.values():
            timed(cmd, tmp)  # warm the page cache
        for load in (None, args.load):
            with loaded(load):
                best = {name: float("inf") for name in jobs}
                for _ in range(5):
                    for name, cmd in jobs.items():
                        best[name] = min(best[name], timed(cmd, tmp))
            floor = best['python -c "import numpy, scipy.stats, pandas"']
            for name, t in best.items():
                what = "numpy/scipy" if "demo" not in name else "matplotlib"
                rows.append([name, "loaded" if load else "idle", fmt_s(t), f"{t / floor:.2f}x",
                             "" if name not in heavy else f"{what}: {'yes' if heavy[name] else 'no'}"])
    print("### Start-up, warm, best of 5\n")
    print(md_table(["command", "machine", "time", "/ import numpy, scipy.stats, pandas", "imports"], rows))


if __name__ == "__main__":
    main()
