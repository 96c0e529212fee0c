"""The built site loads nothing from another machine: checked in Debian's chromium."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.docs.snippets import ROOT
from tests.ui.browser import launch

if TYPE_CHECKING:
    from playwright.sync_api import Browser

PAGES = ["", "getting-started/tutorial/", "reference/api/", "reference/command/"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's headless chromium (the test is skipped without it)."""
    yield from launch()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site built strictly into a scratch folder and served on a free loopback port."""
    folder = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(folder)]
    subprocess.run(build, cwd=ROOT, env=env, check=True)
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def test_no_page_asks_anything_of_another_host(browser: Browser, site: str) -> None:
    """Pages, fonts, scripts and the search index all come from 127.0.0.1."""
    requests: list[str] = []
    page = browser.new_page()
    page.on("request", lambda request: requests.append(request.url))
    for path in PAGES:
        response = page.goto(site + path, wait_until="networkidle")
        assert response is not None and response.ok, path
    # Typed key by key, as a person would: the search answers keystrokes, and a value filled
    # in one go before its worker is ready is never searched.
    page.focus("input.md-search__input")
    page.keyboard.type("handoff", delay=20)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    page.close()

    assert any(url.endswith("search_index.json") for url in requests)  # the search ran
    assert [url for url in requests if not url.startswith((site, "data:", "blob:"))] == []


def test_the_api_page_renders_the_swarm_from_its_docstring(browser: Browser, site: str) -> None:
    """mkdocstrings rendered `Swarm` and its `run` method into the API page."""
    page = browser.new_page()
    page.goto(site + "reference/api/")
    assert page.locator("[id='swarmkit.Swarm']").count() == 1
    assert page.locator("[id='swarmkit.Swarm.run']").count() == 1
    page.close()


def test_the_site_folder_ships_no_font_or_script_from_elsewhere() -> None:
    """mkdocs.yml turns the theme's web fonts off and adds no external script."""
    config = Path(ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "font: false" in config
    scripts = re.findall(r"^extra_javascript:\n((?:  - .*\n)+)", config, re.MULTILINE)
    shipped = [line.split("#")[0].strip(" -") for block in scripts for line in block.splitlines()]
    assert all((ROOT / "docs" / script).is_file() for script in shipped), shipped


@pytest.mark.parametrize("term", ["pass^k", "rule share", "shadow rule"])
def test_search_finds_the_glossary_terms(browser: Browser, site: str, term: str) -> None:
    """Typed into the search box, each term the reports use finds its glossary entry first
    (pass^k too, whose "^" the search would otherwise read as an operator)."""
    page = browser.new_page()
    page.goto(site, wait_until="networkidle")
    page.focus("input.md-search__input")
    page.keyboard.type(term, delay=20)
    page.wait_for_selector(".md-search-result__item", timeout=10_000)
    first = page.locator(".md-search-result__item").first.inner_text()
    page.close()
    assert first.startswith("Glossary"), first


_OVERFLOWING = """() => {
  const column = document.querySelector(".md-content__inner").getBoundingClientRect();
  const blocks = [...document.querySelectorAll(".md-typeset pre")];
  const past = blocks
    .map((block) => [block.getBoundingClientRect(), block.textContent.slice(0, 60)])
    .filter(([box]) => box.left < column.left - 1 || box.right > column.right + 1)
    .map(([box, text]) => `${Math.round(box.right - column.right)} px past: ${text}`);
  return [blocks.length, past];
}"""
"""How many code blocks the page has, and each one whose box reaches past the content column
(with how far)."""


def test_code_blocks_fit_the_column_at_1280_px(browser: Browser, site: str) -> None:
    """At a 1280 px wide window no code block of the tutorial or a guide extends past its
    column: a long line scrolls inside its block (one tab over every page)."""
    guides = sorted(path.stem for path in (ROOT / "docs" / "guides").glob("*.md"))
    paths = ["getting-started/tutorial/", *(f"guides/{name}/" for name in guides)]
    # Widths come from the HTML and the stylesheets: the theme's scripts (search, copy
    # buttons) are off, so each page is laid out as soon as it is parsed.
    context = browser.new_context(
        viewport={"width": 1280, "height": 800}, java_script_enabled=False
    )
    page = context.new_page()
    overflowing, blocks = {}, 0
    for path in paths:
        response = page.goto(site + path, wait_until="domcontentloaded")
        assert response is not None and response.ok, path
        count, past = page.evaluate(_OVERFLOWING)
        blocks += count
        if past:
            overflowing[path] = past
    context.close()
    assert overflowing == {}
    assert blocks > 100  # the pages were read, blocks and all
