"""Finding and loading the CANN libraries (or the bundled host emulator).

Search order for a CANN install, first root that has all three library
families wins:

1. ``$ACLNN_PY_CANN_HOME`` (aclnn_py's explicit override)
2. ``$ASCEND_HOME_PATH``
3. ``$ASCEND_TOOLKIT_HOME``
4. ``/usr/local/Ascend/cann``, ``/usr/local/Ascend/ascend-toolkit/latest``,
   ``$HOME/Ascend/cann``, ``$HOME/Ascend/ascend-toolkit/latest``

In each root the libraries are looked for in ``lib64`` and ``<arch>-linux/lib64``:
runtime ``libacl_rt.so`` else ``libascendcl.so``; aclnn meta ``libnnopbase.so``;
operators ``libopapi_nn.so`` else ``libopapi.so`` (never both: CANN's docs
forbid mixing them). Only absolute paths are loaded.

``$ACLNN_PY_BACKEND`` picks the backend: ``auto`` (CANN when found, else the
emulator), ``cann`` or ``emulator``.
"""

from __future__ import annotations

import logging
import os
import platform
import threading
from dataclasses import dataclass
from pathlib import Path

from ._ffi import ffi
from .errors import LibraryNotFoundError

logger = logging.getLogger("aclnn_py")

ENV_CANN_HOME = "ACLNN_PY_CANN_HOME"
ENV_BACKEND = "ACLNN_PY_BACKEND"
BACKENDS = ("auto", "cann", "emulator")

EMULATOR_HOME = Path(__file__).resolve().parent / "_emulator"

# Library family -> file names, preferred first (CANN >= 8.5 name, then the older one).
LIBRARY_NAMES: dict[str, tuple[str, ...]] = {
    "runtime": ("libacl_rt.so", "libascendcl.so"),
    "meta": ("libnnopbase.so",),
    "ops": ("libopapi_nn.so", "libopapi.so"),
}


@dataclass(frozen=True)
class Installation:
    """Where the libraries come from: the backend, its root and one path per family."""

    backend: str
    root: Path
    paths: dict[str, Path]


@dataclass(frozen=True)
class Libraries:
    """The loaded libraries: cffi handles for each family and where they came from."""

    installation: Installation
    runtime: object
    meta: object
    ops: object


def library_dirs(root: Path) -> list[Path]:
    """The folders of ``root`` that may hold CANN's shared libraries."""
    return [root / "lib64", root / f"{platform.machine()}-linux" / "lib64"]


def candidate_roots() -> list[tuple[str, Path]]:
    """CANN install roots to try, in order, each with where it came from."""
    roots: list[tuple[str, Path]] = []
    for variable in (ENV_CANN_HOME, "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"):
        value = os.environ.get(variable)
        if value:
            roots.append((f"${variable}", Path(value).expanduser()))
    home = Path.home()
    for base, label in ((Path("/usr/local/Ascend"), "default"),
                        (home / "Ascend", "default ($HOME)")):
        roots.append((label, base / "cann"))
        roots.append((label, base / "ascend-toolkit" / "latest"))
    return roots


def find_libraries(root: Path, tried: list[str]) -> dict[str, Path] | None:
    """One absolute path per family under ``root``, or None; appends what it looked at."""
    directories = library_dirs(root)
    found: dict[str, Path] = {}
    for family, names in LIBRARY_NAMES.items():
        for name in names:
            hit = next((d / name for d in directories if (d / name).is_file()), None)
            if hit is not None:
                found[family] = hit.resolve()
                break
            tried.extend(str(d / name) for d in directories)
        if family not in found:
            return None
    return found


def find_cann() -> Installation:
    """The first CANN install in the search order, else LibraryNotFoundError."""
    tried: list[str] = []
    for _source, root in candidate_roots():
        if not root.is_absolute():
            tried.append(f"{root} (ignored: not an absolute path)")
            continue
        paths = find_libraries(root, tried)
        if paths is not None:
            return Installation("cann", root.resolve(), paths)
    raise LibraryNotFoundError(
        "No CANN installation found. Source CANN's set_env.sh (for example "
        "/usr/local/Ascend/cann/set_env.sh) or set ACLNN_PY_CANN_HOME to the install root; "
        f"set {ENV_BACKEND}=emulator to use aclnn_py's host emulator instead.",
        tried,
    )


def find_emulator() -> Installation:
    """The host emulator tree bundled with the package."""
    tried: list[str] = []
    paths = find_libraries(EMULATOR_HOME, tried)
    if paths is None:
        raise LibraryNotFoundError(
            "The aclnn_py host emulator is not built; reinstall aclnn_py "
            "(pip install .) so that its C libraries are compiled.",
            tried,
        )
    return Installation("emulator", EMULATOR_HOME, paths)


def requested_backend() -> str:
    value = os.environ.get(ENV_BACKEND, "auto").strip().lower() or "auto"
    if value not in BACKENDS:
        raise ValueError(f"{ENV_BACKEND}={value!r} is not one of {', '.join(BACKENDS)}")
    return value


def locate() -> Installation:
    """Apply the backend choice and the search order; loads nothing."""
    backend = requested_backend()
    if backend == "emulator":
        return find_emulator()
    if backend == "cann":
        return find_cann()
    try:
        return find_cann()
    except LibraryNotFoundError:
        installation = find_emulator()
        logger.info("no CANN installation found; using the aclnn_py host emulator at %s",
                    installation.root)
        return installation


def _prepare_environment(installation: Installation) -> None:
    """Point CANN at its operator packages when set_env.sh was not sourced."""
    opp = installation.root / "opp"
    if "ASCEND_OPP_PATH" not in os.environ and opp.is_dir():
        os.environ["ASCEND_OPP_PATH"] = str(opp)
        logger.info("ASCEND_OPP_PATH was not set; set it to %s", opp)


def _open(path: Path):
    try:
        return ffi.dlopen(str(path), ffi.RTLD_LAZY | ffi.RTLD_GLOBAL)
    except OSError as error:
        raise LibraryNotFoundError(
            f"Found {path} but could not load it ({error}). Its dependencies are probably not on "
            "the loader's path: source CANN's set_env.sh before starting Python.",
            [str(path)],
        ) from error


_lock = threading.Lock()
_libraries: Libraries | None = None


def load() -> Libraries:
    """Locate and load the libraries once per process (thread-safe)."""
    global _libraries
    if _libraries is not None:
        return _libraries
    with _lock:
        if _libraries is None:
            installation = locate()
            _prepare_environment(installation)
            runtime = _open(installation.paths["runtime"])
            meta = _open(installation.paths["meta"])
            ops = _open(installation.paths["ops"])
            logger.info("aclnn_py backend %s: %s", installation.backend,
                        ", ".join(str(p) for p in installation.paths.values()))
            _libraries = Libraries(installation, runtime, meta, ops)
    return _libraries


def loaded() -> Libraries | None:
    """The libraries if already loaded, without loading them."""
    return _libraries


def read_cann_version(root: Path) -> str | None:
    """The release version recorded in an install's version files, if any.

    Looks at ``ascend_*_install.info`` in the root and ``<arch>-linux`` (the file
    torch_npu reads), then ``share/info/runtime/version.info``; the value of the
    first ``version=`` line wins.
    """
    candidates = sorted(root.glob("ascend_*_install.info"))
    candidates += sorted((root / f"{platform.machine()}-linux").glob("ascend_*_install.info"))
    candidates.append(root / "share" / "info" / "runtime" / "version.info")
    for path in candidates:
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            key, sep, value = line.partition("=")
            if sep and key.strip().lower() == "version" and value.strip():
                return value.strip()
    return None
