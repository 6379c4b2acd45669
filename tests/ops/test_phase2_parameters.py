"""Operators whose phase 2 takes parameters besides CANN's usual four (ops-cv's
aclnnGaussianBlur takes phase 1's again, between the executor and the stream): read from
their headers, shown by ``signature()``, called with phase 1's objects (or the arguments given
for parameters only phase 2 has), and exported by the emulator with the real prototype, its
phase 2 checking them as CANN's does."""

from __future__ import annotations

import re
import stat
from pathlib import Path

import numpy as np
import pytest
from conftest import LowLevelResources

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.emulator import _kernels
from aclnn_py.errors import AclError
from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers

BLUR = "aclnnGaussianBlur"
BLUR_PHASE2 = (("const aclTensor *", "src"), ("const aclIntArray *", "ksize"),
               ("double", "sigmaX"), ("double", "sigmaY"), ("int64_t", "borderType"),
               ("aclTensor *", "dst"))

SHIFT = ("aclnnStatus aclnnShiftGetWorkspaceSize(const aclTensor *self, const aclIntArray *dims,\n"
         "    const aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);\n"
         "aclnnStatus aclnnShift(void *workspace, uint64_t workspaceSize,\n"
         "    aclOpExecutor *executor, const aclTensor *self, const aclIntArray *dims,\n"
         "    aclTensor *out, int64_t seed,\n"
         "    const aclrtStream stream);\n")


@pytest.fixture
def user_kernels():
    """Kernels the test registers are removed again afterwards."""
    before = dict(_kernels.table())
    yield
    for name in set(_kernels.KERNELS) - set(before):
        del _kernels.KERNELS[name]
        ll.register_kernel(name, False)
    _kernels.KERNELS.update(before)


# ---- the header ----------------------------------------------------------------------------

def test_a_phase_2_with_parameters_of_its_own_is_read():
    found = _headers.operator(SHIFT, "aclnnShift", "h.h")
    assert [(p.c_type, p.name) for p in found.parameters] == [
        ("const aclTensor *", "self"), ("const aclIntArray *", "dims"),
        ("const aclTensor *", "out")]
    assert [(p.c_type, p.name) for p in found.phase2_extra] == [
        ("const aclTensor *", "self"), ("const aclIntArray *", "dims"), ("aclTensor *", "out"),
        ("int64_t", "seed")]
    assert found.phase2_types == ("void *", "uint64_t", "aclOpExecutor *", "const aclTensor *",
                                  "const aclIntArray *", "aclTensor *", "int64_t",
                                  "const aclrtStream")
    usual = _headers.operator(SHIFT.replace("Shift", "Plain").split("aclnnStatus aclnnPlain(")[0]
                              + "aclnnStatus aclnnPlain(void *w, uint64_t n, aclOpExecutor *e, "
                                "aclrtStream s);", "aclnnPlain", "h.h")
    assert usual.phase2_extra == () and usual.phase2_types == _headers.PHASE2_TYPES


@pytest.mark.parametrize("phase2, why", [
    ("const aclTensor *self, int64_t dims, aclTensor *out",
     "phase 2's int64_t dims is not phase 1's const aclIntArray *dims"),
    ("const aclTensor *self, const aclTensor *self", "phase 2 names self twice"),
])
def test_a_phase_2_parameter_unlike_phase_1_s_of_its_name_is_refused(phase2, why):
    text = SHIFT.split("aclnnStatus aclnnShift(")[0] + (
        "aclnnStatus aclnnShift(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,"
        f" {phase2}, aclrtStream stream);\n")
    with pytest.raises(_headers.HeaderError, match=re.escape(f"h.h:3: aclnnShift: {why}")):
        _headers.operator(text, "aclnnShift", "h.h")


# ---- aclnnGaussianBlur of the role table and the emulator's trees ---------------------------

def test_signature_shows_the_phase_2_and_its_roles():
    signature = aclnn_py.signature(BLUR)
    assert [(p.c_type, p.name) for p in signature.phase2] == list(BLUR_PHASE2)
    assert [p.name for p in signature.parameters] == [name for _, name in BLUR_PHASE2]
    assert signature.phase2_only == ()
    roles = {p.name: p.role for p in signature.phase2}
    assert roles == {"src": "input", "ksize": "attribute", "sigmaX": "attribute",
                     "sigmaY": "attribute", "borderType": "attribute", "dst": "output"}
    text = str(signature)
    assert ("aclnnStatus aclnnGaussianBlur(\n    void *workspace,\n    uint64_t workspaceSize,\n"
            "    aclOpExecutor *executor,\n    const aclTensor *src,") in text
    assert "    aclTensor *dst,\n    aclrtStream stream);" in text
    assert "phase 2 is passed phase 1's src, ksize, sigmaX, sigmaY, borderType, dst again" in text


def _blur_kernel(seen: list) -> None:
    @aclnn_py.emulator.kernel(BLUR, dtypes=["float32"])
    def blur(src, ksize, sigmaX, sigmaY, borderType, dst):
        seen.append((ksize, sigmaX, sigmaY, borderType))
        dst[...] = src * 2 + borderType


