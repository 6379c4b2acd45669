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

A library that is found but cannot be loaded raises LibraryNotFoundError worded by
the cause: a file that is not a shared library for this machine (not ELF, cut short,
another word size or architecture) is named as corrupt, with dlopen's message; a
truncated one is refused before dlopen, which would crash the process on it; a
missing dependency points at the loader's path.
"""

from __future__ import annotations

import functools
import logging
import os
import platform
import struct
import sys
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
# From CANN 8.5 the operators come in one library per operator repository: beside
# libopapi_nn.so (ops-nn: the losses) stands libopapi_math.so (ops-math: aclnnAdd).
# Loaded when present next to libopapi_nn.so; operators are looked up in each in turn.
EXTRA_OPERATOR_LIBRARIES = ("libopapi_math.so",)


@dataclass(frozen=True)
class Installation:
    """Where the libraries come from: the backend, its root and one path per family."""

    backend: str
    root: Path
    paths: dict[str, Path]
    extra_ops: tuple[Path, ...] = ()


@dataclass(frozen=True)
class Libraries:
    """The loaded libraries: cffi handles for each family and where they came from."""

    installation: Installation
    runtime: object
    meta: object
    ops: object
    extra_ops: tuple[object, ...] = ()


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


def extra_operator_libraries(paths: dict[str, Path]) -> tuple[Path, ...]:
    """The CANN >= 8.5 operator libraries beside ``libopapi_nn.so`` (none before 8.5)."""
    ops = paths["ops"]
    if ops.name != "libopapi_nn.so":
        return ()
    return tuple(ops.parent / name for name in EXTRA_OPERATOR_LIBRARIES
                 if (ops.parent / name).is_file())


def find_cann() -> Installation:
    """The first CANN install in the search order, else LibraryNotFoundError."""
    tried: list[str] = []
    for _source, root in candidate_roots():
        if not root.is_absolute():
            tried.append(f"{root} (ignored: not an absolute path)")
            continue
        paths = find_libraries(root, tried)
        if paths is not None:
            return Installation("cann", root.resolve(), paths, extra_operator_libraries(paths))
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


# ELF identification (System V gABI): classes, byte orders, object types and machines.
_ELF_MAGIC = b"\x7fELF"
_ELF_CLASSES = {1: "32-bit (ELFCLASS32)", 2: "64-bit (ELFCLASS64)"}
_ELF_BYTE_ORDERS = {1: "little-endian", 2: "big-endian"}
_ELF_TYPES = {0: "an ELF file of no type", 1: "a relocatable object (.o)",
              2: "an executable", 4: "a core dump"}
_ELF_MACHINES = {3: "x86", 8: "MIPS", 20: "PowerPC", 21: "PowerPC64", 22: "S/390", 40: "ARM",
                 62: "x86-64", 183: "AArch64", 243: "RISC-V", 258: "LoongArch"}
_ET_DYN = 3
_PT_LOAD = 1

# Words of dlopen's reasons (glibc, musl) for a file that is not a loadable shared library.
_INVALID_FILE_REASONS = (
    "invalid ELF header", "file too short", "wrong ELF class", "not an ELF", "ELF file",
    "ELF load command", "only ET_DYN and ET_EXEC", "cannot dynamically load",
    "no dynamic section", "no loadable segments", "nonzero padding in e_ident",
    "cannot read file data", "Exec format error",
)


def _machine_name(machine: int) -> str:
    name = _ELF_MACHINES.get(machine)
    return f"{name} (ELF machine {machine})" if name else f"ELF machine {machine}"


@functools.lru_cache(maxsize=1)
def _host_elf_identity() -> tuple[int, int, int] | None:
    """ELF class, byte order and machine of this Python's own executable, if readable."""
    for candidate in ("/proc/self/exe", sys.executable):
        try:
            with open(candidate, "rb") as file:
                head = file.read(20)
        except OSError:
            continue
        if len(head) == 20 and head[:4] == _ELF_MAGIC and head[5] in _ELF_BYTE_ORDERS:
            order = "<" if head[5] == 1 else ">"
            return head[4], head[5], struct.unpack_from(order + "H", head, 18)[0]
    return None


