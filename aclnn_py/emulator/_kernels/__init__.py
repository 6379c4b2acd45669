"""The emulator's Python kernels: CANN operators computed over numpy.

The emulator exports every operator of CANN's public headers with its real prototype; the
ones without a C kernel of its own are computed here. One table, :data:`KERNELS` (operator
name -> :class:`Kernel`), is filled by the family modules (:data:`FAMILIES`, imported together
the first time the table is read) and by users' kernels (``aclnn_py.emulator.kernel``).

The emulator calls :func:`dispatch` twice per call: at phase 1 to check it (dtypes, then the
kernel's own ``check``), and when the launch runs on its stream, to compute. A kernel receives
the call's arguments by their C parameter names: tensors as numpy arrays viewing the emulated
device memory (outputs and tensors updated in place writable, inputs read-only), valid only
during the call; tensor lists as lists of arrays; scalars as numpy scalars of their dtype;
integer, bool and float arrays as tuples; strings as str; numbers as int, bool or float; an
optional argument left out as None. A kernel must not call aclnn_py (it runs inside a
synchronisation of its stream's work): such a call is refused (``_c.kernel_calls``).

Precision: float16 and bfloat16 compute as CANN's kernels do, widened to float32, computed,
and rounded once when stored (:func:`store`); float32 computes in float32 and float64 in
float64, unless a family says otherwise.
"""

from __future__ import annotations

import importlib
import inspect
import json
import threading
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..._c import kernel_calls
from ..._c import lowlevel as ll
from ..._c.codes import constant
from ...ops.dtypes import Dtypes, all_dtypes, is_bfloat16, numpy_dtype
from ...ops.rules import states_dtypes
from . import trace

FAMILIES = ("elementwise", "reductions", "nn", "shapes", "matmul", "activations",
            "pointwise_math", "bitwise", "dim_reductions", "vector_products", "inplace",
            "foreach", "activation_grads", "norms", "pooling", "quant", "indexing",
            "padding", "conversion", "losses", "optimizers", "random_fills", "counting",
            "linalg", "complex_numbers")
PARAM_INVALID = constant("ACLNN_ERR_PARAM_INVALID")  # 161002, what CANN's checks return
KERNEL_FAILED = constant("ACL_ERROR_RT_AICORE_EXCEPTION")  # 507015: the launch's work failed
INNER = constant("ACLNN_ERR_INNER")  # 561000: phase 1 failed inside (a check's own error)
NO_KERNEL = constant("ACLNN_ERR_INNER_FIND_KERNEL_ERROR")  # 561003: as for an uncomputed one


class Refusal(Exception):
    """Raised by a kernel's ``check`` to refuse a call at phase 1 with ``status`` (default
    161002, ACLNN_ERR_PARAM_INVALID) and a message in CANN's style."""

    def __init__(self, message: str, status: int = PARAM_INVALID) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Kernel:
    """How the emulator computes one operator."""

    name: str                             # "aclnnSoftmax"
    compute: Callable[..., None]          # writes the outputs
    # What each tensor read may be: one set for all, or by parameter name (None: any dtype)
    dtypes: Dtypes | dict[str, Dtypes] | None = None
    check: Callable[..., None] | None = None  # phase 1: raises Refusal or ValueError
    parameters: tuple[str, ...] = ()      # the C parameter names, in order
    builtin: bool = True                  # one of aclnn_py's, not a user's


KERNELS: dict[str, Kernel] = {}
_loaded = False
_lock = threading.Lock()
_installed: set[str] = set()  # names registered with the loaded emulator
_handler_set = False  # install_once ran to its end


_C_KERNELS: frozenset[str] | None = None


def c_kernels() -> frozenset[str]:
    """The operators the emulator computes in C (``aclnn_py/data/emulator_ops.json``): their
    entry points never ask for a Python kernel."""
    global _C_KERNELS
    if _C_KERNELS is None:
        data = Path(__file__).resolve().parent.parent.parent / "data" / "emulator_ops.json"
        listed = json.loads(data.read_text(encoding="utf-8"))["operators"]
        _C_KERNELS = frozenset(f"aclnn{entry['name']}" for entry in listed)
    return _C_KERNELS


