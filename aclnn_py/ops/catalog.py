"""Every aclnn operator the loaded CANN and its custom operator packages declare.

Where operators come from, in CANN's order (the first that declares an operator wins):

1. custom operator packages: each folder of ``$ASCEND_CUSTOM_OPP_PATH`` (colon-separated),
   then ``<opp>/vendors/<vendor>/`` in the order of ``<opp>/vendors/config.ini``'s
   ``load_priority`` (``<opp>``: ``$ASCEND_OPP_PATH``, else the install's ``opp/``); each
   with headers ``op_api/include/aclnn_*.h`` and the library ``op_api/lib/libcust_opapi.so``
   (the lookup order of Ascend/op-plugin ``op_api_common.cpp``);
2. the install's own headers, ``include/aclnnop/aclnn_*.h`` and ``include/aclnnop/level2/``
   (older toolkits), matched to the operator libraries already loaded.

Headers are scanned for operator names once, cheaply (``ops.headers.quick_operator_names``);
an operator's prototypes are parsed (``ops.headers``) when it is first asked for, and its
library is looked for then too (the library that exports its phase 1, or its package's),
but loaded and bound only by its first call (:func:`bind`): a header is readable whether or
not a library here exports what it declares. A custom package's operator is first held to
the owner rule (:func:`package_file`): its header, ops-info JSON and library, with the
folders that hold them and along their links, and ``vendors/config.ini`` before it is read;
what is read and loaded is the real file checked.

Roles (which tensors are outputs, which are updated in place) are decided by ``ops.roles``:
what the user stated, a custom package's operator description, aclnn_py's role table
generated from CANN's docs, then CANN's naming conventions.
"""

from __future__ import annotations

import configparser
import contextlib
import difflib
import errno
import json
import os
import platform
import stat
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .. import _caches
from .._c import kernel_calls, loader
from .._c import lowlevel as ll
from ..errors import LibraryNotFoundError
from . import headers as _headers
from . import roles as _roles
from . import rules as _rules

ENV_CUSTOM_OPP_PATH = "ASCEND_CUSTOM_OPP_PATH"
ENV_TRUST_CUSTOM_OPP = "ACLNN_PY_TRUST_CUSTOM_OPP"
CUSTOM_LIBRARY = Path("op_api") / "lib" / "libcust_opapi.so"
CUSTOM_HEADERS = Path("op_api") / "include"

TENSOR_TYPES = _roles.TENSOR_TYPES
TENSOR_LIST_TYPES = _roles.TENSOR_LIST_TYPES


@dataclass(frozen=True)
class Parameter:
    """One parameter of an operator's Python call.

    ``role``: ``"input"``, ``"output"``, ``"inout"`` (updated in place: the array passed
    is updated) or ``"attribute"``; ``optional``: a pointer parameter that may be None
    (NULL): its name ends in ``Optional``, or it is an input or attribute the operator's doc
    lets be NULL (``rules.may_be_null``); ``source``: what decided the role (``"user"``,
    ``"ops-info"``, ``"table"``, ``"rule"``; ``"header"`` for an attribute).
    """

    name: str
    c_type: str
    role: str
    optional: bool
    source: str = "rule"

    @property
    def is_tensor(self) -> bool:
        return _roles.is_tensor_type(self.c_type)


