"""The documentation site: `mkdocs build --strict` passes, covers the public API, and every link resolves.

`mkdocs.yml` makes broken links and anchors warnings and `--strict` turns warnings into errors, so
a clean build is the link check of the Markdown sources (griffe's docstring warnings fail it too).
The tests below also check the built HTML itself: every relative `href`/`src` of every page
(navigation, theme assets, API cross-references, the gallery) points at a file of the site and,
for links into a page, at an id that exists there; nothing is loaded from the network.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

pytest.importorskip("mkdocs", reason="the docs extra is not installed (pip install -e '.[docs]')")
pytest.importorskip("material", reason="mkdocs-material is not installed (pip install -e '.[docs]')")
pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (pip install -e '.[docs]')")

import llm_power  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ["intervals", "paired", "planning", "multiplicity", "resolution", "gate", "preferences", "passk",
             "runs", "rankings", "subsets", "clustering", "sequential", "io", "integrations", "errors"]
PAGES = ["", "quickstart", "guide", "gallery", "intervals", "paired", "planning", "resolution", "inputs",
         "security", "architecture", "scale", "integrations", "preferences", "repeated-samples", "runs", "rankings",
         "subsets", "clusters",
         "reference",
         *(f"reference/{name}" for name in REFERENCE)]
#: attributes whose value is a URL (SVG plots in the report use xlink:href for their markers)
URL_ATTRIBUTES = {"href", "src", "xlink:href", "poster", "data"}
LOADED_RELS = {"stylesheet", "icon", "preload", "modulepreload", "manifest"}


def _site_prefix() -> str:
    """The path of `site_url` ('/llm-power/'): 404.html links absolutely under it, as it is served anywhere."""
    match = re.search(r"^site_url:\s*(\S+)", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)
    return urlsplit(match.group(1)).path if match else "/"


class _Page(HTMLParser):
    """The ids and the URLs (with the tag and attribute they came from) of one HTML page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        rel = dict(attrs).get("rel") or ""
        # what a browser loads: scripts, images, stylesheets and icons (not canonical / alternate links)
        kind = "load" if tag in ("script", "img", "iframe", "source") or rel in LOADED_RELS else tag
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id", "name") and tag != "meta":
                self.ids.add(value)
            elif name in URL_ATTRIBUTES:
                self.urls.append((kind, name, value))
            elif name == "srcset":
                self.urls.extend((kind, name, part.split()[0]) for part in value.split(",") if part.strip())

    handle_startendtag = handle_starttag


def _parse(path: Path) -> _Page:
    page = _Page()
    page.feed(path.read_text(encoding="utf-8"))
    page.close()
    return page


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built once per module with the interpreter's own mkdocs (strict)."""
    out = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONWARNINGS": "ignore::DeprecationWarning"}
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    problems = [line for line in (res.stdout + res.stderr).splitlines() if "WARNING" in line or "ERROR" in line]
    if res.returncode != 0:
        pytest.fail("mkdocs build --strict failed:\n" + "\n".join(problems or [res.stderr[-4000:]]), pytrace=False)
    return out


def test_build_is_strict_clean_and_has_every_page(site):
    for page in PAGES:
        assert (site / page / "index.html").is_file(), f"page {page or 'home'} was not built"
    assert (site / "404.html").is_file()
    assert (site / "search" / "search_index.json").is_file()  # the search plugin ran
    # files under docs/ that are not part of the site
    assert not list(site.rglob("*.py"))


def test_reference_documents_the_whole_public_api(site):
    ids: dict[str, str] = {}
    for name in REFERENCE:
        page = site / "reference" / name / "index.html"
        for ident in _parse(page).ids:
            ids.setdefault(ident, name)
    public = [name for name in llm_power.__all__ if not name.startswith("__")]
    missing = [name for name in public if f"llm_power.{name}" not in ids]
    assert not missing, f"public names without an entry on the reference pages: {missing}"
    # where the headline names live, and that their docstrings were rendered
    assert ids["llm_power.proportion_ci"] == "intervals"
    assert ids["llm_power.diagnose"] == "resolution"
    assert ids["llm_power.sample_size"] == "planning"
    assert ids["llm_power.read_results"] == "io"
    assert ids["llm_power.DataError"] == "errors"
    planning = (site / "reference" / "planning" / "index.html").read_text(encoding="utf-8")
    assert "Parameters" in planning and "discordance" in planning
    intervals = (site / "reference" / "intervals" / "index.html").read_text(encoding="utf-8")
    assert "clopper_pearson" in intervals


