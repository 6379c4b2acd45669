"""Finding and loading the CANN libraries (or the bundled host emulator).

Where a CANN install is looked for:

* the location the environment names, when it names one: the first set of
  ``$ACLNN_PY_CANN_HOME`` (aclnn_py's explicit override), ``$ASCEND_HOME_PATH``,
  ``$ASCEND_TOOLKIT_HOME``. Only that root is used: when it does not hold all three
  library families, or they do not load, LibraryNotFoundError is raised (at the first
  call that needs the libraries, every time), never a fallback to another root or to
  the emulator;
* otherwise the default roots, first one that has all three library families wins:
  ``/usr/local/Ascend/cann``, ``/usr/local/Ascend/ascend-toolkit/latest``,
  ``$HOME/Ascend/cann``, ``$HOME/Ascend/ascend-toolkit/latest``.

In each root the libraries are looked for in ``lib64`` and ``<arch>-linux/lib64``:
runtime ``libacl_rt.so`` else ``libascendcl.so``; aclnn meta ``libnnopbase.so``;
operators ``libopapi_nn.so`` (with ``libopapi_math.so`` beside it) else
``libopapi.so`` (never both: CANN's docs forbid mixing them). Only absolute paths
are loaded.

CANN's libraries carry no RUNPATH: their dependencies (``libruntime.so``, the
driver's ``libascend_hal.so``, ...) are found through ``LD_LIBRARY_PATH``, which
CANN's ``set_env.sh`` sets before a process starts. So that a process started
without it works too, each library's DT_NEEDED entries are read from its ELF
dynamic section and every dependency not loaded yet is loaded first, by absolute
path, from the root's library folders and the driver folders
(``$ACLNN_PY_DRIVER_PATH``, ``<root>/driver``, ``/usr/local/Ascend/driver``: each
``lib64``, ``lib64/common``, ``lib64/driver``); system libraries and whatever is
found nowhere are left to the dynamic linker.

The emulator's libraries are loaded RTLD_LOCAL and have sonames of their own, so
they never satisfy another library's lookup of a CANN library nor interpose their
symbols on libraries loaded later; a real CANN is loaded RTLD_GLOBAL, as a program
linked against it has it.

``$ACLNN_PY_BACKEND`` picks the backend: ``auto`` (CANN when found; the emulator
only when no location is named and no default root holds CANN), ``cann`` (CANN or
LibraryNotFoundError) or ``emulator`` (the emulator, whatever the location variables say).

A library that is found but cannot be loaded raises LibraryNotFoundError worded by
the cause: a file that is not a shared library for this machine (not ELF, cut short,
another word size or architecture) is named as corrupt, with dlopen's message; a
truncated one is refused before dlopen, which would crash the process on it; a
missing dependency points at the loader's path.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import os
import platform
import re
import struct
import sys
import threading
import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import _caches
from ..errors import LibraryNotFoundError
from ._ffi import ffi

logger = logging.getLogger("aclnn_py")

ENV_CANN_HOME = "ACLNN_PY_CANN_HOME"
ENV_BACKEND = "ACLNN_PY_BACKEND"
ENV_DRIVER_PATH = "ACLNN_PY_DRIVER_PATH"
BACKENDS = ("auto", "cann", "emulator")

# The emulator's CANN-shaped trees, one per CANN release (setup.py builds them), oldest first.
EMULATOR_TREES = Path(__file__).resolve().parent.parent / "_emulator"
EMULATOR_LAYOUTS = ("8.0.RC2", "8.3", "8.5")
EMULATOR_HOME = EMULATOR_TREES / EMULATOR_LAYOUTS[-1]
# Every emulator library's soname starts so (emulator/build.py); no CANN library's does.
EMULATOR_SONAME_PREFIX = "libaclnn_py_emu_"
# Where CANN and the Ascend driver install by default; its presence says CANN should be here.
ASCEND_BASE = Path("/usr/local/Ascend")
# The Ascend driver's default install root (CANN's set_env.sh adds its lib64 folders).
DEFAULT_DRIVER_HOME = ASCEND_BASE / "driver"
# Variables that point at a CANN install root, in search order.
ROOT_VARIABLES = (ENV_CANN_HOME, "ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME")

# Library family -> file names, preferred first (CANN >= 8.5 name, then the older one).
LIBRARY_NAMES: dict[str, tuple[str, ...]] = {
    "runtime": ("libacl_rt.so", "libascendcl.so"),
    "meta": ("libnnopbase.so",),
    "ops": ("libopapi_nn.so", "libopapi.so"),
}
# From CANN 8.5 the operators come in one library per operator repository: beside
# libopapi_nn.so (ops-nn: the losses) stand libopapi_math.so (ops-math: aclnnAdd),
# libopapi_transformer.so and libopapi_cv.so (each repository's CMakeLists.txt sets PKG_NAME,
# its cmake/variables.cmake names the library opapi_${PKG_NAME}). Loaded when present next to
# libopapi_nn.so; operators are looked up in each in turn.
EXTRA_OPERATOR_LIBRARIES = ("libopapi_math.so", "libopapi_transformer.so", "libopapi_cv.so")


@dataclass(frozen=True)
class Installation:
    """Where the libraries come from: the backend, its root and one path per family, and
    why this backend and root were chosen."""

    backend: str
    root: Path
    paths: dict[str, Path]
    extra_ops: tuple[Path, ...] = ()
    reason: str = ""


@dataclass(frozen=True)
class Libraries:
    """The loaded libraries: cffi handles for each family and where they came from, and the
    dependencies aclnn_py loaded by absolute path before them."""

    installation: Installation
    runtime: object
    meta: object
    ops: object
    extra_ops: tuple[object, ...] = ()
    dependencies: tuple[Path, ...] = ()


def library_dirs(root: Path) -> list[Path]:
    """The folders of ``root`` that may hold CANN's shared libraries."""
    return [root / "lib64", root / f"{platform.machine()}-linux" / "lib64"]


