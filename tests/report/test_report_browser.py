"""The HTML report in a real headless browser (Debian's Chromium via Playwright).

CI installs chromium (.ci/run); elsewhere the test skips when no Chromium is present. It checks
that the tables and plots render, that the page fetches nothing from the network, and saves a
screenshot.
"""

from __future__ import annotations

import os
import shutil

import pytest

from llm_power.cli.main import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run", "--disable-quic"]


def _browser_or_skip():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium for the browser test (.ci/run)")
        pytest.skip("no Chromium on this machine (CI installs it)")
    return pytest.importorskip("playwright.sync_api")


def _offline(page, external):
    """Abort every request that is not a local file, recording its URL in ``external``."""

    def guard(route):
        url = route.request.url
        if not url.startswith("file://"):
            external.append(url)
            route.abort()
        else:
            route.continue_()

    page.route("**/*", guard)


def test_report_renders_offline_in_chromium(tmp_path, capsys):
    sync = _browser_or_skip()
    report = tmp_path / "report.html"
    assert main(["demo", "--html", str(report)]) == 0
    capsys.readouterr()
    external = []
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        _offline(page, external)
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("#models-table tbody tr").count() == 10
        assert page.locator("#pairs-table tbody tr").count() == 9
        assert page.locator("#clusters-table tbody tr").count() == 14
        # the cluster's name reads left, its counts and scores right (numbers line up)
        align = page.evaluate("[...document.querySelectorAll('#clusters-table tbody tr:first-child td')].map("
                              "td => getComputedStyle(td).textAlign)")
        assert align[0] in ("left", "start") and set(align[1:]) == {"right"}, align
        svgs = page.locator("figure svg")
        assert svgs.count() == 5  # leaderboard, ranks, forest, q, MDE
        for k in range(svgs.count()):
            svg = svgs.nth(k)
            box = svg.bounding_box()
            assert box and box["width"] > 200 and box["height"] > 100
            assert svg.locator("path, use, line, rect").count() > 5  # something drawn
            assert svg.get_attribute("role") == "img" and svg.get_attribute("aria-label")
        assert "unresolved" in page.inner_text("#verdicts + .cards") or "unresolved" in page.content()
        shot = tmp_path / "report.png"
        page.screenshot(path=str(shot), full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})  # a phone: no horizontal page scroll
        width = page.evaluate("document.documentElement.scrollWidth")
        browser.close()
    assert external == []
    assert shot.stat().st_size > 50_000
    assert width <= 400


#: checks run in the page: horizontal overflow of the page, of the pairs/models tables and of any
#: text cell; every verdict cell's box; the rendered size of the plots' text
_LAYOUT = """() => {
  const vw = document.documentElement.clientWidth;
  const clipped = [];
  for (const el of document.querySelectorAll('#pairs-table td, #pairs-table th, #models-table td, #models-table th, '
                                             + 'ul.verdict li, .card, p, h1, h2, figcaption')) {
    const style = getComputedStyle(el);
    if (style.display !== 'none' && el.scrollWidth > el.clientWidth + 1) clipped.push(el.textContent.slice(0, 60));
  }
  const verdicts = [...document.querySelectorAll('#pairs-table td.v')].map(td => {
    const r = td.getBoundingClientRect();
    return {left: r.left, right: r.right, width: r.width, text: td.textContent.trim()};
  });
  const scrolls = [...document.querySelectorAll('#pairs-table, #models-table')].map(
    t => t.parentElement.scrollWidth - t.parentElement.clientWidth);
  const figures = [...document.querySelectorAll('figure')].map(f => f.scrollWidth - f.clientWidth);
  const fonts = [...document.querySelectorAll('figure svg text')].slice(0, 40).map(
    t => t.getBoundingClientRect().height).filter(h => h > 0);
  return {vw, page: document.documentElement.scrollWidth, clipped, verdicts, scrolls, figures,
          font: fonts.sort((a, b) => a - b)[Math.floor(fonts.length / 2)]};
}"""


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_every_verdict_is_visible_and_no_text_is_clipped(tmp_path, capsys, width, height):
    sync = _browser_or_skip()
    report = tmp_path / "report.html"
    assert main(["demo", "--html", str(report)]) == 0
    capsys.readouterr()
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        layout = page.evaluate(_LAYOUT)
        page.screenshot(path=str(tmp_path / f"report-{width}.png"), full_page=False)
        browser.close()
    assert layout["page"] <= layout["vw"], "the page scrolls sideways"
    assert layout["scrolls"] == [0, 0], "a table scrolls sideways"
    assert layout["figures"] and all(f == 0 for f in layout["figures"]), "a plot is cut (it scrolls sideways)"
    assert layout["clipped"] == []
    verdicts = layout["verdicts"]
    assert len(verdicts) == 9 * 4  # 9 pairs x 4 regimes, each a cell
    for cell in verdicts:
        assert 0 <= cell["left"] and cell["right"] <= layout["vw"] and cell["width"] > 0
        assert cell["text"] in ("✓", "✗")
    assert layout["font"] >= 9  # the plots' text stays legible (median rendered height in CSS px)


