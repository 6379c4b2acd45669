"""aclnn_py.call, operators() and signature(): any operator through its header."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import numpy as np
import pytest
from conftest import no_device_work

import aclnn_py
from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers
from aclnn_py.ops import roles as _roles_module
from aclnn_py.ops.dtypes import bfloat16, soc_supports_bfloat16
from aclnn_py.ops.specs import SPECS, Reduction

# ---- headers as CANN writes them ------------------------------------------------------------

BUILTIN_STYLE = """\
/**
 * Copyright (c) 2025 Example. 版权所有。
 */
#ifndef OP_API_INC_ADDMM_H_
#define OP_API_INC_ADDMM_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"
#define UNUSED_MACRO(x) \\
    do { (void)(x); } while (0)

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @brief aclnnAddmm的第一段接口，根据具体的计算流程，计算workspace大小。
 * @domain aclnn_ops_train
 * 计算公式：out = beta * self + alpha * (mat1 @ mat2)
 */
ACLNN_API aclnnStatus aclnnAddmmGetWorkspaceSize(const aclTensor* self, const aclTensor* mat1,
                                                 const aclTensor* mat2, const aclScalar* beta,
                                                 const aclScalar* alpha, aclTensor* out,
                                                 int8_t cubeMathType, uint64_t* workspaceSize,
                                                 aclOpExecutor** executor);

/**
 * @brief 第二段接口，执行计算。
 */
ACLNN_API aclnnStatus aclnnAddmm(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor,
                                 aclrtStream stream);

