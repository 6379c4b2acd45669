"""runtime_info(): what aclnn_py is running on."""

from __future__ import annotations

import platform
import sys
from typing import TypedDict

import numpy as np

from .._c import lowlevel as ll
from .._c.loader import read_cann_version
from .._version import __version__
from .process import device_count, device_ids, soc_name, visible_devices


class DeviceIds(TypedDict):
    """One visible device in :func:`runtime_info`."""

    device: int
    logical_id: int | None
    physical_id: int | None


class RuntimeInfo(TypedDict):
    """What :func:`runtime_info` returns."""

    backend: str
    root: str
    libraries: dict[str, str]
    dependencies: list[str]
    cann_version: str | None
    soc_name: str | None
    device_count: int
    visible_devices: str | None
    devices: list[DeviceIds]
    aclnn_py_version: str


def runtime_info() -> RuntimeInfo:
    """Describe the loaded backend (loading and initialising it if needed).

    Returns
    -------
    RuntimeInfo
        A dict: ``backend`` ("cann" or "emulator"), ``root`` (install root), ``libraries``
        (family -> absolute path of each library opened, the CANN >= 8.5 operator
        libraries beside ``libopapi_nn.so`` under their own names, e.g. ``opapi_math``),
        ``dependencies`` (the libraries they need that aclnn_py loaded first, by absolute
        path), ``cann_version`` (from the install's version files, or None),
        ``soc_name``, ``device_count`` (the devices this process sees),
        ``visible_devices`` (``ASCEND_RT_VISIBLE_DEVICES`` when ACL was initialised, or None
        when unset), ``devices`` (for each visible device, numbered from 0: its
        ``logical_id``, the id ``ASCEND_RT_VISIBLE_DEVICES`` names it by, and its
        ``physical_id``, equal outside containers; both None where CANN does not expose
        them, before 8.5) and ``aclnn_py_version``.
    """
    libraries = ll.libraries()
    installation = libraries.installation
    count = device_count()
    return {
        "backend": installation.backend,
        "root": str(installation.root),
        "libraries": {**{family: str(path) for family, path in installation.paths.items()},
                      **{path.stem[3:]: str(path) for path in installation.extra_ops}},
        "dependencies": [str(path) for path in libraries.dependencies],
        "cann_version": read_cann_version(installation.root),
        "soc_name": soc_name(),
        "device_count": count,
        "visible_devices": visible_devices(),
        "devices": [{"device": device, "logical_id": logical, "physical_id": physical}
                    for device in range(count)
                    for logical, physical in [device_ids(device)]],
        "aclnn_py_version": __version__,
    }


def versions() -> dict[str, str]:
    """aclnn_py, Python and the versions of the packages aclnn_py depends on."""
    from importlib.metadata import version

    return {"aclnn_py": __version__, "python": platform.python_version(),
            "python_executable": sys.executable, "numpy": np.__version__,
            "cffi": version("cffi"), "ml_dtypes": version("ml_dtypes"),
            "platform": f"{platform.system()} {platform.machine()}"}