@dataclass(frozen=True)
class Signature:
    """An operator as its header declares it, and where it comes from.

    ``library``: the library a call would use, None when none is found; ``callable``:
    whether it is found (for CANN's own operators, a loaded operator library exports the
    phase 1; for a custom package's, its library is there: what it exports is known when
    the first call loads it); ``looked_in``: the libraries looked at, in order.
    """

    name: str
    parameters: tuple[Parameter, ...]
    header: Path
    line: int
    library: Path | None
    package: Path | None = None      # the custom operator package, None for CANN's own
    roles_known: bool = True         # False: nothing says which tensors are written
    phase1_types: tuple[str, ...] = field(default=(), repr=False)
    callable: bool = True
    looked_in: tuple[Path, ...] = ()
    roles_source: str = "rule"       # what decided the roles (see Parameter.source)
    roles_where: str = ""            # the source's origin: table repository, commit and doc
    returns_nothing: bool = False    # the source says no parameter is written
    # Phase 2's parameters besides CANN's usual four (between the executor and the stream),
    # with their roles: the call passes phase 1's object of the same name, or the argument
    # given for one only phase 2 takes (``phase2_only``, last in ``parameters``).
    phase2: tuple[Parameter, ...] = ()
    phase2_only: tuple[str, ...] = ()
    phase2_types: tuple[str, ...] = field(default=_headers.PHASE2_TYPES, repr=False)
    # What ``aclnn_py.signature`` adds for the running backend: each tensor parameter's
    # accepted dtypes on its SoC (CANN's names, from the phase-1 table; empty when the table
    # has none) and, on the emulator, what computes the operator ("C kernel", "Python
    # kernel", "user kernel" or "not computed"; "" on CANN).
    dtypes: tuple[tuple[str, tuple[str, ...]], ...] = ()
    computed_by: str = ""

    @property
    def python_form(self) -> str:
        """The call as Python writes it: ``call("aclnnSoftmax", self, dim, *, out=None)
        -> out`` (optional parameters default to None; the result is the in-place tensors,
        then the outputs)."""
        taken = [f"{p.name}=None" if p.optional else p.name for p in self.parameters
                 if p.role != "output"]
        written = [p.name for p in self.parameters if p.role == "inout"] + \
            [p.name for p in self.parameters if p.role == "output"]
        result = "None" if not written else written[0] if len(written) == 1 else \
            f"({', '.join(written)})"
        return f'call("{self.name}", {", ".join([*taken, "*", "out=None"])}) -> {result}'

    @property
    def phase1_parameters(self) -> tuple[Parameter, ...]:
        """The parameters phase 1 takes: ``parameters`` but those only phase 2 takes."""
        return tuple(p for p in self.parameters if p.name not in self.phase2_only)

    @property
    def where(self) -> str:
        """Where the library is, or where it was looked for, in a few words."""
        if self.package is not None:
            if self.library is None:
                return f"custom package {self.package}: its library {self.looked_in[0]} is missing"
            return f"custom package {self.package}"
        if self.library is None:
            names = ", ".join(library.name for library in self.looked_in)
            return (f"CANN: no loaded operator library exports {self.name}"
                    f"{_headers.PHASE1_SUFFIX} (looked in {names})")
        return "CANN"

    def __str__(self) -> str:
        def declared(parameters: tuple[Parameter, ...]) -> list[str]:
            return [f"{p.c_type}{'' if p.c_type.endswith('*') else ' '}{p.name}"
                    for p in parameters]

        parameters = ",\n    ".join(declared(self.phase1_parameters))
        phase2 = ""
        if self.phase2:
            usual = ["void *workspace", "uint64_t workspaceSize", "aclOpExecutor *executor"]
            phase2 = (f"aclnnStatus {self.name}(\n    "
                      + ",\n    ".join([*usual, *declared(self.phase2), "aclrtStream stream"])
                      + ");\n")
            again = [p.name for p in self.phase2 if p.name not in self.phase2_only]
            if again:
                phase2 += f"  phase 2 is passed phase 1's {', '.join(again)} again\n"
            if self.phase2_only:
                phase2 += (f"  phase 2 also takes {', '.join(self.phase2_only)}, given after "
                           "phase 1's parameters\n")
        roles = ", ".join(f"{p.name}: {p.role}{' (optional)' if p.optional else ''}"
                          for p in self.parameters)
        if self.returns_nothing:
            roles += " (writes no parameter: the call returns None)"
        if not self.roles_known:
            roles += (" (not known: nothing says which tensors are written; state them with "
                      "aclnn_py.register_roles, or out= binds the last tensor parameters)")
        origin = _SOURCE_NAMES[self.roles_source]
        roles += f"\n  roles from: {origin}" + (f", {self.roles_where}" if self.roles_where else "")
        library = self.library if self.callable else "not callable here"
        dtypes = "".join(f"\n  {name}: {', '.join(names)}" for name, names in self.dtypes)
        if dtypes:
            dtypes = "\n  dtypes on this SoC (CANN's names):" + dtypes.replace("\n  ", "\n    ")
        computed = f"\n  on the emulator: {self.computed_by}" if self.computed_by else ""
        return (f"{self.python_form}\n"
                f"aclnnStatus {self.name}{_headers.PHASE1_SUFFIX}(\n    {parameters},\n"
                f"    uint64_t *workspaceSize, aclOpExecutor **executor);\n{phase2}"
                f"  roles: {roles}\n  header: {self.header}:{self.line}\n"
                f"  library: {library} ({self.where}){dtypes}{computed}")