// In-place variant: selfRef is read and written.
ACLNN_API aclnnStatus aclnnInplaceAddmmGetWorkspaceSize(aclTensor *selfRef, const aclTensor *mat1,
    const aclTensor *mat2, const aclScalar *beta, const aclScalar *alpha, int8_t cubeMathType,
    uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus aclnnInplaceAddmm(void *workspace, uint64_t workspaceSize,
    aclOpExecutor *executor, aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif  // OP_API_INC_ADDMM_H_
"""

OLDER_STYLE = """\
#ifndef OP_API_INC_LEVEL2_ACLNN_LAYER_NORM_H_
#define OP_API_INC_LEVEL2_ACLNN_LAYER_NORM_H_
#include "aclnn/aclnn_base.h"
#ifdef __cplusplus
extern "C" {
#endif
/* aclnnLayerNorm: weightOptional and biasOptional may be NULL. */
ACL_FUNC_VISIBILITY aclnnStatus aclnnLayerNormGetWorkspaceSize(
    const aclTensor *input,
    const aclIntArray *normalizedShape,
    const aclTensor *weightOptional,
    const aclTensor *biasOptional,
    double eps,
    aclTensor *out,
    aclTensor *meanOutOptional,
    aclTensor *rstdOutOptional,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);
ACL_FUNC_VISIBILITY aclnnStatus aclnnLayerNorm(void *workspace, uint64_t workspaceSize,
                                               aclOpExecutor *executor, const aclrtStream stream);
__attribute__((visibility("default"))) aclnnStatus aclnnCastGetWorkspaceSize(const aclTensor *self,
    const aclDataType dtype, aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default"))) aclnnStatus aclnnCast(void *workspace,
    uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
"""

CUSTOM_STYLE = """\

/*
 * calution: this file was generated automaticlly donot change it.
*/

#ifndef ACLNN_SCALE_CUSTOM_H_
#define ACLNN_SCALE_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnScaleCustomGetWorkspaceSize
 * parameters :
 * x : required
 * scale : required
 * mode : optional
 * flag : required
 * out : required
 */
__attribute__((visibility("default")))
aclnnStatus aclnnScaleCustomGetWorkspaceSize(
    const aclTensor *x,
    double scale,
    char *mode,
    bool flag,
    const aclTensor *out,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default")))
aclnnStatus aclnnScaleCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
"""


def _roles(text: str, name: str, *, outputs: set[str] | None = None
           ) -> list[tuple[str, str, str, bool]]:
    """The roles CANN's conventions give (the role table left out), or an operator
    description's ``outputs``."""
    prototypes = _headers.operator(_headers.clean(text) and text, name, "h.h")
    found = _roles_module.rule_roles(prototypes.parameters) if outputs is None else \
        _roles_module.resolve(name, prototypes.parameters, described_outputs=outputs)
    return [(p.name, p.c_type, p.role, p.optional)
            for p in _catalog.roles(prototypes.parameters, found)]


# per header style: its operators, the first one's (name, C type, role, optional) parameters,
# and one parameter of another operator
HEADER_ROLES = {
    "builtin_style": (BUILTIN_STYLE, ["aclnnAddmm", "aclnnInplaceAddmm"], [
        ("self", "const aclTensor *", "input", False),
        ("mat1", "const aclTensor *", "input", False),
        ("mat2", "const aclTensor *", "input", False),
        ("beta", "const aclScalar *", "attribute", False),
        ("alpha", "const aclScalar *", "attribute", False),
        ("out", "aclTensor *", "output", False),
        ("cubeMathType", "int8_t", "attribute", False)],
        ("aclnnInplaceAddmm", 0, ("selfRef", "aclTensor *", "inout", False))),
    "older_style_optional_tensors_and_types": (OLDER_STYLE, ["aclnnLayerNorm", "aclnnCast"], [
        ("input", "const aclTensor *", "input", False),
        ("normalizedShape", "const aclIntArray *", "attribute", False),
        ("weightOptional", "const aclTensor *", "input", True),
        ("biasOptional", "const aclTensor *", "input", True),
        ("eps", "double", "attribute", False),
        ("out", "aclTensor *", "output", False),
        ("meanOutOptional", "aclTensor *", "output", True),
        ("rstdOutOptional", "aclTensor *", "output", True)],
        ("aclnnCast", 1, ("dtype", "const aclDataType", "attribute", False))),
}


@pytest.mark.parametrize("style", list(HEADER_ROLES))
def test_header_parameters_and_roles(style):
    header, names, first, (other, index, parameter) = HEADER_ROLES[style]
    assert _headers.operator_names(header) == names
    assert _roles(header, names[0]) == first
    assert _roles(header, other)[index] == parameter


def test_generated_custom_header_roles_come_from_the_description():
    assert _headers.operator_names(CUSTOM_STYLE) == ["aclnnScaleCustom"]
    described = _roles(CUSTOM_STYLE, "aclnnScaleCustom", outputs={"out"})
    assert described == [("x", "const aclTensor *", "input", False),
                         ("scale", "double", "attribute", False),
                         ("mode", "char *", "attribute", False),
                         ("flag", "bool", "attribute", False),
                         ("out", "const aclTensor *", "output", False)]
    undescribed = _roles(CUSTOM_STYLE, "aclnnScaleCustom")  # named out: CANN's convention
    assert [role for _, _, role, _ in undescribed] == \
        ["input", "attribute", "attribute", "attribute", "output"]


def test_prototype_string_and_line():
    prototypes = {p.name: p for p in _headers.parse(OLDER_STYLE, "layer_norm.h")}
    phase1 = prototypes["aclnnLayerNormGetWorkspaceSize"]
    assert phase1.line == 8
    assert str(phase1).startswith("aclnnStatus aclnnLayerNormGetWorkspaceSize(const aclTensor "
                                  "*input, const aclIntArray *normalizedShape,")


@pytest.mark.parametrize("body, words", [
    ("aclnnStatus aclnnBadGetWorkspaceSize(const aclTensor *self, void (*hook)(int),\n"
     "    uint64_t *workspaceSize, aclOpExecutor **executor);", "function pointer"),
    ("aclnnStatus aclnnBadGetWorkspaceSize(const aclTensor *, uint64_t *workspaceSize,\n"
     "    aclOpExecutor **executor);", "has no name"),
    ("aclnnStatus aclnnBadGetWorkspaceSize(const aclTensor *self);", "not an aclnn phase-1"),
    ("aclnnStatus aclnnBadGetWorkspaceSize(const aclTensor &self, uint64_t *workspaceSize,\n"
     "    aclOpExecutor **executor);", "cannot understand the parameter"),
])
def test_unreadable_prototypes_name_header_and_line(body, words):
    text = "#include <x.h>\n/* 注释 */\n\nACLNN_API " + body + "\n"
    with pytest.raises(_headers.HeaderError, match=rf"bad\.h:4: .*{words}") as caught:
        _headers.operator(text, "aclnnBad", "bad.h")
    assert caught.value.line == 4 and caught.value.path == Path("bad.h")


def test_comments_and_strings_never_declare_operators():
    text = ('/* aclnnGhostGetWorkspaceSize(const aclTensor *a); */\n'
            '// aclnnGhost2GetWorkspaceSize(int a);\n'
            'static const char *doc = "aclnnGhost3GetWorkspaceSize(x)";\n')
    assert _headers.operator_names(text) == []


# ---- the operators found ----------------------------------------------------------------------

CURATED = [spec.cann for spec in SPECS.values()]


def test_operators_lists_every_curated_operator_sorted():
    names = aclnn_py.operators()
    assert names == sorted(names)
    assert set(CURATED) <= set(names)


def test_signature_of_a_curated_operator():
    signature = aclnn_py.signature("aclnnMseLossBackward")
    assert [(p.name, p.c_type, p.role, p.optional) for p in signature.parameters] == [
        ("gradOutput", "const aclTensor *", "input", False),
        ("self", "const aclTensor *", "input", False),
        ("target", "const aclTensor *", "input", False),
        ("reduction", "int64_t", "attribute", False),
        ("out", "aclTensor *", "output", False)]
    text = str(signature)
    assert "aclnnMseLossBackwardGetWorkspaceSize(" in text
    assert str(signature.header) in text and str(signature.library) in text
    assert signature.header.name == "aclnn_mse_loss_backward.h"


def test_unknown_operator_suggests_close_names():
    with pytest.raises(ValueError, match=r"unknown aclnn operator 'aclnnMseLosBackward'.*"
                                         r"did you mean 'aclnnMseLossBackward'"):
        aclnn_py.signature("aclnnMseLosBackward")
    with pytest.raises(ValueError, match=r"did you mean 'aclnnL1Loss'"):
        aclnn_py.call("L1Loss", np.ones(2, np.float32), np.ones(2, np.float32), 1)


# ---- call reproduces every curated operator ------------------------------------------------

def _curated_args(spec, dtype, seed):
    rng = np.random.default_rng(seed)
    shapes = {2: [(3, 4), (4,)], 3: [(3, 1), (3, 4), (4,)]}[len(spec.inputs)]
    arrays = [rng.standard_normal(shape).astype(np.float32).astype(dtype) for shape in shapes]
    return arrays


def _attributes(spec, reduction):
    values = {"reduction": reduction, "beta": 0.5, "alpha": 1.5}
    return {attribute.name: values[attribute.name] for attribute in spec.attributes}


def _bits(array):
    array = np.asarray(array)
    return array.view(f"u{array.dtype.itemsize}")


@pytest.mark.parametrize("function", sorted(SPECS))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, bfloat16], ids=str)
def test_call_reproduces_the_curated_operator(function, dtype):
    spec = SPECS[function]
    if dtype == bfloat16 and not soc_supports_bfloat16(aclnn_py.runtime_info()["soc_name"]):
        pytest.skip("this SoC has no bfloat16 aclnn kernels")
    reductions = [0, 1, 2] if spec.attributes and spec.attributes[0].name == "reduction" else [None]
    curated = getattr(aclnn_py, function)
    for index, reduction in enumerate(reductions):
        arrays = _curated_args(spec, np.dtype(dtype), index)
        attributes = _attributes(spec, reduction)
        expected = curated(*arrays, **attributes)
        # Outputs default to the broadcast shape: a mean or sum loss names its 0-d out.
        reduced = spec.reduces and reduction != 0
        out = np.empty_like(expected) if reduced else None
        got = aclnn_py.call(spec.cann, *arrays, *attributes.values(), out=out)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        assert np.array_equal(_bits(got), _bits(expected)), (function, reduction)
        on_device = [aclnn_py.to_device(a) for a in arrays]
        out = aclnn_py.empty(expected.shape, expected.dtype) if reduced else None
        got_device = aclnn_py.call(spec.cann, *on_device, *attributes.values(), out=out)
        assert isinstance(got_device, aclnn_py.DeviceArray)
        assert np.array_equal(_bits(got_device.numpy()), _bits(expected))


def test_arguments_by_c_name_and_out():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full(3, 2, np.float32)
    out = np.empty((2, 3), np.float32)
    got = aclnn_py.call("aclnnMseLoss", self=x, target=y, reduction=int(Reduction.NONE), out=out)
    assert got is out
    np.testing.assert_array_equal(out, (x - y) ** 2)
    got = aclnn_py.call("aclnnAdd", x, other=y, alpha=np.float32(3))
    np.testing.assert_array_equal(got, x + 3 * y)


def test_device_arrays_in_device_arrays_out_with_out():
    x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
    out = aclnn_py.empty((4,), np.float32)
    got = aclnn_py.call("aclnnAdd", x, x, 1, out=(out,))
    assert got is out
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(4, dtype=np.float32))


@pytest.mark.parametrize("args, kwargs, error, words", [
    ((np.ones(2, np.float32),), {}, TypeError, r"aclnnAdd is missing other, alpha"),
    ((np.ones(2, np.float32),) * 2 + (1, 2), {}, TypeError, r"at most 3 arguments"),
    ((np.ones(2, np.float32),) * 2, {"alpha": 1, "beta": 2}, TypeError,
     r"unexpected argument 'beta'"),
    ((np.ones(2, np.float32),) * 2, {"alpha": "one"}, TypeError,
     r"aclnnAdd: alpha \(const aclScalar \*\) must be a Python number"),
    ((np.ones(2, np.float32), None, 1), {}, TypeError, r"other is a required tensor"),
    ((np.ones(2, np.float32), np.ones(3, np.float32), 1), {}, ValueError, r"do not broadcast"),
    ((np.ones(2, np.float32),) * 2, {"alpha": 1, "out": (np.empty(2), np.empty(2))}, TypeError,
     r"out= must give 1 arrays \(out\), got 2"),
])
def test_bad_arguments_are_refused_before_any_device_work(args, kwargs, error, words):

    with no_device_work(), pytest.raises(error, match=words):
        aclnn_py.call("aclnnAdd", *args, **kwargs)


def test_attribute_conversion_by_c_type():
    from aclnn_py.engine.call import convert_attribute

    def parameter(c_type, name="value"):
        return _catalog.Parameter(name, c_type, "attribute", name.endswith("Optional"))

    assert convert_attribute("op", parameter("int64_t"), np.int32(7)) == 7
    with pytest.raises(TypeError, match=r"op: value \(int64_t\) must be an integer, got bool"):
        convert_attribute("op", parameter("int64_t"), True)
    with pytest.raises(ValueError, match=r"int8_t\) must be in \[-128, 127\], got 300"):
        convert_attribute("op", parameter("int8_t"), 300)
    assert convert_attribute("op", parameter("bool"), np.bool_(True)) is True
    with pytest.raises(TypeError, match="must be a bool"):
        convert_attribute("op", parameter("bool"), 1)
    assert convert_attribute("op", parameter("double"), 2) == 2.0
    assert convert_attribute("op", parameter("char *"), "linear") == "linear"
    with pytest.raises(TypeError, match="must be a str"):
        convert_attribute("op", parameter("const char *"), b"x")
    assert convert_attribute("op", parameter("aclDataType"), np.float16) == \
        aclnn_py._c.lowlevel.constant("ACL_FLOAT16")
    assert convert_attribute("op", parameter("const aclScalar *"), 2) == \
        (aclnn_py._c.lowlevel.constant("ACL_INT64"), np.dtype(np.int64), 2)
    assert convert_attribute("op", parameter("const aclScalar *"), np.float16(0.5))[0] == \
        aclnn_py._c.lowlevel.constant("ACL_FLOAT16")
    assert convert_attribute("op", parameter("const aclIntArray *"), [1, np.int64(2)]) == (1, 2)
    with pytest.raises(TypeError, match="must hold integers"):
        convert_attribute("op", parameter("const aclIntArray *"), [1.5])
    assert convert_attribute("op", parameter("const aclIntArray *", "dimsOptional"), None) is None
    with pytest.raises(TypeError, match="is required"):
        convert_attribute("op", parameter("const aclIntArray *"), None)
    with pytest.raises(TypeError, match="cannot pass arguments of C type aclOpaque"):
        convert_attribute("op", parameter("aclOpaque *"), 1)


def test_canns_own_refusal_comes_back_as_acl_error():
    x = np.ones(3, np.float32)
    with pytest.raises(aclnn_py.AclError) as caught:
        aclnn_py.call("aclnnMseLossBackward", x, x.astype(np.float16), x, 1)
    assert caught.value.status == 161002
    assert "aclnnMseLossBackwardGetWorkspaceSize" in str(caught.value)


def test_in_place_operator_updates_the_array_given():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = x + 2 * np.ones(3, np.float32)
    got = aclnn_py.call("aclnnInplaceAdd", x, np.ones(3, np.float32), 2)
    assert got is x
    np.testing.assert_array_equal(x, expected)
    device = aclnn_py.to_device(np.zeros(3, np.float32))
    for _ in range(3):  # every launch runs phase 1 again: no stale rebinding
        assert aclnn_py.call("aclnnInplaceAdd", device, np.ones(3, np.float32), 1) is device
    np.testing.assert_array_equal(device.numpy(), np.full(3, 3, np.float32))
    with pytest.raises(TypeError, match="selfRef is updated in place"):
        aclnn_py.call("aclnnInplaceAdd", x[:, ::2], np.ones(2, np.float32), 1)
    with pytest.raises(TypeError, match="selfRef is updated in place"):
        aclnn_py.call("aclnnInplaceAdd", [1.0, 2.0], np.ones(2, np.float32), 1)


@pytest.mark.emulator_only
def test_repeated_calls_reuse_the_cached_executor(aclnn_leak_check):
    x = np.ones((4, 4), np.float32)
    aclnn_py.call("aclnnAdd", x, x, 1)
    before = aclnn_py.emulator.stats()
    for _ in range(5):
        aclnn_py.call("aclnnAdd", x, x, 1)
    after = aclnn_py.emulator.stats()
    assert after["kernel_launches"] - before["kernel_launches"] == 5
    assert after["live_executors"] == before["live_executors"]  # no new phase 1
    assert after["memcpy_calls"] - before["memcpy_calls"] <= 10  # staged: one each way


# ---- custom operator packages -------------------------------------------------------------

def _emulator_package() -> Path:
    from aclnn_py import emulator

    return Path(emulator.home()) / "opp" / "vendors" / "customize"


@pytest.mark.emulator_only
def test_custom_operator_end_to_end(aclnn_leak_check):
    signature = aclnn_py.signature("aclnnAddCustom")
    assert signature.package == _emulator_package()
    assert [(p.name, p.c_type, p.role) for p in signature.parameters] == [
        ("x", "const aclTensor *", "input"), ("y", "const aclTensor *", "input"),
        ("z", "const aclTensor *", "output")]
    assert "libcust_opapi.so" in str(signature)
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x), x + x)
    half = x.astype(np.float16)
    device = aclnn_py.call("aclnnAddCustom", aclnn_py.to_device(half), half)
    np.testing.assert_array_equal(device.numpy(), half + half)
    with pytest.raises(aclnn_py.AclError, match="AddCustom does not broadcast"):
        aclnn_py.call("aclnnAddCustom", x, x[0])


