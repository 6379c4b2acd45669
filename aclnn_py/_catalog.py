"""Every aclnn operator the loaded CANN and its custom operator packages declare.

Where operators come from, in CANN's order (the first that declares an operator wins):

1. custom operator packages: each folder of ``$ASCEND_CUSTOM_OPP_PATH`` (colon-separated),
   then ``<opp>/vendors/<vendor>/`` in the order of ``<opp>/vendors/config.ini``'s
   ``load_priority`` (``<opp>``: ``$ASCEND_OPP_PATH``, else the install's ``opp/``); each
   with headers ``op_api/include/aclnn_*.h`` and the library ``op_api/lib/libcust_opapi.so``
   (the lookup order of Ascend/op-plugin ``op_api_common.cpp``);
2. the install's own headers, ``include/aclnnop/aclnn_*.h`` and ``include/aclnnop/level2/``
   (older toolkits), matched to the operator libraries already loaded.

Headers are scanned for operator names once; an operator's prototypes are parsed
(``_headers``) when it is first asked for.

Roles: a ``const aclTensor *`` is an input, an ``aclTensor *`` an output, except
``...Ref`` parameters, which are updated in place (role ``"inout"``). Generated
custom-operator headers declare outputs ``const`` too: there the package's operator
description (its ops-info JSON under ``op_impl/``) names the outputs; without one the
roles are not known, and ``call`` binds ``out=`` to the last tensor parameters.
"""

from __future__ import annotations

import configparser
import difflib
import json
import os
import platform
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import _headers, _loader
from . import _lowlevel as ll
from .errors import LibraryNotFoundError

ENV_CUSTOM_OPP_PATH = "ASCEND_CUSTOM_OPP_PATH"
ENV_TRUST_CUSTOM_OPP = "ACLNN_PY_TRUST_CUSTOM_OPP"
CUSTOM_LIBRARY = Path("op_api") / "lib" / "libcust_opapi.so"
CUSTOM_HEADERS = Path("op_api") / "include"

TENSOR_TYPES = {"aclTensor *", "const aclTensor *"}
TENSOR_LIST_TYPES = {"aclTensorList *", "const aclTensorList *"}


@dataclass(frozen=True)
class Parameter:
    """One parameter of an operator's Python call.

    ``role``: ``"input"``, ``"output"``, ``"inout"`` (an in-place ``...Ref`` tensor: the
    array passed is updated) or ``"attribute"``; ``optional``: a tensor or array whose
    name ends in ``Optional``, which may be None (NULL).
    """

    name: str
    c_type: str
    role: str
    optional: bool

    @property
    def is_tensor(self) -> bool:
        c_type = _headers.bare(self.c_type)
        return c_type in TENSOR_TYPES or c_type in TENSOR_LIST_TYPES


@dataclass(frozen=True)
class Signature:
    """An operator as its header declares it, and where it comes from."""

    name: str
    parameters: tuple[Parameter, ...]
    header: Path
    line: int
    library: Path
    package: Path | None = None      # the custom operator package, None for CANN's own
    roles_known: bool = True         # False: a custom header without an operator description
    phase1_types: tuple[str, ...] = field(default=(), repr=False)

    def __str__(self) -> str:
        parameters = ",\n    ".join(
            f"{p.c_type}{'' if p.c_type.endswith('*') else ' '}{p.name}"
            for p in self.parameters)
        roles = ", ".join(f"{p.name}: {p.role}{' (optional)' if p.optional else ''}"
                          for p in self.parameters)
        if not self.roles_known:
            roles += " (outputs not declared: out= binds the last tensor parameters)"
        where = f"custom package {self.package}" if self.package else "CANN"
        return (f"aclnnStatus {self.name}{_headers.PHASE1_SUFFIX}(\n    {parameters},\n"
                f"    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
                f"  roles: {roles}\n  header: {self.header}:{self.line}\n"
                f"  library: {self.library} ({where})")


@dataclass(frozen=True)
class _Source:
    """Where an operator's header is, before it is parsed."""

    header: Path
    library: Path | None             # a custom package's library; None: the loaded CANN's
    package: Path | None


