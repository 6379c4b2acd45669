"""Build and run CANN's eager sample programs against an emulator tree, as a plain C++ client.

hicann's operator repositories ship one sample program per operator
(``**/examples/test_aclnn_*.cpp``): a ``main`` that initialises the runtime, makes tensors,
calls ``aclnnXxxGetWorkspaceSize`` and ``aclnnXxx`` and prints the result. This tool finds
every such file that calls a phase 1, compiles it against an emulator tree with its own
repository's build line (the include folders, libraries and their order of the repository's
example script, reproduced in :data:`BUILD_LINES`), runs it in a plain process with the
tree's ``set_env.sh`` environment, and classifies it:

* ``ok``: exit status 0 and no failing status printed, and every operator launch with a
  PyTorch reference (``tools/torch_references.py``) computed what PyTorch computes: each
  Python kernel's launch is recorded (``ACLNN_EMU_TRACE``) and replayed through PyTorch;
* ``wrong``: exit status 0, but a recorded launch differs from PyTorch (the first such launch
  is named, with the largest difference's place);
* ``no kernel``: 561003 (ACLNN_ERR_INNER_FIND_KERNEL_ERROR) printed: the operator is declared
  but not computed in a process without aclnn_py (Python kernels answer only there);
* ``refused``: another non-zero aclnn or acl status printed;
* ``failed``: a non-zero exit status without a status printed;
* ``crashed`` (a signal) and ``timeout``;
* ``not built``: the compiler or linker refused it, with the first error's kind (``missing
  header``, ``missing declaration``, ``prototype mismatch`` (the tree declares the function
  with other parameters), ``missing library``, ``missing symbol``, ``compile error``, ``link
  error``);
* ``built`` (with ``--build-only``): compiled and linked, not run;
* ``other SoC``: a variant under ``examples/<arch>/`` that the repository builds only for
  another SoC than the emulator's Atlas A2 (not compiled), or a sample that exits 0 saying
  it skips itself on this SoC.

Without PyTorch (or with ``--no-compare``) results are not compared. One summary line per
repository and in all (with how many launches were compared), and a table of the headers,
declarations, libraries and symbols the failed builds miss (each counted once per sample)
are printed; ``--show CATEGORY`` lists that category's samples, ``--json`` writes every
sample's record. Compiled objects and executables are kept under ``--work``, named by the
digest of what made them, so a re-run recompiles only what changed.

    python tools/run_cann_samples.py --repo ops-nn=PATH --repo ops-math=PATH [--tree DIR]
        [--jobs N] [--timeout S] [--work DIR] [--json OUT] [--show not-built ...]
        [--no-compare]

A C++ compiler is needed (``CXX``, default ``g++`` as the repositories' scripts use).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from _checkouts import parse_repo

CATEGORIES = ("ok", "wrong", "no kernel", "refused", "failed", "crashed", "timeout", "not built",
              "other SoC", "built")
BUILD_KINDS = ("missing header", "missing declaration", "prototype mismatch", "missing library",
               "missing symbol", "compile error", "link error")
FIND_KERNEL_ERROR = 561003
PHASE1_CALL = re.compile(r"\b(aclnn\w+?)GetWorkspaceSize\s*\(")
# The examples/<folder>/ variants a repository builds for the emulator's SoC (Atlas A2,
# ascend910b): hicann/ops-nn build.sh build_example adds examples/arch22/ for ascend910b only,
# examples/arch35/ for ascend950 and ascend350, examples/arch20/ for ascend310p; hicann/ops-math
# scripts/build_example.sh build_example adds examples/arch35/ for ascend950 only.
MODELLED_SOC_FOLDERS = frozenset({"arch22"})


@dataclass(frozen=True)
class BuildLine:
    """One repository's eager example build line, as flags over a CANN tree."""

    source: str                                   # where the line is read from
    includes: tuple[str, ...]                     # folders under the tree
    library_dirs: tuple[str, ...]                 # folders under the tree
    libraries: Callable[[Path], tuple[str, ...]]  # the -l names, given the tree
    vendor: str = ""  # a custom package's op_api/ under the tree: its include/ and lib/ first

    def compile_flags(self, tree: Path) -> list[str]:
        vendor = [f"-I{tree / self.vendor / 'include'}"] if self.vendor else []
        return vendor + [f"-I{tree / folder}" for folder in self.includes]

    def link_flags(self, tree: Path, substitutes: dict[str, str] | None = None) -> list[str]:
        """The -L and -l flags (and the custom package's run path); ``substitutes`` replaces
        library names (``ascendcl`` by ``acl_rt``, say)."""
        names = [(substitutes or {}).get(name, name) for name in self.libraries(tree)]
        lib = tree / self.vendor / "lib"
        return ([f"-L{lib}"] if self.vendor else []) \
            + [f"-L{tree / folder}" for folder in self.library_dirs] \
            + [f"-l{n}" for n in names] + ([f"-Wl,-rpath={lib}"] if self.vendor else [])


