"""Exceptions raised by aclnn_py.

Every CANN status that is not success becomes an :class:`AclError` (or its
subclass :class:`OutOfMemoryError`) carrying the numeric ``status``, its
symbolic ``name``, the C ``api`` that returned it and CANN's own ``message``
from ``aclGetRecentErrMsg()``. Status names come from the C declarations in
``headers/`` (the only table of codes); unknown codes still make a valid error.
"""

from __future__ import annotations

from typing import Any

from ._c.codes import OUT_OF_MEMORY, STATUS_NAMES

__all__ = [
    "AclnnPyError",
    "AclError",
    "OutOfMemoryError",
    "LibraryNotFoundError",
    "UnavailableError",
    "status_name",
]

# First digit of a status: who can fix it (CANN runtime docs, 25-01_aclError.md).
_CATEGORIES = {
    1: "invalid argument or environment (fixable by the caller)",
    2: "resource exhausted or not supported here",
    3: "business-function exception",
    5: "internal software or hardware error",
}


def status_name(status: int) -> str:
    """CANN's symbolic name of ``status``, or ``UNKNOWN(<status>)``."""
    return STATUS_NAMES.get(status, f"UNKNOWN({status})")


class AclnnPyError(Exception):
    """Base class of every exception aclnn_py defines."""


class AclError(AclnnPyError, RuntimeError):
    """A CANN C function returned a non-success status.

    Attributes
    ----------
    status : int
        The numeric status (``aclError`` or ``aclnnStatus``).
    name : str
        CANN's symbolic name for it, e.g. ``"ACLNN_ERR_PARAM_INVALID"``.
    api : str
        The C function that returned it.
    message : str
        CANN's text from ``aclGetRecentErrMsg()``, empty when it gave none.
    """

    def __init__(self, status: int, api: str, message: str = "") -> None:
        self.status = int(status)
        self.api = api
        self.message = message
        self.name = status_name(self.status)
        super().__init__(self.status, api, message)

    @property
    def category(self) -> str:
        """What kind of failure the status family denotes."""
        return _CATEGORIES.get(self.status // 100000, "unknown")

    def __str__(self) -> str:
        text = self.message.strip() or "(CANN gave no message)"
        return f"{self.api} failed with {self.name} ({self.status}): {text}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.status, self.api, self.message))

    @staticmethod
    def from_status(status: int, api: str, message: str = "") -> AclError:
        """The right subclass of AclError for ``status``."""
        cls = OutOfMemoryError if status in OUT_OF_MEMORY else AclError
        return cls(status, api, message)


class OutOfMemoryError(AclError, MemoryError):
    """Device memory could not be allocated."""


class LibraryNotFoundError(AclnnPyError, OSError):
    """The CANN libraries could not be found or loaded.

    ``tried`` lists every path that was looked at, in order.
    """

    def __init__(self, message: str, tried: tuple[str, ...] | list[str] = ()) -> None:
        self.tried = tuple(tried)
        self.message = message
        super().__init__(message)

    def __str__(self) -> str:
        if not self.tried:
            return self.message
        paths = "\n".join(f"  {path}" for path in self.tried)
        return f"{self.message}\nPaths tried:\n{paths}"

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message, self.tried))


class UnavailableError(AclnnPyError, RuntimeError):
    """A C function is missing from the loaded CANN libraries (too old a CANN)."""

    def __init__(self, api: str, library: str) -> None:
        self.api = api
        self.library = library
        super().__init__(api, library)

    def __str__(self) -> str:
        return (f"{self.api} is not exported by {self.library}; "
                "this CANN release does not provide it")

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.api, self.library))