@dataclass(frozen=True)
class _Source:
    """Where an operator's header is, before it is parsed."""

    header: Path
    library: Path | None             # a custom package's library; None: the loaded CANN's
    package: Path | None


_lock = threading.Lock()
_sources: dict[str, _Source] | None = None
_signatures: dict[str, Signature] = {}
_bound: dict[str, Path] = {}  # operator -> the library its call binds to
_caches.register("operator signatures", holds="an operator's prototype read from its header, "
                 "and the library its call binds to", bound="the operators the headers declare "
                 "(read again when the environment changes)", size=lambda: len(_signatures),
                 empty=None)


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
    text = ""
    if os.path.lexists(config):  # it decides which packages load: held to the owner rule
        refusing = f"the vendor priorities {config}"
        trusted_path(vendors, refusing)
        real = trusted_path(config, refusing)
        with contextlib.suppress(OSError):  # unreadable: no priorities
            text = real.read_text(errors="replace")
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
            with os.scandir(folder) as entries:
                names = sorted(entry.name for entry in entries
                               if entry.name.startswith("aclnn_") and entry.name.endswith(".h"))
        except OSError:
            return
        for file_name in names:
            header = folder / file_name
            try:
                text = _header_text(header)
            except OSError:
                continue
            for name in _headers.quick_operator_names(text):
                sources.setdefault(name, _Source(header, library, package))

    for package in custom_packages(root):
        add(package / CUSTOM_HEADERS, package / CUSTOM_LIBRARY, package)
    for folder in builtin_header_dirs(root):
        add(folder, None, None)
    return sources