def parameters_of(name: str) -> tuple[str, ...] | None:
    """The C parameter names of ``name`` from the operator table, or None when the table
    does not list it."""
    from ...ops import roles  # the table is read on first use, not at import

    entry = roles.table_entry(name)
    if entry is None:
        return None
    return tuple(parameter for _, parameter in entry["parameters"])


def _dtype_names(dtypes: Iterable[Any], operator: str) -> tuple[str, ...]:
    """The names of ``dtypes`` (names, numpy dtypes or types), each one with an aclDataType;
    TypeError or ValueError naming ``dtypes`` otherwise."""
    if isinstance(dtypes, (str, bytes)):
        raise TypeError(f"{operator}: dtypes must be a list of dtype names such as "
                        f"['float32'], not the string {dtypes!r}")
    try:
        given = list(dtypes)
    except TypeError:
        raise TypeError(f"{operator}: dtypes must be a list of dtype names such as "
                        f"['float32'], got {type(dtypes).__name__}") from None
    known = all_dtypes().names
    names = []
    for dtype in given:
        name = dtype if isinstance(dtype, str) else None
        if name is None:
            try:
                name = np.dtype(dtype).name
            except TypeError:
                name = None
        if name not in known:
            raise ValueError(f"{operator}: dtypes: {dtype!r} is not the name of a dtype a "
                             f"tensor can have; the names are {', '.join(known)}")
        names.append(name)
    if not names:
        raise ValueError(f"{operator}: dtypes is empty, so every call would be refused; leave "
                         "it out to accept any dtype")
    return tuple(dict.fromkeys(names))


def _allowed(dtypes: Dtypes | dict[str, Dtypes] | Iterable[Any] | None,
             names: tuple[str, ...], operator: str) -> Dtypes | dict[str, Dtypes] | None:
    """``dtypes`` checked against the parameter ``names`` of ``operator``, as a Kernel keeps
    them."""
    if dtypes is None or isinstance(dtypes, Dtypes):
        return dtypes
    if isinstance(dtypes, dict):
        unknown = [key for key in dtypes if key not in names]
        if unknown:
            raise ValueError(f"{operator}: dtypes names {', '.join(map(repr, unknown))}, which "
                             f"{'is' if len(unknown) == 1 else 'are'} not among its parameters "
                             f"({', '.join(names)})")
        return {key: value if isinstance(value, Dtypes)
                else Dtypes(_dtype_names(value, operator)) for key, value in dtypes.items()}
    return Dtypes(_dtype_names(dtypes, operator))


def _require_takes(function: Any, names: tuple[str, ...], what: str) -> None:
    """TypeError naming ``what`` unless ``function`` is a plain callable that accepts the
    keyword arguments ``names`` (as the kernel handler calls it)."""
    if not callable(function):
        raise TypeError(f"{what} must be callable, got {type(function).__name__}")
    if inspect.isgeneratorfunction(function) or inspect.iscoroutinefunction(function) \
            or inspect.isasyncgenfunction(function):
        raise TypeError(f"{what} must be a plain function: {function!r} is a generator or a "
                        "coroutine function, whose body a call does not run")
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # a builtin without a signature: it may take anything
        return
    try:
        signature.bind(**dict.fromkeys(names))
    except TypeError as error:
        given = ", ".join(names) or "(none)"
        raise TypeError(f"{what} is called with the keyword arguments {given}, but its "
                        f"signature {signature} does not accept them ({error})") from None


def check_name(name: Any) -> None:
    """Refuse, naming the rule, a ``name`` no kernel can be registered for: not an operator
    name, one the emulator computes in C, or any name from inside a running kernel."""
    if not isinstance(name, str):
        raise TypeError(f"name must be an operator name such as 'aclnnSinc', got "
                        f"{type(name).__name__}")
    if not (name.startswith("aclnn") and len(name) > 5 and name.isidentifier()
            and len(name.encode()) < 128):
        raise ValueError(f"name must be an operator name 'aclnn<Name>' (an identifier of at "
                         f"most 127 bytes), got {name!r}")
    if kernel_calls.running() is not None:
        raise kernel_calls.refuse_call(f"registering a kernel for {name}")
    if name in c_kernels():
        raise ValueError(f"{name} is computed by the emulator's own C kernel: a Python kernel "
                         "would never run (its entry points do not ask for one)")


