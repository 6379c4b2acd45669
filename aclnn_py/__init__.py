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
from ._ops import (
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
    "AddPlan",
    "AclnnPyError",
    "DeviceArray",
    "Event",
    "L1LossBackwardPlan",
    "L1LossPlan",
    "LibraryNotFoundError",
    "MseLossBackwardPlan",
    "MseLossPlan",
    "OutOfMemoryError",
    "Reduction",
    "SmoothL1LossBackwardPlan",
    "SmoothL1LossPlan",
    "Stream",
    "UnavailableError",
    "__version__",
    "add",
    "emulator",
    "empty",
    "empty_cache",
    "l1_loss",
    "l1_loss_backward",
    "memory_info",
    "mse_loss",
    "mse_loss_backward",
    "runtime_info",
    "smooth_l1_loss",
    "smooth_l1_loss_backward",
    "synchronize",
    "to_device",
]
