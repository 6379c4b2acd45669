"""Values reach the emulator's kernels exactly (aclScalar of every dtype, 64-bit integers
beyond 2**53, unsigned 64-bit attributes, aclIntArray), and aclCreateTensor / aclCreateScalar
take the data types CANN's take, the operators then refusing the ones they do not support."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from conftest import LowLevelResources

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py._c._ffi import ffi
from aclnn_py.emulator import _kernels
from aclnn_py.errors import AclError
from aclnn_py.ops import catalog

pytestmark = pytest.mark.emulator_only

BIG = 2**62 + 1  # no double holds it: 2**62 and 2**62 + 1 round to the same one
PARAM_INVALID = 161002


@pytest.fixture
def user_kernels():
    """Kernels the test registers are removed again afterwards (builtin ones restored)."""
    before = dict(_kernels.table())
    yield
    for name in set(_kernels.KERNELS) - set(before):
        del _kernels.KERNELS[name]
        ll.register_kernel(name, False)
    _kernels.KERNELS.update(before)
    for name in before:
        ll.register_kernel(name)


@pytest.fixture
def s(device):
    resources = LowLevelResources()
    yield resources
    resources.release()


# ---- exact values ---------------------------------------------------------------------------


@pytest.mark.parametrize("on_device", [False, True], ids=["numpy", "device"])
def test_an_int64_scalar_beyond_2_53_reaches_the_kernel_exactly(on_device):
    x = np.array([0, 1, -3], np.int64)
    given = aclnn_py.to_device(x) if on_device else x
    result = aclnn_py.call("aclnnAdds", given, BIG, 1)
    got = result.numpy() if on_device else result
    assert got.tolist() == [BIG, BIG + 1, BIG - 3]


def test_fill_scalar_writes_an_int64_exactly():
    values = np.zeros(3, np.int64)
    aclnn_py.call("aclnnInplaceFillScalar", values, np.int64(-(2**63) + 1))
    assert values.tolist() == [-(2**63) + 1] * 3


# The first ones lost bits through a double before (an int64 beyond 2**53, a uint64, a complex's
# imaginary part); the others kept them and must still.
SCALARS = [np.int64(BIG), np.uint64(2**64 - 1), np.uint64(2**63 + 3), np.complex64(1.5 - 2.25j),
           np.complex128(1e300 + 3.0j), np.int64(-(2**63)), np.float16(65504.0),
           np.float16(2.0**-24), ml_dtypes.bfloat16(3.140625), np.bool_(True), np.float64(0.1),
           np.int8(-128), np.uint32(2**32 - 1)]


def test_a_kernel_receives_every_scalar_dtype_exactly(user_kernels):
    seen = []

    @aclnn_py.emulator.kernel("aclnnAdds")
    def adds(self, other, alpha, out):
        seen.append(other)
        out[...] = self

    for value in SCALARS:
        aclnn_py.call("aclnnAdds", np.zeros(2, np.float32), value, 1)
    assert [(got.dtype, got.tobytes()) for got in seen] == \
        [(np.asarray(value).dtype, np.asarray(value).tobytes()) for value in SCALARS]


def test_integer_attributes_and_int_arrays_arrive_exactly(user_kernels):
    seen = []

    @aclnn_py.emulator.kernel("aclnnEmbeddingDenseBackward")
    def embedding_dense_backward(grad, indices, numWeights, paddingIdx, scaleGradByFreq, out):
        seen.append((numWeights, paddingIdx))

    # aclnnRoll's phase-1 rules judge neither shifts' values nor dims' (aclnnFlip's dims must
    # be dims of self: ops-nn index/reverse_v2/op_api/aclnn_flip.cpp CheckDims)
    @aclnn_py.emulator.kernel("aclnnRoll")
    def roll(x, shifts, dims, out):
        seen.append(shifts)

    aclnn_py.call("aclnnEmbeddingDenseBackward", np.ones((2, 3), np.float32),
                  np.zeros(2, np.int64), 2**64 - 1, 2**63, False,
                  out=np.empty((4, 3), np.float32))
    aclnn_py.call("aclnnRoll", np.ones(2, np.float32), [BIG, -(2**63), 2**63 - 1], [0, 0, 0])
    assert seen == [(2**64 - 1, 2**63), (BIG, -(2**63), 2**63 - 1)]


# ---- aclCreateTensor and aclCreateScalar take CANN's data types ----------------------------

# Every member of CANN 8.5's aclDataType (hicann/runtime include/external/acl/acl_base_rt.h).
MEMBERS = ["ACL_DT_UNDEFINED", "ACL_FLOAT", "ACL_FLOAT16", "ACL_INT8", "ACL_INT32", "ACL_UINT8",
           "ACL_INT16", "ACL_UINT16", "ACL_UINT32", "ACL_INT64", "ACL_UINT64", "ACL_DOUBLE",
           "ACL_BOOL", "ACL_STRING", "ACL_COMPLEX64", "ACL_COMPLEX128", "ACL_BF16", "ACL_INT4",
           "ACL_UINT1", "ACL_COMPLEX32", "ACL_HIFLOAT8", "ACL_FLOAT8_E5M2", "ACL_FLOAT8_E4M3FN",
           "ACL_FLOAT8_E8M0", "ACL_FLOAT6_E3M2", "ACL_FLOAT6_E2M3", "ACL_FLOAT4_E2M1",
           "ACL_FLOAT4_E1M2"]


@pytest.mark.parametrize("member", MEMBERS)
def test_create_tensor_takes_every_data_type_and_keeps_it(s, member):
    dtype = ll.constant(member)
    tensor = ll.create_tensor((2, 3), dtype, (3, 1), 0, (6,), ll.NULL)
    s.tensors.append(tensor)
    assert ll.get_data_type(tensor) == dtype
    assert ll.get_view_shape(tensor) == (2, 3)


def test_a_data_type_outside_acl_data_type_is_kept_as_undefined(s):
    tensor = ll.create_tensor((4,), 18, (1,), 0, (4,), ll.NULL)  # ge's DT_QINT8: no aclDataType
    s.tensors.append(tensor)
    assert ll.get_data_type(tensor) == ll.constant("ACL_DT_UNDEFINED")


def test_sub_byte_data_types_count_packed_bytes():
    # 2**61 float4 elements are 2**60 bytes; as 4-byte floats they would overflow int64.
    shape = (2**61,)
    tensor = ll.create_tensor(shape, ll.constant("ACL_FLOAT4_E2M1"), (1,), 0, shape, ll.NULL)
    ll.destroy_tensor(tensor)
    with pytest.raises(AclError, match="overflows int64"):
        ll.create_tensor(shape, ll.constant("ACL_FLOAT"), (1,), 0, shape, ll.NULL)


def _phase1(operator, *arguments):
    """Phase 1 of a generic operator (bound as aclnn_py.call binds it): the AclError raised."""
    _kernels.install_once()
    library = catalog.bind(catalog.signature(operator))
    with pytest.raises(AclError) as info:
        ll.operator_workspace_size(operator, *arguments, library=str(library))
    return info.value


def _device_tensor(s, shape, dtype, nbytes):
    pointer = ll.malloc(nbytes)
    s.pointers.append(pointer)
    strides = tuple(int(np.prod(shape[i + 1:])) for i in range(len(shape)))
    tensor = ll.create_tensor(shape, dtype, strides, 0, shape, pointer)
    s.tensors.append(tensor)
    return tensor


def _float_tensor(s, shape):
    return _device_tensor(s, shape, ll.constant("ACL_FLOAT"), 4 * int(np.prod(shape)))


UNSUPPORTED = ["ACL_DT_UNDEFINED", "ACL_STRING", "ACL_FLOAT4_E2M1", "ACL_INT4", "ACL_UINT1",
               "ACL_FLOAT6_E3M2", "ACL_HIFLOAT8", "ACL_COMPLEX32"]


# The emulator's C operators: their arguments, "t" a float32 (2, 3) tensor, "a" a float alpha.
C_OPERATORS = {"aclnnAdd": "ttat", "aclnnInplaceAdd": "tta", "aclnnMseLoss": "tt0t",
               "aclnnMseLossBackward": "ttt0t", "aclnnL1Loss": "tt0t",
               "aclnnL1LossBackward": "ttt0t", "aclnnSmoothL1Loss": "tt0bt",
               "aclnnSmoothL1LossBackward": "ttt0bt"}


@pytest.mark.parametrize("member", UNSUPPORTED)
@pytest.mark.parametrize("operator", C_OPERATORS)
def test_the_c_operators_refuse_a_data_type_they_do_not_support(s, operator, member):
    pattern = C_OPERATORS[operator]
    for position in [i for i, kind in enumerate(pattern) if kind == "t"]:
        arguments = []
        for index, kind in enumerate(pattern):
            if kind == "t":
                arguments.append(_device_tensor(s, (2, 3), ll.constant(member), 64)
                                 if index == position else _float_tensor(s, (2, 3)))
            elif kind == "a":
                alpha = ll.create_scalar(ffi.new("float *", 1.0), ll.constant("ACL_FLOAT"))
                s.scalars.append(alpha)
                arguments.append(alpha)
            else:
                arguments.append(0 if kind == "0" else 1.0)
        with pytest.raises(AclError) as info:
            ll.operator_workspace_size(operator, *arguments)
        assert info.value.status == PARAM_INVALID, (position, info.value.message)
        assert "dtype" in info.value.message


@pytest.mark.parametrize("member", UNSUPPORTED)
def test_an_input_of_a_data_type_the_operator_does_not_take_is_refused(s, member):
    # aclnnAbs's phase-1 rules refuse it before any kernel is asked: its dtype list
    # (ops-math math/abs/op_api/aclnn_abs.cpp CheckDtypeValid) has none of these on Atlas A2
    odd = _device_tensor(s, (2, 3), ll.constant(member), 64)
    error = _phase1("aclnnAbs", odd, _float_tensor(s, (2, 3)))
    assert error.status == PARAM_INVALID
    # the operator's phase-1 rules refuse it, naming it (its dtype list lacks it); or its
    # kernel does, when CANN takes the dtype and numpy has none for it (complex32)
    assert "self has " in error.message
    assert f"aclDataType {ll.constant(member)}" in error.message


def test_an_output_of_a_data_type_without_numpy_dtype_is_refused(s):
    odd = _device_tensor(s, (2, 3), ll.constant("ACL_FLOAT4_E2M1"), 64)
    error = _phase1("aclnnAbs", _float_tensor(s, (2, 3)), odd)
    assert error.status == PARAM_INVALID and "out has aclDataType 40" in error.message


# CANN's aclScalar takes these (hicann/opbase src/nnopbase/common/utils/common_types.cpp), the
# 8-, 6- and 4-bit floats as one byte, and no other.
SCALAR_MEMBERS = ["ACL_HIFLOAT8", "ACL_FLOAT8_E5M2", "ACL_FLOAT8_E4M3FN", "ACL_FLOAT8_E8M0",
                  "ACL_FLOAT6_E3M2", "ACL_FLOAT6_E2M3", "ACL_FLOAT4_E2M1", "ACL_FLOAT4_E1M2"]
NOT_SCALARS = ["ACL_DT_UNDEFINED", "ACL_STRING", "ACL_INT4", "ACL_UINT1", "ACL_COMPLEX32"]


@pytest.mark.parametrize("member", SCALAR_MEMBERS)
def test_create_scalar_takes_the_narrow_floats_and_kernels_refuse_them(s, member):
    value = ll.create_scalar(ffi.new("uint8_t *", 0x3C), ll.constant(member))
    s.scalars.append(value)
    x, out = _float_tensor(s, (3,)), _float_tensor(s, (3,))
    alpha = ll.create_scalar(ffi.new("float *", 1.0), ll.constant("ACL_FLOAT"))
    s.scalars.append(alpha)
    error = _phase1("aclnnAdds", x, value, alpha, out)
    assert error.status == PARAM_INVALID
    # CANN checks no list of aclnnAdds' scalar dtypes: a floating self keeps its dtype whatever
    # the scalar's (hicann/ops-math math/add/op_api/aclnn_add.cpp, PromoteTypeScalar); the
    # refusal is the emulator's Python kernels', which have no numpy dtype for these.
    assert f"other has aclDataType {ll.constant(member)} ({member}), which has no numpy dtype" \
        in error.message
    for refused in NOT_SCALARS:  # and still refuses what CANN's refuses
        with pytest.raises(AclError, match="not supported for a scalar"):
            ll.create_scalar(ffi.new("int64_t *", 1), ll.constant(refused))


# ---- outputs whose extent depends on the data --------------------------------------------


def _host_tensor(s, array):
    """A device copy of a C-contiguous ``array`` as an aclTensor, and a reader of its memory."""
    pointer = ll.malloc(max(array.nbytes, 1))
    s.pointers.append(pointer)
    ll.memcpy(pointer, array.nbytes, ffi.from_buffer(array), array.nbytes,
              ll.MEMCPY_HOST_TO_DEVICE)
    strides = tuple(st // array.itemsize for st in array.strides)
    tensor = ll.create_tensor(array.shape, _ACL[array.dtype], strides, 0, (array.size,), pointer)
    s.tensors.append(tensor)

    def read():
        result = np.empty_like(array)
        ll.memcpy(ffi.from_buffer(result, require_writable=True), result.nbytes, pointer,
                  result.nbytes, ll.MEMCPY_DEVICE_TO_HOST)
        return result

    return tensor, read


_ACL = {np.dtype(np.float32): ll.constant("ACL_FLOAT"), np.dtype(np.bool_): ll.constant("ACL_BOOL")}


def test_masked_select_s_phase_2_gives_out_its_real_view_shape(s):
    _kernels.install_once()
    library = str(catalog.bind(catalog.signature("aclnnMaskedSelect")))
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    self_, _ = _host_tensor(s, values)
    mask, _ = _host_tensor(s, np.array([True, False, True]))
    out, read = _host_tensor(s, np.full(6, -1.0, np.float32))
    size, executor = ll.operator_workspace_size("aclnnMaskedSelect", self_, mask, out,
                                                library=library)
    before = aclnn_py.emulator.stats()["sync_calls"]
    ll.operator_launcher("aclnnMaskedSelect", library)(ll.NULL, size, executor, s.stream)
    # CANN's launch of this operator waits for the stream and refreshes out's shape.
    assert aclnn_py.emulator.stats()["sync_calls"] == before + 1
    assert ll.get_view_shape(out) == (4,)
    assert ll.get_view_strides(out) == (1,)
    assert ll.get_storage_shape(out) == (4,)
    assert read().tolist() == [0.0, 2.0, 3.0, 5.0, -1.0, -1.0]


def test_a_reported_extent_larger_than_the_output_fails_the_kernel(user_kernels):
    @aclnn_py.emulator.kernel("aclnnMaskedSelect")
    def too_many(self, mask, out):
        _kernels.report_extent(out, (out.size + 1,))

    x = aclnn_py.to_device(np.ones(3, np.float32))
    with pytest.raises(AclError) as info:
        aclnn_py.call("aclnnMaskedSelect", x, aclnn_py.to_device(np.ones(3, np.bool_)))
    assert "the extent reported for out" in info.value.message
    aclnn_py.synchronize()


def test_an_extent_is_reported_for_an_output_of_the_running_kernel_only(user_kernels):
    kept = []

    @aclnn_py.emulator.kernel("aclnnMaskedSelect")
    def wrong(self, mask, out):
        kept.append(out)
        _kernels.report_extent(self, (1,))

    with pytest.raises(AclError, match="report_extent takes an output tensor"):
        aclnn_py.call("aclnnMaskedSelect", np.ones(3, np.float32), np.ones(3, np.bool_))
    with pytest.raises(ValueError, match="report_extent takes an output tensor"):
        _kernels.report_extent(np.zeros(3, np.float32), (1,))


def test_an_output_destroyed_before_its_kernel_ran_is_left_alone(s, user_kernels):
    reported = []

    @aclnn_py.emulator.kernel("aclnnSinc")  # phase 2 does not wait for this one
    def sinc(self, out):
        _kernels.report_extent(out, (1,))
        reported.append(True)

    _kernels.install_once()
    library = str(catalog.bind(catalog.signature("aclnnSinc")))
    x, _ = _host_tensor(s, np.ones(4, np.float32))
    out, _ = _host_tensor(s, np.ones(4, np.float32))
    size, executor = ll.operator_workspace_size("aclnnSinc", x, out, library=library)
    ll.operator_launcher("aclnnSinc", library)(ll.NULL, size, executor, s.stream)
    assert ll.get_view_shape(out) == (4,)  # not run yet
    ll.destroy_tensor(s.tensors.pop())
    ll.synchronize_stream(s.stream)  # the report finds no tensor to give it to
    assert reported == [True]


def _e1m2(code):  # sign, 1 exponent bit (bias 1), 2 mantissa bits; subnormal m / 4
    e, m = (code >> 2) & 1, code & 3
    return (-1.0 if code & 8 else 1.0) * ((1 + m / 4) if e else m / 4)


NARROW = {
    "ACL_FLOAT8_E5M2": (256, lambda c: float(np.uint8(c).view(ml_dtypes.float8_e5m2))),
    "ACL_FLOAT8_E4M3FN": (256, lambda c: float(np.uint8(c).view(ml_dtypes.float8_e4m3fn))),
    "ACL_FLOAT6_E3M2": (64, lambda c: float(np.uint8(c).view(ml_dtypes.float6_e3m2fn))),
    "ACL_FLOAT6_E2M3": (64, lambda c: float(np.uint8(c).view(ml_dtypes.float6_e2m3fn))),
    "ACL_FLOAT4_E2M1": (16, lambda c: float(np.uint8(c).view(ml_dtypes.float4_e2m1fn))),
    "ACL_FLOAT4_E1M2": (16, _e1m2),
    # CANN's E8M0 reads 0 as zero (ml_dtypes: 2**-127)
    "ACL_FLOAT8_E8M0": (256, lambda c: 0.0 if c == 0 else float("nan") if c == 255
                        else 2.0 ** (c - 127)),
    # HiFloat8 at points its encoding fixes (1.0, a mantissa step, the exponent's sign, a
    # denormal, the largest finite, the infinities)
    "ACL_HIFLOAT8": ([0x08, 0x09, 0x10, 0x18, 0x01, 0x6E, 0x88, 0x00, 0x6F, 0xEF],
                     {0x08: 1.0, 0x09: 1.125, 0x10: 2.0, 0x18: 0.5, 0x01: 2.0**-22,
                      0x6E: 32768.0, 0x88: -1.0, 0x00: 0.0, 0x6F: np.inf, 0xEF: -np.inf}.get),
}


@pytest.mark.parametrize("member", NARROW)
def test_a_narrow_float_alpha_counts_as_cann_converts_it(s, member):
    codes, reference = NARROW[member]
    out, read = _host_tensor(s, np.zeros(1, np.float32))
    one, _ = _host_tensor(s, np.ones(1, np.float32))
    zero, _ = _host_tensor(s, np.zeros(1, np.float32))
    for code in codes if isinstance(codes, list) else range(codes):
        expected = reference(code)
        if np.isnan(expected):
            continue  # a NaN alpha counts as 1 (CANN's test !(alpha > 1 || alpha < 1))
        alpha = ll.create_scalar(ffi.new("uint8_t *", code), ll.constant(member))
        try:
            size, executor = ll.operator_workspace_size("aclnnAdd", zero, one, alpha, out)
            ll.operator_launch("aclnnAdd", ll.NULL, size, executor, s.stream)
            ll.synchronize_stream(s.stream)
        finally:
            ll.destroy_scalar(alpha)
        assert read()[0] == np.float32(expected), (hex(code), read()[0], expected)
