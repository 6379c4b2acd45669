"""The suite's own layout: every test module in a folder named after the layer it tests,
one flat import namespace over the folders (pyproject's ``pythonpath``), and the ``slow``
marker that ``pytest -m "not slow"`` deselects."""

from __future__ import annotations

from collections import Counter

from helpers import TESTS, import_paths

FOLDERS = {"api", "c", "engine", "frameworks", "ops", "runtime", "stress", "tools"}


def modules():
    return sorted(TESTS.rglob("test_*.py"))


def test_every_test_module_lives_in_a_layer_folder():
    assert modules()
    misplaced = [str(path.relative_to(TESTS)) for path in modules()
                 if path.parent.parent != TESTS or path.parent.name not in FOLDERS]
    assert misplaced == []


def test_module_basenames_are_unique_and_no_folder_is_a_package():
    """The modules are imported by basename (pytest's default import mode, and the
    modules' imports of each other): two of one name would collide."""
    names = Counter(path.name for path in modules())
    assert [name for name, count in names.items() if count > 1] == []
    assert sorted(str(p.relative_to(TESTS)) for p in TESTS.rglob("__init__.py")) == []


def test_every_folder_is_on_the_pythonpath(pytestconfig):
    entries = [str(pytestconfig.rootpath / entry) for entry in pytestconfig.getini("pythonpath")]
    assert sorted(entries) == sorted(import_paths())


def test_the_slow_marker_is_registered(pytestconfig):
    assert any(line.split(":", 1)[0].strip() == "slow"
               for line in pytestconfig.getini("markers"))