def named_location() -> tuple[str, str] | None:
    """The variable naming the CANN install and its value: the first of
    :data:`ROOT_VARIABLES` that is set and not empty, or None."""
    for variable in ROOT_VARIABLES:
        value = os.environ.get(variable)
        if value:
            return variable, value
    return None


def candidate_roots() -> list[tuple[str, Path]]:
    """CANN install roots to try, in order, each with where it came from: the named
    location alone when there is one, else the default roots."""
    named = named_location()
    if named is not None:
        return [(f"${named[0]}", Path(named[1]).expanduser())]
    roots: list[tuple[str, Path]] = []
    home = Path.home()
    for base, label in ((ASCEND_BASE, "default"),
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


# What each library family is called in messages.
FAMILY_NAMES = {"runtime": "runtime library", "meta": "aclnn meta library",
                "ops": "operator library"}


def _missing_families(root: Path) -> dict[str, tuple[str, ...]]:
    """The families of which ``root`` holds no library, with the names looked for."""
    directories = library_dirs(root)
    return {family: names for family, names in LIBRARY_NAMES.items()
            if not any((d / name).is_file() for d in directories for name in names)}


def _find_named(variable: str, value: str) -> Installation:
    """The CANN install at the location ``variable`` names, else LibraryNotFoundError."""
    root = Path(value).expanduser()
    others = [f"${other}" for other in ROOT_VARIABLES[ROOT_VARIABLES.index(variable) + 1:]
              if os.environ.get(other)]
    by_set_env = "" if variable == ENV_CANN_HOME else "; CANN's set_env.sh sets it"
    advice = (f"Set {variable} to a CANN install root (the folder of its lib64{by_set_env}) "
              f"or unset it, or set {ENV_BACKEND}=emulator to run on aclnn_py's host "
              "emulator instead.")
    if others:
        advice += (f" While ${variable} is set, {' and '.join(others)} "
                   f"{'is' if len(others) == 1 else 'are'} not consulted.")
    if not root.is_absolute():
        raise LibraryNotFoundError(
            f"${variable} is {value!r}, not an absolute path: aclnn_py loads CANN only from "
            f"an absolute path, so no CANN was loaded. {advice}",
            [f"{value} (not an absolute path)"])
    paths = find_libraries(root, [])
    if paths is None:
        missing = _missing_families(root)
        if not root.exists():
            why = "it does not exist"
        elif not root.is_dir():
            why = "it is not a folder"
        else:
            why = "it has no " + " and no ".join(
                f"{FAMILY_NAMES[family]} ({' or '.join(names)})"
                for family, names in missing.items())
            why += f" in lib64 or {platform.machine()}-linux/lib64"
        tried = [str(d / name) for names in missing.values() for name in names
                 for d in library_dirs(root)]
        raise LibraryNotFoundError(
            f"${variable} names {root} as the CANN install, but {why}, so no CANN was "
            f"loaded. {advice}", tried)
    return Installation("cann", root.resolve(), paths, extra_operator_libraries(paths),
                        f"CANN found at {root} (${variable})")


def find_cann() -> Installation:
    """The CANN install at the named location, else the first default root holding one;
    else LibraryNotFoundError."""
    named = named_location()
    if named is not None:
        return _find_named(*named)
    tried: list[str] = []
    for source, root in candidate_roots():
        if not root.is_absolute():  # a relative $HOME
            tried.append(f"{root} (ignored: not an absolute path)")
            continue
        paths = find_libraries(root, tried)
        if paths is not None:
            return Installation("cann", root.resolve(), paths, extra_operator_libraries(paths),
                                f"CANN found at {root} ({source})")
    raise LibraryNotFoundError(
        "No CANN installation found. Source CANN's set_env.sh (for example "
        "/usr/local/Ascend/cann/set_env.sh) or set ACLNN_PY_CANN_HOME to the install root; "
        f"set {ENV_BACKEND}=emulator to use aclnn_py's host emulator instead.",
        tried,
    )


def emulator_home(layout: str | None = None) -> Path:
    """The root of the emulator tree laid out as CANN ``layout`` (default: the newest)."""
    if layout is None:
        return EMULATOR_HOME
    if layout not in EMULATOR_LAYOUTS:
        raise ValueError(f"unknown emulator layout {layout!r}; the layouts are "
                         f"{', '.join(EMULATOR_LAYOUTS)}")
    return EMULATOR_TREES / layout


def find_emulator() -> Installation:
    """The host emulator tree bundled with the package (the newest layout)."""
    tried: list[str] = []
    paths = find_libraries(EMULATOR_HOME, tried)
    if paths is None:
        if not EMULATOR_TREES.exists():
            raise LibraryNotFoundError(
                "This aclnn_py was installed without its host emulator "
                "(ACLNN_PY_BUILD_EMULATOR=0 at build time), so only a CANN install can run it: "
                f"set {ENV_BACKEND}=cann (or auto) with CANN installed, or reinstall aclnn_py "
                "with a C compiler and without ACLNN_PY_BUILD_EMULATOR=0 to get the emulator.",
                tried,
            )
        raise LibraryNotFoundError(
            "The aclnn_py host emulator is incomplete; reinstall aclnn_py "
            "(pip install .) so that its C libraries are compiled.",
            tried,
        )
    return Installation("emulator", EMULATOR_HOME, paths, extra_operator_libraries(paths),
                        "the bundled host emulator")


def requested_backend() -> str:
    value = os.environ.get(ENV_BACKEND, "auto").strip().lower() or "auto"
    if value not in BACKENDS:
        raise ValueError(f"{ENV_BACKEND}={value!r} is not one of {', '.join(BACKENDS)}")
    return value


def cann_expected() -> list[str]:
    """What in the environment says a CANN install should be here (empty: nothing does)."""
    hints = [f"${variable} is set ({os.environ[variable]})" for variable in ROOT_VARIABLES
             if os.environ.get(variable)]
    if ASCEND_BASE.is_dir():
        hints.append(f"{ASCEND_BASE} exists")
    return hints


_PACKAGE_DIRS = tuple({os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
                       str(Path(__file__).resolve().parent.parent) + os.sep})


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning issued by the caller of this function point
    at the first frame outside aclnn_py: the user's line, however deep the call."""
    level = 1
    frame = sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIRS):
        frame = frame.f_back
        level += 1
    return level