def _header_text(path: Path) -> str:
    """``path.read_text("utf-8", errors="replace")``, in half its time (no text layer: the
    newlines are translated the same way after decoding)."""
    with open(path, "rb", buffering=0) as file:
        text = file.read().decode("utf-8", "replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def _all_sources() -> dict[str, _Source]:
    global _sources
    if _sources is None:
        with _lock:
            if _sources is None:
                _sources = _scan()
    return _sources


def operators(*, callable: bool = False) -> list[str]:
    """Sorted names of every operator found (``"aclnnAdd"``, ..., custom ones included);
    with ``callable=True``, only those a call could run here (see :class:`Signature`; on
    the emulator, a custom operator without its library when a kernel is registered)."""
    sources = _all_sources()
    if not callable:
        return sorted(sources)
    installation = ll.libraries().installation
    finders = [ll.symbol_finder(library)
               for library in (installation.paths["ops"], *installation.extra_ops)]
    packages: dict[Path, bool] = {}
    emulated = kernel_calls.kernel_names() if ll.emulator_loaded() else set()
    found = []
    for name, source in sources.items():
        if source.package is None:
            api = name + _headers.PHASE1_SUFFIX
            here = any(find(api) is not None for find in finders)
        elif source.package in packages:
            here = packages[source.package]
        else:
            try:
                here = _package_library(name, source) is not None
            except OSError:  # refused by the owner rule, or unreadable
                here = False
            packages[source.package] = here
        if not here and source.package is not None:
            here = name in emulated  # computed by its registered kernel (see _bind)
        if here:
            found.append(name)
    return sorted(found)


def from_package(name: str) -> bool:
    """Whether operator ``name`` comes from a custom operator package (whose own library
    computes it), not the loaded CANN."""
    source = _all_sources().get(name)
    return source is not None and source.package is not None


def signature(name: str) -> Signature:
    """The parsed operator ``name``, with the library a call would use (never loaded or
    bound here: see :func:`bind`)."""
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
    header = source.header
    outputs = None
    if source.package is not None:  # what is read and loaded is the real file checked
        header = package_file(source.package, header.relative_to(source.package),
                              f"the header {header} of {name}")
        outputs = _described_outputs(source.package, name)
    text = header.read_text("utf-8", errors="replace")
    prototypes = _headers.operator(text, name, header)
    declared = {p.name for p in prototypes.parameters}
    phase2_only = tuple(p for p in prototypes.phase2_extra if p.name not in declared)
    found_roles = _roles.resolve(name, prototypes.parameters + phase2_only,
                                 described_outputs=outputs,
                                 where_described=f"{source.package}/op_impl ops-info")
    nullable = _rules.may_be_null(name)
    parameters = roles(prototypes.parameters + phase2_only, found_roles, nullable)
    phase2 = roles(prototypes.phase2_extra, found_roles, nullable)
    looked_in: tuple[Path, ...]
    if source.package is not None and source.library is not None:
        library, looked_in = _package_library(name, source), (source.library,)
    else:
        installation = ll.libraries().installation
        looked_in = (installation.paths["ops"], *installation.extra_ops)
        library = _exporting(name, looked_in)
    return Signature(name, parameters, header, prototypes.phase1.line, library,
                     source.package, found_roles.known, prototypes.phase1_types,
                     library is not None, looked_in, found_roles.source, found_roles.where,
                     found_roles.returns_nothing, phase2, tuple(p.name for p in phase2_only),
                     prototypes.phase2_types)


_SOURCE_NAMES = {"user": "stated by the user (aclnn_py.register_roles)",
                 "ops-info": "the custom package's operator description",
                 "table": "aclnn_py's role table, from CANN's operator docs, samples and "
                          "sources",
                 "rule": "CANN's naming and const conventions (no doc known for it)"}


def roles(parameters: tuple[_headers.CParameter, ...], found: _roles.Roles,
          nullable: frozenset[str] = frozenset()) -> tuple[Parameter, ...]:
    """The Python-call parameters of a phase-1 prototype's ``parameters`` (without the
    workspace and executor ones), with the roles ``found``. Optional: a name ending in
    ``Optional``, or an input, in-place tensor or attribute in ``nullable`` (the operator's
    doc lets it be NULL); an output so named stays required, as ``call`` leaves
    optional outputs out."""
    def optional(p: _headers.CParameter, role: str) -> bool:
        return p.name.endswith("Optional") or (p.name in nullable and role != "output")
    made = []
    for p in parameters:
        role = found.role(p)
        made.append(Parameter(p.name, p.c_type, role, optional(p, role),
                              found.source if _roles.is_tensor_type(p.c_type) else "header"))
    return tuple(made)


def _described_outputs(package: Path, name: str) -> set[str] | None:
    """The output names of operator ``name`` in the package's ops-info descriptions under
    ``op_impl/``, if any (each held to the owner rule with its folders before it is read)."""
    op_impl = package / "op_impl"
    if not os.path.lexists(op_impl):
        return None
    refusing = f"the operator descriptions of {name} in {op_impl}"
    real = package_file(package, Path("op_impl"), refusing)
    for path in sorted(real.glob("**/*ops-info*.json")):
        checked = package_file(package, Path("op_impl", path.relative_to(real)), refusing)
        try:
            description = json.loads(checked.read_text(errors="replace")).get(name[len("aclnn"):])
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(description, dict):
            return {str(entry.get("name")) for key, entry in description.items()
                    if key.startswith("output") and isinstance(entry, dict)}
    return None


def _exporting(name: str, candidates: Sequence[Path]) -> Path | None:
    """The first loaded library of ``candidates`` that exports ``name``'s phase 1."""
    api = name + _headers.PHASE1_SUFFIX
    for library in candidates:
        if ll.symbol_address(library, api) is not None:
            return library
    return None


def _package_library(name: str, source: _Source) -> Path | None:
    """The real path of a custom package's library, once the owner rule holds for it (not
    loaded); None when it is missing."""
    assert source.package is not None and source.library is not None
    if not source.library.is_file():
        return None
    return package_file(source.package, source.library.relative_to(source.package),
                        f"the library {source.library} of {name}")


def bind(signature: Signature) -> Path:
    """The library ``signature``'s operator is called from, loaded (a custom package's, its
    owner rule checked again) and its two phases bound, once per operator; what no library
    here provides raises LibraryNotFoundError, before any device work."""
    found = _bound.get(signature.name)
    if found is not None:
        return found
    with _lock:
        found = _bound.get(signature.name)
        if found is None:
            found = _bind(signature)
            ll.bind_operator(found, signature.name, signature.phase1_types,
                             signature.phase2_types)
            _bound[signature.name] = found
    return found


def _bind(signature: Signature) -> Path:
    name = signature.name
    if signature.package is not None:
        library = signature.looked_in[0]
        if not library.is_file():
            if ll.emulator_loaded() and name in kernel_calls.kernel_names():
                # The emulator computes it with the kernel registered for it, through its
                # generic entry points: a package tested before its library is built.
                ll.bind_described_operator(library, name, _described(signature),
                                           len(signature.phase2))
                return library
            hint = (f"; on aclnn_py's emulator, a kernel registered with "
                    f"aclnn_py.emulator.kernel({name!r}) stands in for it"
                    if ll.emulator_loaded() else "")
            raise LibraryNotFoundError(
                f"{name} is declared by {signature.header}, but its library {library} is "
                f"missing{hint}", [str(library)])
        real = package_file(signature.package, library.relative_to(signature.package),
                            f"the library {library} of {name}")
        loader.open_operator_library(real)
        return real
    if signature.library is None:
        candidates = signature.looked_in
        raise LibraryNotFoundError(
            f"{name} is declared by {signature.header}, but no loaded operator library exports "
            f"{name}{_headers.PHASE1_SUFFIX} (looked in {', '.join(c.name for c in candidates)}; "
            "CANN >= 8.5 ships each operator repository's operators in a "
            "libopapi_<repository>.so of its own)", [str(c) for c in candidates])
    return signature.library


_ROLE_CODES = {"output": "o", "inout": "u"}


def _described(signature: Signature) -> list[tuple[str, str, str, bool]]:
    """``(C type, name, role code, optional)`` of each parameter, for the emulator."""
    return [(p.c_type, p.name, _ROLE_CODES.get(p.role, "i"), p.optional)
            for p in signature.phase1_parameters]


def trust_lifted() -> bool:
    """``ACLNN_PY_TRUST_CUSTOM_OPP=1``: custom packages are used whatever their owners and
    permissions."""
    return os.environ.get(ENV_TRUST_CUSTOM_OPP, "").strip() == "1"


_MAX_LINKS = 40  # as Linux's path resolution: more is a loop


def resolve_steps(path: Path) -> tuple[Path, list[Path], list[Path]]:
    """``path`` (absolute) with its symbolic links followed one at a time, as the kernel
    does: the real path, the links met, and the folders along the links (each link's own
    folder and every folder its target names, intermediate links' included)."""
    pending = [(part, False) for part in reversed(path.absolute().parts[1:])]
    current = Path("/")
    links: list[Path] = []
    along: dict[Path, None] = {}
    while pending:
        part, from_link = pending.pop()
        if from_link:
            along[current] = None
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        entry = current / part
        if not stat.S_ISLNK(os.lstat(entry).st_mode):
            current = entry
            continue
        if len(links) == _MAX_LINKS:
            raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), str(path))
        links.append(entry)
        along[current] = None
        target = Path(os.readlink(entry))
        if target.is_absolute():
            current = Path("/")
        pending += [(p, True) for p in reversed(target.parts[1 if target.is_absolute() else 0:])]
    return current, links, list(along)


