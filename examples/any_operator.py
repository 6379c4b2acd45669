"""Any aclnn operator from numpy, through its header: list, inspect, call.

Runs on an Ascend NPU through CANN when CANN is installed (its operators and any
custom operator packages), else on aclnn_py's host emulator, which ships a few
operators and one custom operator package (aclnnAddCustom).
"""

import numpy as np

import aclnn_py


def main() -> None:
    names = aclnn_py.operators()
    print(f"{len(names)} operators, e.g. {', '.join(names[:5])}")

    # What a header declares: parameters with their C types and roles, where it was found.
    print(aclnn_py.signature("aclnnAdd"))

    x = np.linspace(-1.0, 1.0, 6, dtype=np.float32).reshape(2, 3)
    y = np.full(3, 0.5, np.float32)

    # out = self + alpha * other; the output is allocated with the inputs' broadcast shape.
    added = aclnn_py.call("aclnnAdd", x, y, alpha=2.0)
    print("aclnnAdd matches numpy:", np.array_equal(added, x + 2.0 * y))

    # Arguments by C name; a mean loss names its 0-d output with out=.
    loss = aclnn_py.call("aclnnMseLoss", self=x, target=np.zeros_like(x), reduction=1,
                         out=np.empty((), np.float32))
    print(f"aclnnMseLoss = {float(loss):.6f} (numpy {float(np.mean(x * x)):.6f})")

    if "aclnnAddCustom" in names:  # a custom operator package's operator
        print("aclnnAddCustom matches numpy:",
              np.array_equal(aclnn_py.call("aclnnAddCustom", x, x), x + x))


if __name__ == "__main__":
    main()
