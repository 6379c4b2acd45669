"""Where parameter roles come from: the user, an operator description, the role table
generated from CANN's docs, CANN's naming conventions; and a call never returns nothing
silently."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers
from aclnn_py.ops import roles as _roles


def _parameters(declaration: str) -> tuple[_headers.CParameter, ...]:
    text = (f"aclnnStatus aclnnFooGetWorkspaceSize({declaration}, uint64_t *workspaceSize, "
            "aclOpExecutor **executor);")
    return _headers.operator(text, "aclnnFoo", "foo.h").parameters


@pytest.mark.parametrize("declaration, outputs, inout", [
    # ops-nn writes outputs const: the name says it.
    ("const aclTensor *self, const aclTensor *out", ("out",), ()),
    ("const aclTensor *x, const aclTensor *yOut, const aclTensor *scaleOut",
     ("yOut", "scaleOut"), ()),
    ("const aclTensor *x, aclTensor *meanOutOptional", ("meanOutOptional",), ()),
    # A Ref is updated in place whatever its const, tensor lists too.
    ("const aclTensor *selfRef, const aclTensor *other", (), ("selfRef",)),
    ("aclTensor *selfRef, const aclTensor *other", (), ("selfRef",)),
    ("const aclTensorList *varRef, const aclTensorList *grad", (), ("varRef",)),
    # The incoming gradient is an input although its name ends in Out.
    ("const aclTensor *gradOut, const aclTensor *self, aclTensor *gradInput", ("gradInput",), ()),
    ("const aclTensor *gradOutput, const aclTensor *self, aclTensor *out", ("out",), ()),
    # A non-const tensor is an output; non-tensors never are.
    ("const aclTensor *self, aclTensor *result, int64_t *count", ("result",), ()),
    ("const aclTensor *self, const aclScalar *selfRef, const aclTensor *other", (), ()),
])
def test_conventions(declaration, outputs, inout):
    found = _roles.rule_roles(_parameters(declaration))
    assert (found.outputs, found.inout, found.source) == (outputs, inout, "rule")


def test_table_entry_applies_only_when_its_names_are_there(monkeypatch):
    monkeypatch.setattr(_roles, "_entries", {})
    monkeypatch.setattr(_roles, "_table", {
        "schema": _roles.TABLE_SCHEMA,
        "repositories": {"ops-x": {"url": "https://github.com/hicann/ops-x", "commit": "a" * 40}},
        "operators": {"aclnnFoo": {"repository": "ops-x", "doc": "foo/docs/aclnnFoo.md",
                                   "parameters": ["self", "runningMean"],
                                   "outputs": ["out"], "inout": ["runningMean"],
                                   "basis": "prose", "note": "runningMean: prose"}}})
    real = _parameters("const aclTensor *self, aclTensor *runningMean, const aclTensor *out")
    found = _roles.resolve("aclnnFoo", real)
    assert (found.outputs, found.inout, found.source) == (("out",), ("runningMean",), "table")
    assert "hicann/ops-x@aaaaaaa foo/docs/aclnnFoo.md" in found.where
    assert "runningMean: prose" in found.where
    # Another CANN version named them otherwise: the conventions decide.
    renamed = _parameters("const aclTensor *input, aclTensor *mean, const aclTensor *y")
    found = _roles.resolve("aclnnFoo", renamed)
    assert (found.outputs, found.inout, found.source) == (("mean",), (), "rule")


def test_entries_read_alone_are_the_tables(monkeypatch):
    table = _roles.table()
    monkeypatch.setattr(_roles, "_table", None)
    monkeypatch.setattr(_roles, "_entries", {})
    for name, entry in table["operators"].items():
        assert _roles.table_entry(name) == entry, name
    for name, record in table["repositories"].items():
        assert _roles.repository(name) == record, name
    assert _roles.table_entry("aclnnNoSuchOperator") is None
    assert _roles.repository("ops-none") == {}


def test_every_table_entry_is_well_formed():
    table = _roles.table()
    assert table["schema"] == _roles.TABLE_SCHEMA
    for name, entry in table["operators"].items():
        assert name.startswith("aclnn"), name
        assert entry["repository"] in table["repositories"], name
        assert not set(entry["outputs"]) & set(entry["inout"]), name
        if entry.get("returns_nothing"):
            assert not entry["outputs"] and not entry["inout"], name


# ---- through signature() and call() on the emulator ------------------------------------


def test_inplace_add_with_a_const_ref_updates_its_array():
    # The emulator's tree declares selfRef const, as hicann/ops-math's aclnn_add.h does.
    signature = aclnn_py.signature("aclnnInplaceAdd")
    assert "const aclTensor *selfRef" in str(signature)
    self_ref = signature.parameters[0]
    assert (self_ref.name, self_ref.role, self_ref.source) == ("selfRef", "inout", "table")
    assert signature.roles_source == "table" and "hicann/ops-math@" in signature.roles_where
    x = np.arange(6, dtype=np.float32)
    y = np.full(6, 2.0, np.float32)
    result = aclnn_py.call("aclnnInplaceAdd", x, y, 1)
    np.testing.assert_array_equal(x, np.arange(6) + 2.0)
    assert result is x
    device = aclnn_py.to_device(np.zeros(3, np.float32))
    aclnn_py.call("aclnnInplaceAdd", device, aclnn_py.to_device(np.ones(3, np.float32)), 3)
    np.testing.assert_array_equal(device.numpy(), np.full(3, 3.0))


def _add_under_other_names(tmp_path: Path, fresh_catalog) -> None:
    """aclnnAdd declared with names neither the table nor the conventions know, every
    tensor const: nothing says which is written."""
    folder = tmp_path / "aclnnop"
    folder.mkdir()
    (folder / "aclnn_add.h").write_text(
        "ACLNN_API aclnnStatus aclnnAddGetWorkspaceSize(const aclTensor *a, const aclTensor *b,"
        " const aclScalar *alpha, const aclTensor *c, uint64_t *workspaceSize, "
        "aclOpExecutor **executor);\n"
        "ACLNN_API aclnnStatus aclnnAdd(void *workspace, uint64_t workspaceSize, "
        "aclOpExecutor *executor, aclrtStream stream);\n")
    fresh_catalog.setattr(_catalog, "builtin_header_dirs", lambda root: [folder])


@pytest.mark.emulator_only
def test_a_call_that_would_return_nothing_is_refused_before_any_launch(tmp_path, fresh_catalog):
    _add_under_other_names(tmp_path, fresh_catalog)
    signature = aclnn_py.signature("aclnnAdd")
    assert not signature.roles_known and signature.roles_source == "rule"
    assert "register_roles" in str(signature)
    x = np.ones(3, np.float32)
    before = aclnn_py.emulator.stats()
    with pytest.raises(TypeError, match=r"a \(const aclTensor \*\), b \(const aclTensor \*\), "
                                        r"c \(const aclTensor \*\).*register_roles\('aclnnAdd'"):
        aclnn_py.call("aclnnAdd", x, x, 1)
    after = aclnn_py.emulator.stats()
    for counter in ("kernel_launches", "h2d_bytes", "malloc_calls", "live_tensors"):
        assert after[counter] == before[counter], counter


def test_roles_the_user_states(tmp_path, fresh_catalog):
    _add_under_other_names(tmp_path, fresh_catalog)
    x = np.arange(3, dtype=np.float32)
    try:
        aclnn_py.register_roles("aclnnAdd", outputs=["c"])
        signature = aclnn_py.signature("aclnnAdd")
        assert [(p.name, p.role, p.source) for p in signature.parameters] == [
            ("a", "input", "user"), ("b", "input", "user"), ("alpha", "attribute", "header"),
            ("c", "output", "user")]
        assert "stated by the user" in str(signature)
        np.testing.assert_array_equal(aclnn_py.call("aclnnAdd", x, x, 2), 3 * x)
        # Stated again, it replaces what was stated; a wrong statement is refused by name.
        aclnn_py.register_roles("aclnnAdd", outputs=["d"])
        with pytest.raises(ValueError, match=r"aclnnAdd has no parameter 'd'"):
            aclnn_py.call("aclnnAdd", x, x, 2)
        aclnn_py.register_roles("aclnnAdd", outputs=["alpha"])
        with pytest.raises(ValueError, match=r"alpha is a const aclScalar \*, not a tensor"):
            aclnn_py.signature("aclnnAdd")
    finally:
        assert aclnn_py.unregister_roles("aclnnAdd")
    assert not aclnn_py.unregister_roles("aclnnAdd")
    assert not aclnn_py.signature("aclnnAdd").roles_known


@pytest.mark.parametrize("kwargs, match", [
    ({"outputs": "c"}, "sequence of parameter names, not a str"),
    ({"outputs": ["c"], "inout": ["c"]}, "either an output or updated in place"),
    ({}, "at least one output"),
    ({"outputs": ["c"], "returns_nothing": True}, "must be empty"),
    ({"outputs": [1]}, "parameter names must be str"),
])
def test_stating_roles_wrongly(kwargs, match):
    with pytest.raises((TypeError, ValueError), match=match):
        aclnn_py.register_roles("aclnnAdd", **kwargs)
    assert _roles.stated("aclnnAdd") is None


def test_an_operator_that_writes_nothing_returns_none(tmp_path, fresh_catalog):
    _add_under_other_names(tmp_path, fresh_catalog)
    try:
        aclnn_py.register_roles("aclnnAdd", returns_nothing=True)
        signature = aclnn_py.signature("aclnnAdd")
        assert signature.roles_known and signature.returns_nothing
        assert "the call returns None" in str(signature)
        out = np.zeros(3, np.float32)
        # c is then an input: what the operator does with it is its own business.
        assert aclnn_py.call("aclnnAdd", np.ones(3, np.float32), np.ones(3, np.float32), 1,
                             out) is None
    finally:
        aclnn_py.unregister_roles("aclnnAdd")


def test_a_tensor_list_updated_in_place():
    # The custom operator writes its list "terms": stated in place, its arrays are updated.
    from test_call_types import OP, weighted_sum

    xs = [np.arange(4, dtype=np.float32) + i for i in range(3)]
    weights, mask = (0.5, 2.0, -1.0), (True, False, True)
    terms = [np.full(4, 7, np.float32) for _ in range(3)]
    try:
        aclnn_py.register_roles(OP, outputs=["y"], inout=["terms"])
        assert [p.role for p in aclnn_py.signature(OP).parameters if p.is_tensor] == \
            ["input", "output", "inout"]
        updated, y = aclnn_py.call(OP, xs, weights, mask, terms)
        assert all(a is b for a, b in zip(updated, terms))
        expected_y, expected_terms = weighted_sum(xs, weights, mask)
        np.testing.assert_array_equal(y, expected_y)
        for got, expected in zip(terms, expected_terms):
            np.testing.assert_array_equal(got, expected)
        with pytest.raises(TypeError, match=r"terms\[1\] is updated in place"):
            aclnn_py.call(OP, xs, weights, mask, [terms[0], terms[1][::2], terms[2]])
    finally:
        aclnn_py.unregister_roles(OP)


@pytest.mark.parametrize("optional, given, written, skipped", [
    # Without out=, optional outputs are left out (NULL), unless every output is optional.
    ((False, True, True), None, ["out"], ["meanOutOptional", "rstdOutOptional"]),
    ((True, True, True), None, ["out", "meanOutOptional", "rstdOutOptional"], []),
    # With out=, None leaves an optional output out.
    ((False, True, True), ("o", "m", None), ["out", "meanOutOptional"], ["rstdOutOptional"]),
])
def test_optional_outputs_may_be_left_out(optional, given, written, skipped):
    from aclnn_py.engine import call as _generic

    outputs = [_catalog.Parameter(n, "aclTensor *", "output", o) for n, o in
               zip(("out", "meanOutOptional", "rstdOutOptional"), optional)]
    found, arrays, left_out = _generic._written("aclnnLayerNorm", outputs, given)
    assert [p.name for p in found] == written and left_out == skipped
    if given is not None:
        assert arrays == tuple(a for a in given if a is not None)


def test_a_required_output_cannot_be_left_out():
    from aclnn_py.engine import call as _generic

    outputs = [_catalog.Parameter("out", "aclTensor *", "output", False)]
    with pytest.raises(TypeError, match="out= gives None for out, which is not optional"):
        _generic._written("aclnnFoo", outputs, (None,))


def test_the_installed_headers_agree_with_the_table(tmp_path, fresh_catalog):
    agreement = _catalog.role_agreement()
    assert agreement["names_differ"] == [] and agreement["refused"] == []
    assert agreement["entry_applies"] + agreement["by_rules"] == agreement["in_table"] == \
        agreement["operators"] >= 8
    assert agreement["entry_applies"] >= 8
    # A CANN naming the parameters otherwise is reported by name.
    _add_under_other_names(tmp_path, fresh_catalog)
    _catalog.forget()
    agreement = _catalog.role_agreement()
    assert agreement["names_differ"] == ["aclnnAdd"] and agreement["entry_applies"] == 0
