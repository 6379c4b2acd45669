"""aclnn_py.call, signature() and the catalog against unusual headers, packages and
arguments."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from conftest import no_device_work
from test_call import _copy_package, refused_until_trusted

import aclnn_py
from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers
from aclnn_py.ops import roles as _roles

PROTOTYPE = ("aclnnStatus aclnnFooGetWorkspaceSize(const aclTensor *self, aclTensor *out, "
             "uint64_t *workspaceSize, aclOpExecutor **executor);\n")
PHASE2 = ("aclnnStatus aclnnFoo(void *workspace, uint64_t workspaceSize, "
          "aclOpExecutor *executor, aclrtStream stream);\n")


def _parameters(text: str) -> list[tuple[str, str, str]]:
    prototypes = _headers.operator(text, "aclnnFoo", "h.h")
    return [(p.name, _headers.bare(p.c_type), p.role)
            for p in _catalog.roles(prototypes.parameters,
                                   _roles.rule_roles(prototypes.parameters))]


FOO = [("self", "const aclTensor *", "input"), ("out", "aclTensor *", "output")]


@pytest.mark.parametrize("text", [
    # A byte order mark before the include guard (editors on Windows write one).
    "\ufeff#ifndef ACLNN_FOO_H_\n#define ACLNN_FOO_H_\n" + PROTOTYPE + PHASE2 + "#endif\n",
    # C++ attributes and function-like macros before the return type.
    '[[deprecated("use aclnnFooV2")]] ' + PROTOTYPE + PHASE2,
    'ACL_DEPRECATED_MESSAGE("use aclnnFooV2") ACLNN_API ' + PROTOTYPE + PHASE2,
    "__ACLNN_API__ " + PROTOTYPE + PHASE2,
    # Declarations the operator does not need, which aclnn_py cannot read, stop nothing.
    "typedef aclnnStatus (*aclnnCallback)(void *data);\n" + PROTOTYPE + PHASE2,
    "aclnnStatus aclnnSetHook(void (*hook)(int));\n" + PROTOTYPE + PHASE2,
    "static inline int aclnnHelper(int a) { return aclnnOther(1); }\n" + PROTOTYPE + PHASE2,
    # A // comment ending in a backslash goes on over the next line, as in C.
    "// the old spelling: \\\naclnnStatus aclnnFooGetWorkspaceSize(int old);\n" + PROTOTYPE
    + PHASE2,
    "// the old spelling: \\\r\naclnnStatus aclnnFooGetWorkspaceSize(int old);\r\n"
    + PROTOTYPE + PHASE2,
])
def test_headers_written_in_less_common_styles(text):
    assert _parameters(text) == FOO
    assert _headers.operator_names(text)[-1] == "aclnnFoo"


def test_what_follows_an_unterminated_comment_is_not_read_as_declarations():
    text = PROTOTYPE + PHASE2 + "/* aclnnStatus aclnnBarGetWorkspaceSize(const aclTensor *x,\n"
    assert _headers.operator_names(text) == ["aclnnFoo"]
    assert _parameters(text) == FOO


def test_const_written_after_the_type_is_the_same_type():
    text = PROTOTYPE.replace("const aclTensor *self", "aclTensor const *self") + PHASE2
    assert _parameters(text) == FOO
    assert _headers.bare("aclTensor const * const") == "const aclTensor *"
    assert _headers.bare("aclTensorList const *") == "const aclTensorList *"


def test_a_prototype_of_the_operator_that_cannot_be_read_still_names_header_and_line():
    text = "typedef aclnnStatus (*aclnnCallback)(void *data);\n" + PROTOTYPE.replace(
        "const aclTensor *self", "const aclTensor &self") + PHASE2
    with pytest.raises(_headers.HeaderError, match=r"h\.h:2: .*const aclTensor &self"):
        _headers.operator(text, "aclnnFoo", "h.h")


# ---- custom packages --------------------------------------------------------------------


@pytest.mark.emulator_only
def test_relative_custom_opp_path_entries_load_by_absolute_path(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    fresh_catalog.chdir(tmp_path)
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", "::pkg:")
    signature = aclnn_py.signature("aclnnAddCustom")
    assert signature.library == package / "op_api" / "lib" / "libcust_opapi.so"
    assert signature.library.is_absolute() and signature.package == package


@pytest.mark.emulator_only
def test_a_symlinked_library_in_a_folder_others_can_write_is_refused(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    library = package / "op_api" / "lib" / "libcust_opapi.so"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone may swap the file the link leads to
    shutil.copy(library.resolve(), shared / "libcust_opapi.so")
    (shared / "libcust_opapi.so").chmod(0o755)
    library.unlink()
    library.symlink_to(shared / "libcust_opapi.so")
    refused_until_trusted(fresh_catalog, package, rf"{shared} is writable by other users")


@pytest.mark.emulator_only
def test_a_custom_header_with_a_bom_and_windows_line_endings(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    header = package / "op_api" / "include" / "aclnn_add_custom.h"
    text = header.read_text().lstrip().replace("\n", "\r\n")
    header.chmod(0o644)
    header.write_bytes("\ufeff".encode() + text.encode() + b"/* caf\xe9 */\r\n")
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    signature = aclnn_py.signature("aclnnAddCustom")
    assert [(p.name, p.role) for p in signature.parameters] == [
        ("x", "input"), ("y", "input"), ("z", "output")]
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x, out=np.empty(3, x.dtype)),
                                  2 * x)


# ---- arguments ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", [None, 5, b"aclnnAdd", ["aclnnAdd"]])
def test_an_operator_name_that_is_not_a_str(name):
    with no_device_work(), pytest.raises(TypeError, match="operator name must be a str"):
        aclnn_py.call(name, np.ones(2, np.float32))
    with pytest.raises(TypeError, match="operator name must be a str"):
        aclnn_py.signature(name)


@pytest.mark.parametrize("alpha", [2**63, -2**63 - 1, 2**70])
def test_a_python_int_scalar_beyond_int64_is_refused_naming_it(alpha):
    x = np.ones(3, np.float32)
    aclnn_py.call("aclnnAdd", x, x, 1)  # the per-call path knows this arity
    for inputs in ((x, x), (aclnn_py.to_device(x), aclnn_py.to_device(x))):
        with no_device_work(), pytest.raises(ValueError, match=r"alpha .*int64"):
            aclnn_py.call("aclnnAdd", *inputs, alpha)
    big = np.uint64(2**64 - 1)  # a numpy scalar keeps its dtype
    np.testing.assert_array_equal(aclnn_py.call("aclnnAdd", x, x, big), x + np.float32(big))


@pytest.mark.parametrize("device", [False, True])
def test_negative_zero_attributes_never_reuse_the_executor_of_zero(device):
    # x + alpha * y with x = -0: the sign of the zero follows alpha's.
    x = np.array([-0.0, 1.0], np.float32)
    y = np.ones(2, np.float32)
    inputs = (aclnn_py.to_device(x), aclnn_py.to_device(y)) if device else (x, y)

    def signs(result):
        return np.signbit(result.numpy() if device else result).tolist()

    for alpha in (0.0, -0.0, np.float32(-0.0), 0.0, -0.0):
        expected = [bool(np.signbit(np.float32(alpha))), False]
        assert signs(aclnn_py.call("aclnnAdd", *inputs, alpha)) == expected, alpha
        assert signs(aclnn_py.call("aclnnAdd", *inputs, alpha=alpha)) == expected, alpha
        assert signs(aclnn_py.add(*inputs, alpha=alpha)) == expected, alpha


def test_negative_zero_in_float_arrays_is_a_signature_of_its_own():
    from aclnn_py.engine.call import convert_attribute

    weights = aclnn_py.signature("aclnnWeightedSumCustom").parameters[1]
    zero = convert_attribute("op", weights, [0.0, 1.0])
    negative = convert_attribute("op", weights, [-0.0, 1.0])
    assert zero != negative and np.signbit(negative[0])
    assert convert_attribute("op", weights, [-0.0, 1.0]) == negative


def test_the_value_of_a_negative_zero_is_still_negative_zero():
    from aclnn_py.ops.specs import NEGATIVE_ZERO, c_float

    assert c_float(-0.0) is NEGATIVE_ZERO and c_float(0.0) == 0.0 and c_float(0.0) != NEGATIVE_ZERO
    assert float(NEGATIVE_ZERO) == 0.0 and np.signbit(float(NEGATIVE_ZERO))
    assert {c_float(-0.0): 1, 0.0: 2}[NEGATIVE_ZERO] == 1


def test_a_positional_none_and_the_same_name_as_keyword_is_refused():
    x = np.ones(3, np.float32)
    with pytest.raises(TypeError, match="got 'self' twice"):
        aclnn_py.call("aclnnAdd", None, x, 1, self=x)
    with pytest.raises(TypeError, match="got 'x' twice"):  # plans bind the same way
        aclnn_py.MseLossPlan(None, x, x=x)


def test_a_wrong_out_names_the_output_once():
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"aclnnAdd: the out= array for out must be C-contiguous"):
        aclnn_py.call("aclnnAdd", x, x, 1, out=np.ones(6, np.float32)[::2])


@pytest.mark.emulator_only
def test_forget_drops_the_per_call_shortcuts_with_the_catalog(tmp_path, fresh_catalog):
    x = np.arange(4, dtype=np.float32)
    aclnn_py.call("aclnnAddCustom", x, x)  # the shortcut now leads to the install's package
    package = _copy_package(tmp_path)
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    _catalog.forget()
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x), 2 * x)
    from aclnn_py.engine import call as _generic

    spec = next(iter(_generic._fast.values()))[0]
    assert spec.library == str(package / "op_api" / "lib" / "libcust_opapi.so")


def test_config_ini_comments_and_repeated_keys(tmp_path, fresh_catalog):
    vendors = tmp_path / "opp" / "vendors"
    vendors.mkdir(parents=True)
    (vendors / "config.ini").write_text("# vendors\nload_priority=old\n"
                                        "load_priority = first, second  # newest wins\n")
    fresh_catalog.setenv("ASCEND_OPP_PATH", str(tmp_path / "opp"))
    fresh_catalog.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    assert _catalog.custom_packages(tmp_path) == [vendors / "first", vendors / "second"]


@pytest.mark.parametrize("call", [
    lambda ragged: aclnn_py.mse_loss_backward(1.0, ragged, 0.0),
    lambda ragged: aclnn_py.add(np.ones(2, np.float32), ragged),
    lambda ragged: aclnn_py.call("aclnnAdd", np.ones(2, np.float32), ragged, 1.0),
], ids=["curated", "curated-second", "call"])
def test_a_ragged_input_is_refused_naming_its_parameter(call):
    expected = r"^(x|y|other): numpy cannot make an array of it \(.*inhomogeneous"
    with no_device_work(), pytest.raises(ValueError, match=expected):
        call([[1.0, 2.0], [3.0]])


def test_a_ragged_member_of_a_tensor_list_is_refused_naming_its_place():
    out = (np.empty(3, np.float32), [np.empty(3, np.float32), np.empty(3, np.float32)])
    with no_device_work(), pytest.raises(ValueError, match=r"^x\[1\]: numpy cannot make"):
        aclnn_py.call("aclnnWeightedSumCustom", [np.ones(3, np.float32), [[1.0], [2.0, 3.0]]],
                      [1.0, 2.0], [True, True], out=out)


def test_a_complex_scalar_with_a_negative_zero_part_is_a_signature_of_its_own():
    from aclnn_py.engine.call import convert_attribute

    alpha = aclnn_py.signature("aclnnAdd").parameters[2]
    keys = [convert_attribute("op", alpha, np.complex64(value))
            for value in (0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0))]
    assert len(set(keys)) == 4 and all(a != b for a in keys for b in keys if a is not b)
    again = convert_attribute("op", alpha, np.complex64(complex(-0.0, 0.0)))
    assert again == keys[1] and hash(again) == hash(keys[1])
    value = np.array([keys[3][2]], keys[3][1])  # the scalar handed to aclCreateScalar
    assert np.signbit(value.real).all() and np.signbit(value.imag).all()