@pytest.mark.emulator_only
def test_call_passes_phase_1_s_objects_to_phase_2(user_kernels):
    seen: list = []
    _blur_kernel(seen)
    image = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(aclnn_py.call(BLUR, image, [3, 5], 1.5, 0.0, 4), image * 2 + 4)
    assert seen == [((3, 5), 1.5, 0.0, 4)]
    # On the device, through the launch cache: every launch is a phase 1 and a phase 2.
    aclnn_py.synchronize()
    before = aclnn_py.emulator.stats()
    on_device = aclnn_py.to_device(image)
    results = [aclnn_py.call(BLUR, on_device, (1, 1), 0.5, 0.5, k) for k in (0, 1, 2)]
    for k, result in enumerate(results):
        np.testing.assert_array_equal(result.numpy(), image * 2 + k)
    after = aclnn_py.emulator.stats()
    assert after["kernels_executed"] - before["kernels_executed"] == 3
    assert after["live_executors"] == before["live_executors"]


def _library() -> str:
    signature = aclnn_py.signature(BLUR)
    return str(_catalog.bind(signature))


@pytest.mark.emulator_only
def test_the_emulator_s_phase_2_checks_its_parameters_as_cann_s_does(device, user_kernels):
    # ops-cv experimental/image/gaussian_blur/op_api/aclnn_gaussian_blur.cpp: phase 2 checks
    # src, ksize and dst again (a NULL one is ACLNN_ERR_PARAM_NULLPTR) and returns before
    # running the executor, which stays the caller's.
    _blur_kernel([])
    library = _library()
    s = LowLevelResources()
    try:
        image = np.arange(6, dtype=np.float32).reshape(2, 3)
        tensors, pointers = [], []
        for _ in range(3):
            pointer = ll.malloc(image.nbytes)
            s.pointers.append(pointer)
            pointers.append(pointer)
            ll.memcpy(pointer, image.nbytes, ffi.from_buffer(image), image.nbytes,
                      ll.MEMCPY_HOST_TO_DEVICE)
            tensors.append(ll.create_tensor((2, 3), ll.constant("ACL_FLOAT"), (3, 1), 0,
                                            (6,), pointer))
            s.tensors.append(tensors[-1])
        src, dst, freed = tensors
        ksize = ll.create_int_array((3, 3))
        phase2 = ll.operator_phase2(BLUR, library)
        try:
            live = aclnn_py.emulator.stats()["live_executors"]
            _, executor = ll.operator_workspace_size(BLUR, src, ksize, 1.5, 1.5, 4, dst,
                                                     library=library)
            status = phase2(ll.NULL, 0, executor, ll.NULL, ksize, 1.5, 1.5, 4, dst, s.stream)
            assert status == ll.constant("ACLNN_ERR_PARAM_NULLPTR") == 161001
            with pytest.raises(AclError, match="aclnnGaussianBlur: src is NULL"):
                ll.check(status, BLUR)
            ll.destroy_tensor(freed)
            s.tensors.remove(freed)
            status = phase2(ll.NULL, 0, executor, src, ksize, 1.5, 1.5, 4, freed, s.stream)
            with pytest.raises(AclError, match="dst.*not a live aclTensor"):
                ll.check(status, BLUR)
            assert aclnn_py.emulator.stats()["live_executors"] == live + 1  # still the caller's
            ll.check(phase2(ll.NULL, 0, executor, src, ksize, 1.5, 1.5, 4, dst, s.stream), BLUR)
            ll.synchronize_stream(s.stream)
            assert aclnn_py.emulator.stats()["live_executors"] == live  # consumed by its run
        finally:
            ll.destroy_int_array(ksize)
        result = np.empty_like(image)
        ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes, pointers[1],
                  result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
        np.testing.assert_array_equal(result, image * 2 + 4)
    finally:
        s.release()


# ---- a parameter only phase 2 takes ---------------------------------------------------------

@pytest.fixture
def shift_package(tmp_path: Path, fresh_catalog) -> Path:
    """A custom package declaring aclnnShift (no library, no description), made the one
    ASCEND_CUSTOM_OPP_PATH names."""
    package = tmp_path / "pkg"
    include = package / "op_api" / "include"
    include.mkdir(parents=True)
    (include / "aclnn_shift.h").write_text(SHIFT)
    for path in [package, *package.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    return package


@pytest.mark.emulator_only
def test_a_parameter_only_phase_2_takes_is_given_after_phase_1_s(shift_package, user_kernels):
    signature = aclnn_py.signature("aclnnShift")
    assert [p.name for p in signature.parameters] == ["self", "dims", "out", "seed"]
    assert [p.name for p in signature.phase1_parameters] == ["self", "dims", "out"]
    assert signature.phase2_only == ("seed",)
    assert "phase 2 also takes seed, given after phase 1's parameters" in str(signature)
    seen = []

    @aclnn_py.emulator.kernel("aclnnShift", dtypes=["float32"])
    def shift(self, dims, out):  # a kernel is given phase 1's parameters
        seen.append(dims)
        out[...] = self + sum(dims)

    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnShift", x, [1, 2], 7), x + 3)
    np.testing.assert_array_equal(aclnn_py.call("aclnnShift", x, dims=[4], seed=1), x + 4)
    assert seen == [(1, 2), (4,)]
    with pytest.raises(TypeError, match="aclnnShift is missing seed"):
        aclnn_py.call("aclnnShift", x, [1])
    with pytest.raises(TypeError, match=r"aclnnShift: seed \(int64_t\) must be an integer"):
        aclnn_py.call("aclnnShift", x, [1], "7")