_lock = threading.Lock()
_sources: dict[str, _Source] | None = None
_signatures: dict[str, Signature] = {}


def _opp_root(root: Path) -> Path:
    value = os.environ.get("ASCEND_OPP_PATH", "").strip()
    return Path(value).absolute() if value else root / "opp"


def custom_packages(root: Path) -> list[Path]:
    """The custom operator packages, in CANN's priority order (absolute paths: their
    libraries are loaded by absolute path only, whatever the working folder later is)."""
    entries = os.environ.get(ENV_CUSTOM_OPP_PATH, "").split(":")
    packages = [Path(entry).absolute() for entry in entries if entry.strip()]
    vendors = _opp_root(root) / "vendors"
    config = vendors / "config.ini"
    try:
        text = config.read_text(errors="replace")
    except OSError:
        text = ""
    parser = configparser.ConfigParser(inline_comment_prefixes=("#", ";"), strict=False)
    try:
        parser.read_string("[vendors]\n" + text)
        priority = parser.get("vendors", "load_priority", fallback="")
    except configparser.Error:
        priority = ""
    packages += [vendors / name.strip() for name in priority.split(",") if name.strip()]
    return packages


def builtin_header_dirs(root: Path) -> list[Path]:
    """Folders of the install's operator headers, newest layout first."""
    bases = [root / "include", root / f"{platform.machine()}-linux" / "include"]
    return [base / "aclnnop" / sub for base in bases for sub in ("", "level2")]


def _scan() -> dict[str, _Source]:
    root = ll.libraries().installation.root
    sources: dict[str, _Source] = {}

    def add(folder: Path, library: Path | None, package: Path | None) -> None:
        try:
            headers = sorted(folder.glob("aclnn_*.h"))
        except OSError:
            return
        for header in headers:
            try:
                text = header.read_text("utf-8", errors="replace")
            except OSError:
                continue
            for name in _headers.operator_names(text):
                sources.setdefault(name, _Source(header, library, package))

    for package in custom_packages(root):
        add(package / CUSTOM_HEADERS, package / CUSTOM_LIBRARY, package)
    for folder in builtin_header_dirs(root):
        add(folder, None, None)
    return sources


def _all_sources() -> dict[str, _Source]:
    global _sources
    if _sources is None:
        with _lock:
            if _sources is None:
                _sources = _scan()
    return _sources


def operators() -> list[str]:
    """Sorted names of every operator found (``"aclnnAdd"``, ..., custom ones included)."""
    return sorted(_all_sources())


def signature(name: str) -> Signature:
    """The parsed operator ``name``, with its library bound for calls."""
    found = _signatures.get(name)
    if found is not None:
        return found
    source = _all_sources().get(name)
    if source is None:
        raise ValueError(_unknown(name))
    with _lock:
        found = _signatures.get(name)
        if found is None:
            found = _signatures[name] = _read(name, source)
    return found


