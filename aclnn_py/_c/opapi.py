"""The aclnn operators (``libopapi.so``, or one library per operator repository from
CANN 8.5): binding an operator's two phases and calling them."""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import _caches
from ..errors import UnavailableError
from ._ffi import ffi
from .core import OPS, check
from .emulator_api import described_operator

# Operators bound from a library by path (aclnn_py.call): (library, C name) -> C function.
_bound_functions: dict[tuple[str, str], Any] = {}
_caches.register("bound operator functions", holds="the two phases of an operator bound "
                 "from a library by path", bound="two per operator the headers declare",
                 size=lambda: len(_bound_functions), empty=None)


def _operator_function(library: str, name: str) -> Any:
    """``name`` from the loaded operator libraries (``library`` ""), else as bound by
    :func:`bind_operator` from ``library``."""
    if library:
        return _bound_functions[(library, name)]
    return getattr(OPS, name)


def symbol_address(library: Path, name: str) -> int | None:
    """The address of the exported symbol ``name`` of the already loaded ``library``, or
    None when it does not export it."""
    return symbol_finder(library)(name)


def symbol_finder(library: Path) -> Callable[[str], int | None]:
    """:func:`symbol_address` of many names in one loaded ``library``, opened once."""
    try:
        handle = ctypes.CDLL(str(library), mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return lambda name: None

    def find(name: str) -> int | None:
        try:
            function = getattr(handle, name)
        except AttributeError:
            return None
        address = ctypes.cast(function, ctypes.c_void_p).value
        return int(address) if address else None

    return find


PHASE2_TYPES = ("void *", "uint64_t", "aclOpExecutor *", "aclrtStream")


def bind_operator(library: Path, operator: str, phase1_types: tuple[str, ...],
                  phase2_types: tuple[str, ...] = PHASE2_TYPES) -> None:
    """Make ``operator``'s phase 1 (declared with the C ``phase1_types``) and phase 2
    (``phase2_types``: CANN's usual four, or with parameters of its own between the executor
    and the stream) from the loaded ``library`` callable by the functions below with
    ``library=str(library)``.

    The header's declaration is the function type: a C type the binding's declarations
    (``headers/``) lack cannot be called, and the error names it.
    """
    key = str(library)
    for name, types in ((operator + "GetWorkspaceSize", phase1_types), (operator, phase2_types)):
        if (key, name) in _bound_functions:
            continue
        address = symbol_address(library, name)
        if address is None:
            raise UnavailableError(name, key)
        try:
            function_type = ffi.typeof(f"aclnnStatus(*)({', '.join(types)})")
        except ffi.error as error:
            raise TypeError(f"{name}: its parameter types ({', '.join(types)}) include a C type "
                            f"aclnn_py does not know ({error})") from None
        _bound_functions[(key, name)] = ffi.cast(function_type, address)


def bind_described_operator(library: Path, operator: str,
                            parameters: list[tuple[str, str, str, bool]],
                            phase2_extra: int = 0) -> None:
    """Make ``operator``'s two phases, as the emulator's generic entry points (no library
    exports them: ``library`` is where its library would be), callable with
    ``library=str(library)``. ``parameters`` as :func:`.emulator_api.described_operator`
    (phase 1's); ``phase2_extra``: how many parameters its header's phase 2 takes between
    the executor and the stream, which the generic phase 2 is not given."""
    key = str(library)
    if (key, operator) not in _bound_functions:
        phase1, phase2 = described_operator(operator, parameters)
        _bound_functions[(key, operator + "GetWorkspaceSize")] = phase1
        _bound_functions[(key, operator)] = phase2 if not phase2_extra else \
            _without_extra(phase2)


def _without_extra(phase2: Any) -> Callable[..., int]:
    """``phase2(workspace, size, executor, stream)`` called as a phase 2 with parameters of
    its own (``(workspace, size, executor, *extra, stream)``), which it is not given."""
    def call(workspace: Any, workspace_size: int, executor: Any, *rest: Any) -> int:
        return int(phase2(workspace, workspace_size, executor, rest[-1]))

    return call


def operator_workspace_size(operator: str, *arguments: Any, owner: Any = None,
                            library: str = "") -> tuple[int, Any]:
    """Phase 1, ``<operator>GetWorkspaceSize(*arguments, &size, &executor)``.

    Returns (workspace bytes, executor handle). With ``owner`` (an ``aclpyHandle``),
    CANN writes the executor straight into it, so it is owned from the moment it exists.
    """
    api = operator + "GetWorkspaceSize"
    size = ffi.new("uint64_t *")
    if owner is None:
        executor = ffi.new("aclOpExecutor **")
    else:
        executor = ffi.cast("aclOpExecutor **", ffi.addressof(owner, "handle"))
    check(_operator_function(library, api)(*arguments, size, executor), api)
    return int(size[0]), executor[0]


def operator_launch(operator: str, workspace: Any, workspace_size: int, executor: Any,
                    stream: Any) -> None:
    """Phase 2, ``<operator>(workspace, size, executor, stream)``."""
    check(getattr(OPS, operator)(workspace, workspace_size, executor, stream), operator)


def operator_phase2(operator: str, library: str = "") -> Any:
    """The C function of phase 2, ``<operator>``, for :func:`launch_consuming`."""
    return _operator_function(library, operator)


def operator_launcher(operator: str, library: str = "") -> Any:
    """Phase 2, ``<operator>(workspace, size, executor, stream)``, as a function looked
    up once (launches are the per-call path)."""
    function = _operator_function(library, operator)

    def launch(workspace: Any, workspace_size: int, executor: Any, stream: Any) -> None:
        check(function(workspace, workspace_size, executor, stream), operator)

    return launch