def _nn_libraries(tree: Path) -> tuple[str, ...]:
    # libascendcl when the tree has one (in lib64 or opp/lib64), else libacl_rt.
    runtime = ("ascendcl" if (tree / "lib64" / "libascendcl.so").exists()
               or (tree / "opp" / "lib64" / "libascendcl.so").exists() else "acl_rt")
    return ("opapi_nn", "opapi_math", runtime, "nnopbase")


BUILD_LINES: dict[str, BuildLine] = {
    # hicann/ops-nn build.sh (e5c3fa93, lines 1566-1571), build_single_example, eager mode
    # without a package mode:
    # g++ FILE -I ${INCLUDE_PATH} -I ${INCLUDE_PATH}/aclnnop -I ${ACLNN_INCLUDE_PATH}
    #   -L ${EAGER_LIBRARY_OPP_PATH} -L ${EAGER_LIBRARY_PATH} -lopapi_nn -lopapi_math
    #   -lascendcl (or -lacl_rt without libascendcl.so) -lnnopbase, where INCLUDE_PATH is
    # ${ASCEND_HOME_PATH}/include, ACLNN_INCLUDE_PATH ${INCLUDE_PATH}/aclnn,
    # EAGER_LIBRARY_OPP_PATH ${ASCEND_OPP_PATH}/lib64, EAGER_LIBRARY_PATH ${ASCEND_HOME_PATH}/lib64.
    "build.sh": BuildLine("build.sh", ("include", "include/aclnnop", "include/aclnn"),
                          ("opp/lib64", "lib64"), _nn_libraries),
    # hicann/ops-math scripts/build_example.sh (c4193324), compile_eager_example_default
    # without a simulator: g++ FILE -I ${INCLUDE_PATH} -I ${ACLNN_INCLUDE_PATH}
    #   -L ${EAGER_LIBRARY_PATH} -lopapi_math -lascendcl -lnnopbase (scripts/build.conf.sh:
    # INCLUDE_PATH ${ASCEND_HOME_PATH}/include, ACLNN_INCLUDE_PATH ${INCLUDE_PATH}/aclnn,
    # EAGER_LIBRARY_PATH ${ASCEND_HOME_PATH}/lib64).
    "scripts/build_example.sh": BuildLine(
        "scripts/build_example.sh", ("include", "include/aclnn"), ("lib64",),
        lambda tree: ("opapi_math", "ascendcl", "nnopbase")),
}


# The same scripts' lines for the experimental/ samples, built against the custom package the
# repository builds its experimental operators into (the emulator's tree has one per
# repository, opp/vendors/custom_nn and custom_math: the default vendor name "custom").
EXPERIMENTAL_BUILD_LINES: dict[str, BuildLine] = {
    # hicann/ops-nn build.sh (e5c3fa93, lines 1543-1565), build_single_example with
    # PKG_MODE cust and no ASCEND_CUSTOM_OPP_PATH: g++ FILE -I ${VENDOR}/op_api/include
    #   -I ${INCLUDE_PATH} -I ${INCLUDE_PATH}/aclnnop -L ${VENDOR}/op_api/lib
    #   -L ${EAGER_LIBRARY_PATH} -lcust_opapi -lopapi_math -lascendcl (or -lacl_rt without
    #   lib64/libascendcl.so) -lnnopbase -Wl,-rpath=${VENDOR}/op_api/lib, where VENDOR is
    #   ${ASCEND_HOME_PATH}/opp/vendors/${VENDOR_NAME}_nn, VENDOR_NAME "custom" by default.
    "build.sh": BuildLine(
        "build.sh", ("include", "include/aclnnop"), ("lib64",),
        lambda tree: ("cust_opapi", "opapi_math",
                      "ascendcl" if (tree / "lib64" / "libascendcl.so").exists() else "acl_rt",
                      "nnopbase"),
        vendor="opp/vendors/custom_nn/op_api"),
    # hicann/ops-math scripts/build_example.sh (c4193324), compile_eager_example_cust without
    # a simulator: g++ FILE -I ${VENDOR}/op_api/include -I ${INCLUDE_PATH}
    #   -I ${INCLUDE_PATH}/aclnnop -L ${VENDOR}/op_api/lib -L ${EAGER_LIBRARY_PATH}
    #   -lcust_opapi -lascendcl -lnnopbase -Wl,-rpath=${VENDOR}/op_api/lib, VENDOR
    #   ${ASCEND_HOME_PATH}/opp/vendors/${VENDOR}_math ("custom": scripts/build_options.sh).
    "scripts/build_example.sh": BuildLine(
        "scripts/build_example.sh", ("include", "include/aclnnop"), ("lib64",),
        lambda tree: ("cust_opapi", "ascendcl", "nnopbase"),
        vendor="opp/vendors/custom_math/op_api"),
}


