"""The bundled host emulator of CANN's C API: where it lives, and its introspection.

The emulator is a CANN-shaped tree (``lib64/libascendcl.so``,
``lib64/libnnopbase.so``, ``lib64/libopapi.so``, version info, ``opp/``) built
from C at install time. aclnn_py uses it when no CANN install is found (or
with ``ACLNN_PY_BACKEND=emulator``); any program can load it by path.

Environment variables read by the emulator at ``aclInit``:
``ACLNN_EMU_SOC`` (SoC name, default an Atlas A2 name), ``ACLNN_EMU_DEVICE_COUNT``
(default 1), ``ACLNN_EMU_DEVICE_MEMORY`` (bytes per device, K/M/G/T suffixes).
"""

from __future__ import annotations

from . import _lowlevel as ll
from ._loader import find_emulator

__all__ = ["home", "stats", "reset_counters", "inject_fault", "clear_faults"]


def home() -> str:
    """The emulator's install root (pass it as ASCEND_HOME_PATH or ACLNN_PY_CANN_HOME)."""
    return str(find_emulator().root)


def stats() -> dict[str, int]:
    """Live resources and traffic counters of the loaded emulator.

    Keys include ``live_device_bytes``, ``live_allocations``, ``live_tensors``,
    ``live_executors``, ``pending_tasks``, ``h2d_bytes`` and ``d2h_bytes``.
    Raises UnavailableError when the loaded backend is a real CANN.
    """
    return ll.emulator_stats()


def reset_counters() -> None:
    """Zero the traffic counters (bytes copied, calls, launches)."""
    ll.emulator_reset_counters()


def inject_fault(api: str, status: int, nth: int = 1) -> None:
    """Make the ``nth`` call from now of the C function ``api`` fail with ``status``."""
    if nth < 1:
        raise ValueError(f"nth must be at least 1, got {nth}")
    ll.emulator_inject_fault(api, nth, status)


def clear_faults() -> None:
    """Disarm every injected fault that has not fired."""
    ll.emulator_clear_faults()
