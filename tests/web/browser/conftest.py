"""Browser fixtures: the app served by uvicorn in a thread, Debian's chromium driven by Playwright.

Screenshots go to test-artifacts/screenshots/ (override with PRACTICE_SCREENSHOTS).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.web.live import LiveServer

CHROMIUM = os.environ.get("PRACTICE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SCREENSHOTS = Path(os.environ.get("PRACTICE_SCREENSHOTS",
                                  Path(__file__).resolve().parents[3] / "test-artifacts" / "screenshots"))


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} not installed (apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


class Shots:
    """Numbered screenshots in a folder named after the test."""

    def __init__(self, name: str):
        self.folder = SCREENSHOTS / name
        shutil.rmtree(self.folder, ignore_errors=True)
        self.folder.mkdir(parents=True)
        self.count = 0

    def __call__(self, page, step: str, full_page: bool = True) -> Path:
        self.count += 1
        path = self.folder / f"{self.count:02d}-{step}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path


@pytest.fixture
def shots(request) -> Shots:
    return Shots(request.node.name)


@pytest.fixture
def page_errors():
    """Collects console errors (CSP violations show up here) and uncaught page errors."""
    return []


def open_page(browser, page_errors, width=1280, height=800):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.on("console", lambda msg: page_errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: page_errors.append(str(exc)))
    return context, page


@pytest.fixture
def book_live(tmp_path):
    """A live server of the book's exercise graded for real, in fresh unsandboxed processes."""
    from tests.web.real_course import book_course
    from web.app import create_app
    from web.settings import Settings

    settings = Settings(data_dir=tmp_path / "data", exercises_dir=book_course(tmp_path), sandbox="none",
                        allow_unsandboxed=True, workers=1, secret_key="browser")
    with LiveServer(create_app(settings)) as server:
        yield server


@pytest.fixture
def database_url(tmp_path) -> str:
    """SQLite only: what the browser sees does not depend on the database (tests/web runs on both)."""
    from web import db

    url = f"sqlite:///{tmp_path / 'practice.db'}"
    engine = db.make_engine(url)
    db.upgrade(engine)
    engine.dispose()
    return url