def build_line(root: Path, experimental: bool = False) -> BuildLine:
    """The build line of the checkout at ``root``, told by which example script it has (that
    of its experimental/ samples when ``experimental``)."""
    for script in ("scripts/build_example.sh", "build.sh"):
        if (root / script).is_file():
            return (EXPERIMENTAL_BUILD_LINES if experimental else BUILD_LINES)[script]
    raise ValueError(f"{root} has neither scripts/build_example.sh nor build.sh: "
                     "no known example build line")


@dataclass
class Sample:
    """One sample program and what became of it."""

    repository: str
    path: str                     # relative to the checkout
    operators: tuple[str, ...]
    experimental: bool
    category: str = ""
    detail: str = ""              # the build error's kind, the status, the signal, the folder
    missing: list[str] = field(default_factory=list)   # "kind: name" of a failed build
    output: str = ""              # the last lines the program printed
    compared: int = 0             # operator launches judged against PyTorch

    @property
    def name(self) -> str:
        return f"{self.repository}/{self.path}"


def find_samples(repositories: dict[str, Path]) -> list[Sample]:
    """Every ``examples/test_aclnn_*.cpp`` calling a phase 1 outside ``scripts/`` (both
    repositories' example scripts leave out ``scripts/opgen/template/``); another SoC's
    variants are classified ``other SoC`` at once."""
    found = []
    for repository, root in repositories.items():
        for path in sorted(root.glob("**/examples/**/test_aclnn_*.cpp")):
            text = path.read_text(encoding="utf-8", errors="replace")
            operators = tuple(dict.fromkeys(PHASE1_CALL.findall(text)))
            if not operators:
                continue
            relative = path.relative_to(root).as_posix()
            parts = relative.split("/")
            if "scripts" in parts:  # the operator generator's templates, never built
                continue
            sample = Sample(repository, relative, operators, "experimental" in parts)
            last = len(parts) - 1 - parts[::-1].index("examples")
            folder = parts[last + 1:-1]
            if folder and folder[0] not in MODELLED_SOC_FOLDERS:
                sample.category, sample.detail = "other SoC", "/".join(folder)
            found.append(sample)
    return found


# ---- building -------------------------------------------------------------------------------

_MISSING_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("missing header", re.compile(r"fatal error: ([^:\s]+): No such file or directory")),
    ("missing declaration", re.compile(
        r"error: '([\w:]+)' (?:was not declared in this scope|has not been declared|"
        r"does not name a type|is not a member of)|"
        r"error: there are no arguments to '(\w+)' that depend on a template parameter|"
        r"error: use of undeclared identifier '(\w+)'|error: unknown type name '(\w+)'")),
    # A call the tree's prototype does not take: the compiler's note names the function.
    ("prototype mismatch", re.compile(
        r"note:\s+initializing argument \d+ of '[^']*?(\w+)\(|"
        r"error: too (?:many|few) arguments to function '[^']*?(\w+)\(")),
    ("missing library", re.compile(r"cannot find (-l[^\s:]+)")),
    ("missing symbol", re.compile(r"undefined reference to [`']([\w:~]+)")),
)


def build_errors(stderr: str, linking: bool) -> tuple[str, list[str]]:
    """The kind of the first error of a failed compile or link (its own line or its notes
    tell), and every ``kind: name`` the output says is missing or mismatched."""
    generic = "link error" if linking else "compile error"
    missing: dict[str, None] = {}
    first, open_error = "", False
    for line in stderr.splitlines():
        is_error = ("error:" in line or "undefined reference" in line
                    or "cannot find -l" in line)
        if is_error and open_error and not first:  # the previous error named nothing
            first = generic
        for kind, pattern in _MISSING_PATTERNS:
            for match in pattern.finditer(line):
                name = next((g for g in match.groups() if g), "")
                if name:
                    missing[f"{kind}: {name}"] = None
                    first = first or kind
        open_error = open_error or is_error
    return first or generic, list(missing)


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:24]


