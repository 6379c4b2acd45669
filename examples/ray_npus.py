"""Spread aclnn_py work over the NPUs of a Ray cluster, one host or many.

Ray knows Ascend NPUs as the resource ``"NPU"``: it counts them on each node and gives every
task that asks for one its own device by setting ``ASCEND_RT_VISIBLE_DEVICES`` in the task's
process. This script joins the cluster ``--address`` or ``RAY_ADDRESS`` names, else one
already running on this host, else starts a local one; on a host where aclnn_py runs on its
emulator, the local cluster declares the emulated devices (``ACLNN_EMU_DEVICE_COUNT``) as
NPUs. It then runs a batch of tasks, each computing ``aclnn_py.mse_loss_backward`` on numpy
blocks on the NPU Ray gave it, and checks every result against numpy::

    pip install "aclnn_py[ray]"
    ACLNN_EMU_DEVICE_COUNT=2 python examples/ray_npus.py     # emulator, local cluster
    RAY_ADDRESS=<head>:6379 python examples/ray_npus.py      # a running cluster

Nodes of a cluster that run the emulator declare their NPUs when they start:
``ACLNN_EMU_DEVICE_COUNT=2 ray start --resources='{"NPU": 2}' ...``.
"""

from __future__ import annotations

import argparse
import logging
import os
import time
from collections import Counter
from typing import Any, Callable, Literal, NamedTuple

import numpy as np
import ray

import aclnn_py
from aclnn_py.testing import assert_close

VISIBLE_DEVICES = "ASCEND_RT_VISIBLE_DEVICES"
# Ray leaves this one unannotated.
cluster_resources: Callable[[], dict[str, float]] = ray.cluster_resources


class Block(NamedTuple):
    """One call's inputs: ``mse_loss_backward(grad, x, y, reduction)``."""

    grad: np.ndarray
    x: np.ndarray
    y: np.ndarray
    reduction: Literal["none", "mean"]


def make_work(tasks: int, blocks_per_task: int, shape: tuple[int, int],
              seed: int) -> list[list[Block]]:
    rng = np.random.default_rng(seed)
    work = []
    for _ in range(tasks):
        blocks = []
        for index in range(blocks_per_task):
            x = rng.standard_normal(shape).astype(np.float32)
            y = rng.standard_normal(shape).astype(np.float32)
            if index % 2 == 0:
                blocks.append(Block(rng.standard_normal(shape).astype(np.float32), x, y, "none"))
            else:  # the gradient of a mean loss: a 0-d array
                blocks.append(Block(np.array(rng.standard_normal(), np.float32), x, y, "mean"))
        work.append(blocks)
    return work


def expected(block: Block) -> np.ndarray:
    difference = block.x.astype(np.float64) - block.y
    scale = 2.0 / block.x.size if block.reduction == "mean" else 2.0
    result: np.ndarray = scale * difference * block.grad
    return result


def device_of(npu: str) -> int:
    """This process's device number for the NPU Ray assigned.

    Ray names NPUs by the ids ``ASCEND_RT_VISIBLE_DEVICES`` takes and sets the variable to
    the task's own, which makes its NPU device 0; when told not to
    (``RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES=1``), the process sees the devices
    the variable lists, or all of them.
    """
    visible = os.environ.get(VISIBLE_DEVICES)
    return int(npu) if visible is None else visible.split(",").index(npu)


# CANN reads ASCEND_RT_VISIBLE_DEVICES once per process, while Ray sets it for each task: a
# fresh worker process per task (max_calls=1), as Ray does by default for GPU tasks.
@ray.remote(resources={"NPU": 1}, max_calls=1)
def compute(blocks: list[Block]) -> dict[str, Any]:
    context = ray.get_runtime_context()
    (npu,) = context.get_accelerator_ids()["NPU"]
    device = device_of(npu)
    logical = aclnn_py.runtime_info()["devices"][device]["logical_id"]  # None before CANN 8.5
    if logical is not None and logical != int(npu):
        raise RuntimeError(f"Ray assigned NPU {npu} but device {device} is NPU {logical}")
    results = []
    for block in blocks:
        grad, x, y = (aclnn_py.to_device(a, device=device) for a in block[:3])
        results.append(aclnn_py.mse_loss_backward(grad, x, y, block.reduction).numpy())
    return {"node": context.get_node_id(), "npu": npu, "logical_id": logical,
            "results": results}


def connect(address: str | None) -> str:
    """Join the cluster at ``address`` (``"local"``: start one), else RAY_ADDRESS's, else one
    running on this host, else start a local one. Returns how it connected."""
    # Ray probes the NPU type through CANN's Python package, which the emulator lacks.
    logging.getLogger("ray._private.accelerators.npu").setLevel(logging.CRITICAL)
    address = address or os.environ.get("RAY_ADDRESS")
    if address and address != "local":
        ray.init(address=address)
        return f"joined the cluster at {address}"
    if address is None:
        try:
            ray.init(address="auto")
            return "joined the cluster running on this host"
        except ConnectionError:
            pass
    resources: dict[str, float] = {}
    if aclnn_py.emulator.loaded():  # no real NPU: declare the emulated devices
        resources["NPU"] = aclnn_py.runtime_info()["device_count"]
    ray.init(resources=resources, include_dashboard=False)
    kind = "emulated" if resources else "detected"
    return f"started a local cluster ({kind} NPUs)"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--address", help="Ray cluster to join; 'local' starts one "
                                          "(default: RAY_ADDRESS, else a running one, else local)")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--blocks", type=int, default=2, help="blocks per task")
    parser.add_argument("--rows", type=int, default=128)
    parser.add_argument("--columns", type=int, default=256)
    arguments = parser.parse_args(argv)

    how = connect(arguments.address)
    npus = int(cluster_resources().get("NPU", 0))
    print(f"ray: {how}; {npus} NPUs")
    if npus == 0:
        raise SystemExit("the cluster has no NPU resource: nodes with NPUs declare it by "
                         "themselves; nodes on aclnn_py's emulator start with "
                         "ray start --resources='{\"NPU\": <devices>}'")
    work = make_work(arguments.tasks, arguments.blocks, (arguments.rows, arguments.columns),
                     seed=0)
    started = time.perf_counter()
    done = ray.get([compute.remote(blocks) for blocks in work])
    seconds = time.perf_counter() - started
    for blocks, answer in zip(work, done):
        for block, result in zip(blocks, answer["results"]):
            assert_close(result, expected(block))
    for (node, npu), count in sorted(Counter((d["node"], d["npu"]) for d in done).items()):
        print(f"ray: node {node[:12]} NPU {npu}: {count} tasks")
    print(f"ray: {len(done)} tasks in {seconds:.2f} s, {len(done) / seconds:.2f} tasks/s")
    ray.shutdown()
    print(f"ray: {len(done)} tasks on {npus} NPUs, results match")


if __name__ == "__main__":
    main()
