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
    .venv/bin/python scripts/make_gallery.py --out DIR       # the report and PNGs into DIR; docs untouched

Each PNG carries, in a ``tEXt`` chunk, the outline of the report it shows (its sections and a hash of
its visible text; ``outline``). ``make test`` runs the third form into a temporary folder
(tests/report/test_gallery.py, in the browser tier CI runs with Debian's Chromium) and checks that the
committed PNGs carry the outline of the report the demo writes now: pixels differ between machines'
fonts, the outline does not. A stale gallery fails the suite; nothing is committed by CI.

Nothing is fetched: Chromium runs with networking features off on a local file.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from html.parser import HTMLParser
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "gallery"
PAGE = ROOT / "docs" / "gallery.md"
MARKERS = {100: ("<!-- demo-output:start -->", "<!-- demo-output:end -->"),
           80: ("<!-- demo-output-80:start -->", "<!-- demo-output-80:end -->")}
PNG_KEY = "llm-power report"  # the tEXt keyword of the outline a screenshot carries
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


class _Visible(HTMLParser):
    """The text a reader sees (plots by their ``aria-label``) and the sections' ids, in page order."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self.sections: list[str] = []
        self._hidden = 0  # depth inside <svg>, <style> or <script>

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "h2" and found.get("id"):
            self.sections.append(str(found["id"]))
        if tag == "svg" and not self._hidden:
            self.text.append(f"[{found.get('aria-label') or 'plot'}]")
        if tag in ("svg", "style", "script"):
            self._hidden += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in ("svg", "style", "script") and self._hidden:
            self._hidden -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden:
            self.text.append(data)


def outline(html: str) -> str:
    """What a screenshot of the report shows, in words that are the same on every machine: its
    sections (the ``h2`` ids) and the SHA-256 of its visible text, plots by their ``aria-label``
    (the SVG paths depend on matplotlib's version, the pixels on the fonts installed).
    """
    page = _Visible()
    page.feed(html)
    text = re.sub(r"\s+", " ", "".join(page.text)).strip()
    return f"sections={','.join(page.sections)} text-sha256={hashlib.sha256(text.encode()).hexdigest()[:16]}"


def png_text(png: Path) -> dict[str, str]:
    """The ``tEXt`` chunks of a PNG file (keyword -> text)."""
    data, pos, found = png.read_bytes(), 8, {}
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"tEXt":
            key, _, value = data[pos + 8:pos + 8 + length].partition(b"\0")
            found[key.decode("latin-1")] = value.decode("latin-1")
        pos += 12 + length
    return found


def add_png_text(png: Path, key: str, value: str) -> None:
    """Write a ``tEXt`` chunk (``key``: ``value``) into a PNG, before its closing ``IEND`` chunk."""
    data = png.read_bytes()
    if data[-12:-8] != b"\0\0\0\0" or data[-8:-4] != b"IEND":
        sys.exit(f"{png}: no IEND chunk at the end")
    body = b"tEXt" + key.encode("latin-1") + b"\0" + value.encode("latin-1")
    chunk = struct.pack(">I", len(body) - 4) + body + struct.pack(">I", zlib.crc32(body))
    png.write_bytes(data[:-12] + chunk + data[-12:])


def screenshot(html: Path, png: Path, chromium: str, size: str) -> None:
    """Screenshot ``html`` into ``png`` with headless Chromium (a fresh profile, no network); the PNG
    carries the report's :func:`outline`."""
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
    add_png_text(png, PNG_KEY, outline(html.read_text(encoding="utf-8")))
    print(f"wrote {_shown(png)} ({width} x {height})")


def _shown(path: Path) -> Path:
    """A written file's path for the log: relative to the repository when inside it."""
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


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
    parser.add_argument("--out", type=Path, default=GALLERY,
                        help="folder for report.html and the PNGs (default docs/gallery; another folder leaves "
                             "docs/gallery.md and its terminal screens alone)")
    args = parser.parse_args(argv)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        text = run_demo(workdir)
        shutil.copyfile(workdir / "report.html", out / "report.html")
        print(f"wrote {_shown(out / 'report.html')}")
        if not args.no_screenshot:
            screenshot(workdir / "report.html", out / "report.png", args.chromium, args.window_size)
            height = args.window_size.split(",")[1]
            screenshot(workdir / "report.html", out / "report-390.png", args.chromium, f"390,{height}")
        screens = {columns: terminal_screen(workdir, columns) for columns in (100, 80)} if out == GALLERY else {}
    del text  # the piped output; the pages show the terminal's screens
    for columns, screen in screens.items():
        update_page(screen, columns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