def trusted_path(path: Path, refusing: str) -> Path:
    """The real path of ``path`` (absolute), to open instead of ``path``, once the owner
    rule holds for it and along its links; else PermissionError naming what breaks it.

    The owner rule (Ascend/op-plugin's for custom operator libraries): writable by its
    owner only, and owned by you or root. It applies to the real file or folder, to every
    link met on the way (their owner: a link's mode means nothing) and to every folder
    along the links. Folders along links may be writable by others when sticky (``/tmp``:
    1777), as nobody else can then rename or remove the entries they hold, which are
    checked in turn. ``refusing`` says what is refused. With
    ``ACLNN_PY_TRUST_CUSTOM_OPP=1`` nothing is checked and the real path is returned."""
    if trust_lifted():
        return Path(os.path.realpath(path))
    real, links, along = resolve_steps(path)
    for link in links:
        _check_owner(link, os.lstat(link), refusing)
    for folder in along:
        _check(folder, refusing, sticky=True)
    _check(real, refusing, sticky=False)
    return real


def _check(path: Path, refusing: str, *, sticky: bool) -> None:
    info = os.stat(path)
    writable = info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    if writable and not (sticky and info.st_mode & stat.S_ISVTX):
        by = "other users" if info.st_mode & stat.S_IWOTH else "its group"
        raise PermissionError(
            f"refusing {refusing}: {path} is writable by {by} (mode "
            f"{stat.filemode(info.st_mode)}{', not sticky' if sticky else ''}); {_RULE}")
    _check_owner(path, info, refusing)


