"""The documentation holds: every Python snippet of ``docs/*.md`` runs as written, every
relative link of ``README.md`` and ``docs/*.md`` names an existing file, every page is
reachable from the overview, and the README stays short."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import run_python
from helpers import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
README_MAX_LINES = 200

SNIPPET = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
FENCED = re.compile(r"^```.*?^```", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]*)\)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def snippets(page: Path) -> list[str]:
    return SNIPPET.findall(page.read_text())


def relative_links(page: Path) -> list[str]:
    """The targets of the page's Markdown links that are not URLs, outside code."""
    text = CODE_SPAN.sub("", FENCED.sub("", page.read_text()))
    return [target for target in LINK.findall(text) if not SCHEME.match(target)]


CASES = [(page, snippet) for page in PAGES for snippet in snippets(page)]
IDS = [f"{page.name}-snippet{i}" for page in PAGES for i in range(len(snippets(page)))]


def marked(page: Path, snippet: str):
    # The emulator's own API (counters, trees) exists only on the emulator.
    marks = [pytest.mark.emulator_only] if "aclnn_py.emulator." in snippet else []
    return pytest.param(page, snippet, marks=marks)


def test_the_docs_have_pages_and_python_snippets():
    assert DOCS / "index.md" in PAGES
    assert len(CASES) >= 5


@pytest.mark.slow
@pytest.mark.parametrize(("page", "snippet"), [marked(p, s) for p, s in CASES], ids=IDS)
def test_a_docs_snippet_runs_as_written(page, snippet):
    done = run_python(snippet)
    assert done.returncode == 0, f"{page.name}:\n{done.stderr}"


@pytest.mark.parametrize("page", [README, *PAGES], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_names_an_existing_file(page):
    for target in relative_links(page):
        assert target, f"{page.name}: an empty link"
        assert "#" not in target, f"{page.name}: {target} has an anchor; link to the file"
        assert (page.parent / target).exists(), f"{page.name}: {target} does not exist"


def test_every_page_is_reachable_from_the_overview():
    assert "docs/index.md" in relative_links(README)
    linked = {(DOCS / target).resolve() for target in relative_links(DOCS / "index.md")}
    missing = [page.name for page in PAGES if page.name != "index.md" and page not in linked]
    assert not missing, f"docs/index.md does not link {missing}"


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_the_emulated_operators_page_is_what_the_registry_gives():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_operator_docs.py"),
                           "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


# A project page named inside the package: "docs/<page>.md" is a path only a source tree has;
# "the page <page>.md" is a page the package carries (setup.py copies them to aclnn_py/docs).
SOURCE_TREE_PATH = re.compile(r"(?:^|[^/\w-])docs/([a-z0-9-]+\.md)")
PAGE_NAMED = re.compile(r"\bpage ([a-z0-9-]+\.md)")


def test_the_package_names_its_pages_as_an_installed_user_finds_them():
    shipped = {page.name for page in PAGES} | {README.name}
    named = set()
    for module in sorted((ROOT / "aclnn_py").rglob("*.py")):
        text = module.read_text()
        assert not SOURCE_TREE_PATH.findall(text), (
            f"{module.relative_to(ROOT)} cites a docs/ path, which an installed package lacks: "
            "name the page ('the page emulator.md') instead")
        named.update(PAGE_NAMED.findall(text))
    assert named, "the package names no page at all"
    assert named <= shipped, sorted(named - shipped)


def test_python_m_aclnn_py_docs_says_where_the_pages_are(capsys):
    from aclnn_py import doctor

    assert doctor.main(["docs"]) == 0
    folder, *listed = capsys.readouterr().out.splitlines()
    assert {line.strip() for line in listed} >= {page.name for page in PAGES}
    assert (Path(folder) / "emulator.md").read_text() == (DOCS / "emulator.md").read_text()
    assert doctor.main(["docs", "c-programs"]) == 0
    assert capsys.readouterr().out.strip() == str(Path(folder) / "c-programs.md")
    assert doctor.main(["docs", "no-such-page"]) == 1
    assert "no page 'no-such-page'" in capsys.readouterr().err
