"""Test a custom operator's host side in CI, before its kernel is built.

A custom operator package starts as a header (``op_api/include/aclnn_<op>.h``) and an
operator description (``op_impl/.../aic-<soc>-ops-info.json``); its ``libcust_opapi.so``
comes once the kernel builds. On aclnn_py's emulator, a Python function registered with
``aclnn_py.emulator.kernel`` stands in for the missing library, so the host side (argument
binding, shapes, dtypes, device arrays, streams) is tested against the operator's golden
function on any machine.

Usage: ``python examples/custom_op_ci.py [PACKAGE]``. Without PACKAGE, the example writes
a header-only package for ``aclnnScaledAddCustom`` (``z = x + alpha * y``, optionally
negated) into a temporary folder. On a real CANN install, give a package whose library is
built: the same checks then run on the NPU (without PACKAGE it stops with status 2).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

OPERATOR = "aclnnScaledAddCustom"

HEADER = """\
#ifndef ACLNN_SCALED_ADD_CUSTOM_H_
#define ACLNN_SCALED_ADD_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default")))
aclnnStatus aclnnScaledAddCustomGetWorkspaceSize(
    const aclTensor *x,
    const aclTensor *y,
    double alpha,
    bool negate,
    const aclTensor *z,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

__attribute__((visibility("default")))
aclnnStatus aclnnScaledAddCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
"""

OPS_INFO = """\
{
    "ScaledAddCustom": {
        "attr": {"list": "alpha,negate"},
        "attr_alpha": {"paramType": "required", "type": "float", "value": "all"},
        "attr_negate": {"paramType": "required", "type": "bool", "value": "all"},
        "input0": {"dtype": "float16,float", "format": "ND,ND", "name": "x",
                   "paramType": "required", "shape": "all"},
        "input1": {"dtype": "float16,float", "format": "ND,ND", "name": "y",
                   "paramType": "required", "shape": "all"},
        "output0": {"dtype": "float16,float", "format": "ND,ND", "name": "z",
                    "paramType": "required", "shape": "all"},
        "opFile": {"value": "scaled_add_custom"},
        "opInterface": {"value": "scaled_add_custom"}
    }
}
"""


def write_package(folder: Path) -> Path:
    """A header-only package, as a custom operator project has it before its first build."""
    package = folder / "scaled_add"
    include = package / "op_api" / "include"
    info = package / "op_impl" / "ai_core" / "tbe" / "config" / "ascend910b"
    for path in (include, info):
        path.mkdir(parents=True)
    (include / "aclnn_scaled_add_custom.h").write_text(HEADER)
    (info / "aic-ascend910b-ops-info.json").write_text(OPS_INFO)
    for path in (package, *package.rglob("*")):  # the owner rule: not writable by others
        path.chmod(path.stat().st_mode & 0o755)
    return package


def golden(x: np.ndarray, y: np.ndarray, alpha: float, negate: bool) -> np.ndarray:
    """What the operator computes, in float32, rounded once to the inputs' dtype."""
    value = x.astype(np.float32) + np.float32(alpha) * y.astype(np.float32)
    return (-value if negate else value).astype(np.result_type(x, y))


def check_shapes(x: np.ndarray, y: np.ndarray, **_: Any) -> None:
    """The host-side rule the operator's tiling will enforce: y broadcasts to x."""
    import aclnn_py

    if np.broadcast_shapes(x.shape, y.shape) != x.shape:
        raise aclnn_py.emulator.Refusal(f"y of shape {y.shape} does not broadcast to x's "
                                        f"{x.shape}")


def main(argv: list[str]) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        package = Path(argv[0]) if argv else write_package(Path(scratch))
        os.environ["ASCEND_CUSTOM_OPP_PATH"] = str(package)
        import aclnn_py

        if not aclnn_py.emulator.loaded() and not argv:
            print("CANN is loaded: give the path of a package whose library is built (a "
                  "package without one runs on aclnn_py's emulator only)")
            return 2
        if aclnn_py.emulator.loaded():
            @aclnn_py.emulator.kernel(OPERATOR, dtypes=["float32", "float16"],
                                      check=check_shapes)
            def scaled_add(x: np.ndarray, y: np.ndarray, alpha: float, negate: bool,
                           z: np.ndarray) -> None:
                z[...] = golden(x, y, alpha, negate)

        print(aclnn_py.signature(OPERATOR))
        rng = np.random.default_rng(0)
        failures = 0
        for dtype in (np.float32, np.float16):
            x = rng.standard_normal((4, 5)).astype(dtype)
            y = rng.standard_normal(5).astype(dtype)  # broadcasts against x
            for alpha, negate in ((1.0, False), (-0.5, True)):
                got = aclnn_py.call(OPERATOR, x, y, alpha, negate)
                same = got.shape == x.shape and got.dtype == x.dtype
                same = same and np.array_equal(got, golden(x, y, alpha, negate))
                failures += not same
                print(f"{np.dtype(dtype).name} alpha={alpha} negate={negate}: "
                      f"{'ok' if same else 'MISMATCH'}")
        # Device arrays on a stream of their own: the call queues, the result stays there.
        with aclnn_py.Stream() as stream:
            x_d = aclnn_py.to_device(np.ones((2, 3), np.float32))
            z_d = aclnn_py.call(OPERATOR, x_d, x_d, 2.0, False, stream=stream)
            on_device = bool(np.array_equal(z_d.numpy(), np.full((2, 3), 3.0, np.float32)))
        failures += not on_device
        print(f"device arrays on a stream: {'ok' if on_device else 'MISMATCH'}")
        # What the operator refuses is refused before anything runs.
        for label, args in (("int32 x", (np.ones(3, np.int32), np.ones(3, np.int32))),
                            ("y that does not broadcast to x", (np.ones((2, 1), np.float32),
                                                                np.ones(3, np.float32)))):
            try:
                aclnn_py.call(OPERATOR, *args, 1.0, False)
            except aclnn_py.AclError as error:
                print(f"{label}: refused at phase 1 ({error.status})")
            else:
                failures += 1
                print(f"{label}: NOT refused")
    print("all checks passed" if not failures else f"{failures} checks failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
