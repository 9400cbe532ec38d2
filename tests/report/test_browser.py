"""The page in a real browser: headless Chromium loads index.html from disk, runs its script,
and every image decodes (naturalWidth > 0). Under CI (CI=true) a missing Chromium fails."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.report.conftest import in_ci

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync")


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    if in_ci():
        pytest.fail("Chromium is not installed (apt-get install chromium); CI must run the browser test")
    pytest.skip("Chromium is not installed (apt-get install chromium)")


def dump_dom(page: Path, profile: Path) -> str:
    result = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=5000",
                             "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.mark.slow
def test_page_renders_in_chromium(demo_report: Path, tmp_path: Path) -> None:
    dom = dump_dom(demo_report / "index.html", tmp_path / "profile")
    check = re.search(r'<p id="image-check"[^>]*data-images="(\d+)"[^>]*data-decoded="(\d+)"[^>]*>([^<]*)<', dom)
    assert check, "the page's image check did not run"
    total, decoded = int(check.group(1)), int(check.group(2))
    assert total > 0 and decoded == total == dom.count("<img "), check.group(3)
    assert f"images decoded: {total} of {total}" in check.group(3)
    for text in ("CLUE report", "Leaderboard", "hf-tiny · sample", "CLUE 1.1 reading comprehension", "Runs"):
        assert text in dom