def _copy_package(tmp_path: Path, *, description: bool = True) -> Path:
    package = tmp_path / "pkg"
    shutil.copytree(_emulator_package(), package, symlinks=True)
    if not description:
        shutil.rmtree(package / "op_impl")
    for path in [package, *package.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))
    return package


def _package_without_its_library(tmp_path: Path, fresh_catalog) -> tuple[Path, Path]:
    """A copy of the emulator's custom package, its library removed, made the one
    ASCEND_CUSTOM_OPP_PATH names; the package and the library that is missing."""
    package = _copy_package(tmp_path)
    library = package / "op_api" / "lib" / "libcust_opapi.so"
    library.unlink()
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    return package, library


@pytest.mark.emulator_only
def test_custom_opp_path_comes_first(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", f"{tmp_path / 'missing'}:{package}")
    signature = aclnn_py.signature("aclnnAddCustom")
    assert signature.package == package
    assert signature.library == package / "op_api" / "lib" / "libcust_opapi.so"
    x = np.arange(5, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x), 2 * x)


@pytest.mark.emulator_only
def test_vendor_priority_from_config_ini(tmp_path, fresh_catalog):
    opp = tmp_path / "opp"
    vendors = opp / "vendors"
    vendors.mkdir(parents=True)
    first = _copy_package(tmp_path)
    (vendors / "zeta").symlink_to(first)
    shutil.copytree(first, vendors / "alpha", symlinks=True)
    (vendors / "config.ini").write_text("load_priority=zeta,alpha\n")
    fresh_catalog.setenv("ASCEND_OPP_PATH", str(opp))
    fresh_catalog.delenv("ASCEND_CUSTOM_OPP_PATH", raising=False)
    assert _catalog.custom_packages(Path("/nonexistent")) == [vendors / "zeta", vendors / "alpha"]
    assert aclnn_py.signature("aclnnAddCustom").package == vendors / "zeta"


