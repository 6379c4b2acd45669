"""DeviceArray as an array: views that share memory, copy_from, astype, from_pointer,
data_ptr and asnumpy."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import aclnn_py
from aclnn_py.runtime.arrays import _reshaped_strides

RNG = np.random.default_rng(11)
HOST = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)

VIEWS = {
    "reshape": lambda a: a.reshape(6, 4),
    "reshape -1": lambda a: a.reshape(-1, 2),
    "T": lambda a: a.T,
    "transpose": lambda a: a.transpose(1, 0, 2),
    "integer": lambda a: a[1],
    "negative integer": lambda a: a[-1, -2],
    "step": lambda a: a[:, ::2],
    "ellipsis": lambda a: a[..., 1:3],
    "new axes": lambda a: a[None, 0, ..., None],
    "view of a view": lambda a: a[:, 1].T[1:],
    "offset and steps": lambda a: a[1:, :2, 1::2],
    "empty": lambda a: a[:, 3:],
    "0-d": lambda a: a[1, 2, 3],
}


def copies() -> int:
    return aclnn_py.emulator.stats()["memcpy_calls"]


@pytest.mark.parametrize("name", VIEWS)
def test_a_view_shows_what_numpys_shows_and_copies_nothing(name):
    array = aclnn_py.to_device(HOST)
    before = copies()
    view = VIEWS[name](array)
    assert copies() == before
    assert view.buffer is array.buffer and view.base is array
    expected = VIEWS[name](HOST)
    assert view.shape == expected.shape
    np.testing.assert_array_equal(view.numpy(), expected)


@pytest.mark.parametrize("name", ["T", "step", "ellipsis", "view of a view", "offset and steps"])
def test_operators_take_views_through_their_strides(name):
    array = aclnn_py.to_device(HOST)
    view = VIEWS[name](array)
    before = copies()
    added = aclnn_py.add(view, view, alpha=0.5)
    called = aclnn_py.call("aclnnMul", view, view)
    assert copies() == before  # the view's own memory is read: nothing is copied first
    expected = VIEWS[name](HOST)
    np.testing.assert_allclose(added.numpy(), expected * 1.5)
    np.testing.assert_allclose(called.numpy(), expected * expected)


def test_an_operator_writes_a_strided_view_in_place():
    array = aclnn_py.to_device(np.zeros((4, 4), np.float32))
    column = array[:, 1]
    aclnn_py.call("aclnnInplaceAdd", column, np.ones(4, np.float32), 3.0)
    expected = np.zeros((4, 4), np.float32)
    expected[:, 1] = 3
    np.testing.assert_array_equal(array.numpy(), expected)


def test_pending_work_through_a_view_is_waited_for_by_the_base_and_the_reverse():
    with aclnn_py.Stream() as stream:
        array = aclnn_py.to_device(np.zeros(8, np.float32))
        aclnn_py.call("aclnnInplaceAdd", array[2:4], np.ones(2, np.float32), 1.0)
        assert array.stream is stream  # the base knows of the work queued through its view
        assert "pending" in repr(array) and "pending" in repr(array[:1])
        np.testing.assert_array_equal(array.numpy(), [0, 0, 1, 1, 0, 0, 0, 0])
        result = aclnn_py.add(array, array)
        np.testing.assert_array_equal(result[2:4].numpy(), [2, 2])
    stream.close()


def test_reshape_refuses_what_would_need_a_copy_and_says_so():
    array = aclnn_py.to_device(HOST)
    with pytest.raises(ValueError, match="without a copy"):
        array.T.reshape(24)
    with pytest.raises(ValueError, match="cannot reshape an array of 24 elements"):
        array.reshape(5, 5)
    with pytest.raises(ValueError, match="one unknown dimension"):
        array.reshape(-1, -1)


def _strided_cases():
    """(shape, strides in elements, new shape) of views of a buffer, for the reshape check."""
    shape = st.lists(st.integers(1, 4), min_size=1, max_size=4)
    return shape.flatmap(lambda s: st.tuples(
        st.just(tuple(s)), st.permutations(range(len(s))),
        st.lists(st.integers(1, 2), min_size=len(s), max_size=len(s)),
        st.permutations(_factors(int(np.prod(s))))))


def _factors(n: int) -> list[int]:
    found, k = [], 2
    while n > 1:
        while n % k == 0:
            found.append(k)
            n //= k
        k += 1
    return found or [1]


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="numpy.reshape(copy=False) arrived in numpy 2.1")
@settings(max_examples=300, deadline=None)
@given(_strided_cases(), st.integers(0, 3))
def test_reshape_needs_a_copy_exactly_when_numpy_does(case, merge):
    shape, order, steps, factors = case
    base = np.arange(int(np.prod([n * k for n, k in zip(shape, steps)])) * 2, dtype=np.float32)
    full = base[: int(np.prod([n * k for n, k in zip(shape, steps)]))].reshape(
        [shape[i] * steps[i] for i in order])
    view = full[tuple(slice(None, None, steps[i]) for i in order)].transpose(np.argsort(order))
    split = max(1, min(merge, len(factors)))
    new_shape = (int(np.prod(factors[:split])), int(np.prod(factors[split:])))
    strides = tuple(s // view.itemsize for s in view.strides)
    ours = _reshaped_strides(view.shape, strides, new_shape)
    try:
        theirs = np.reshape(view, new_shape, copy=False)
    except ValueError:
        assert ours is None
        return
    assert ours is not None
    shown = np.lib.stride_tricks.as_strided(
        base[(view.__array_interface__["data"][0] - base.__array_interface__["data"][0])
             // 4:], new_shape, tuple(s * 4 for s in ours))
    np.testing.assert_array_equal(shown, theirs)


def test_indexing_refusals():
    array = aclnn_py.to_device(HOST)
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 0 with size 2"):
        array[3]
    with pytest.raises(IndexError, match="too many indices"):
        array[0, 0, 0, 0]
    with pytest.raises(IndexError, match="single ellipsis"):
        array[..., 0, ...]
    with pytest.raises(ValueError, match="negative step"):
        array[::-1]
    with pytest.raises(TypeError, match="would need a copy"):
        array[np.array([0, 1])]
    with pytest.raises(TypeError, match="would need a copy"):
        array[True]
    with pytest.raises(ValueError, match="not a permutation"):
        array.transpose(0, 0, 1)


def test_a_view_is_not_freed_by_itself_and_dies_with_its_base():
    array = aclnn_py.to_device(HOST)
    view = array[0]
    with pytest.raises(ValueError, match="is a view"):
        view.free()
    array.free()
    with pytest.raises(ValueError, match="freed"):
        view.numpy()
    with pytest.raises(ValueError, match="freed"):
        aclnn_py.add(view, view)


def test_copy_from_queues_a_staged_copy_and_casts_as_numpy_does():
    target = aclnn_py.empty((2, 3), np.float32)
    values = np.arange(3, dtype=np.int16)
    with aclnn_py.Stream() as stream:
        assert target.copy_from(values) is target  # broadcast over the rows, int16 -> float32
        assert target.stream is stream
        values[:] = 99  # staged at the call: the copy does not see this
        np.testing.assert_array_equal(target.numpy(), [[0, 1, 2], [0, 1, 2]])
        target[1].copy_from(np.full(3, 7.0))  # 12 bytes in: synchronous, on every release
        np.testing.assert_array_equal(target.numpy(), [[0, 1, 2], [7, 7, 7]])
    stream.close()
    with pytest.raises(TypeError, match="source cannot be copied.*same_kind"):
        aclnn_py.empty(3, np.int32).copy_from(np.ones(3))
    with pytest.raises(ValueError, match="source cannot be copied"):
        target.copy_from(np.ones(4))
    with pytest.raises(ValueError, match="C-contiguous"):
        target[:, 1].copy_from(np.ones(2))


@pytest.mark.parametrize("layout", ["8.3", "8.0.RC2"])
def test_copy_from_into_an_unaligned_view_works_on_releases_before_8_5(layout):
    """CANN before 8.5 refuses aclrtMemcpyAsync between addresses that are not 64-byte
    aligned; the emulator's older trees refuse it too."""
    from conftest import run_python

    home = aclnn_py.emulator.home(layout)
    done = run_python("""
        import numpy as np, aclnn_py
        target = aclnn_py.to_device(np.zeros((2, 3), np.float32))
        target[1].copy_from(np.full(3, 7.0))
        target[0].copy_from(np.arange(3))
        print(target.numpy().tolist())
    """, {"ACLNN_PY_BACKEND": "cann", "ACLNN_PY_CANN_HOME": home})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[[0.0, 1.0, 2.0], [7.0, 7.0, 7.0]]"