def tree_digest(tree: Path, folder: str) -> bytes:
    """Names and contents of the files under ``tree/folder`` (what a build there read)."""
    h = hashlib.sha256()
    for path in sorted((tree / folder).rglob("*")):
        if path.is_file():
            h.update(path.relative_to(tree).as_posix().encode())
            h.update(path.read_bytes())
    return h.digest()


def tree_environment(tree: Path) -> dict[str, str]:
    """This environment after sourcing the tree's ``set_env.sh``, in the C locale (ASCII
    quotes in compiler messages)."""
    listing = subprocess.run(["bash", "-c", '. "$1" >/dev/null && env -0', "_",
                              str(tree / "set_env.sh")], capture_output=True, check=True).stdout
    environment = dict(item.split("=", 1) for item in listing.decode().split("\0") if "=" in item)
    environment["LC_ALL"] = "C"
    return environment


@dataclass
class Builder:
    """Compiles and links samples against one tree, reusing what ``work`` already holds."""

    tree: Path
    work: Path
    environment: dict[str, str]
    compiler: list[str]
    substitutes: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        version = subprocess.run([*self.compiler, "--version"], capture_output=True).stdout
        vendors = (tree_digest(self.tree, "opp/vendors")
                   if (self.tree / "opp" / "vendors").is_dir() else b"")
        self._headers = digest(tree_digest(self.tree, "include"), vendors, version,
                               str(self.tree).encode())
        libraries = tree_digest(self.tree, "lib64")
        for folder in ("opp/lib64", "opp/vendors"):
            if (self.tree / folder).is_dir():
                libraries += tree_digest(self.tree, folder)
        self._libraries = digest(libraries)
        self.work.mkdir(parents=True, exist_ok=True)

    def _step(self, key: str, suffix: str, command: list[str]) -> tuple[Path, str | None]:
        """``command`` writing ``work/key.suffix``, or its cached result; the error output
        when it failed."""
        out, log = self.work / f"{key}{suffix}", self.work / f"{key}{suffix}.err"
        if out.exists():
            return out, None
        if log.exists():
            return out, log.read_text(encoding="utf-8")
        partial = out.with_name(f"{out.name}.{os.getpid()}.tmp")
        done = subprocess.run([*command, "-o", str(partial)], capture_output=True, text=True,
                              env=self.environment, errors="replace")
        if done.returncode == 0:
            partial.replace(out)
            return out, None
        partial.unlink(missing_ok=True)
        log.write_text(done.stderr, encoding="utf-8")
        return out, done.stderr

    def build(self, source: Path, line: BuildLine) -> tuple[Path | None, str, list[str]]:
        """The executable of ``source``, or None with the first error's kind and what is
        missing."""
        flags = line.compile_flags(self.tree)
        key = digest(source.read_bytes(), self._headers.encode(), " ".join(flags).encode())
        obj, error = self._step(f"{source.stem}-{key}", ".o",
                                [*self.compiler, "-c", str(source), *flags])
        if error is not None:
            kind, missing = build_errors(error, linking=False)
            return None, kind, missing
        links = line.link_flags(self.tree, self.substitutes)
        key = digest(key.encode(), self._libraries.encode(), " ".join(links).encode())
        exe, error = self._step(f"{source.stem}-{key}", ".exe", [*self.compiler, str(obj), *links])
        if error is not None:
            kind, missing = build_errors(error, linking=True)
            return None, kind, missing
        return exe, "", []


# ---- running --------------------------------------------------------------------------------

_STATUS = re.compile(r"\b([1-5]\d{5})\b")
_FAILING = re.compile(r"fail|error", re.IGNORECASE)
# A sample that checks the SoC (aclrtGetSocName) and skips itself on another.
_SELF_SKIP = re.compile(r"(?i)(?:not supported|only supports?).*skip|skip.*not supported")
# The parameter statuses (ACLNN_ERR_PARAM_NULLPTR, ACLNN_ERR_PARAM_INVALID,
# ACLNN_ERR_RUNTIME_ERROR: hicann/opbase include/nnopbase/opdev/op_errno.h) by the exit status
# of a main that returns them unprinted.
_EXIT_STATUSES = {status % 256: status for status in (161001, 161002, 361001)}


