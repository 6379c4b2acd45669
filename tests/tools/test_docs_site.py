"""The HTML documentation (``bash tools/build-docs.sh OUTDIR``) renders in a browser: the
index and the API reference open in headless Chromium with their title, navigation and
the ``mse_loss_backward`` entry, and a screenshot of the API page is kept.

CI builds the site and names it in ``DOCS_SITE``; without it the test builds the
site itself (which installs MkDocs from PyPI into a private environment)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]


def _browser() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed: apt-get install chromium")
    return found


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    given = os.environ.get("DOCS_SITE")
    if given:
        return Path(given)
    if not (ROOT / "tools" / "build-docs.sh").exists():
        pytest.skip("tools/build-docs.sh is not in this tree")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(["bash", str(ROOT / "tools" / "build-docs.sh"), str(out)],
                          capture_output=True, text=True, timeout=600)
    if done.returncode and "Could not find a version" in done.stderr + done.stdout:
        pytest.skip("MkDocs cannot be installed here (no package index): pip install mkdocs")
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _dom(browser: str, page: Path, user_data: Path) -> str:
    done = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={user_data}",
                           "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_index_and_the_api_reference_render_in_headless_chromium(site, tmp_path):
    browser = _browser()
    index = _dom(browser, site / "index.html", tmp_path / "profile")
    assert "<title>aclnn_py</title>" in index
    for entry in ("Overview", "Device arrays, streams and plans", "API reference"):
        assert entry in index, entry  # the navigation
    api_page = site / "docs" / "api" / "index.html"
    api = _dom(browser, api_page, tmp_path / "profile")
    assert "<title>API reference - aclnn_py</title>" in api
    assert 'id="aclnn_py.mse_loss_backward"' in api or "mse_loss_backward" in api
    assert "Gradient of the mean squared error" in api  # its docstring, rendered
    artifacts = Path(os.environ.get("CI_ARTIFACTS", ROOT / ".ci-artifacts"))
    artifacts.mkdir(parents=True, exist_ok=True)
    shot = artifacts / "docs-api.png"
    done = subprocess.run([browser, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'shot'}",
                           f"--screenshot={shot}", "--window-size=1280,1600",
                           api_page.as_uri()], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.stat().st_size > 10_000  # a page, not a blank image