def test_docstring_roles_became_links(site):
    """Sphinx roles (:func:`x`) are rewritten by docs/_griffe_sphinx_roles.py, never shown raw."""
    for name in REFERENCE:
        text = (site / "reference" / name / "index.html").read_text(encoding="utf-8")
        for role in (":func:", ":class:", ":meth:", ":math:", ":mod:", ".. ["):
            assert role not in text, f"reference/{name}: raw reStructuredText {role!r} in the page"
    paired = _parse(site / "reference" / "paired" / "index.html")
    assert any(url.startswith("../errors/#llm_power.") for _, _, url in paired.urls)  # a cross-page link


def test_gallery_is_copied(site):
    for name in ("report.html", "report.png", "report-390.png"):
        built, source = site / "gallery" / name, ROOT / "docs" / "gallery" / name
        assert built.is_file(), f"gallery/{name} is not in the site"
        assert built.read_bytes() == source.read_bytes()
    assert (site / "gallery" / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "<svg" in (site / "gallery" / "report.html").read_text(encoding="utf-8")
    gallery = (site / "gallery" / "index.html").read_text(encoding="utf-8")
    assert 'href="report.html"' in gallery and 'src="report.png"' in gallery
    assert "demo-output:start" in gallery and "Verdict" in gallery  # the terminal output is filled in
    assert 'src="report-390.png"' in gallery and "demo-output-80:start" in gallery
    # the 80-column screen: every line of the captured block fits 80 columns
    from wcwidth import wcswidth

    page = (ROOT / "docs" / "gallery.md").read_text(encoding="utf-8")
    block = page.split("<!-- demo-output-80:start -->", 1)[1].split("<!-- demo-output-80:end -->", 1)[0]
    lines = [line[4:] for line in block.splitlines() if line.startswith("    ") and not line.strip().startswith("```")]
    assert len(lines) > 30 and max(wcswidth(line) for line in lines) <= 80


def test_every_relative_link_resolves(site):
    pages = {path: _parse(path) for path in sorted(site.rglob("*.html"))}
    prefix = _site_prefix()
    broken: list[str] = []
    external: list[str] = []
    for path, page in pages.items():
        where = path.relative_to(site)
        for tag, attr, url in page.urls:
            parts = urlsplit(url)
            if parts.scheme in ("http", "https") or url.startswith("//"):
                # links out are fine; resources loaded from the network are not (the site works offline)
                if tag == "load":
                    external.append(f"{where}: {attr}={url!r}")
                continue
            if parts.scheme in ("mailto", "data", "javascript"):
                continue
            if path.name == "404.html" and parts.path.startswith(prefix):
                target = (site / unquote(parts.path).removeprefix(prefix)).resolve()
            elif parts.scheme or url.startswith("/"):
                broken.append(f"{where}: absolute or unknown link {url!r}")
                continue
            else:
                target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target /= "index.html"
            if not target.is_file():
                broken.append(f"{where}: {url!r} -> missing {target}")
                continue
            if parts.fragment and target.suffix == ".html" and target in pages:
                fragment = unquote(parts.fragment)
                if fragment not in pages[target].ids and fragment not in ("", "__skip"):
                    broken.append(f"{where}: {url!r} -> no id {fragment!r} in {target.relative_to(site)}")
    assert not broken, f"{len(broken)} broken links:\n" + "\n".join(broken[:40])
    assert not external, "resources loaded from the network:\n" + "\n".join(external[:20])


def test_no_google_fonts_or_cdn(site):
    for path in site.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, path
        assert "cdn.jsdelivr.net" not in text and "unpkg.com" not in text, path