def _elf_problem(path: Path) -> tuple[str, bool] | None:
    """Why the bytes of ``path`` are not a shared library this process can load, if they show
    it, and whether handing the file to dlopen is unsafe: for a truncated file the dynamic
    loader maps segments past the end of the file, and the process dies of SIGBUS when it
    touches them, before dlopen can return an error."""
    try:
        size = path.stat().st_size
        with open(path, "rb") as file:
            head = file.read(64)
            if head[:4] != _ELF_MAGIC:
                shown = f"its first bytes are {head[:8]!r}" if head else "it is empty"
                return f"it is not an ELF file ({shown})", False
            elf_class, byte_order = head[4], head[5]
            if elf_class not in _ELF_CLASSES or byte_order not in _ELF_BYTE_ORDERS:
                return "its ELF identification bytes are invalid", False
            if len(head) < (52 if elf_class == 1 else 64):
                return f"it is too short to be an ELF shared library ({size} bytes)", False
            host = _host_elf_identity()
            if host is not None and elf_class != host[0]:
                return (f"it is a {_ELF_CLASSES[elf_class]} ELF file, but this Python is "
                        f"{_ELF_CLASSES.get(host[0], '?')}"), False
            if host is not None and byte_order != host[1]:
                return (f"it is {_ELF_BYTE_ORDERS[byte_order]}, but this machine is "
                        f"{_ELF_BYTE_ORDERS[host[1]]}"), False
            order = "<" if byte_order == 1 else ">"
            e_type, e_machine = struct.unpack_from(order + "HH", head, 16)
            if elf_class == 2:
                phoff, shoff = struct.unpack_from(order + "QQ", head, 32)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 54)
                entry_size, entry_format = 56, order + "I4xQ8x8xQ"
            else:
                phoff, shoff = struct.unpack_from(order + "II", head, 28)
                phentsize, phnum, shentsize, shnum = struct.unpack_from(order + "HHHH", head, 42)
                entry_size, entry_format = 32, order + "II8xI"
            if host is not None and e_machine != host[2]:
                return (f"it was built for {_machine_name(e_machine)}, but this Python runs on "
                        f"{_machine_name(host[2])}"), False
            if e_type != _ET_DYN:
                kind = _ELF_TYPES.get(e_type, f"an ELF file of type {e_type}")
                return f"it is {kind}, not a shared library", False
            if phentsize != entry_size:
                return f"its program header entries have the wrong size ({phentsize})", False
            table_end = phoff + phnum * phentsize
            if table_end > size:
                return (f"it is truncated: its program header table ends at byte {table_end}, "
                        f"but the file has {size} bytes"), True
            file.seek(phoff)
            table = file.read(phnum * phentsize)
    except OSError:
        return None  # unreadable: dlopen says why
    for index in range(phnum):
        p_type, p_offset, p_filesz = struct.unpack_from(entry_format, table, index * phentsize)
        if p_type == _PT_LOAD and p_offset + p_filesz > size:
            return (f"it is truncated: a loadable segment ends at byte {p_offset + p_filesz}, "
                    f"but the file has {size} bytes"), True
    if shoff and shoff + shnum * shentsize > size:
        return (f"it is truncated: its section header table ends at byte "
                f"{shoff + shnum * shentsize}, but the file has {size} bytes"), True
    return None


def _dlopen_message(error: OSError, path: Path) -> str:
    """dlopen's own text (dlerror) inside cffi's error message."""
    text = str(error)
    prefix = f"cannot load library '{path}': "
    if text.startswith(prefix):
        text = text[len(prefix):]
        text = text.split(".  Additionally, ctypes.util.find_library()", 1)[0]
    return text


def _invalid_library(path: Path, finding: str | None, dlopen_said: str | None):
    details = [d for d in (finding, f"dlopen said: {dlopen_said}" if dlopen_said else
                           "it was not passed to dlopen, which would crash the process on a "
                           "truncated file") if d]
    return LibraryNotFoundError(
        f"{path} is corrupt or is not a shared library for this machine: {'; '.join(details)}. "
        "Reinstall CANN or restore this file, or set ACLNN_PY_CANN_HOME to another install "
        f"({ENV_BACKEND}=emulator uses aclnn_py's host emulator).",
        [str(path)],
    )


def _load_error(path: Path, error: OSError, finding: str | None) -> LibraryNotFoundError:
    """The error for a library that exists but that dlopen refused, worded by its cause."""
    said = _dlopen_message(error, path)
    own = said.startswith(f"{path}: ")
    subject, _, reason = said.partition(": ")
    invalid = any(word in reason for word in _INVALID_FILE_REASONS)
    if finding is not None or (own and invalid):
        return _invalid_library(path, finding, said)
    if own and reason.startswith("cannot open shared object file"):
        return LibraryNotFoundError(f"Found {path} but could not open it ({said}).", [str(path)])
    if invalid:
        return LibraryNotFoundError(
            f"Found {path} but could not load it: {subject}, a library it depends on, is corrupt "
            f"or is not a shared library for this machine (dlopen said: {said}). Reinstall CANN "
            "or restore that file.",
            [str(path)],
        )
    return LibraryNotFoundError(
        f"Found {path} but could not load it ({error}). Its dependencies are probably not on "
        "the loader's path: source CANN's set_env.sh before starting Python.",
        [str(path)],
    )


def _open(path: Path):
    problem = _elf_problem(path)
    if problem is not None and problem[1]:
        raise _invalid_library(path, problem[0], None)
    try:
        return ffi.dlopen(str(path), ffi.RTLD_LAZY | ffi.RTLD_GLOBAL | ffi.RTLD_NODELETE)
    except OSError as error:
        raise _load_error(path, error, problem and problem[0]) from error


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
            extra_ops = tuple(_open(path) for path in installation.extra_ops)
            logger.info("aclnn_py backend %s: %s", installation.backend,
                        ", ".join(str(p) for p in (*installation.paths.values(),
                                                   *installation.extra_ops)))
            _libraries = Libraries(installation, runtime, meta, ops, extra_ops)
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
