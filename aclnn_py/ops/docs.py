"""The curated operators' docstrings, one per public function of the operator table.

The functions and their plans are generated from the table (``ops.specs``) and these
texts by ``tools/generate_functions.py``; edit here, then run it.
"""

DOCS = {
    "mse_loss_backward": """\
Gradient of the mean squared error with respect to ``x`` (``aclnnMseLossBackward``).

Computes ``grad * (x - y) * 2 / x.size`` for ``reduction="mean"`` and
``grad * (x - y) * 2`` for ``"none"`` and ``"sum"``, on the device.

Parameters
----------
grad : array_like, DeviceArray or float
    Gradient of the loss: an array broadcastable with ``x`` and ``y`` (a 0-d
    array for a "mean" or "sum" loss), or a Python number, which takes
    ``x``'s dtype.
x, y : array_like or DeviceArray
    Input and target. ``grad``, ``x`` and ``y`` share one dtype: float32,
    float16 or bfloat16 (``ml_dtypes.bfloat16``; Atlas A2/A3 and Ascend 950
    only). Each has 0 to 8 dimensions; the three broadcast together.
reduction : {"mean", "none", "sum"}, int or Reduction
    The reduction the forward loss used. The mean divisor is ``x.size``.
out : numpy.ndarray or DeviceArray, optional
    C-contiguous (and writable) array of the broadcast shape and a supported
    dtype, which may differ from the inputs' (CANN computes in the input
    dtype and casts); a DeviceArray when any input is one. Filled and returned.
stream : Stream, optional
    Where the work is queued; default: this thread's current stream on the arrays' device.
devices : sequence of int or "all", optional
    Numpy inputs only: split the call along the leading axis of the broadcast result
    across these visible devices, one host thread each, on each device's current
    stream; the rows are joined into one result. ``"none"`` equals the one-device
    result bit for bit; ``"mean"`` still divides by the whole ``x.size`` (each device
    computes ``"sum"``, or over float16 and bfloat16 its own ``"mean"``, and its rows are
    divided on the host, in float32). See the page
    several-devices.md (``python -m aclnn_py docs``).

Returns
-------
numpy.ndarray or DeviceArray
    The gradient, of the broadcast shape and the inputs' dtype (or ``out``).
    A numpy result is complete; a DeviceArray result may still be computing
    (its ``numpy()`` waits).

Raises
------
TypeError
    Unsupported or mismatched dtypes, bfloat16 on an SoC without it, an
    ``out`` of the wrong kind.
ValueError
    Unknown reduction, more than 8 dimensions, shapes that do not broadcast,
    an unsuitable ``out``, arrays on several devices; for ``devices=``: ids not
    visible, repeated or none, or ``stream=`` given too (device-array inputs or a
    non-sequence are a TypeError).
AclError
    CANN refused the call or failed; carries CANN's status and message.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> x = np.array([1.0, 2.0, 3.0], np.float32)
>>> aclnn_py.mse_loss_backward(1.0, x, np.zeros(3, np.float32), reduction="mean")
array([0.6666667, 1.3333334, 2.       ], dtype=float32)
""",
    "mse_loss": """\
Mean squared error between ``x`` and ``y`` (``aclnnMseLoss``).

``(x - y) ** 2`` elementwise for ``reduction="none"``; its mean or sum (a
0-d array) otherwise. For empty inputs CANN returns NaN ("mean") or 0 ("sum").

Parameters
----------
x, y : array_like or DeviceArray
    float32, float16 or bfloat16 arrays of 0 to 8 dimensions that broadcast
    together; different dtypes are promoted as CANN does (float16 with
    bfloat16 gives float32). A Python number for ``y`` takes ``x``'s dtype.
reduction : {"mean", "none", "sum"}, int or Reduction
out : numpy.ndarray or DeviceArray, optional
    C-contiguous (and writable) array of the result's shape (the broadcast
    shape, or ``()``) and a supported dtype. Filled and returned.
stream : Stream, optional
    Where the work is queued; default: this thread's current stream on the arrays' device.
devices : sequence of int or "all", optional
    As for :func:`mse_loss_backward`; a ``"mean"`` or ``"sum"`` adds the devices'
    partial results in float64 on the host, rounded once to the result's dtype.

Returns
-------
numpy.ndarray or DeviceArray
    The loss, in the promoted dtype (or ``out``).

Raises
------
TypeError, ValueError, AclError
    As for :func:`mse_loss_backward`.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> x = np.array([1.0, 2.0, 3.0], np.float32)
>>> aclnn_py.mse_loss(x, [0.0, 0.0, 0.0], reduction="none")  # the list takes x's dtype
array([1., 4., 9.], dtype=float32)
>>> aclnn_py.mse_loss(x, 0.0)
array(4.6666665, dtype=float32)
""",
    "l1_loss": """\
Mean absolute error between ``x`` and ``y`` (``aclnnL1Loss``).

``|x - y|`` elementwise for ``reduction="none"``; its mean (over the broadcast
size) or sum, a 0-d array, otherwise. Arguments, dtypes (CANN's promotion),
broadcasting, ``out``, ``stream``, ``devices``, results and errors as for :func:`mse_loss`.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> aclnn_py.l1_loss(np.array([1.0, 2.0, 3.0], np.float32), 0.0)
array(2., dtype=float32)
""",
    "l1_loss_backward": """\
Gradient of the L1 loss with respect to ``x`` (``aclnnL1LossBackward``).

``grad * sign(x - y)`` (``sign(0) = 0``), divided for ``reduction="mean"`` by the
number of elements of the result (the broadcast shape), as CANN documents it.
``grad`` may be a Python number (it takes ``x``'s dtype); the dtypes promote as
CANN does. Other arguments (``devices`` too: "mean" still divides by the whole broadcast
size), results and errors as for :func:`mse_loss_backward`.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> x = np.array([1.0, 2.0, 3.0], np.float32)
>>> aclnn_py.l1_loss_backward(1.0, x, 0.0, "sum")
array([1., 1., 1.], dtype=float32)
""",
    "smooth_l1_loss": """\
Smooth L1 loss (``aclnnSmoothL1Loss``), as PyTorch defines it with ``beta``.

With ``d = x - y``: ``0.5 * d**2 / beta`` where ``|d| < beta``, else
``|d| - 0.5 * beta``; ``beta=0`` is the L1 loss. ``beta`` is a finite number >= 0,
passed to CANN as a C ``float``. Reductions, dtypes and the rest as for
:func:`l1_loss`.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> x = np.array([1.0, 2.0, 3.0], np.float32)
>>> aclnn_py.smooth_l1_loss(x, 0.0, "none", beta=1.0)
array([0.5, 1.5, 2.5], dtype=float32)
""",
    "smooth_l1_loss_backward": """\
Gradient of :func:`smooth_l1_loss` with respect to ``x``
(``aclnnSmoothL1LossBackward``).

``grad * d / beta`` where ``|d| < beta``, else ``grad * sign(d)``, broadcast, divided
for ``reduction="mean"`` by ``x.size`` (CANN's kernels and PyTorch divide by the input's
element count, not the broadcast size, unlike :func:`l1_loss_backward`). Arguments as
for :func:`l1_loss_backward`, plus ``beta`` as for :func:`smooth_l1_loss`.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> x = np.array([1.0, 2.0, 3.0], np.float32)
>>> aclnn_py.smooth_l1_loss_backward(1.0, x, 0.0, "none", beta=1.0)
array([1., 1., 1.], dtype=float32)
""",
    "add": """\
``x + alpha * y`` (``aclnnAdd``), broadcast, in CANN's promoted dtype.

``y`` may be a Python number (it takes ``x``'s dtype); ``alpha`` is a finite real
number, passed to CANN as an ``aclScalar``. ``out``, ``stream``, ``devices``, results and
errors as for :func:`mse_loss`.

Examples
--------
>>> import numpy as np
>>> import aclnn_py
>>> aclnn_py.add(np.array([1.0, 2.0, 3.0], np.float32), 1.0, alpha=2)
array([3., 4., 5.], dtype=float32)
""",
}