def _check_owner(path: Path, info: os.stat_result, refusing: str) -> None:
    user = os.getuid()
    if info.st_uid not in (user, 0):
        raise PermissionError(
            f"refusing {refusing}: {path} belongs to user id {info.st_uid}, neither you "
            f"({user}) nor root; {_RULE}")


_RULE = (f"custom operator packages must be writable by their owners only and owned by you "
         f"or root, with every folder along their symbolic links (the owner rule); set "
         f"{ENV_TRUST_CUSTOM_OPP}=1 if you trust it")


def package_file(package: Path, relative: Path, refusing: str) -> Path:
    """The real path of ``package / relative``, once the owner rule holds for the package
    root, each folder below it down to that file, and the file (see :func:`trusted_path`).

    Folders above the package root are not checked: they are where the package was put
    (``ASCEND_CUSTOM_OPP_PATH``, ``<opp>/vendors``), which may be a shared, sticky ``/tmp``
    or another user's home; what the package holds, and where its links lead, is
    checked."""
    path = package
    real = trusted_path(path, refusing)
    for part in relative.parts:
        path = path / part
        real = trusted_path(path, refusing)
    return real


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
        _bound.clear()
    for callback in _on_forget:
        callback()


def register_roles(name: str, *, outputs: Iterable[str] = (), inout: Iterable[str] = (),
                   returns_nothing: bool = False) -> None:
    """State which tensor parameters of operator ``name`` are outputs and which are
    updated in place, for operators whose roles nothing else knows (or knows wrongly).

    It takes precedence over every other source, for the rest of the process, and is
    checked against the operator's prototype when its signature is next read (an unknown
    name, or a parameter that is not a tensor, is a ValueError there).
    ``returns_nothing=True``: the operator writes no parameter; its call returns None."""
    if not isinstance(name, str):
        raise TypeError(f"the operator name must be a str such as 'aclnnAdd', got "
                        f"{type(name).__name__}")
    _roles.state(name, outputs, inout, returns_nothing)
    _restate(name)


def unregister_roles(name: str) -> bool:
    """Forget what :func:`register_roles` stated for ``name``; True if it stated
    something."""
    found = _roles.unstate(name)
    if found:
        _restate(name)
    return found


def _restate(name: str) -> None:
    with _lock:
        _signatures.pop(name, None)
    for callback in _on_forget:
        callback()


def role_agreement() -> dict[str, object]:
    """How the installed headers' operators agree with the role table: for each operator
    CANN itself declares (custom packages left out), whether the table knows it and whether
    its entry applies (every parameter name it lists is in the installed prototype; an entry
    whose doc gave no roles, ``by_rules``, has none to apply). A table entry that does not
    apply means this CANN names the parameters otherwise, so its roles fall back to CANN's
    conventions."""
    builtin = {name: source for name, source in _all_sources().items() if source.package is None}
    applies: list[str] = []
    differ: list[str] = []
    unknown: list[str] = []
    refused: list[str] = []
    by_rules: list[str] = []  # the table's entry gives no roles: CANN's conventions do
    for name, source in sorted(builtin.items()):
        entry = _roles.table_entry(name)
        if entry is None:
            unknown.append(name)
            continue
        if entry.get("basis") == "rules":
            by_rules.append(name)
            continue
        try:
            text = source.header.read_text("utf-8", errors="replace")
            prototypes = _headers.operator(text, name, source.header)
        except (OSError, _headers.HeaderError) as error:
            refused.append(f"{name}: {error}")
            continue
        found = _roles.table_roles(name, prototypes.parameters)
        (applies if found is not None else differ).append(name)
    return {"operators": len(builtin),
            "in_table": len(applies) + len(differ) + len(refused) + len(by_rules),
            "entry_applies": len(applies), "by_rules": len(by_rules), "names_differ": differ,
            "refused": refused, "not_in_table": len(unknown), "not_in_table_names": unknown[:50]}
