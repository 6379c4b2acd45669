"""Keep data on the device: device arrays, a stream, a reusable plan and event timing.

Runs on an Ascend NPU through CANN when CANN is installed, else on aclnn_py's
host emulator of CANN's C API.
"""

import numpy as np

import aclnn_py


def main() -> None:
    rng = np.random.default_rng(0)
    batches = [rng.standard_normal((256, 64)).astype(np.float32) for _ in range(8)]
    target = aclnn_py.to_device(np.zeros((256, 64), np.float32))
    grad = aclnn_py.to_device(np.ones((), np.float32))     # 0-d: a mean loss's gradient

    with aclnn_py.Stream() as stream:
        first = aclnn_py.to_device(batches[0])
        start, end = aclnn_py.Event(), aclnn_py.Event()
        with aclnn_py.MseLossBackwardPlan(grad, first, target, "mean") as plan:
            start.record(stream)
            for batch in batches:
                x = aclnn_py.to_device(batch)
                result = plan.run(x=x)                     # queued; no wait
            end.record(stream)
            end.synchronize()
            last = result.numpy()
        print(f"{len(batches)} launches of one plan in {start.elapsed_ms(end):.3f} ms "
              f"on {aclnn_py.runtime_info()['backend']}")

    expected = (batches[-1] - 0.0) * 2 / batches[-1].size
    print(f"max |last - numpy| = {np.max(np.abs(last - expected)):.3g}")
    print(f"memory: {aclnn_py.memory_info()}")


if __name__ == "__main__":
    main()