_fallback_warned = False


def _warn_fallback(hints: list[str], error: LibraryNotFoundError, emulator: Path) -> None:
    """The one RuntimeWarning of a process whose auto backend fell back to the emulator
    although the environment says CANN should be there (no location named, but the
    default Ascend folder exists)."""
    global _fallback_warned
    if _fallback_warned:
        return
    _fallback_warned = True
    shown = "; ".join(error.tried[:4]) + ("; ..." if len(error.tried) > 4 else "")
    warnings.warn(
        f"aclnn_py found no usable CANN installation although {' and '.join(hints)}, so it "
        f"uses its host emulator ({emulator}), which computes on the CPU. The CANN "
        f"libraries were looked for at {len(error.tried)} paths ({shown}). Run "
        f"`python -m aclnn_py` for the details; set {ENV_BACKEND}=cann to make this an error, "
        f"or {ENV_BACKEND}=emulator to use the emulator without this warning.",
        RuntimeWarning, stacklevel=user_stacklevel())


def locate() -> Installation:
    """Apply the backend choice and the search order; loads nothing.

    The emulator runs with ``ACLNN_PY_BACKEND=emulator``, or in ``auto`` mode when no
    location is named and no default root holds CANN; that fallback warns once per process
    (RuntimeWarning, at the user's line) when the default Ascend folder exists. A named
    location that does not hold CANN raises LibraryNotFoundError in every mode but
    ``emulator``.
    """
    backend = requested_backend()
    if backend == "emulator":
        installation = find_emulator()
        return replace(installation, reason=f"{ENV_BACKEND}=emulator: {installation.reason}")
    if backend == "cann":
        installation = find_cann()
        return replace(installation, reason=f"{ENV_BACKEND}=cann: {installation.reason}")
    try:
        installation = find_cann()
        return replace(installation, reason=f"{ENV_BACKEND}=auto: {installation.reason}")
    except LibraryNotFoundError as error:
        if named_location() is not None:
            raise
        installation = find_emulator()
        logger.info("no CANN installation found; using the aclnn_py host emulator at %s",
                    installation.root)
        hints = cann_expected()
        if hints:
            _warn_fallback(hints, error, installation.root)
        why = (f"although {' and '.join(hints)}" if hints else
               "and nothing in the environment points at one")
        return replace(installation, reason=f"{ENV_BACKEND}=auto: no CANN installation found "
                                            f"({len(error.tried)} paths tried) {why}; "
                                            f"{installation.reason} is used")


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