def kernel(name: str, *, dtypes: Dtypes | dict[str, Dtypes] | Iterable[Any] | None = None,
           check: Callable[..., None] | None = None,
           parameters: Iterable[str] | None = None,
           builtin: bool = False, prototype: tuple[str, ...] | None = None
           ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register the decorated function as the kernel of operator ``name`` (replacing any
    other). ``parameters``: its C parameter names, by default those of its prototype
    (``prototype`` when the caller read it, else the operator table's), whose number they
    must have. Every argument is checked here, at registration: TypeError or ValueError
    naming the argument and the rule."""
    check_name(name)
    known = prototype if prototype is not None else parameters_of(name)
    if parameters is None:
        if known is None:
            raise ValueError(f"{name} is not in aclnn_py's operator table: give its C "
                             "parameter names with parameters=[...]")
        names = known
    else:
        if isinstance(parameters, (str, bytes)):
            raise TypeError(f"{name}: parameters must be a list of C parameter names, not the "
                            f"string {parameters!r}")
        names = tuple(parameters)
        bad = [p for p in names if not isinstance(p, str) or not p.isidentifier()]
        if bad:
            raise ValueError(f"{name}: parameters must be C parameter names (identifiers), got "
                             f"{', '.join(map(repr, bad))}")
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: parameters names a parameter twice: {', '.join(names)}")
        if known is not None and len(names) != len(known):
            raise ValueError(f"{name}: parameters has {len(names)} names but the operator "
                             f"takes {len(known)} arguments at phase 1 ({', '.join(known)}; "
                             "workspaceSize and executor left out)")
    allowed = _allowed(dtypes, names, name)
    if check is not None:
        _require_takes(check, names, f"check of {name}")

    def register(compute: Callable[..., None]) -> Callable[..., None]:
        _require_takes(compute, names, f"the kernel of {name}")
        KERNELS[name] = Kernel(name, compute, allowed, check, names, builtin)
        if _installed:
            _register_with_emulator([name])
        return compute

    return register


def builtin(name: str, *, dtypes: Dtypes | dict[str, Dtypes] | Iterable[str] | None = None,
            check: Callable[..., None] | None = None
            ) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """:func:`kernel` for the family modules."""
    return kernel(name, dtypes=dtypes, check=check, builtin=True)


def table() -> dict[str, Kernel]:
    """:data:`KERNELS`, with every family module imported."""
    global _loaded
    if not _loaded:
        with _lock:
            if not _loaded:
                for family in FAMILIES:
                    importlib.import_module(f"{__name__}.{family}")
                _loaded = True
    return KERNELS


def _register_with_emulator(names: Iterable[str]) -> None:
    for name in names:
        ll.register_kernel(name)
        _installed.add(name)


def install_once() -> None:
    """Give the loaded emulator every kernel of the table, then the handler, once per process
    (its libraries stay loaded; a kernel registered later is registered at once).

    The handler comes last, and a concurrent caller waits until it is set: a thread that finds
    the handler set (here, or in C a program's other thread) finds every kernel registered."""
    global _handler_set
    if _handler_set:
        return
    names = sorted(table())  # takes _lock itself
    with _lock:
        if not _handler_set:
            _register_with_emulator(names)
            ll.set_kernel_handler(dispatch)
            _handler_set = True


# ---- arguments -----------------------------------------------------------------------


def _array(value: tuple[Any, ...], writable: bool, name: str = "a tensor", phase: int = 2
           ) -> Any:
    buffer, code, shape, strides, offset, fmt = value[:6]
    dtype = numpy_dtype(code)
    if dtype is None:
        raise Refusal(f"{name} has aclDataType {code} ({ll.dtype_name(code)}), which has no "
                      "numpy dtype: the emulator's Python kernels do not compute it")
    if phase == 1 and buffer is None:  # CANN's phase 1 takes tensors without data
        described = _described(shape, dtype)
        _formats.current[id(described)] = (weakref.ref(described), fmt)
        return described
    if buffer is None:  # nothing to touch: an empty view (or one without memory)
        if any(n == 0 for n in shape):
            array: np.ndarray = np.zeros(shape, dtype)
        else:
            raise Refusal(f"{name}'s data address is NULL")
    else:
        itemsize = dtype.itemsize
        array = np.ndarray(shape, dtype, buffer=buffer, offset=offset * itemsize,
                           strides=tuple(s * itemsize for s in strides))
    if not writable:
        array.flags.writeable = False
    _formats.current[id(array)] = (weakref.ref(array), fmt)
    if len(value) > 6:  # an output whose kernel may report its real extent
        _reports.current[id(array)] = (weakref.ref(array), value[6])
    return array


def _described(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A read-only array of ``shape`` and ``dtype`` over one element: what a phase-1 check
    sees of a tensor that has no data yet (its shape, dtype and rank; checks read no values,
    and judge strides through the phase-1 rules, which see the real ones)."""
    array = np.lib.stride_tricks.as_strided(np.zeros(1, dtype), shape, (0,) * len(shape))
    array.flags.writeable = False
    return array


def _scalar(value: tuple[bytes, int], name: str = "an aclScalar") -> Any:
    """The scalar's value exactly, as a numpy scalar of its dtype (from the bytes
    aclCreateScalar copied: an int64 beyond 2**53, a complex, a float16 keep every bit)."""
    data, code = value
    dtype = numpy_dtype(code)
    if dtype is None:
        raise Refusal(f"{name} has aclDataType {code} ({ll.dtype_name(code)}), which has no "
                      "numpy dtype: the emulator's Python kernels do not compute it")
    return np.frombuffer(data, dtype, count=1)[0]


class _Reports(threading.local):
    """This thread's current kernel call: its outputs that may report their real extent,
    by id (the array, weakly, and its ``report``)."""

    def __init__(self) -> None:
        self.current: dict[int, tuple[weakref.ref[np.ndarray], Callable[..., None]]] = {}


_reports = _Reports()


class _Formats(threading.local):
    """This thread's current kernel call: the aclFormat of each tensor it received, by id
    (the array, weakly, and its format)."""

    def __init__(self) -> None:
        self.current: dict[int, tuple[weakref.ref[np.ndarray], int]] = {}


_formats = _Formats()


def tensor_format(array: np.ndarray) -> int:
    """The aclFormat (headers/acl_rt.h) of a tensor of the running kernel call, as the kernel
    received it: at phase 1 for the checks CANN makes on formats (aclnnConvolution takes NCL,
    NCHW or NCDHW by rank), at phase 2 for a layout (a channel-last NDHWC tensor)."""
    found = _formats.current.get(id(array))
    if found is None or found[0]() is not array:
        raise ValueError("tensor_format takes a tensor of the running kernel call, as it "
                         "received it")
    return found[1]


def report_extent(out: np.ndarray, shape: Iterable[int]) -> None:
    """For an operator whose output size depends on the data (aclnnMaskedSelect): the output
    ``out`` (as the kernel received it) really holds ``shape`` (its first elements, in C
    order). Once the kernel returns, the output's aclTensor takes that view shape, as CANN's
    launch gives it (``aclGetViewShape`` reads it back)."""
    found = _reports.current.get(id(out))
    if found is None or found[0]() is not out:
        raise ValueError("report_extent takes an output tensor of the running kernel, as it "
                         "received it, at compute time")
    found[1](tuple(shape))


_UNSIGNED_64 = frozenset({"uint64_t", "size_t", "unsigned long", "unsigned long long"})
_unsigned_parameters: dict[str, frozenset[str]] = {}


def _unsigned_64(kernel_: Kernel) -> frozenset[str]:
    """The parameters of ``kernel_`` whose C type is a 64-bit unsigned integer: the emulator
    passes integers as int64, so values from 2**63 arrive negative."""
    found = _unsigned_parameters.get(kernel_.name)
    if found is None:
        from ...ops import roles

        entry = roles.table_entry(kernel_.name)
        types = {} if entry is None else {name: " ".join(c_type.replace("const", " ").split())
                                           for c_type, name in entry["parameters"]}
        found = _unsigned_parameters[kernel_.name] = frozenset(
            name for name in kernel_.parameters if types.get(name) in _UNSIGNED_64)
    return found


def arguments(kernel_: Kernel, arguments_: list[tuple[int, Any, str]], phase: int = 2
              ) -> dict[str, Any]:
    """The kernel's keyword arguments for the handler's ``arguments`` (at phase 1, tensors
    are described only: see :func:`_described`)."""
    if len(arguments_) != len(kernel_.parameters):
        raise Refusal(f"{kernel_.name} has {len(kernel_.parameters)} parameters, the call "
                      f"{len(arguments_)}")
    _reports.current = {}
    _formats.current = {}
    values: dict[str, Any] = {}
    for name, (kind, value, role) in zip(kernel_.parameters, arguments_):
        if value is None:
            values[name] = None
        elif kind == ll.KERNEL_TENSOR:
            values[name] = _array(value, role != "i", name, phase)
        elif kind == ll.KERNEL_TENSOR_LIST:
            values[name] = [_array(member, role != "i", f"{name}[{index}]", phase)
                            for index, member in enumerate(value)]
        elif kind == ll.KERNEL_SCALAR:
            values[name] = _scalar(value, name)
        elif kind == ll.KERNEL_SCALAR_LIST:
            values[name] = [_scalar(member, f"{name}[{index}]")
                            for index, member in enumerate(value)]
        elif kind == ll.KERNEL_INTEGER and value < 0 and name in _unsigned_64(kernel_):
            values[name] = value + (1 << 64)
        else:
            values[name] = value
    return values


def _check_dtypes(kernel_: Kernel, values: dict[str, Any], outputs: set[str]) -> None:
    """Every tensor the operator reads (inputs, and tensors it updates in place) has one of
    the kernel's dtypes; ``outputs`` are the kernel's ``check``'s to judge. A builtin kernel
    of an operator whose dtypes the phase-1 rules state is not asked: the rules decided."""
    allowed = kernel_.dtypes
    if allowed is None or (kernel_.builtin and states_dtypes(kernel_.name)):
        return
    for name, value in values.items():
        permitted = allowed.get(name) if isinstance(allowed, dict) else allowed
        if name in outputs or permitted is None:
            continue
        members = value if isinstance(value, list) else [value]
        for member in members:
            if isinstance(member, np.ndarray) and member.dtype not in permitted:
                raise Refusal(f"{name} has dtype {member.dtype.name}, which {kernel_.name} does "
                              f"not support: it supports {', '.join(permitted.names)}")


# ---- running kernels ------------------------------------------------------------------


def dispatch(name: str, phase: int, arguments_: list[tuple[int, Any, str]]
             ) -> tuple[int, str] | None:
    """The emulator's handler: check (phase 1) or compute (phase 2) one call of ``name``;
    None, or ``(status, message)`` to fail with. An Exception of the kernel fails the call
    (phase 1: 161002 for Refusal's status, ValueError, TypeError and IndexError, else 561000;
    phase 2: 507015); other exceptions (KeyboardInterrupt, SystemExit) pass to the handler's
    caller (``_c.emulator_api``), which has them raised by the call that ran the kernel."""
    kernel_ = table().get(name)
    if kernel_ is None:  # removed from the table but not from the emulator
        return (NO_KERNEL if phase == 1 else KERNEL_FAILED,
                f"{name} has no Python kernel (it was removed)")
    # An interrupt may land at any call here (signal handlers run there): the thread's mark
    # is set inside the try, and put back first thing in the finally, before any call, so
    # that no interrupt leaves it set (every aclnn_py call of the thread would be refused).
    state = kernel_calls.thread_state
    outer = kernel_calls.running()
    leaves: list[Callable[[], None]] = []
    try:
        kernel_calls.mark_running(name)
        for enter in kernel_calls.kernel_hooks():
            leaves.append(enter())
        failed = _run(kernel_, phase, arguments_)
        refused = kernel_calls.refused()
        if failed is None and refused is not None:  # it caught the refusal and went on
            failed = (INNER if phase == 1 else KERNEL_FAILED,
                      f"the kernel of {name} called aclnn_py: {refused}")
        return failed
    finally:
        state.name = outer  # assignments, not a call: no interrupt can land before them
        state.refused = None
        for leave in reversed(leaves):
            leave()


def _run(kernel_: Kernel, phase: int, arguments_: list[tuple[int, Any, str]]
         ) -> tuple[int, str] | None:
    name = kernel_.name
    try:
        values = arguments(kernel_, arguments_, phase)
        if phase == 1:
            outputs = {p for p, (_, _, role) in zip(kernel_.parameters, arguments_)
                       if role == "o"}
            _check_dtypes(kernel_, values, outputs)
            if kernel_.check is not None:
                kernel_.check(**values)
            return None
        where = trace.folder()
        before = trace.snapshot(values) if where is not None else {}
        kernel_.compute(**values)
        if where is not None:
            trace.record(name, before, values, [p for p, (_, _, role) in
                                                zip(kernel_.parameters, arguments_)
                                                if role != "i"], where)
        return None
    except Exception as error:  # noqa: BLE001 - the kernel's own failure, reported as such
        # Only its message is kept: its traceback's frames reach the caller's, which hold
        # the call's arrays and staging blocks, and the kernel may keep the error object.
        error.__traceback__ = None
        if isinstance(error, Refusal):
            return (error.status if phase == 1 else KERNEL_FAILED, str(error))
        if isinstance(error, (ValueError, TypeError, IndexError)) and phase == 1:
            return (PARAM_INVALID, str(error))
        which = "check" if phase == 1 else "kernel"
        return (INNER if phase == 1 else KERNEL_FAILED,
                f"the {which} of {name} raised {type(error).__name__}: {error}")


# ---- helpers for kernels -------------------------------------------------------------


INNER_NULLPTR = constant("ACLNN_ERR_INNER_NULLPTR")  # 561103: a step of CANN's graph failed


def view_copy_check(result_shape: tuple[int, ...], out: np.ndarray, name: str = "out") -> None:
    """The last step of most of CANN's operators, ``l0op::ViewCopy(result, out)``, fails in
    phase 1 (then the operator answers 561103, ACLNN_ERR_INNER_NULLPTR) when out's shape is not
    the result's, unless both hold one element (hicann/ops-math conversion/contiguous/op_host/
    op_api/contiguous.cpp CheckViewCopyParams)."""
    if tuple(out.shape) != tuple(result_shape) and not (
            out.size == 1 and int(np.prod(result_shape)) == 1):
        raise Refusal(f"{name} has shape {list(out.shape)} but the result's is "
                      f"{list(result_shape)}: copying it into {name} failed", INNER_NULLPTR)


def output_shapes(operator: str, **values: Any) -> dict[str, tuple[int, ...]]:
    """The shape of each output of ``operator`` for ``values`` (by C parameter name), by its
    rule in :mod:`aclnn_py.ops.outputs`: the one place an operator's output layout is written,
    read by call() to allocate outputs and by the kernels to check the outputs given. The
    kernel checks its parameters first; a rule that does not take them is a bug here."""
    from ...ops.outputs import infer

    layouts = infer(operator, values)
    if layouts is None:
        raise AssertionError(f"{operator}'s output rule does not take {sorted(values)}")
    return {name: layout.shape for name, layout in layouts.items()}


def check_output_shapes(operator: str, values: dict[str, Any], given: dict[str, Any],
                        wanted: str = "it must be") -> None:
    """Each output ``given`` (by C parameter name; None: not given) of the shape the output
    rule of ``operator`` gives for ``values`` (:func:`output_shapes`); else a ValueError
    naming it: "<name> has shape [...]; <wanted> [...]"."""
    shapes = output_shapes(operator, **values)
    for name, array in given.items():
        if array is not None and tuple(array.shape) != shapes[name]:
            raise ValueError(f"{name} has shape {list(array.shape)}; {wanted} "
                             f"{list(shapes[name])}")


def broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """Whether an array of ``shape`` broadcasts to ``target`` unchanged (numpy's rule)."""
    try:
        return np.broadcast_shapes(shape, target) == tuple(target)
    except ValueError:
        return False


def widen(array: Any) -> Any:
    """``array`` in its compute dtype: float16 and bfloat16 widened to float32."""
    array = np.asarray(array)
    if array.dtype == np.float16 or is_bfloat16(array.dtype):
        return array.astype(np.float32)
    return array


def store(out: np.ndarray, value: Any) -> None:
    """Write ``value`` into ``out``, rounded once to out's dtype (round to nearest even)."""
    out[...] = np.asarray(value).astype(out.dtype, copy=False)
