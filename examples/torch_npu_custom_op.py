"""Call one aclnn operator on torch_npu tensors, in one line, without copies.

The usual way to call an aclnn operator (a new custom operator, say) on torch_npu
tensors is a ctypes module written for that operator: load ``libascendcl.so`` and the
operator's library with ``RTLD_GLOBAL``, declare ``argtypes`` for aclCreateTensor and
both phases, build each aclTensor from ``data_ptr()``, sizes and strides, allocate the
workspace with ``torch.empty(size, dtype=torch.uint8, device=...)``, pass
``torch.npu.current_stream().npu_stream``, ``record_stream`` every tensor, destroy the
aclTensors and the executor on every path: about 150 lines per operator, unchecked.

With aclnn_py it is::

    out = aclnn_py.call("aclnnAddcmul", x, t1, t2, 0.5)

The tensors are described where they live (no copy), the work goes on torch's current
stream after torch's queued work (the task queue is flushed as torch_npu flushes it),
``out`` is allocated by torch's allocator, and aclnn_py's workspace and handles stay alive
until the work is done. A custom operator is the same line with its name, once its
package is installed (``ASCEND_CUSTOM_OPP_PATH``).

On an Ascend host with torch_npu this runs as is. Elsewhere it runs on aclnn_py's
emulator with the stand-in tensors of this repository's tests (``tests/npu_standin.py``:
torch_npu's tensor protocol over memory another ACL user allocates), and checks that
nothing was copied. Needs PyTorch; exits 1 on a wrong result.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

import aclnn_py

try:
    import torch
except ImportError:
    sys.exit("this example needs PyTorch: pip install torch")


def npu_tensors() -> tuple[Callable[[np.ndarray], Any], Callable[[], Any], str]:
    """How to make an NPU tensor from host values and a side stream, and on what."""
    try:
        import torch_npu  # noqa: F401 (registers the "npu" device)
    except ImportError:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
        from npu_standin import NpuStream, NpuTensor

        return (lambda values: NpuTensor.from_numpy(values, torch.float32), NpuStream,
                "the emulator, with stand-in NPU tensors")
    return (lambda values: torch.from_numpy(values).to("npu"),
            lambda: torch.npu.Stream(), "torch_npu")  # type: ignore[attr-defined]


def host(tensor: Any) -> np.ndarray:
    return aclnn_py.asnumpy(tensor)


def main() -> int:
    to_npu, side_stream, where = npu_tensors()
    rng = np.random.default_rng(0)
    values = [rng.standard_normal((64, 128)).astype(np.float32) for _ in range(3)]
    x, t1, t2 = (to_npu(v) for v in values)
    expected = torch.addcmul(*(torch.from_numpy(v) for v in values), value=0.5).numpy()
    emulated = aclnn_py.emulator.loaded()
    if emulated:
        aclnn_py.emulator.reset_counters()

    out = aclnn_py.call("aclnnAddcmul", x, t1, t2, 0.5)  # the whole ctypes module

    copies = aclnn_py.emulator.stats()["memcpy_calls"] if emulated else None
    stream = side_stream()
    on_side = aclnn_py.call("aclnnAddcmul", x, t1, t2, 0.5, stream=stream)  # recorded on it
    ok = True
    for name, result in (("current stream", out), ("side stream", on_side)):
        error = float(np.max(np.abs(host(result) - expected)))
        good = error <= 1e-6
        ok &= good
        print(f"aclnnAddcmul on {where}, {name}: {type(result).__name__} {tuple(result.shape)}, "
              f"max error {error:.1e} {'ok' if good else 'WRONG'}")
    if copies is not None:
        print(f"host-device copies made by the calls: {copies}")
        ok &= copies == 0
    if hasattr(stream, "close"):
        stream.close()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
