"""Every Python snippet in the README runs as written (``test_docs.py`` runs the docs' pages)."""

from __future__ import annotations

import re

import pytest
from conftest import run_python
from helpers import ROOT

pytestmark = pytest.mark.slow

README = ROOT / "README.md"
SNIPPETS = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)


def test_the_readme_has_python_snippets():
    assert len(SNIPPETS) >= 1


@pytest.mark.parametrize("snippet", SNIPPETS,
                         ids=[f"README.md-snippet{i}" for i in range(len(SNIPPETS))])
def test_a_readme_snippet_runs_as_written(snippet):
    done = run_python(snippet)
    assert done.returncode == 0, done.stderr
