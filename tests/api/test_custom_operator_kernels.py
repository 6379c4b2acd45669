"""A custom operator package with headers and an operator description but no library, on the
emulator: a kernel registered with ``aclnn_py.emulator.kernel`` stands in for the missing
``libcust_opapi.so``, reached through the emulator's generic entry points."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest
from conftest import no_device_work

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.emulator import _kernels

pytestmark = pytest.mark.emulator_only

HEADERS = {
    "aclnn_scale_custom.h": """
__attribute__((visibility("default")))
aclnnStatus aclnnScaleCustomGetWorkspaceSize(const aclTensor *x, double alpha,
    const aclTensor *z, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default")))
aclnnStatus aclnnScaleCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
""",
    "aclnn_count_custom.h": """
__attribute__((visibility("default")))
aclnnStatus aclnnCountCustomGetWorkspaceSize(const aclTensor *x, uint64_t count,
    const aclTensor *z, uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default")))
aclnnStatus aclnnCountCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
""",
    "aclnn_mix_custom.h": """
__attribute__((visibility("default")))
aclnnStatus aclnnMixCustomGetWorkspaceSize(const aclTensorList *x, const aclFloatArray *weights,
    const aclBoolArray *mask, const aclIntArray *dims, const aclScalar *bias, char *mode,
    int64_t axis, bool flip, const aclTensor *shiftOptional, const aclTensor *out,
    uint64_t *workspaceSize, aclOpExecutor **executor);
__attribute__((visibility("default")))
aclnnStatus aclnnMixCustom(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
    aclrtStream stream);
""",
}

OPS_INFO = """{
 "ScaleCustom": {"input0": {"name": "x", "paramType": "required"},
                 "output0": {"name": "z", "paramType": "required"}},
 "CountCustom": {"input0": {"name": "x", "paramType": "required"},
                 "output0": {"name": "z", "paramType": "required"}},
 "MixCustom": {"input0": {"name": "x", "paramType": "dynamic"},
               "input1": {"name": "shiftOptional", "paramType": "optional"},
               "output0": {"name": "out", "paramType": "required"}}
}"""


@pytest.fixture
def header_only_package(tmp_path: Path, fresh_catalog) -> Path:
    """A package with two operators' headers and their description, and no library, made
    the one ASCEND_CUSTOM_OPP_PATH names; kernels the test registers go afterwards."""
    package = tmp_path / "pkg"
    include = package / "op_api" / "include"
    info = package / "op_impl" / "ai_core" / "tbe" / "config" / "ascend910b"
    include.mkdir(parents=True)
    info.mkdir(parents=True)
    for name, text in HEADERS.items():
        (include / name).write_text(text)
    (info / "aic-ascend910b-ops-info.json").write_text(OPS_INFO)
    for path in [package, *package.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    before = dict(_kernels.table())  # every family loaded: only the test's kernels go
    yield package
    for name in set(_kernels.KERNELS) - set(before):
        del _kernels.KERNELS[name]
        ll.register_kernel(name, False)
    _kernels.KERNELS.update(before)


def _scale_kernel() -> None:
    @aclnn_py.emulator.kernel("aclnnScaleCustom", dtypes=["float32", "float16"])
    def scale(x, alpha, z):
        z[...] = (x.astype(np.float32) * alpha).astype(z.dtype)


def test_without_a_kernel_the_missing_library_is_named_with_the_way_out(header_only_package):
    library = header_only_package / "op_api" / "lib" / "libcust_opapi.so"
    assert "aclnnScaleCustom" not in aclnn_py.operators(callable=True)
    with no_device_work(), pytest.raises(aclnn_py.LibraryNotFoundError) as info:
        aclnn_py.call("aclnnScaleCustom", np.ones(3, np.float32), 2.0)
    assert f"its library {library} is missing" in str(info.value)
    assert "aclnn_py.emulator.kernel('aclnnScaleCustom') stands in for it" in str(info.value)


def test_a_registered_kernel_stands_in_for_the_library(header_only_package, aclnn_leak_check):
    _scale_kernel()
    assert "aclnnScaleCustom" in aclnn_py.operators(callable=True)
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(aclnn_py.call("aclnnScaleCustom", x, 2.5), x * np.float32(2.5))
    half = x.astype(np.float16)
    np.testing.assert_array_equal(aclnn_py.call("aclnnScaleCustom", half, -1.0), -half)
    # device arrays, a stream of their own, and repeated calls through the launch cache
    with aclnn_py.Stream() as stream:
        x_d = aclnn_py.to_device(x)
        results = [aclnn_py.call("aclnnScaleCustom", x_d, float(k), stream=stream)
                   for k in range(3)]
        for k, result in enumerate(results):
            np.testing.assert_array_equal(result.numpy(), x * np.float32(k))


def test_a_bad_dtype_is_refused_at_phase_1_without_a_launch(header_only_package):
    _scale_kernel()
    x = aclnn_py.to_device(np.ones(4, np.int32))
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()
    with pytest.raises(aclnn_py.AclError) as info:
        aclnn_py.call("aclnnScaleCustom", x, 2.0)
    after = aclnn_py.emulator.stats()
    assert info.value.status == 161002
    assert info.value.api == "aclnnScaleCustomGetWorkspaceSize"
    assert "x has dtype int32, which aclnnScaleCustom does not support" in info.value.message
    assert after["kernel_launches"] == before["kernel_launches"]
    assert after["live_executors"] == before["live_executors"]


def test_every_kind_of_argument_reaches_the_kernel_as_given(header_only_package):
    seen = {}

    @aclnn_py.emulator.kernel("aclnnMixCustom")
    def mix(x, weights, mask, dims, bias, mode, axis, flip, shiftOptional, out):
        seen.update(weights=weights, mask=mask, dims=dims, bias=bias, mode=mode, axis=axis,
                    flip=flip, shift=shiftOptional, writable=[m.flags.writeable for m in x])
        total = sum(w * m for w, m, keep in zip(weights, x, mask) if keep) + bias
        if shiftOptional is not None:
            total = total + shiftOptional
        out[...] = total[::-1] if flip else total

    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 10, np.float32)
    got = aclnn_py.call("aclnnMixCustom", [a, b], [0.5, 2.0], [True, False], [1, -2],
                        1.5, "sum", 7, True, None)
    np.testing.assert_array_equal(got, (0.5 * a + 1.5)[::-1])
    assert seen == {"weights": (0.5, 2.0), "mask": (True, False), "dims": (1, -2),
                    "bias": np.float32(1.5), "mode": "sum", "axis": 7, "flip": True,
                    "shift": None, "writable": [False, False]}
    shift = np.full(4, 100, np.float32)
    got = aclnn_py.call("aclnnMixCustom", [a, b], [1.0, 1.0], [True, True], [], 0.0, "x", 0,
                        False, shift)
    np.testing.assert_array_equal(got, a + b + shift)
    assert seen["shift"] is not None and not seen["shift"].flags.writeable


@pytest.mark.parametrize("change, status, words", [
    (dict(op=b"ScaleCustom"), 161002, 'op must be an operator name "aclnn<Name>"'),
    (dict(kind=0), 161002, "not an aclemuArgKind"),
    (dict(role=b"w"), 161002, "not 'i', 'o' or 'u'"),
    (dict(count=300), 161002, "outside [0, 256]"),
    (dict(params=None), 161001, "params is NULL"),
])
def test_the_generic_entry_refuses_a_bad_description(change, status, words):
    op = change.get("op", b"aclnnDescribedCustom")
    names = [ffi.new("char[]", b"x"), ffi.new("char[]", b"z")]
    params = ffi.new("aclemuGenericParam[2]")
    for cell, name, role in zip(params, names, (b"i", b"o")):
        cell.name, cell.kind, cell.role = name, change.get("kind", 1), change.get("role", role)
    values = ffi.new("aclemuGenericValue[2]")
    size, executor = ffi.new("uint64_t *"), ffi.new("aclOpExecutor **")
    ll.libraries()  # loaded
    function = ll.OPS.aclemuGenericGetWorkspaceSize
    given = ffi.NULL if "params" in change else params
    result = function(op, change.get("count", 2), given, values, size, executor)
    assert result == status
    assert words in ll.recent_error_message()
    assert executor[0] == ffi.NULL


def test_a_described_operator_s_uint64_parameter_arrives_unsigned(header_only_package):
    seen = []

    @aclnn_py.emulator.kernel("aclnnCountCustom")
    def count(x, count, z):
        seen.append(count)

    for value in (2**64 - 1, 2**63, 5):
        aclnn_py.call("aclnnCountCustom", np.ones(2, np.float32), value)
    assert seen == [2**64 - 1, 2**63, 5]


def test_signature_and_operators_say_what_computes_a_package_operator(header_only_package):
    """Without its library or a kernel, a package's operator is declared but not computed;
    a registered kernel computes it (operators(computed=...), signature().computed_by)."""
    assert "aclnnScaleCustom" in aclnn_py.operators(computed=False)
    assert not aclnn_py.signature("aclnnScaleCustom").callable
    assert aclnn_py.signature("aclnnScaleCustom").computed_by == "not computed"
    _scale_kernel()
    assert "aclnnScaleCustom" in aclnn_py.operators(computed=True)
    assert aclnn_py.signature("aclnnScaleCustom").computed_by == "user kernel"
