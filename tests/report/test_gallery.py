"""The gallery's screenshots show the report the demo writes now (the README's hero image among them).

``scripts/make_gallery.py --out TMP`` regenerates the report and both screenshots with Debian's
Chromium (the browser tier: CI installs it, elsewhere the test skips) into a temporary folder; the
committed files are never written. Pixels depend on the fonts a machine has, so the screenshots are
compared by what they show: each PNG carries the outline of the report it was taken of (sections and
a hash of the visible text, ``make_gallery.outline``), and the committed PNGs must carry the outline
of today's report. After a change of the report: ``.venv/bin/python scripts/make_gallery.py``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_gallery.py"
GALLERY = ROOT / "docs" / "gallery"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SHOTS = ("report.png", "report-390.png")


def _gallery():
    spec = importlib.util.spec_from_file_location("make_gallery", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _size(png: Path) -> tuple[int, int]:
    head = png.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{png} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_the_committed_screenshots_show_the_report_the_demo_writes(tmp_path):
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium for the gallery test (.ci/run)")
        pytest.skip("no Chromium on this machine (CI installs it)")
    res = subprocess.run([sys.executable, str(SCRIPT), "--out", str(tmp_path), "--chromium", CHROMIUM],
                         capture_output=True, text=True, timeout=240, check=False)
    assert res.returncode == 0, res.stderr[-3000:]
    gallery = _gallery()
    now = gallery.outline((tmp_path / "report.html").read_text(encoding="utf-8"))
    assert "rankings" in now  # the section the old hero image lacked
    assert gallery.outline((GALLERY / "report.html").read_text(encoding="utf-8")) == now, (
        "docs/gallery/report.html is not the report `llm-power demo` writes: run scripts/make_gallery.py")
    for name in SHOTS:
        made, committed = tmp_path / name, GALLERY / name
        assert gallery.png_text(made)[gallery.PNG_KEY] == now
        assert _size(committed) == _size(made), name
        assert gallery.png_text(committed).get(gallery.PNG_KEY) == now, (
            f"docs/gallery/{name} was taken of another report than the demo's: run scripts/make_gallery.py")


def test_a_screenshot_carries_the_outline_of_its_report(tmp_path):
    """The outline changes with a section or one number, not with the plots' SVG paths; the tEXt
    chunk written into a PNG is read back (and Pillow, a matplotlib dependency, accepts its CRC)."""
    from PIL import Image

    gallery = _gallery()
    html = (GALLERY / "report.html").read_text(encoding="utf-8")
    base = gallery.outline(html)
    start = html.index('<section aria-labelledby="rankings">')
    without = html[:start] + html[html.index("</section>", start) + len("</section>"):]
    assert gallery.outline(without) != base and "rankings" not in gallery.outline(without)
    assert gallery.outline(html.replace("62.82%", "62.83%", 1)) != base
    assert gallery.outline(html.replace('d="M ', 'd="M  ')) == base  # drawing details are not the outline
    png = tmp_path / "a.png"
    shutil.copyfile(GALLERY / "report-390.png", png)
    gallery.add_png_text(png, "other", "x")
    assert gallery.png_text(png)["other"] == "x"
    with Image.open(png) as image:
        image.load()
        assert image.text["other"] == "x" and image.size == _size(GALLERY / "report-390.png")
