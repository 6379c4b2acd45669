"""aclnn_py's kernels brought up by the emulator itself, in a process that did not load
aclnn_py: a C or C++ program (the emulator started Python in it), or Python code that calls
an emulator tree's libraries directly. The emulator calls :func:`start` on the first operator
call that needs a Python kernel and finds no kernel handler (``emulator/src/rt_python.c``)."""

from __future__ import annotations

import importlib
from pathlib import Path

from ..._c import loader
from . import install_once


def start(root: str, modules: str) -> str:
    """Give the emulator tree at ``root`` (already loaded by the process) aclnn_py's kernel
    handler and kernels, then import ``modules`` (``ACLNN_EMU_KERNELS``: comma-separated
    module names of the user's kernels, registered with ``aclnn_py.emulator.kernel``).

    Returns "" on success, else why it failed: nothing may unwind into the emulator's C.
    """
    try:
        loader.adopt_emulator(Path(root))
        install_once()
        for name in (part.strip() for part in modules.split(",")):
            if name:
                try:
                    importlib.import_module(name)
                except Exception as error:
                    raise ImportError(f"ACLNN_EMU_KERNELS names {name!r}, which failed to "
                                      f"import: {type(error).__name__}: {error}") from error
    except Exception as error:  # noqa: BLE001 - reported to the C caller as text
        return f"{type(error).__name__}: {error}"
    return ""