def _invalid_library(path: Path, finding: str | None, dlopen_said: str | None
                     ) -> LibraryNotFoundError:
    details = [d for d in (finding, f"dlopen said: {dlopen_said}" if dlopen_said else
                           "it was not passed to dlopen, which would crash the process on a "
                           "truncated file") if d]
    return LibraryNotFoundError(
        f"{path} is corrupt or is not a shared library for this machine: {'; '.join(details)}. "
        "Reinstall CANN or restore this file, or set ACLNN_PY_CANN_HOME to another install.",
        [str(path)],
    )


def _load_error(path: Path, error: OSError, finding: str | None,
                directories: list[Path]) -> LibraryNotFoundError:
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
    if reason.startswith("cannot open shared object file") and "/" not in subject:
        return LibraryNotFoundError(
            f"Found {path} but could not load it: it needs {subject}, which is neither in the "
            "install's library folders nor in the driver folders nor on the dynamic loader's "
            f"path (dlopen said: {said}). Source CANN's set_env.sh before starting Python, or "
            f"set {ENV_DRIVER_PATH} to the folder of the Ascend driver that provides it.",
            [str(path), *(str(directory / subject) for directory in directories)],
        )
    return LibraryNotFoundError(
        f"Found {path} but could not load it ({error}). Its dependencies are probably not on "
        "the loader's path: source CANN's set_env.sh before starting Python.",
        [str(path)],
    )


# ELF dynamic section (System V gABI): the entries the loader reads.
_PT_DYNAMIC = 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = (
    0, 1, 5, 10, 14, 15, 29)


@dataclass(frozen=True)
class DynamicSection:
    """What an ELF shared library asks of the dynamic linker."""

    soname: str | None
    needed: tuple[str, ...]
    search_paths: tuple[str, ...]  # DT_RPATH and DT_RUNPATH, as written


