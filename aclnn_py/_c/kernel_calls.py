"""What the runtime and the emulator's Python kernels share without importing each other:
which operator's kernel the calling thread runs (aclnn_py calls from inside one are refused),
the hooks run when a kernel starts, and the kernels the emulator is given.

The kernels (``aclnn_py.emulator``) sit above the runtime and register here what the layers
below ask for: :func:`provide` at import, before any runtime starts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

# .name: the operator whose kernel this thread runs, if any; .refused: the message of the call
# refused inside it. Public so that a kernel's caller can reset it with plain assignments,
# which no signal handler can interrupt half-way (a function call can be).
thread_state = threading.local()
# Called when a thread starts a kernel, each returning what to call when it ends: the runtime
# layer sets aside what would let an aclnn_py call skip its refusal (runtime.process).
_on_kernel: list[Callable[[], Callable[[], None]]] = []


def on_kernel(enter: Callable[[], Callable[[], None]]) -> None:
    """Have ``enter()`` called whenever a thread starts running a kernel (its check or its
    compute); it returns the function called when the kernel ends."""
    _on_kernel.append(enter)


def kernel_hooks() -> tuple[Callable[[], Callable[[], None]], ...]:
    """The functions :func:`on_kernel` registered, in order."""
    return tuple(_on_kernel)


def running() -> str | None:
    """The operator whose kernel (check or compute) the calling thread runs, or None."""
    name: str | None = getattr(thread_state, "name", None)
    return name


def mark_running(name: str | None) -> None:
    """Record that the calling thread now runs the kernel of ``name`` (None: none), with no
    refused call yet."""
    thread_state.name = name
    thread_state.refused = None


def refused() -> str | None:
    """The message of the aclnn_py call refused inside the kernel this thread runs, if any."""
    message: str | None = getattr(thread_state, "refused", None)
    return message


def refuse_call(what: str) -> RuntimeError:
    """The error for ``what`` (an aclnn_py call) made from inside the kernel the calling
    thread runs; the kernel then fails even if it catches the error. A kernel runs inside
    the stream work of a synchronisation or a launch: a call into aclnn_py from there would
    wait for that very work, or for a lock its caller holds."""
    error = RuntimeError(f"{what} from inside the kernel of {running()}: a kernel must not "
                         "call aclnn_py (it runs inside a synchronisation of its stream's "
                         "work, which the call would wait for); compute with numpy on the "
                         "arrays it is given")
    thread_state.refused = str(error)
    return error


# ---- the kernels the emulator is given ----------------------------------------------------

_install: Callable[[], None] | None = None
_names: Callable[[], Iterable[str]] | None = None


def provide(install: Callable[[], None], names: Callable[[], Iterable[str]]) -> None:
    """Register the emulator's kernels: ``install()`` gives the loaded emulator every kernel
    and the handler (once per process), ``names()`` lists the operators they compute."""
    global _install, _names
    _install, _names = install, names


def install_kernels() -> None:
    """Give the loaded emulator its Python kernels (nothing when none were provided)."""
    if _install is not None:
        _install()


def kernel_names() -> frozenset[str]:
    """The operators the emulator's Python kernels compute (empty when none were provided)."""
    return frozenset(_names()) if _names is not None else frozenset()