def test_all_pairs_page_stays_short(tmp_path, capsys):
    sync = _browser_or_skip()
    from llm_power.io.demo import load_mmlu_pro
    from llm_power.report.html import render_html

    from llm_power import diagnose

    data = load_mmlu_pro()
    models, x = data.models, data.scores
    report = tmp_path / "all.html"
    report.write_text(render_html(diagnose(x, models=models, pairs="all", rng=0)))
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        height = page.evaluate("document.documentElement.scrollHeight")
        browser.close()
    assert height < 12_000  # 26 models, 325 pairs: a matrix and a top-k table, not 325-row plots


def test_a_long_source_path_does_not_widen_the_phone_page(tmp_path, capsys):
    """The footer names the input file: a long path without spaces must wrap at 390 px (found on
    the real WMT20 wide table, whose report scrolled sideways by 62 px).
    """
    sync = _browser_or_skip()
    folder = tmp_path / ("very_long_folder_name_without_any_spaces_" * 3)
    folder.mkdir()
    table = folder / "scores_of_every_system_on_every_segment.csv"
    rows = [f"q{i}," + ",".join(str((i * (k + 3)) % 7 / 7) for k in range(3)) for i in range(60)]
    table.write_text("item,sys_a,sys_b,sys_c\n" + "\n".join(rows) + "\n")
    report = tmp_path / "r.html"
    assert main(["diagnose", str(table), "--html", str(report), "--quiet"]) == 0
    capsys.readouterr()
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 390, "height": 844})
        page.goto(report.as_uri())
        width = page.evaluate("document.documentElement.scrollWidth")
        browser.close()
    assert width <= 390


@pytest.mark.parametrize(("width", "height"), [(1280, 800), (390, 844)])
def test_arena_report_renders_offline_and_fits_the_screen(tmp_path, capsys, width, height):
    """``llm-power arena --html`` on the bundled MT-Bench battles (clustered by question): the ranking
    and pairs tables and the forest plot render, nothing is fetched, nothing scrolls sideways."""
    sync = _browser_or_skip()
    report = tmp_path / "arena.html"
    assert main(["arena", "--demo", "--cluster", "question_id", "--html", str(report)]) == 0
    capsys.readouterr()
    external = []
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": width, "height": height})
        _offline(page, external)
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("#models-table tbody tr").count() == 6
        assert page.locator("#pairs-table tbody tr").count() == 5
        svg = page.locator("figure svg")
        assert svg.count() == 1 and svg.get_attribute("role") == "img"
        box = svg.bounding_box()
        assert box and box["width"] > 200 and box["height"] > 100
        layout = page.evaluate(_LAYOUT)
        page.screenshot(path=str(tmp_path / f"arena-{width}.png"), full_page=True)
        browser.close()
    assert external == []
    assert layout["page"] <= layout["vw"], "the page scrolls sideways"
    assert layout["scrolls"] == [0, 0], "a table scrolls sideways"
    assert layout["clipped"] == []
    assert layout["font"] >= 9  # the forest plot's text stays legible on a phone (was 7 px: 48-character labels)