def read_dynamic_section(path: Path) -> DynamicSection | None:
    """The soname, DT_NEEDED entries and RPATH/RUNPATH of an ELF file, or None if it cannot
    be read as one (dlopen then says why). Reads only the headers and tables it needs."""
    try:
        with open(path, "rb") as file:
            head = file.read(64)
            if (len(head) < 52 or head[:4] != _ELF_MAGIC or head[4] not in _ELF_CLASSES
                    or head[5] not in _ELF_BYTE_ORDERS):
                return None
            order = "<" if head[5] == 1 else ">"
            wide = head[4] == 2
            if wide:
                (phoff,) = struct.unpack_from(order + "Q", head, 32)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 54)
                header, dyn = order + "I4xQQ8xQ", order + "qQ"  # type, offset, vaddr, filesz
            else:
                (phoff,) = struct.unpack_from(order + "I", head, 28)
                phentsize, phnum = struct.unpack_from(order + "HH", head, 42)
                header, dyn = order + "IIII", order + "iI"  # type, offset, vaddr, (paddr)
            file.seek(phoff)
            table = file.read(phentsize * phnum)
            loads, dynamic = [], None
            for index in range(phnum):
                if wide:
                    p_type, offset, vaddr, filesz = struct.unpack_from(header, table,
                                                                        index * phentsize)
                else:
                    p_type, offset, vaddr, _ = struct.unpack_from(header, table, index * phentsize)
                    (filesz,) = struct.unpack_from(order + "I", table, index * phentsize + 16)
                if p_type == _PT_LOAD:
                    loads.append((vaddr, offset, filesz))
                elif p_type == _PT_DYNAMIC:
                    dynamic = (offset, filesz)
            if dynamic is None:
                return DynamicSection(None, (), ())
            file.seek(dynamic[0])
            raw = file.read(dynamic[1])
            entries: list[tuple[int, int]] = []
            whole = len(raw) - len(raw) % struct.calcsize(dyn)
            for tag, value in struct.iter_unpack(dyn, raw[:whole]):
                if tag == _DT_NULL:
                    break
                entries.append((tag, value))
            values = dict(entries)
            strtab, strsz = values.get(_DT_STRTAB), values.get(_DT_STRSZ)
            if strtab is None or strsz is None:
                return None
            start = next((offset + strtab - vaddr for vaddr, offset, filesz in loads
                          if vaddr <= strtab < vaddr + filesz), None)
            if start is None:
                return None
            file.seek(start)
            strings = file.read(strsz)
    except (OSError, struct.error):
        return None

    def text(offset: int) -> str:
        return strings[offset:strings.find(b"\0", offset)].decode("utf-8", errors="replace")

    soname = values.get(_DT_SONAME)
    return DynamicSection(
        text(soname) if soname is not None else None,
        tuple(text(value) for tag, value in entries if tag == _DT_NEEDED),
        tuple(text(value) for tag, value in entries if tag in (_DT_RPATH, _DT_RUNPATH)),
    )


# Libraries of the C/C++ runtime and the dynamic linker: always the system's.
_SYSTEM_LIBRARY = re.compile(
    r"(ld-linux|ld64\.so|lib(c|m|dl|pthread|rt|util|resolv|anl|crypt|stdc\+\+|gcc_s|atomic|gomp)"
    r"\.so)")


def driver_dirs(root: Path) -> list[Path]:
    """Folders that may hold the Ascend driver's libraries, in the order they are searched:
    each entry of ``$ACLNN_PY_DRIVER_PATH`` (itself and its ``lib64``, ``lib64/common``,
    ``lib64/driver``), then the install's own ``driver`` and ``/usr/local/Ascend/driver``
    (their ``lib64``, ``lib64/common``, ``lib64/driver``, the folders CANN's set_env.sh adds)."""
    folders: list[Path] = []
    for entry in os.environ.get(ENV_DRIVER_PATH, "").split(os.pathsep):
        base = Path(entry).expanduser()
        if entry and base.is_absolute():
            folders.append(base)
            folders.extend((base / "lib64", base / "lib64" / "common", base / "lib64" / "driver"))
    for base in (root / "driver", DEFAULT_DRIVER_HOME):
        folders.extend((base / "lib64", base / "lib64" / "common", base / "lib64" / "driver"))
    return folders


