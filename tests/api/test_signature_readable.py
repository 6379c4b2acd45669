"""signature() shows the Python call, the dtypes each tensor takes on this SoC and what
computes the operator; operators(callable=True) lists only what a call would run."""

from __future__ import annotations

import pytest

import aclnn_py


def test_the_python_form_has_defaults_keywords_and_results():
    assert aclnn_py.signature("aclnnSoftmax").python_form == \
        'call("aclnnSoftmax", self, dim, *, out=None) -> out'
    assert aclnn_py.signature("aclnnInplaceAddRmsNorm").python_form == \
        'call("aclnnInplaceAddRmsNorm", x1Ref, x2Ref, gamma, epsilon, *, out=None) -> ' \
        '(x1Ref, x2Ref, rstdOut)'
    layer_norm = aclnn_py.signature("aclnnLayerNorm").python_form
    assert "weightOptional=None" in layer_norm and "biasOptional=None" in layer_norm


@pytest.mark.emulator_only
def test_dtypes_are_those_of_the_running_soc():
    dtypes = dict(aclnn_py.signature("aclnnSoftmax").dtypes)
    assert dtypes["self"] == ("FLOAT16", "FLOAT", "DOUBLE", "BF16")  # Atlas A2: bfloat16 too
    text = str(aclnn_py.signature("aclnnSoftmax"))
    assert text.startswith('call("aclnnSoftmax"')
    assert "dtypes on this SoC (CANN's names):\n    self: FLOAT16, FLOAT, DOUBLE, BF16" in text


@pytest.mark.emulator_only
def test_what_computes_each_operator_on_the_emulator():
    assert aclnn_py.signature("aclnnAdd").computed_by == "C kernel"
    assert aclnn_py.signature("aclnnSoftmax").computed_by == "Python kernel"
    declared_only = aclnn_py.operators(computed=False)
    assert declared_only, "the trees declare operators the emulator does not compute"
    name = declared_only[0]
    assert aclnn_py.signature(name).computed_by == "not computed"
    assert not aclnn_py.signature(name).callable
    assert "on the emulator: not computed" in str(aclnn_py.signature(name))


@pytest.mark.emulator_only
def test_callable_means_a_call_would_run_here():
    every = set(aclnn_py.operators())
    callable_ = set(aclnn_py.operators(callable=True))
    computed = set(aclnn_py.operators(computed=True))
    assert callable_ <= computed <= every
    assert not callable_ & set(aclnn_py.operators(computed=False))
    assert set(aclnn_py.emulator.kernels()) & every <= computed
