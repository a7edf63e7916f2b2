"""Regenerate the documentation gallery from `llm-power demo` (run it after the report changes).

Writes, from the bundled MMLU-Pro demo data:

- ``docs/gallery/report.html``: the self-contained HTML report, as `llm-power demo` writes it;
- ``docs/gallery/report.png`` and ``report-390.png``: screenshots of its top by headless Chromium
  at 1280 px (1280 x 2400) and on a phone (390 x 2400);
- the screen of `llm-power demo` in a real terminal (a pseudo-terminal read by the pyte terminal
  emulator, as tests/report/test_terminal_screen.py does) at 100 and at 80 columns, between the
  ``demo-output`` and ``demo-output-80`` markers of ``docs/gallery.md``.

Usage::

    .venv/bin/python scripts/make_gallery.py                 # all three
    .venv/bin/python scripts/make_gallery.py --no-screenshot # without Chromium (keeps the old PNG)

Nothing is fetched: Chromium runs with networking features off on a local file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"
MARKERS = {100: ("<!-- demo-output:start -->", "<!-- demo-output:end -->"),
           80: ("<!-- demo-output-80:start -->", "<!-- demo-output-80:end -->")}
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
]


def run_demo(workdir: Path) -> str:
    """Run `python -m llm_power demo` in ``workdir`` (it writes report.html there); its stdout."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "PYTHONHASHSEED": "0"}
    res = subprocess.run([sys.executable, "-m", "llm_power", "demo"], cwd=workdir, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    if res.returncode != 0 or not (workdir / "report.html").is_file():
        sys.exit(f"llm-power demo failed (exit {res.returncode}):\n{res.stderr}")
    # the report's path is the temporary folder: show it as the user would see it
    return res.stdout.replace(f"{workdir}{os.sep}", "").rstrip() + "\n"


def terminal_screen(workdir: Path, columns: int) -> str:
    """The screen of `llm-power demo` in a pseudo-terminal ``columns`` wide, as a user sees it."""
    sys.path.insert(0, str(ROOT / "tests"))
    from _pty import run  # the tests' pty runner (needs pyte, a test dependency)

    screen = run(["demo", "--html", "report.html"], columns, cwd=workdir, env={"NO_COLOR": "1"})
    if screen.returncode != 0:
        sys.exit(f"llm-power demo failed in the terminal (exit {screen.returncode}):\n{screen.text}")
    if screen.too_wide():
        sys.exit(f"lines wider than {columns} columns:\n" + "\n".join(screen.too_wide()))
    return screen.text.rstrip() + "\n"


def screenshot(html: Path, png: Path, chromium: str, size: str) -> None:
    """Screenshot ``html`` into ``png`` with headless Chromium (a fresh profile, no network)."""
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--window-size={size}",
               f"--screenshot={png}", html.as_uri()]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if res.returncode != 0 or not png.is_file():
        sys.exit(f"chromium failed (exit {res.returncode}):\n{res.stderr[-2000:]}")
    with png.open("rb") as fh:
        head = fh.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        sys.exit(f"{png} is not a PNG")
    width, height = struct.unpack(">II", head[16:24])
    print(f"wrote {png.relative_to(ROOT)} ({width} x {height})")


def update_page(text: str, columns: int = 100) -> None:
    """Put the terminal output between the markers of docs/gallery.md for that width."""
    START, END = MARKERS[columns]  # noqa: N806 - the markers' names
    page = PAGE.read_text(encoding="utf-8")
    if START not in page or END not in page:
        sys.exit(f"{PAGE}: markers {START} / {END} not found")
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    indent = head[head.rfind("\n") + 1:]  # the markers sit inside an indented admonition
    lines = ["", "```text", *text.splitlines(), "```", "", END]
    block = START + "".join(f"\n{indent}{line}".rstrip(" ") if line else "\n" for line in lines)
    PAGE.write_text(head + block + tail, encoding="utf-8")
    print(f"updated {PAGE.relative_to(ROOT)}")


def main(argv: list[str] | None = None) -> int:
    """Regenerate the gallery files; the exit status is 0 on success."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-screenshot", action="store_true", help="skip the PNG (no Chromium needed)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium",
                        help="Chromium executable (default: chromium on PATH)")
    parser.add_argument("--window-size", default="1280,2400", help="screenshot size W,H (default 1280,2400)")
    args = parser.parse_args(argv)
    GALLERY.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        text = run_demo(workdir)
        shutil.copyfile(workdir / "report.html", GALLERY / "report.html")
        print(f"wrote {(GALLERY / 'report.html').relative_to(ROOT)}")
        if not args.no_screenshot:
            screenshot(workdir / "report.html", GALLERY / "report.png", args.chromium, args.window_size)
            height = args.window_size.split(",")[1]
            screenshot(workdir / "report.html", GALLERY / "report-390.png", args.chromium, f"390,{height}")
        screens = {columns: terminal_screen(workdir, columns) for columns in (100, 80)}
    del text  # the piped output; the pages show the terminal's screens
    for columns, screen in screens.items():
        update_page(screen, columns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