def dependency_dirs(root: Path) -> list[Path]:
    """Where the dependencies of an install's libraries are looked for, in order."""
    return [*library_dirs(root), *driver_dirs(root)]


def _is_loaded(name: str) -> bool:
    """Whether a library of that soname (or name) is already in the process."""
    try:
        ctypes.CDLL(name, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return False
    return True


def _dependencies(path: Path, directories: list[Path], seen: set[str]) -> list[tuple[Path, Path]]:
    """The dependencies of ``path`` to load before it, each after its own and with the library
    that needs it: those not loaded yet that are found in ``directories``. What is found
    nowhere is left to the dynamic linker (LD_LIBRARY_PATH, its cache), whose error then
    names it."""
    found: list[tuple[Path, Path]] = []
    info = read_dynamic_section(path)
    for name in info.needed if info else ():
        if name in seen or "/" in name or _SYSTEM_LIBRARY.match(name):
            continue
        seen.add(name)
        if _is_loaded(name):
            continue
        hit = next((d / name for d in directories if (d / name).is_file()), None)
        if hit is not None:
            hit = hit.resolve()
            found.extend(_dependencies(hit, directories, seen))
            found.append((hit, path))
    return found


def _is_emulator(path: Path) -> bool:
    info = read_dynamic_section(path)
    return bool(info and info.soname and info.soname.startswith(EMULATOR_SONAME_PREFIX))


def _open(path: Path, directories: list[Path], *, local: bool) -> Any:
    """dlopen ``path``: RTLD_LOCAL for the emulator's libraries and for dependencies (a later
    RTLD_GLOBAL dlopen of a library that needs one makes it global too), RTLD_GLOBAL for a real
    CANN's libraries, whose plugins and users may expect its symbols in the global scope."""
    problem = _elf_problem(path)
    if problem is not None and problem[1]:
        raise _invalid_library(path, problem[0], None)
    scope = ffi.RTLD_LOCAL if local or _is_emulator(path) else ffi.RTLD_GLOBAL
    try:
        return ffi.dlopen(str(path), ffi.RTLD_LAZY | scope | ffi.RTLD_NODELETE)
    except OSError as error:
        raise _load_error(path, error, problem and problem[0], directories) from error


_lock = threading.Lock()
_libraries: Libraries | None = None


def load() -> Libraries:
    """Locate and load the libraries once per process (thread-safe). A failure is not
    kept: each call tries again, and raises again while the configuration is the same."""
    global _libraries
    if _libraries is not None:
        return _libraries
    with _lock:
        if _libraries is None:
            installation = locate()
            try:
                _libraries = _load(installation)
            except LibraryNotFoundError as error:
                if installation.backend != "cann":
                    raise
                raise LibraryNotFoundError(
                    f"{error.message} (How this install was chosen: {installation.reason}.) "
                    f"Set {ENV_BACKEND}=emulator to run on aclnn_py's host emulator instead.",
                    error.tried) from error
    return _libraries


_RTLD_DI_LINKMAP = 2  # dlinfo's request for the object's struct link_map (glibc, musl)


def _loaded_file(path: Path) -> Path:
    """The file the process already loaded under ``path``'s soname, else ``path``.

    A program linked against a tree loads each library by soname, so from the tree's entry of
    that name: in a wheel a copy, not a link, of ``path``. Opening ``path`` too would load a
    second runtime beside the program's."""
    info = read_dynamic_section(path)
    if info is None or not info.soname:
        return path
    process = ctypes.CDLL(None)
    try:
        dlopen, dlinfo, dlclose = process.dlopen, process.dlinfo, process.dlclose
    except AttributeError:
        return path
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_int]
    handle = dlopen(os.fsencode(info.soname), os.RTLD_NOLOAD | os.RTLD_LAZY)
    if not handle:
        return path
    try:
        link_map = ctypes.c_void_p()
        found = dlinfo(ctypes.c_void_p(handle), _RTLD_DI_LINKMAP, ctypes.byref(link_map))
        if found != 0 or not link_map.value:
            return path
        # struct link_map (<link.h>): l_addr, then l_name, the path the object was loaded from
        name = ctypes.cast(link_map.value + ctypes.sizeof(ctypes.c_void_p),
                           ctypes.POINTER(ctypes.c_char_p))[0]
    finally:
        dlclose(ctypes.c_void_p(handle))
    return Path(os.fsdecode(name)) if name else path


