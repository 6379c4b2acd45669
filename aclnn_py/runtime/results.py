"""Host memory of large numpy results, cached for reuse.

Large numpy results (:func:`result_array`) are made in ordinary host memory that is
cached once the array and every view of it are gone: a fresh block costs a page
fault per page, the kernel clearing each one, which takes longer than the copy that
fills it. :data:`RESULT_CACHE_BYTES` bounds what is kept.
"""

from __future__ import annotations

import numpy as np

from .. import _caches

RESULT_MIN_BYTES = 1 << 20  # smaller results are plain np.empty arrays
RESULT_CACHE_BYTES = 256 << 20  # the most result bytes kept for reuse

# The cached blocks by id, the oldest first; nothing else is kept beside it. Each change
# is one dict operation, which neither an interrupt (Python runs signal handlers between
# operations) nor another thread can split, and taking a block is its ``pop``: wherever an
# interrupt lands, the cache stays consistent, at worst a block short.
_results: dict[int, np.ndarray] = {}


class _Lease:
    """The owner of a result array's memory (every view's base leads here): the block
    goes back to the cache when the last array over it is gone."""

    __slots__ = ("block", "__array_interface__")

    def __init__(self, block: np.ndarray) -> None:
        self.block = block
        self.__array_interface__ = {"data": (block.ctypes.data, False), "version": 3,
                                    "shape": block.shape, "typestr": "|u1"}

    def __del__(self) -> None:
        try:  # noqa: SIM105 - contextlib may be gone at interpreter shutdown
            _give_back(self.block)
        except Exception:  # interpreter shutdown: the memory goes with the process
            pass


def _give_back(block: np.ndarray) -> None:
    """Cache ``block``, then drop the oldest blocks beyond :data:`RESULT_CACHE_BYTES`."""
    if block.nbytes > RESULT_CACHE_BYTES:
        return  # just freed
    _results[id(block)] = block
    cached = list(_results.values())  # a snapshot: it keeps each block, and so its id
    excess = sum(each.nbytes for each in cached) - RESULT_CACHE_BYTES
    for each in cached:
        if excess <= 0:
            break
        if _results.pop(id(each), None) is not None:
            excess -= each.nbytes


def result_array(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A new C-contiguous array of ``shape`` and ``dtype`` with undefined contents, in
    host memory that earlier results used when there is such (it is then already mapped):
    ``np.empty`` below :data:`RESULT_MIN_BYTES`."""
    nbytes = dtype.itemsize
    for length in shape:
        nbytes *= length
    if nbytes < RESULT_MIN_BYTES:
        return np.empty(shape, dtype)
    size = -(-nbytes // 4096) * 4096
    # The newest first: its pages are the likeliest to be in the CPU caches. Whoever pops
    # a block owns it (another thread may have taken it since the snapshot).
    for block in reversed(list(_results.values())):
        if block.nbytes == size and _results.pop(id(block), None) is not None:
            break
    else:
        block = np.empty(size, np.uint8)
    return np.asarray(_Lease(block))[:nbytes].view(dtype).reshape(shape)


def cached_result_bytes() -> int:
    """Bytes of host memory kept for large numpy results."""
    return sum(block.nbytes for block in list(_results.values()))


def empty_results() -> None:
    """Let go of every cached block (``empty_cache()``)."""
    _results.clear()


_caches.register("numpy results", holds="host blocks of results of at least RESULT_MIN_BYTES "
                 "(1 MiB) whose arrays are gone", bound="RESULT_CACHE_BYTES (256 MiB), the "
                 "oldest dropped first", size=cached_result_bytes,
                 empty=_caches.emptied(empty_results), unit="bytes")