@pytest.mark.parametrize("dtype", ["float16", "int32", "bool", "float64"])
def test_astype_goes_through_aclnn_cast(dtype):
    array = aclnn_py.to_device(np.array([[0.0, 1.5], [-2.0, 3.0]], np.float32))
    cast = array.T.astype(dtype)
    assert cast.dtype == np.dtype(dtype) and cast.is_contiguous
    np.testing.assert_array_equal(cast.numpy(), array.numpy().T.astype(dtype))


def test_from_pointer_wraps_memory_it_never_frees():
    owner = aclnn_py.to_device(np.arange(12, dtype=np.float32))
    wrapped = aclnn_py.DeviceArray.from_pointer(owner.data_ptr() + 8, (2, 3), np.float32,
                                                strides=(4, 1), owner=owner)
    np.testing.assert_array_equal(wrapped.numpy(), [[2, 3, 4], [6, 7, 8]])
    aclnn_py.call("aclnnInplaceAdd", wrapped, np.ones((2, 3), np.float32), 1.0)
    wrapped.synchronize()  # another array over the same memory: its work is its own to wait
    np.testing.assert_array_equal(owner.numpy()[[2, 3, 4, 6, 7, 8]], [3, 4, 5, 7, 8, 9])
    assert wrapped.buffer.owner is owner
    assert wrapped.data_ptr() == owner.data_ptr() + 8  # described from the aligned address
    live = aclnn_py.emulator.stats()["live_allocations"]
    wrapped.free()  # retires the array; the memory is the owner's
    assert aclnn_py.emulator.stats()["live_allocations"] == live
    np.testing.assert_array_equal(owner.numpy()[:3], [0, 1, 3])
    assert owner.nbytes == 48 and owner.data_ptr() != 0


