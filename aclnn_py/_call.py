"""The public ``aclnn_py.call``, ``operators()`` and ``signature()``: any operator through
its header. Their machinery (binding, conversion, allocation) is the engine's
(``engine/call.py``); this module documents them and hands over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .engine import call as _engine
from .runtime.streams import Stream

if TYPE_CHECKING:  # imported where used: importing aclnn_py reads no headers
    from .ops import catalog


def operators(*, callable: bool = False, computed: bool | None = None) -> list[str]:
    """Sorted names of every aclnn operator of the loaded CANN and of its custom operator
    packages (``"aclnnAdd"``, ...), as their headers declare them. ``callable=True``: only
    those a call would run here (a loaded operator library exports the operator, or a custom
    package's library is there; on the emulator, also computed by a kernel).
    ``computed``: on the emulator, only the operators a kernel computes (True) or only those
    it declares without computing them (False); on CANN every callable operator computes.

    Examples
    --------
    >>> import aclnn_py
    >>> "aclnnMseLoss" in aclnn_py.operators(callable=True)
    True
    """
    return _engine.operators(callable=callable, computed=computed)


def signature(name: str) -> catalog.Signature:
    """The operator ``name`` as its header declares it: ``.python_form`` (the call as
    Python writes it), ``.parameters`` (each with ``.name``, ``.c_type``, ``.role`` and
    ``.optional``), ``.dtypes`` (each tensor parameter's accepted dtypes on this SoC, from
    the phase-1 table), ``.library`` (what a call would use, None when no library here
    provides it), ``.callable`` (a call would run here) and, on the emulator,
    ``.computed_by`` ("C kernel", "Python kernel", "user kernel", "its package's library"
    or "not computed"); ``str()`` gives all of it. Only the
    header is read: nothing is loaded or bound (``call`` does that). ValueError, with close
    names, for an unknown operator.

    Examples
    --------
    >>> import aclnn_py
    >>> print(aclnn_py.signature("aclnnAdd").python_form)
    call("aclnnAdd", self, other, alpha, *, out=None) -> out
    """
    return _engine.signature(name)


def call(name: str, /, *args: Any, out: Any = None, stream: Stream | None = None,
         **kwargs: Any) -> Any:
    """Run any aclnn operator through its header: ``aclnn_py.call("aclnnAdd", x, y, 1)``.

    Arguments go by position or by their C parameter names (a C parameter named ``out``
    or ``stream`` goes by position), without the outputs and without ``workspaceSize``
    and ``executor``. Which tensors are outputs and which are updated in place is what
    :func:`signature` shows (the user's statement, a custom package's description, the
    role table from CANN's docs, or CANN's conventions; see :func:`register_roles`).
    Tensors: arrays, numpy scalars, Python numbers and lists by the one input rule of every
    call (the page inputs.md: Python values take the dtype of the call's arrays), or None for
    ``...Optional`` ones; in-place tensors are updated (a writable C-contiguous numpy array,
    or a DeviceArray). Where CANN spells one idea several ways (``keepDims``, ``keepdim``)
    each spelling is accepted. Other
    arguments by C type: integers for ``int64_t`` and the other
    integer types, ``bool``, real numbers for ``float``/``double``, ``str`` for
    ``char *``, a numpy dtype for ``aclDataType``, a Python number or numpy scalar for
    ``aclScalar`` (it keeps its dtype: int64, float64, bool, or the numpy scalar's), a
    sequence of integers for ``aclIntArray``, of real numbers for ``aclFloatArray`` (passed
    as C floats), of bools for ``aclBoolArray``; a list or tuple of arrays for an input
    ``aclTensorList``. An operator whose phase 2 takes parameters besides the usual four
    (aclnnGaussianBlur) is passed phase 1's objects again for those phase 1 also takes;
    those only phase 2 takes are given after phase 1's, as :func:`signature` shows.

    ``out``: the output arrays (one, or a tuple in declaration order; for an output
    ``aclTensorList``, a list or tuple of its arrays; None for an ``...Optional`` output
    to leave out). Without it each output is allocated with the shape and dtype of the
    operator's output rule (``aclnn_py.ops.outputs``: reductions, the matmul family,
    gathers, joins, norms, pools, convolutions, ...), else with the broadcast shape of the
    tensor inputs and the first input's dtype (an output tensor list needs ``out=``), and
    ``...Optional`` outputs are left out unless all outputs are. Returns the outputs
    (in-place tensors first; None for one left out), one array or a tuple, a tensor list
    as a list of arrays, or None for an operator that writes nothing: numpy in, numpy out
    (the call waits); device arrays in, DeviceArrays out (queued on ``stream``, default
    the current one). A call whose written tensors nothing knows is refused before it
    runs.

    An operator whose outputs' extents depend on the data (``aclnnMaskedSelect``, the
    others of :data:`aclnn_py.engine.call.DATA_DEPENDENT`) writes outputs as large as the
    data may need (for
    ``aclnnMaskedSelect``, 1-d, of as many elements as ``self`` and ``mask`` broadcast to;
    ``out=`` must be so too), and the call waits for it: each result is the real extent,
    the first elements viewed with the shape CANN gives the output (a view of ``out``
    when given).

    Examples
    --------
    >>> import numpy as np
    >>> import aclnn_py
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> aclnn_py.call("aclnnMatmul", a, a.T.copy(), 0)  # out's shape from the output rule
    array([[ 5., 14.],
           [14., 50.]], dtype=float32)
    >>> aclnn_py.call("aclnnReduceSum", a, [1], keepdim=False, dtype=np.float32)
    array([ 3., 12.], dtype=float32)
    """
    return _engine.run(name, args, kwargs, out, stream)