def _unknown(name: str) -> str:
    names = list(_all_sources())
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    if not close and not name.startswith("aclnn"):
        close = difflib.get_close_matches("aclnn" + name, names, n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else \
        " (aclnn_py.operators() lists them)"
    return f"unknown aclnn operator {name!r}: no header of this CANN or its custom " \
           f"operator packages declares it{hint}"


def _read(name: str, source: _Source) -> Signature:
    text = source.header.read_text("utf-8", errors="replace")
    prototypes = _headers.operator(text, name, source.header)
    outputs = None
    if source.package is not None:
        outputs = _described_outputs(source.package, name[len("aclnn"):])
    parameters = roles(prototypes.parameters, outputs, custom=source.package is not None)
    library = _library(name, source)
    ll.bind_operator(library, name, prototypes.phase1_types)
    return Signature(name, parameters, source.header, prototypes.phase1.line, library,
                     source.package, source.package is None or outputs is not None,
                     prototypes.phase1_types)


def roles(parameters: tuple[_headers.CParameter, ...], outputs: set[str] | None, *,
          custom: bool) -> tuple[Parameter, ...]:
    """The Python-call parameters of a phase-1 prototype's ``parameters`` (without the
    workspace and executor ones). ``outputs``: the output names an operator description
    gives (custom packages), None without one; ``custom``: from a custom package, whose
    generated headers declare outputs const like inputs."""
    found = []
    for p in parameters:
        optional = p.name.endswith("Optional")
        c_type = _headers.bare(p.c_type)
        if c_type in TENSOR_TYPES or c_type in TENSOR_LIST_TYPES:
            if p.name.endswith("Ref") and not c_type.startswith("const"):
                role = "inout"
            elif outputs is not None:
                role = "output" if p.name in outputs else "input"
            elif c_type.startswith("const") or custom:
                role = "input"
            else:
                role = "output"
        else:
            role = "attribute"
        found.append(Parameter(p.name, p.c_type, role, optional))
    return tuple(found)


def _described_outputs(package: Path, operator: str) -> set[str] | None:
    """The output names of ``operator`` in the package's ops-info descriptions, if any."""
    for path in sorted((package / "op_impl").glob("**/*ops-info*.json")):
        try:
            description = json.loads(path.read_text(errors="replace")).get(operator)
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(description, dict):
            return {str(entry.get("name")) for key, entry in description.items()
                    if key.startswith("output") and isinstance(entry, dict)}
    return None


def _library(name: str, source: _Source) -> Path:
    """The loaded library that exports ``name``'s phase 1 (loading a custom package's)."""
    api = name + _headers.PHASE1_SUFFIX
    if source.library is not None:
        library = source.library
        if not library.is_file():
            raise LibraryNotFoundError(
                f"{name} is declared by {source.header}, but its library {library} is missing",
                [str(library)])
        check_trusted(library)
        _loader.open_operator_library(library)
        return library
    installation = ll.libraries().installation
    candidates = [installation.paths["ops"], *installation.extra_ops]
    for library in candidates:
        if ll.symbol_address(library, api) is not None:
            return library
    raise LibraryNotFoundError(
        f"{name} is declared by {source.header}, but no loaded operator library exports {api}"
        f" (looked in {', '.join(c.name for c in candidates)}; CANN >= 8.5 ships each operator "
        "repository's operators in a libopapi_<repository>.so of its own)",
        [str(c) for c in candidates])


def check_trusted(library: Path) -> None:
    """Refuse a custom operator library (or its folder) that users other than its owner
    could have written, or that another non-root user owns (the owner rule of
    Ascend/op-plugin); a symbolic link is checked with the file it leads to and that
    file's folder. ``ACLNN_PY_TRUST_CUSTOM_OPP=1`` lifts the rule."""
    if os.environ.get(ENV_TRUST_CUSTOM_OPP, "").strip() == "1":
        return
    user = os.getuid()
    real = library.resolve()
    for path in dict.fromkeys((library, library.parent, real, real.parent)):
        info = path.stat()
        if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise PermissionError(
                f"refusing to load the custom operator library {library}: {path} is writable "
                f"by {'other users' if info.st_mode & stat.S_IWOTH else 'its group'} "
                f"(mode {stat.filemode(info.st_mode)}); make it writable by its owner only, or "
                f"set {ENV_TRUST_CUSTOM_OPP}=1 if you trust it")
        if info.st_uid not in (user, 0):
            raise PermissionError(
                f"refusing to load the custom operator library {library}: {path} belongs to "
                f"user id {info.st_uid}, neither you ({user}) nor root; set "
                f"{ENV_TRUST_CUSTOM_OPP}=1 if you trust it")


_on_forget: list[Callable[[], None]] = []


def on_forget(callback: Callable[[], None]) -> None:
    """Have ``callback`` drop what was derived from the operators found, at :func:`forget`."""
    _on_forget.append(callback)


def forget() -> None:
    """Scan again at the next use (for tests that change the environment)."""
    global _sources
    with _lock:
        _sources = None
        _signatures.clear()
    for callback in _on_forget:
        callback()