def test_from_pointer_refusals():
    with pytest.raises(ValueError, match="pointer is null"):
        aclnn_py.DeviceArray.from_pointer(0, (2,), np.float32)
    with pytest.raises(TypeError, match="pointer must be an int"):
        aclnn_py.DeviceArray.from_pointer(1.5, (2,), np.float32)
    with pytest.raises(ValueError, match="strides must not be negative"):
        aclnn_py.DeviceArray.from_pointer(4096, (2,), np.float32, strides=(-1,))
    with pytest.raises(ValueError, match="one entry per axis"):
        aclnn_py.DeviceArray.from_pointer(4096, (2, 2), np.float32, strides=(1,))
    with pytest.raises(ValueError, match="beyond any device address space"):
        aclnn_py.DeviceArray.from_pointer(4096, (2**40, 2**30), np.float32)
    with pytest.raises(ValueError, match="negative extents"):
        aclnn_py.DeviceArray.from_pointer(4096, (-1,), np.float32)
    with pytest.raises(TypeError, match="supported dtypes"):
        aclnn_py.DeviceArray.from_pointer(4096, (2,), np.str_)


def test_host_memory_wrapped_by_mistake_is_refused_at_the_launch():
    host = np.ones(4, np.float32)
    wrapped = aclnn_py.DeviceArray.from_pointer(host.ctypes.data, (4,), np.float32, owner=host)
    with pytest.raises(aclnn_py.AclError):
        aclnn_py.add(wrapped, wrapped).numpy()


def test_asnumpy_reads_what_cupy_users_pass():
    array = aclnn_py.to_device(HOST)
    np.testing.assert_array_equal(aclnn_py.asnumpy(array.T), HOST.T)
    np.testing.assert_array_equal(aclnn_py.asnumpy([1, 2]), [1, 2])
    assert aclnn_py.asnumpy(HOST) is HOST


def test_equality_is_identity():
    array = aclnn_py.to_device(HOST)
    assert array == array and array != array[...]
    assert "identity" in aclnn_py.DeviceArray.__doc__


def test_views_from_many_threads():
    array = aclnn_py.to_device(np.arange(64, dtype=np.float32).reshape(8, 8))
    errors = []

    def work(row):
        try:
            for _ in range(20):
                result = aclnn_py.add(array[row], array[:, row]).numpy()
                np.testing.assert_array_equal(result, np.arange(8) + row * 8 + np.arange(8) * 8
                                              + row)
        except Exception as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(row,)) for row in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_numpy_conventions_for_axes_shapes_and_indices():
    array = aclnn_py.to_device(HOST[0])  # shape (3, 4)
    with pytest.raises(np.exceptions.AxisError, match="axis 2 is out of bounds"):
        array.transpose(2, 1)
    with pytest.raises(np.exceptions.AxisError, match="axis -3 is out of bounds"):
        array.transpose(-3, 0)
    assert array.transpose(-1, 0).shape == (4, 3)
    assert array.reshape(np.int64(12)).shape == (12,)
    assert array.reshape((np.int64(2), -1)).shape == (2, 6)
    np.testing.assert_array_equal(array[np.array(1)].numpy(), HOST[0][1])
    np.testing.assert_array_equal(array[np.int32(-1)].numpy(), HOST[0][-1])


def test_a_curated_out_may_be_a_contiguous_view_with_an_offset():
    out = aclnn_py.to_device(np.zeros((2, 4), np.float32))
    x = aclnn_py.to_device(np.arange(4, dtype=np.float32))
    aclnn_py.add(x, x, out=out[1])
    np.testing.assert_array_equal(out.numpy(), [[0, 0, 0, 0], [0, 2, 4, 6]])
    with pytest.raises(ValueError, match="must be a C-contiguous device array"):
        aclnn_py.add(x[:2], x[:2], out=out[:, 1])


def test_a_freed_array_is_refused_by_call_naming_the_parameter():
    x = aclnn_py.to_device(np.ones(4, np.float32))
    view = x[1:]
    x.free()
    with pytest.raises(ValueError, match="self is a DeviceArray that was freed"):
        aclnn_py.call("aclnnMul", x, x)
    with pytest.raises(ValueError, match="other is a DeviceArray that was freed"):
        aclnn_py.call("aclnnMul", np.ones(3, np.float32), view)


def test_from_pointer_refuses_a_bool_pointer_and_float_strides():
    with pytest.raises(TypeError, match="pointer must be an int device address, got bool"):
        aclnn_py.DeviceArray.from_pointer(True, (1,), np.float32)
    with pytest.raises(TypeError, match="strides must be a sequence of ints"):
        aclnn_py.DeviceArray.from_pointer(4096, (1,), np.float32, strides=(1.0,))
