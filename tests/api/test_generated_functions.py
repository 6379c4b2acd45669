"""The curated functions and plans are what the operator table gives: adding an operator is a
row of the table and a docstring, and ``tools/generate_functions.py`` writes the rest."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest
from helpers import ROOT

import aclnn_py
from aclnn_py.ops.docs import DOCS
from aclnn_py.ops.specs import SPECS


@pytest.mark.slow
def test_the_functions_module_is_what_the_table_gives():
    done = subprocess.run([sys.executable, str(ROOT / "tools" / "generate_functions.py"),
                           "--check"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_every_row_has_a_function_a_plan_and_a_docstring():
    for name, spec in SPECS.items():
        function = getattr(aclnn_py, name)
        assert inspect.getdoc(function) == inspect.cleandoc(DOCS[name])
        parameters = list(inspect.signature(function).parameters)
        assert parameters[:len(spec.inputs)] == list(spec.inputs)
        assert [a.name for a in spec.attributes] == [
            p for p in parameters if p not in (*spec.inputs, "out", "stream", "devices")]
        plan = getattr(aclnn_py, "".join(part.capitalize() for part in name.split("_")) + "Plan")
        assert plan.spec is spec
        assert spec.cann in plan.__doc__


def test_keyword_only_attributes_are_the_table_s():
    for name, spec in SPECS.items():
        parameters = inspect.signature(getattr(aclnn_py, name)).parameters
        for attribute in spec.attributes:
            kind = parameters[attribute.name].kind
            assert (kind is inspect.Parameter.POSITIONAL_OR_KEYWORD) == attribute.positional
            assert parameters[attribute.name].default == attribute.default