def adopt_emulator(root: Path) -> Libraries:
    """Load the emulator tree at ``root`` -- the one a program already loaded, whose kernels
    aclnn_py is to compute -- unless libraries are loaded already; then they must be that
    tree's (LibraryNotFoundError otherwise, as for one without its libraries)."""
    global _libraries
    with _lock:
        if _libraries is None:
            tried: list[str] = []
            paths = find_libraries(root, tried)
            if paths is None:
                raise LibraryNotFoundError(f"{root} is not an emulator tree with its libraries",
                                           tried)
            extra = tuple(_loaded_file(path) for path in extra_operator_libraries(paths))
            paths = {family: _loaded_file(path) for family, path in paths.items()}
            _libraries = _load(Installation("emulator", root, paths, extra,
                                            "the emulator tree the program loaded"))
        elif _libraries.installation.root.resolve() != root.resolve():
            raise LibraryNotFoundError(
                f"aclnn_py in this process already uses {_libraries.installation.root}, not the "
                f"emulator tree {root} whose kernels are asked for")
    return _libraries


def _load(installation: Installation) -> Libraries:
    """Load the libraries of ``installation``, each after its dependencies."""
    _prepare_environment(installation)
    directories = [d for d in dependency_dirs(installation.root) if d.is_dir()]
    seen: set[str] = set()
    dependencies: list[Path] = []

    def open_with_dependencies(path: Path) -> Any:
        if _is_emulator(path):  # a program of the process may have loaded the tree already
            path = _loaded_file(path)
        for dependency, needed_by in _dependencies(path, directories, seen):
            try:
                _open(dependency, directories, local=True)
            except LibraryNotFoundError as error:
                raise LibraryNotFoundError(
                    f"{error.message} (It was loaded first as a library that "
                    f"{needed_by} needs.)", error.tried) from error
            dependencies.append(dependency)
        return _open(path, directories, local=False)

    runtime = open_with_dependencies(installation.paths["runtime"])
    meta = open_with_dependencies(installation.paths["meta"])
    ops = open_with_dependencies(installation.paths["ops"])
    extra_ops = tuple(open_with_dependencies(path) for path in installation.extra_ops)
    logger.info("aclnn_py backend %s: %s (dependencies loaded first: %s)",
                installation.backend,
                ", ".join(str(p) for p in (*installation.paths.values(),
                                           *installation.extra_ops)),
                ", ".join(str(p) for p in dependencies) or "none")
    return Libraries(installation, runtime, meta, ops, extra_ops, tuple(dependencies))


_operator_libraries: dict[Path, Any] = {}
_caches.register("custom operator libraries", holds="an operator library opened by path "
                 "(kept for the process: CANN objects may point into it)",
                 bound="the custom operator packages installed",
                 size=lambda: len(_operator_libraries), empty=None)


def open_operator_library(path: Path) -> Any:
    """Load an operator library outside the install (a custom operator package's), by
    absolute path, RTLD_LOCAL, after the libraries it needs; kept for the process."""
    found = _operator_libraries.get(path)
    if found is not None:
        return found
    libraries = load()
    with _lock:
        found = _operator_libraries.get(path)
        if found is None:
            directories = [d for d in dependency_dirs(libraries.installation.root) if d.is_dir()]
            seen: set[str] = set()
            for dependency, _ in _dependencies(path, directories, seen):
                _open(dependency, directories, local=True)
            found = _operator_libraries[path] = _open(path, directories, local=True)
    return found


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


def request_backend(backend: str | None) -> None:
    """Set ``ACLNN_PY_BACKEND`` to ``backend`` (None: leave it); RuntimeError when aclnn_py
    already loaded another backend in this process."""
    if backend is not None:
        current = loaded()
        if current is not None and current.installation.backend != backend and backend != "auto":
            raise RuntimeError(f"aclnn_py already loaded the {current.installation.backend} "
                               "backend in this process")
        os.environ[ENV_BACKEND] = backend
