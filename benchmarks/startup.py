"""Start-up time of the command line: what ``llm-power --help`` and ``llm-power ci 17 20`` import.

Each command runs in a fresh interpreter with ``python -X importtime``; the script prints the
wall time (best of 5), the total import time, the heavy third-party modules loaded, and — side by
side — the cost of importing what an eager package would load (numpy, scipy.stats, pandas, rich,
matplotlib), which is what every command paid before imports were made lazy.

Run: ``.venv/bin/python benchmarks/startup.py``.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time

HEAVY = ("numpy", "scipy", "scipy.stats", "pandas", "pyarrow", "rich", "matplotlib", "jinja2")

COMMANDS = {
    "llm-power --help": "from llm_power.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit:\n    pass",
    "llm-power ci 17 20": "from llm_power.cli.main import main\nmain(['ci', '17', '20'])",
    **{f"llm-power {c} --help": f"from llm_power.cli.main import main\ntry:\n    main({c.split() + ['--help']!r})\n"
       "except SystemExit:\n    pass" for c in ("compare", "diagnose", "gate", "subset estimate")},
    "eager: import numpy, scipy.stats, pandas, rich, matplotlib.figure":
        "import numpy, scipy.stats, pandas, rich.console, matplotlib.figure",
}


def measure(code: str) -> tuple[float, float, list[str]]:
    """(best wall seconds of 5 runs, total import seconds, heavy modules imported)."""
    walls = []
    for _ in range(5):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], check=True, capture_output=True, text=True)
    total_us, loaded = 0, set()
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if not m:
            continue
        name = m.group(4)
        if len(m.group(3)) == 1:  # top-level imports: their cumulative times add up to the total
            total_us += int(m.group(2))
        if name in HEAVY:
            loaded.add(name)
    return min(walls), total_us / 1e6, sorted(loaded)


def main() -> None:
    """Print one row per command."""
    print(f"{'command':<66} {'wall (s)':>9} {'imports (s)':>12}  heavy modules loaded")
    rows = {label: measure(code) for label, code in COMMANDS.items()}
    for label, (wall, imports, loaded) in rows.items():
        print(f"{label:<66} {wall:>9.3f} {imports:>12.3f}  {', '.join(loaded) or '(none)'}")
    eager = rows["eager: import numpy, scipy.stats, pandas, rich, matplotlib.figure"][0]
    for label in ("llm-power --help", "llm-power ci 17 20"):
        print(f"{label}: {eager / rows[label][0]:.1f}x faster than the eager imports alone")


if __name__ == "__main__":
    main()
