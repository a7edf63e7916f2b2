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


def test_report_renders_offline_in_chromium(tmp_path, capsys):
    sync = _browser_or_skip()
    report = tmp_path / "report.html"
    assert main(["demo", "--html", str(report)]) == 0
    capsys.readouterr()
    external = []
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 900})

        def guard(route):
            url = route.request.url
            if not url.startswith("file://"):
                external.append(url)
                route.abort()
            else:
                route.continue_()

        page.route("**/*", guard)
        page.goto(report.as_uri())
        page.wait_for_load_state("load")
        assert page.locator("#models-table tbody tr").count() == 10
        assert page.locator("#pairs-table tbody tr").count() == 9
        assert page.locator("#clusters-table tbody tr").count() == 14
        svgs = page.locator("figure svg")
        assert svgs.count() == 4
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