@pytest.mark.emulator_only
def test_custom_header_without_description_needs_out(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path, description=False)
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    signature = aclnn_py.signature("aclnnAddCustom")
    assert not signature.roles_known
    assert "out= binds the last tensor parameters" in str(signature)
    x = np.arange(4, dtype=np.float32)
    with pytest.raises(TypeError, match="which of its tensors are outputs or updated in place "
                                        "is not known"):
        aclnn_py.call("aclnnAddCustom", x, x)
    out = np.empty(4, np.float32)
    assert aclnn_py.call("aclnnAddCustom", x, x, out=out) is out
    np.testing.assert_array_equal(out, 2 * x)


@pytest.mark.emulator_only
def test_custom_header_without_its_library(tmp_path, fresh_catalog):
    package, library = _package_without_its_library(tmp_path, fresh_catalog)
    signature = aclnn_py.signature("aclnnAddCustom")  # the header alone is enough
    assert (signature.library, signature.callable) == (None, False)
    assert f"its library {library} is missing" in str(signature)
    x = np.arange(4, dtype=np.float32)
    with no_device_work(), pytest.raises(aclnn_py.LibraryNotFoundError,
                                         match=rf"its library {library} is missing"):
        aclnn_py.call("aclnnAddCustom", x, x)


def test_builtin_header_without_a_library_exporting_it(tmp_path, fresh_catalog):
    folder = tmp_path / "aclnnop"
    folder.mkdir()
    (folder / "aclnn_nowhere.h").write_text(
        "ACLNN_API aclnnStatus aclnnNowhereGetWorkspaceSize(const aclTensor *self, "
        "aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);\n")
    fresh_catalog.setattr(_catalog, "builtin_header_dirs", lambda root: [folder])
    assert "aclnnNowhere" in aclnn_py.operators()
    assert "aclnnNowhere" not in aclnn_py.operators(callable=True)
    signature = aclnn_py.signature("aclnnNowhere")
    assert (signature.library, signature.callable) == (None, False)
    assert "no loaded operator library exports aclnnNowhereGetWorkspaceSize" in str(signature)
    with no_device_work(), pytest.raises(
            aclnn_py.LibraryNotFoundError,
            match=r"no loaded operator library exports aclnnNowhereGetWorkspaceSize"):
        aclnn_py.call("aclnnNowhere", np.ones(2, np.float32))


