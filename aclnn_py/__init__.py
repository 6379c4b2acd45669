"""aclnn_py: CANN's aclnn operators on Ascend NPUs, straight from Python over numpy arrays.

Libraries are found and loaded lazily on first use; importing aclnn_py never
needs CANN. Without a CANN install, and with no CANN location named in the
environment, the bundled host emulator runs instead (see :mod:`aclnn_py.emulator`);
a named location that does not load is an error at the first call.

``aclnn_py.testing`` and ``aclnn_py.doctor``, and what comes from the header
catalog (``Parameter``, ``Signature``, ``register_roles``, ``unregister_roles``), are
imported on first use, so that importing aclnn_py stays cheap.
"""

import importlib
import logging
from typing import TYPE_CHECKING, Any

try:  # written or compiled at install time (setup.py); else an ImportError saying what to do
    importlib.import_module(f"{__name__}._c._ffi")
    importlib.import_module(f"{__name__}._c._fast_calls")
except ModuleNotFoundError as _error:
    if _error.name not in (f"{__name__}._c._ffi", f"{__name__}._c._fast_calls"):
        raise
    from pathlib import Path

    _root = Path(__file__).resolve().parent.parent
    raise ImportError(
        f"aclnn_py was imported from an unbuilt source tree ({_root}): its C declarations "
        "(aclnn_py/_c/_ffi.py), host library and emulator are generated at install time, and "
        "this copy has none. Python found it first because the current directory (or "
        "sys.path) is the repository root. Either build the tree in place with "
        f"`pip install -e {_root}`, or run Python (and pytest) from another directory so "
        "that the installed aclnn_py is imported."
        if _error.name == f"{__name__}._c._ffi" else
        f"aclnn_py at {_root} has no compiled module aclnn_py/_c/_fast_calls (the host "
        "library's per-call entry points, built at install time): it was "
        "built by an older aclnn_py, or its build was cut short. Build it again with "
        f"`pip install -e {_root}` (a source tree), or reinstall aclnn_py."
    ) from None

from . import emulator
from ._call import call, operators, signature
from ._functions import (
    AddPlan,
    L1LossBackwardPlan,
    L1LossPlan,
    MseLossBackwardPlan,
    MseLossPlan,
    SmoothL1LossBackwardPlan,
    SmoothL1LossPlan,
    add,
    l1_loss,
    l1_loss_backward,
    mse_loss,
    mse_loss_backward,
    smooth_l1_loss,
    smooth_l1_loss_backward,
)
from ._version import __version__
from .errors import (
    AclError,
    AclnnPyError,
    LibraryNotFoundError,
    OutOfMemoryError,
    UnavailableError,
)
from .ops.specs import Reduction
from .runtime.arrays import DeviceArray, empty, to_device
from .runtime.info import DeviceIds, RuntimeInfo, runtime_info
from .runtime.memory import MemoryInfo, empty_cache, memory_info
from .runtime.npu_tensors import asnumpy
from .runtime.streams import Event, Stream, synchronize

logging.getLogger("aclnn_py").addHandler(logging.NullHandler())

# Attribute -> the module that has it (None: the attribute is that submodule).
_LAZY = {"doctor": None, "testing": None, "show_config": "doctor", "Parameter": "ops.catalog",
         "Signature": "ops.catalog", "register_roles": "ops.catalog",
         "unregister_roles": "ops.catalog"}

if TYPE_CHECKING:
    from . import doctor as doctor
    from . import testing as testing
    from .doctor import show_config as show_config
    from .ops.catalog import Parameter, Signature, register_roles, unregister_roles
else:
    def __getattr__(name: str) -> Any:
        """The attributes of ``_LAZY``, imported when first named, then kept."""
        if name not in _LAZY:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        source = _LAZY[name]
        module = importlib.import_module(f"{__name__}.{source or name}")
        found = module if source is None else getattr(module, name)
        globals()[name] = found
        return found

    def __dir__() -> list[str]:
        """The public API only (``__all__`` and the tool modules), not what the package
        itself imports."""
        return sorted({*__all__, *_LAZY})

__all__ = [
    "AclError",
    "AddPlan",
    "AclnnPyError",
    "DeviceArray",
    "DeviceIds",
    "Event",
    "L1LossBackwardPlan",
    "L1LossPlan",
    "LibraryNotFoundError",
    "MemoryInfo",
    "MseLossBackwardPlan",
    "MseLossPlan",
    "OutOfMemoryError",
    "Parameter",
    "Reduction",
    "RuntimeInfo",
    "Signature",
    "SmoothL1LossBackwardPlan",
    "SmoothL1LossPlan",
    "Stream",
    "UnavailableError",
    "__version__",
    "add",
    "asnumpy",
    "call",
    "emulator",
    "empty",
    "empty_cache",
    "l1_loss",
    "l1_loss_backward",
    "memory_info",
    "mse_loss",
    "mse_loss_backward",
    "operators",
    "register_roles",
    "runtime_info",
    "show_config",
    "signature",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "synchronize",
    "to_device",
    "unregister_roles",
]
