"""aclnn_py: CANN's aclnn operators on Ascend NPUs, straight from Python over numpy arrays.

Libraries are found and loaded lazily on first use; importing aclnn_py never
needs CANN. Without a CANN install the bundled host emulator runs instead
(see :mod:`aclnn_py.emulator`).
"""

import logging

from . import emulator
from ._arrays import DeviceArray, empty, to_device
from ._info import runtime_info
from ._memory import empty_cache, memory_info
from ._ops import MseLossBackwardPlan, MseLossPlan, mse_loss, mse_loss_backward
from ._runtime import Event, Stream, synchronize
from ._specs import Reduction
from ._version import __version__
from .errors import (
    AclError,
    AclnnPyError,
    LibraryNotFoundError,
    OutOfMemoryError,
    UnavailableError,
)

logging.getLogger("aclnn_py").addHandler(logging.NullHandler())

__all__ = [
    "AclError",
    "AclnnPyError",
    "DeviceArray",
    "Event",
    "LibraryNotFoundError",
    "MseLossBackwardPlan",
    "MseLossPlan",
    "OutOfMemoryError",
    "Reduction",
    "Stream",
    "UnavailableError",
    "__version__",
    "emulator",
    "empty",
    "empty_cache",
    "memory_info",
    "mse_loss",
    "mse_loss_backward",
    "runtime_info",
    "synchronize",
    "to_device",
]