def refused_until_trusted(fresh_catalog, package: Path, match: str) -> None:
    """signature() refuses the package's library with ``match``, until
    ACLNN_PY_TRUST_CUSTOM_OPP=1."""
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    with pytest.raises(PermissionError, match=match):
        aclnn_py.signature("aclnnAddCustom")
    _catalog.forget()
    fresh_catalog.setenv("ACLNN_PY_TRUST_CUSTOM_OPP", "1")
    assert aclnn_py.signature("aclnnAddCustom").package == package


@pytest.mark.emulator_only
@pytest.mark.parametrize("target", ["library", "folder"])
def test_custom_library_writable_by_others_is_refused(tmp_path, fresh_catalog, target):
    package = _copy_package(tmp_path)
    library = package / "op_api" / "lib" / "libcust_opapi.so"
    path = library if target == "library" else library.parent
    path.chmod(path.stat().st_mode | stat.S_IWOTH)
    refused_until_trusted(fresh_catalog, package, rf"{path} is writable by other users")


@pytest.mark.emulator_only
def test_custom_library_of_another_user_is_refused(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    library = package / "op_api" / "lib" / "libcust_opapi.so"
    if os.getuid() == 0:
        os.chown(library, 4321, -1)  # another, non-root user
    else:  # we are not root: pretend to be someone else, so our own file is another user's
        real = os.getuid()
        fresh_catalog.setattr(_catalog.os, "getuid", lambda: real + 1)
    refused_until_trusted(fresh_catalog, package, r"belongs to user id \d+, neither you")


def test_repeated_calls_follow_each_calls_arguments():
    # The per-call path keys on each argument's type and value: never a stale conversion.
    x = np.arange(4, dtype=np.float32)
    y = np.ones(4, np.float32)
    for alpha in (2, 2.5, True, 2, np.float32(0.25), 2.5):
        np.testing.assert_array_equal(aclnn_py.call("aclnnAdd", x, y, alpha),
                                      x + np.float32(float(alpha)) * y)
        device = aclnn_py.call("aclnnAdd", aclnn_py.to_device(x), aclnn_py.to_device(y), alpha)
        np.testing.assert_array_equal(device.numpy(), x + np.float32(float(alpha)) * y)
    for reduction in (0, 2, 0):
        out = None if reduction == 0 else np.empty((), np.float32)
        got = aclnn_py.call("aclnnL1Loss", x, y, reduction, out=out)
        expected = np.abs(x - y) if reduction == 0 else np.abs(x - y).sum()
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(TypeError, match=r"reduction \(int64_t\) must be an integer"):
        aclnn_py.call("aclnnL1Loss", x, y, 0.0)