def classify_run(returncode: int | None, output: str) -> tuple[str, str]:
    """The category and detail of a run that ended with ``returncode`` (None: timed out)
    after printing ``output``."""
    if returncode is None:
        return "timeout", ""
    if returncode < 0:
        return "crashed", f"signal {-returncode}"
    statuses = [int(status) for line in output.splitlines() if _FAILING.search(line)
                for status in _STATUS.findall(line)]
    if str(FIND_KERNEL_ERROR) in output:
        line = next(line for line in output.splitlines() if str(FIND_KERNEL_ERROR) in line)
        return "no kernel", line.strip()[:160]
    if statuses:
        return "refused", str(statuses[0])
    if returncode == FIND_KERNEL_ERROR % 256:  # main returned the status without printing it
        return "no kernel", f"exit {returncode} ({FIND_KERNEL_ERROR} mod 256), nothing printed"
    if returncode in _EXIT_STATUSES:
        return "refused", f"{_EXIT_STATUSES[returncode]} (exit {returncode}), nothing printed"
    if returncode != 0:
        return "failed", f"exit {returncode}"
    skipped = next((line for line in output.splitlines() if _SELF_SKIP.search(line)), "")
    if skipped:
        return "other SoC", f"skipped itself: {skipped.strip()[:120]}"
    return "ok", ""


