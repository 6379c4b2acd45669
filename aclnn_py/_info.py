"""runtime_info(): what aclnn_py is running on."""

from __future__ import annotations

from typing import TypedDict

from . import _lowlevel as ll
from ._loader import read_cann_version
from ._runtime import device_count, soc_name
from ._version import __version__


class RuntimeInfo(TypedDict):
    """What :func:`runtime_info` returns."""

    backend: str
    root: str
    libraries: dict[str, str]
    dependencies: list[str]
    cann_version: str | None
    soc_name: str | None
    device_count: int
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
        ``soc_name``, ``device_count`` and ``aclnn_py_version``.
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
        "aclnn_py_version": __version__,
    }
