"""The bundled host emulator of CANN's C API: where it lives, and its introspection.

The emulator is built from C at install time into one CANN-shaped tree per CANN
release (:func:`home`): libraries named and split as that release's, version files,
``opp/`` and a ``set_env.sh``. aclnn_py uses the newest when no CANN install is
found (or with ``ACLNN_PY_BACKEND=emulator``); any program can use a tree as a CANN
install.

Environment variables read by the emulator at ``aclInit``:
``ACLNN_EMU_SOC`` (SoC name, default an Atlas A2 name), ``ACLNN_EMU_DEVICE_COUNT``
(devices on the emulated host, default 1; ``ASCEND_RT_VISIBLE_DEVICES`` then picks the
visible ones as CANN does), ``ACLNN_EMU_DEVICE_MEMORY`` (bytes per device, K/M/G/T suffixes),
``ACLNN_EMU_QUARANTINE`` (freed device blocks whose addresses are kept from reuse,
default 256, 0 to 65536), ``ACLNN_EMU_OP_CACHE`` (``1`` models CANN's aclnn
executor cache: once an operator and signature -- its tensors' dtypes, shapes,
strides, offsets, formats and storage shapes, and its attribute values -- ran
non-repeatably, phase 1 of that signature hands out a cached executor, which
``aclSetAclOpExecutorRepeatable`` refuses with 561000 and which launches once,
non-repeatably; default ``0``), ``ACLNN_EMU_LINK`` (``<latency_us>:<GB/s>``, e.g.
``10:25``: a transfer model; each host<->device copy, ``aclrtMemcpy`` or
``aclrtMemcpyAsync``, occupies a per-device copy engine, concurrent with kernels, for
the latency plus bytes over the bandwidth, and synchronisation returns no earlier than
the modelled end of the work; device-to-device copies are not on the link; unset or
empty: off; malformed: ``aclInit`` fails with 100000; see the page emulator.md).

Read by a program that never loaded aclnn_py (a C or C++ program), whose first call of an
operator computed in Python starts Python in it: ``ACLNN_EMU_LIBPYTHON`` (the libpython to
load instead of the installation's) and ``ACLNN_EMU_KERNELS`` (comma-separated modules of the
user's kernels to import); see the page c-programs.md (``python -m aclnn_py docs``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .. import _caches
from .._c import kernel_calls
from .._c import lowlevel as ll
from .._c.loader import EMULATOR_LAYOUTS, emulator_home
from ..errors import AclError
from . import _kernels

__all__ = ["LAYOUTS", "home", "loaded", "stats", "device_stats", "reset_counters",
           "inject_fault", "clear_faults", "faults", "fault_apis", "kernel", "kernels",
           "Refusal", "report_extent"]

Refusal = _kernels.Refusal
report_extent = _kernels.report_extent

# The runtime gives a loaded emulator these kernels when it starts, and the catalog knows
# them: registered here, above both, so that neither imports the kernels.
kernel_calls.provide(_kernels.install_once, _kernels.table)


LAYOUTS: tuple[str, ...] = EMULATOR_LAYOUTS
"""The CANN releases the emulator is laid out as, oldest first."""


def home(layout: str | None = None) -> str:
    """The install root of the emulator tree laid out as CANN ``layout`` (pass it as
    ASCEND_HOME_PATH or ACLNN_PY_CANN_HOME, or source its ``set_env.sh``).

    ``"8.0.RC2"`` and ``"8.3"``: ``lib64/libascendcl.so``, ``libnnopbase.so`` and
    ``libopapi.so`` (every operator); ``"8.5"`` (the default, the tree aclnn_py falls back
    to): ``lib64/libacl_rt.so``, ``libnnopbase.so``, ``libopapi_nn.so`` (the losses) and
    ``libopapi_math.so`` (``aclnnAdd``), both over ``libopapi.so``. The 8.0.RC2 libraries
    lack the repeatable-executor API, documented from 8.0.RC3; before 8.5,
    ``aclrtMemcpyAsync`` requires ``aclrtMallocHost`` memory and 64-byte alignment.
    Raises ValueError for another layout.
    """
    return str(emulator_home(layout))


def loaded() -> bool:
    """Whether the CANN libraries aclnn_py loaded (loading them now if needed) are this
    emulator -- through either backend, any of its trees -- rather than a real CANN."""
    return ll.emulator_loaded()


def stats() -> dict[str, int]:
    """Live resources and traffic counters of the loaded emulator.

    Keys include ``live_device_bytes``, ``live_allocations``, ``live_tensors``,
    ``live_executors``, ``pending_tasks``, ``h2d_bytes``, ``d2h_bytes`` and
    ``quarantined_allocations`` / ``quarantined_bytes`` (freed device blocks whose
    addresses are not handed out again yet; not counted as live),
    ``cached_executors`` (executors phase 1 handed out from the modelled executor
    cache, ``ACLNN_EMU_OP_CACHE=1``), ``memcpy_calls`` (``aclrtMemcpy`` and
    ``aclrtMemcpyAsync`` calls, any kind) and ``sync_calls`` (stream, event and device
    synchronisations).
    Raises UnavailableError when the loaded backend is a real CANN.
    """
    return ll.emulator_stats()


def device_stats(device: int) -> dict[str, int]:
    """One visible device's share of the traffic counters: ``h2d_bytes`` and ``d2h_bytes``
    (copies made with that device current) and ``kernels_executed`` (operator kernels run on
    its memory), since load or :func:`reset_counters`.

    Raises ValueError for a device that is not visible, UnavailableError when the loaded
    backend is a real CANN.
    """
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"device must be an int, got {type(device).__name__}")
    try:
        return ll.emulator_device_stats(device)
    except AclError as error:
        if error.status != ll.constant("ACL_ERROR_INVALID_PARAM"):
            raise
        raise ValueError(error.message or str(error)) from None


def reset_counters() -> None:
    """Zero the traffic counters (bytes copied, calls, launches, copies, synchronisations)."""
    ll.emulator_reset_counters()


_fault_apis: tuple[str, ...] | None = None


def fault_apis() -> tuple[str, ...]:
    """The C functions :func:`inject_fault` accepts: every CANN API the loaded emulator tree
    exports (a release that lacks a function, e.g. 8.0.RC2's repeatable-executor API, has
    no fault point there)."""
    global _fault_apis
    if _fault_apis is None:
        _fault_apis = tuple(api for api in ll.emulator_fault_apis() if ll.exported(api))
    return _fault_apis


def inject_fault(api: str, status: int, nth: int = 1) -> None:
    """Make the ``nth`` call from now of the C function ``api`` fail with ``status``.

    Raises ValueError for an ``api`` the emulator does not implement (such a fault
    could never fire) and for ``nth`` below 1. :func:`faults` tells whether it fired.
    """
    if nth < 1:
        raise ValueError(f"nth must be at least 1, got {nth}")
    if api not in fault_apis():
        raise ValueError(f"unknown API {api!r}: the emulator implements no C function of that "
                         f"name, so a fault there could never fire; "
                         f"aclnn_py.emulator.fault_apis() lists the names accepted")
    try:
        ll.emulator_inject_fault(api, nth, status)
    except AclError as error:  # the emulator's own argument check is the reference
        if error.status != ll.constant("ACL_ERROR_INVALID_PARAM"):
            raise
        raise ValueError(error.message or str(error)) from None


def clear_faults() -> None:
    """Disarm every injected fault and forget the ones that fired."""
    ll.emulator_clear_faults()


def faults() -> list[dict[str, Any]]:
    """Every fault injected since the last :func:`clear_faults`, in arming order.

    Each is a dict with ``api``, ``status``, ``nth`` (as armed), ``fired`` (True once
    the ``nth`` call failed; fired faults stay listed until :func:`clear_faults`) and
    ``remaining`` (calls still to go, 0 once fired).
    """
    return ll.emulator_faults()


# ---- kernels ------------------------------------------------------------------------------

def kernels() -> list[str]:
    """The sorted names of the operators the emulator computes: its C kernels, aclnn_py's
    Python kernels and those registered with :func:`kernel`. Every other operator its trees
    declare fails phase 1 with 561003 (ACLNN_ERR_INNER_FIND_KERNEL_ERROR)."""
    return sorted({*_kernels.c_kernels(), *_kernels.table()})


def kernel(name: str, *, dtypes: Iterable[str] | None = None,
           check: Callable[..., None] | None = None,
           parameters: Iterable[str] | None = None) -> Callable[[Callable[..., None]],
                                                              Callable[..., None]]:
    """Decorator: the emulated kernel of operator ``name``, for an operator that an
    installed header declares (one of CANN's, or of a custom operator package) -- on the
    emulator it stands in for the operator's missing kernel or ``libcust_opapi.so``.

    The function receives the call's arguments by their C parameter names: tensors as numpy
    arrays viewing the emulated device memory (outputs and tensors updated in place
    writable; valid during the call only), tensor lists as lists of arrays, scalars as
    numpy scalars, integer/bool/float arrays as tuples, strings as str, numbers as int,
    bool or float, an optional argument left out as None. It runs when the launch runs on
    its stream (at the stream's synchronisation on the emulator, in the synchronising
    thread) and must not call aclnn_py. The kernel registered when a launch runs is the one
    that computes it. An operator whose output extent depends on the data tells it with
    :func:`report_extent` (the output's aclTensor then takes that view shape).
    Registering a kernel empties aclnn_py's caches (``empty_cache()``), whose executors ran
    the phase 1 of the kernel before; a plan keeps the executor it made.

    A kernel must not call aclnn_py: such a call raises RuntimeError, and the kernel's call
    fails (at phase 1, or at its stream's synchronisation) even if the kernel catches it.
    An exception of the kernel fails the call, with its message; a KeyboardInterrupt (or
    SystemExit) raised inside it is raised again by the call that ran it, after the work
    queued on its stream was dropped (see the page reliability.md).

    ``dtypes``: the dtype names every tensor it reads may have (checked at phase 1).
    ``check(**arguments)``: called at phase 1, before anything is queued; raising
    :class:`Refusal` or ValueError refuses the call with 161002 and the message.
    ``parameters``: the C parameter names, in order; by default aclnn_py's operator table's,
    else the installed header's (a custom operator's); as many as the prototype has.

    Everything is checked here, at registration: ``name`` must be an operator name a
    kernel can be given, ``dtypes`` a list of dtype names, ``parameters`` a list of
    names, ``check`` and the decorated function callables accepting those names as keyword
    arguments (TypeError or ValueError naming the argument and the rule).
    """
    _kernels.check_name(name)
    prototype = _prototype(name)
    if prototype is None and parameters is None:
        raise ValueError(f"{name}: no installed header declares it, and aclnn_py's operator "
                         "table does not list it; give its C parameter names with "
                         "parameters=[...]")
    register = _kernels.kernel(name, dtypes=dtypes, check=check, parameters=parameters,
                               prototype=prototype)

    def decorate(function: Callable[..., None]) -> Callable[..., None]:
        register(function)
        if ll.emulator_loaded():  # the handler is installed with the first device use
            _kernels.install_once()
            ll.register_kernel(name)
            # Executors cached for earlier calls ran the earlier kernel's check: drop them,
            # so that phase 1 runs again with this one's.
            _caches.empty()
        return function

    return decorate


def _prototype(name: str) -> tuple[str, ...] | None:
    """The C parameter names of ``name``'s phase 1: the operator table's, else an installed
    header's (a custom operator's); None when neither has it."""
    found = _kernels.parameters_of(name)
    if found is not None:
        return found
    from ..ops import catalog  # an installed header's prototype (custom operators)

    try:
        described = catalog.signature(name)
    except (LookupError, ValueError, TypeError):
        return None
    return tuple(p.name for p in described.phase1_parameters)  # what phase 1 is given