def run(executable: Path, environment: dict[str, str], timeout: float) -> tuple[int | None, str]:
    """Run ``executable`` in a fresh folder; its exit status (None on timeout) and output."""
    with tempfile.TemporaryDirectory(prefix="aclnn_py-sample-") as folder:
        try:
            done = subprocess.run([str(executable)], cwd=folder, env=environment, timeout=timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired as expired:
            output = expired.stdout or b""
            return None, output.decode(errors="replace")
    return done.returncode, done.stdout.decode(errors="replace")


def process(sample: Sample, root: Path, builder: Builder, timeout: float,
            compare: bool = False, run_it: bool = True) -> Sample:
    """Build and run one sample, filling its category; ``compare``: judge its recorded
    launches against PyTorch; without ``run_it`` a built sample is left ``built``."""
    if sample.category:
        return sample
    executable, kind, missing = builder.build(root / sample.path,
                                              build_line(root, sample.experimental))
    if executable is None:
        sample.category, sample.detail, sample.missing = "not built", kind, missing
        return sample
    if not run_it:
        sample.category = "built"
        return sample
    with tempfile.TemporaryDirectory(prefix="aclnn_py-sample-trace-") as traces:
        environment = {**builder.environment, "ACLNN_EMU_TRACE": traces} if compare \
            else builder.environment
        returncode, output = run(executable, environment, timeout)
        sample.category, sample.detail = classify_run(returncode, output)
        sample.output = "\n".join(output.splitlines()[-5:])
        if compare and sample.category == "ok":
            judge(sample, Path(traces))
    return sample


def judge(sample: Sample, traces: Path) -> None:
    """Replay the launches recorded in ``traces`` through PyTorch; the sample is ``wrong``
    at the first that differs. A launch whose reference cannot take it (a dtype PyTorch
    lacks, arguments of another form) is not counted."""
    import torch_references

    for path in sorted(traces.glob("*.npz")):
        launch = torch_references.load(path)
        if launch.operator not in torch_references.REFERENCES \
                or launch.operator in torch_references.RANDOM:  # random draws: not judged
            continue
        try:
            difference = torch_references.compare(launch)
        except Exception:  # noqa: BLE001 - a reference that cannot take this launch judges none
            continue
        sample.compared += 1
        if difference is not None:
            sample.category, sample.detail = "wrong", f"{launch.operator}: {difference}"[:300]
            return


# ---- reporting ------------------------------------------------------------------------------


def summary(samples: Iterable[Sample], label: str) -> str:
    """One line of counts: samples, another SoC's variants, built, each run category (and the
    samples that skipped themselves), not built by the first error's kind."""
    samples = list(samples)
    counts = Counter(s.category for s in samples)
    kinds = Counter(s.detail for s in samples if s.category == "not built")
    skipped = sum(s.category == "other SoC" and s.detail.startswith("skipped itself")
                  for s in samples)
    tried = len(samples) - counts["other SoC"] + skipped
    built = tried - counts["not built"]
    runs = ", ".join(f"{counts[c]} {c}" for c in (*CATEGORIES[:7], "built") if c != "built"
                     or counts[c])
    failures = ", ".join(f"{kinds[k]} {k}" for k in BUILD_KINDS if kinds[k])
    compared = sum(s.compared for s in samples)
    judged = sum(s.compared > 0 for s in samples)
    return (f"{label}: {len(samples)} samples, {counts['other SoC'] - skipped} of another SoC; "
            f"{built} of {tried} built: {runs}, {skipped} skipped on this SoC; "
            f"{counts['not built']} not built" + (f" ({failures})" if failures else "")
            + f"; {compared} launches of {judged} samples compared with PyTorch.")


def missing_table(samples: Iterable[Sample], top: int, tree: Path | None = None) -> str:
    """The ``top`` most common missing headers, declarations, libraries and symbols (and
    mismatched prototypes), after a line of how many distinct names of each kind; a missing
    header that ``tree`` has under another folder is shown there."""
    counts = Counter(item for s in samples for item in s.missing)
    distinct = Counter(item.partition(": ")[0] for item in counts)
    headers = ({p.name: p.relative_to(tree).as_posix() for p in (tree / "include").rglob("*.h")}
               if tree is not None else {})
    rows = ["distinct names: " + ", ".join(f"{k.replace('missing ', '')} {distinct[k]}"
                                            for k in BUILD_KINDS if distinct[k]), "",
            "| samples | missing | name | the tree has |", "| ---: | --- | --- | --- |"]
    for item, count in counts.most_common(top):
        kind, _, name = item.partition(": ")
        elsewhere = headers.get(Path(name).name, "") if kind == "missing header" else ""
        rows.append(f"| {count} | {kind.replace('missing ', '')} | `{name}` | "
                    + (f"`{elsewhere}`" if elsewhere else "") + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", type=parse_repo, required=True,
                        help="name=path of a checkout of hicann's ops-nn, ops-math, ...")
    parser.add_argument("--tree", type=Path,
                        help="the CANN tree to build against (default: the emulator's 8.5 tree)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per sample run")
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "aclnn_py-cann-samples",
                        help="where compiled objects and executables are kept (reused)")
    parser.add_argument("--file", action="append", default=[],
                        help="only the samples whose path contains this text (repeatable)")
    parser.add_argument("--substitute", action="append", default=[], metavar="LIB=LIB",
                        help="link with another library than a build line names "
                        "(ascendcl=acl_rt: see past a library the tree lacks; repeatable)")
    parser.add_argument("--no-compare", action="store_true",
                        help="do not replay the samples' operator launches through PyTorch")
    parser.add_argument("--build-only", action="store_true",
                        help="compile and link only: a sample that builds is counted 'built'")
    parser.add_argument("--top", type=int, default=15, help="rows of the missing-names table")
    parser.add_argument("--json", type=Path, help="write every sample's record here")
    parser.add_argument("--show", action="append", default=[], choices=CATEGORIES,
                        type=lambda text: text.replace("-", " ").replace("soc", "SoC"),
                        help="list the samples of this category (not-built, no-kernel, ...)")
    options = parser.parse_args(argv)

    if options.tree is None:
        import aclnn_py.emulator

        options.tree = Path(aclnn_py.emulator.home("8.5"))
    tree = options.tree.resolve()
    repositories = dict(options.repo)
    for root in repositories.values():
        build_line(root)  # fails early on an unknown layout
    samples = find_samples(repositories)
    if options.file:
        samples = [s for s in samples if any(part in s.name for part in options.file)]
    substitutes = dict(item.partition("=")[::2] for item in options.substitute)
    builder = Builder(tree, options.work, tree_environment(tree),
                      shlex.split(os.environ.get("CXX", "g++")), substitutes)

    compare = (not options.no_compare and not options.build_only
               and importlib.util.find_spec("torch") is not None)
    if not compare and not options.build_only:
        print("results are not compared with PyTorch"
              + ("" if options.no_compare else " (it is not installed)"))
    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        samples = list(pool.map(lambda s: process(s, repositories[s.repository], builder,
                                                  options.timeout, compare,
                                                  not options.build_only), samples))
    for category in options.show:
        for sample in samples:
            if sample.category == category:
                print(f"{category}: {sample.name}: {sample.detail}"
                      + (f" [{', '.join(sample.missing)}]" if sample.missing else ""))
    for repository in repositories:
        print(summary((s for s in samples if s.repository == repository), repository))
    print(summary(samples, "all"))
    if any(s.missing for s in samples):
        print()
        print(missing_table(samples, options.top, tree))
    if options.json:
        options.json.write_text(json.dumps([{**asdict(s), "operators": list(s.operators)}
                                            for s in samples], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
