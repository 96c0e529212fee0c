"""Headless Chromium for the viewer's page tests: Debian's chromium, never a downloaded one."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
"""Where Debian's chromium package puts the browser."""

LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
"""Flags that keep the browser off the network and quiet."""

ARTIFACTS = Path(__file__).resolve().parents[2] / ".artifacts" / "ui"
"""Where screenshots of the pages go (not committed)."""


def chromium_path() -> Path:
    """Debian's chromium, or skip the test with how to install it."""
    found = CHROMIUM if CHROMIUM.is_file() else None
    if found is None and (which := shutil.which("chromium")):
        found = Path(which)
    if found is None:
        pytest.skip(
            "browser tests need Debian's chromium at /usr/bin/chromium: "
            "sudo apt-get install -y chromium (CI installs it in .ci/run)"
        )
    return found


def launch() -> Iterator[Browser]:
    """A headless Chromium for one test module; closed after it."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only when chromium is here

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable), args=LAUNCH_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


def screenshot_path(name: str) -> Path:
    """``.artifacts/ui/<name>.png``, its folder created."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
