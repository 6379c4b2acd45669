"""Replay CANN's own op_api unit tests over the emulator and say where it agrees with CANN.

hicann's operator repositories carry unit tests of every operator's phase 1
(``**/tests/ut/**/test_aclnn_*.cpp``): each case builds tensor descriptions, scalars and
arrays, calls ``aclnnXxxGetWorkspaceSize`` and states the status CANN answers. This tool
compiles those files unmodified against the project's own implementation of their harness API
(``tools/cann_ut/``: googletest's part they use, ``OP_API_UT``, ``TensorDesc`` and the other
descriptions, the platform switches) and an emulator tree's headers and libraries, runs each
file in a Python process that has loaded aclnn_py over that tree (so that the Python kernels
answer), and classifies every case:

* ``agree``: every status the case expects is the status the emulator answered;
* ``too strict``: CANN accepts (ACLNN_SUCCESS expected), the emulator refuses;
* ``too lenient``: CANN refuses, the emulator accepts;
* ``wrong code``: both refuse, with different statuses;
* ``crashed``: the case ended its process (a signal, or an operator the tree does not export);
* ``no kernel``: the case's operator is declared but not computed by the emulator (561003);
* ``other SoC``: the case calls phase 1 with another SoC selected (the emulator models one
  Atlas A2 SoC, the harness's default);
* ``no expectation``: the case states no status (its expectations are commented out, or it
  compares something else, or it calls nothing);
* ``harness limit``: the case threw a C++ exception, or compared something without calling an
  operator through the harness;
* ``not built``: its file did not compile or link here (the file's cases are not counted).

Agreement is ``agree / (agree + too strict + too lenient + wrong code + crashed)`` over the
cases of computed operators. The per-operator table and one summary line are printed;
``--json`` keeps every case's record, ``--show CATEGORY`` lists that category's cases with the
expected and answered statuses and the emulator's message.

    python tools/replay_cann_ut.py --repo ops-nn=PATH --repo ops-math=PATH [--layout 8.5]
        [--operator aclnnGelu ...] [--all] [--jobs N] [--work DIR] [--json OUT]
        [--show too-lenient ...]

A C++17 compiler is needed (``CXX``, default ``c++``); aclnn_py must be installed (its
emulator trees are what is replayed).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _checkouts import parse_repo

HERE = Path(__file__).resolve().parent
HARNESS = HERE / "cann_ut"
HARNESS_SOURCES = (HARNESS / "harness.cpp",)

CATEGORIES = ("agree", "too strict", "too lenient", "wrong code", "crashed", "no kernel",
              "other SoC", "no expectation", "harness limit")
JUDGED = ("agree", "too strict", "too lenient", "wrong code", "crashed")
# The SoC and architecture the emulator models: the harness's default (tools/cann_ut/
# include/opdev/platform.h: SocVersion::ASCEND910B, NpuArch::DAV_2201).
MODELLED_SOC, MODELLED_ARCH = 1, 2201
# aclnnStatus values (hicann/opbase include/nnopbase/opdev/op_errno.h), for telling a status
# comparison from another comparison of integers.
STATUS_VALUES = frozenset({0, 161001, 161002, 361001, *range(561000, 561120)})
FIND_KERNEL_ERROR = 561003
OPERATOR_CALL = re.compile(r"OP_API_UT\s*\(\s*(aclnn\w+)")


@dataclass
class TestFile:
    """One unit test file of a repository."""

    repository: str
    root: Path
    path: Path
    operators: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.repository}/{self.path.relative_to(self.root).as_posix()}"


@dataclass
class CaseResult:
    """One case's record and its category."""

    file: str
    case: str
    operator: str
    category: str
    expected: int | str | None = None
    answered: int | None = None
    message: str = ""
    line: int = 0


@dataclass
class FileOutcome:
    file: TestFile
    built: bool
    error: str = ""
    missing: tuple[str, ...] = ()
    cases: list[CaseResult] = field(default_factory=list)


# ---- finding and building -----------------------------------------------------------------


def find_test_files(repositories: dict[str, Path]) -> list[TestFile]:
    """Every unit test file that calls phase 1 through the harness (``OP_API_UT``)."""
    found = []
    for repository, root in repositories.items():
        for path in sorted(root.glob("**/tests/ut/**/*.cpp")):
            text = path.read_text(encoding="utf-8", errors="replace")
            operators = tuple(dict.fromkeys(OPERATOR_CALL.findall(text)))
            if operators:
                found.append(TestFile(repository, root, path, operators))
    return found


def compiler() -> list[str]:
    return shlex.split(os.environ.get("CXX", "c++"))


def include_flags(tree: Path, test: TestFile | None = None) -> list[str]:
    """The harness's headers, then the tree's as CANN's toolkit offers them: ``include/``,
    ``include/aclnnop/``, and ``level2/<header>`` for the operator headers (CANN installs
    include/aclnnop/ again as include/aclnnop/level2/: hicann/opbase cmake/package.cmake)."""
    level2 = tree / "include" / "aclnnop" / "level2"
    compat = Path(tempfile.gettempdir()) / "aclnn_py-cann-ut-level2" / digest(str(tree).encode())
    if not level2.is_dir() and not (compat / "level2").exists():
        compat.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # made meanwhile by another build
            (compat / "level2").symlink_to(tree / "include" / "aclnnop")
    operators = tree / "include" / "aclnnop"
    flags = [f"-I{HARNESS / 'include'}", f"-I{tree / 'include'}", f"-I{operators}",
             f"-I{compat if not level2.is_dir() else operators}"]
    if test is not None:
        flags += [f"-I{test.path.parent}", f"-I{test.root}", f"-I{test.root / 'common' / 'inc'}"]
    return flags


def tree_libraries(tree: Path) -> list[str]:
    """The link line of a tree: its runtime, nnopbase and every operator library."""
    lib64 = tree / "lib64"
    names = ["nnopbase"]
    names += ["acl_rt" if (lib64 / "libacl_rt.so").exists() else "ascendcl"]
    names += sorted(p.name[3:-3] for p in lib64.glob("libopapi*.so"))
    return [f"-L{lib64}", *(f"-l{name}" for name in names)]


def digest(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(part)
    return h.hexdigest()[:16]


def build_harness(tree: Path, work: Path) -> Path:
    """The harness object, compiled once per harness source and tree."""
    key = digest(*(p.read_bytes() for p in sorted((HARNESS / "include").rglob("*.h"))),
                 *(p.read_bytes() for p in HARNESS_SOURCES), str(tree).encode())
    out = work / f"harness-{key}.o"
    if not out.exists():
        subprocess.run([*compiler(), "-std=gnu++17", "-fPIC", "-O1", "-fvisibility=hidden", "-c",
                        *(str(p) for p in HARNESS_SOURCES), *include_flags(tree), "-o", str(out)],
                       check=True)
    return out


def build_test(test: TestFile, tree: Path, harness: Path, work: Path) -> FileOutcome:
    """``test`` as a shared library of its cases (cached by content); the operator symbols the
    tree does not export are noted (the cases calling them end their process)."""
    key = digest(test.path.read_bytes(), harness.name.encode())
    out = work / f"{test.path.stem}-{key}.so"
    log = out.with_suffix(".log")
    if out.exists():
        missing = tuple(log.read_text().split()) if log.exists() else ()
        return FileOutcome(test, True, missing=missing)
    base = [*compiler(), "-std=gnu++17", "-fPIC", "-shared", "-O0", "-w", "-fvisibility=hidden",
            str(test.path), str(harness), *include_flags(tree, test), "-o", str(out),
            *tree_libraries(tree)]
    strict = subprocess.run([*base, "-Wl,--no-undefined"], capture_output=True, text=True)
    if strict.returncode == 0:
        log.write_text("")
        return FileOutcome(test, True)
    missing = tuple(sorted(set(re.findall(r"undefined reference to `(\w+)'", strict.stderr))))
    if missing and all(name.startswith("aclnn") for name in missing):
        relaxed = subprocess.run(base, capture_output=True, text=True)
        if relaxed.returncode == 0:
            log.write_text("\n".join(missing))
            return FileOutcome(test, True, missing=missing)
    first = next((line for line in strict.stderr.splitlines() if "error" in line),
                 strict.stderr.strip()[:300])
    return FileOutcome(test, False, error=first.strip())


# ---- running --------------------------------------------------------------------------------


def worker(library: str, results: str, skip: str) -> None:
    """In a fresh process over the tree: aclnn_py initialised (its kernels answer), then the
    file's cases run by the harness."""
    import ctypes

    from aclnn_py.runtime import process

    process.ensure_initialized()
    cases = ctypes.CDLL(library)
    cases.cann_ut_run.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    sys.stdout.flush()
    cases.cann_ut_run(results.encode(), skip.encode())


def run_file(outcome: FileOutcome, tree: Path, work: Path, library: Path, timeout: float) -> None:
    """Run the file's cases in fresh processes until every case ran or ended its process."""
    results = library.with_suffix(".jsonl")
    skip = library.with_suffix(".skip")
    results.unlink(missing_ok=True)
    skip.write_text("")
    env = dict(os.environ, ACLNN_PY_BACKEND="cann", ACLNN_PY_CANN_HOME=str(tree),
               LD_LIBRARY_PATH=os.pathsep.join([str(tree / "lib64"),
                                                str(tree / "driver" / "lib64" / "driver"),
                                                os.environ.get("LD_LIBRARY_PATH", "")]))
    ended: set[str] = set()
    crashed: dict[str, str] = {}
    for _ in range(10_000):
        try:
            done = subprocess.run([sys.executable, __file__, "--worker", str(library), str(results),
                                   str(skip)], env=env, capture_output=True, text=True,
                                  timeout=timeout)
            reason = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
            finished = done.returncode == 0
        except subprocess.TimeoutExpired:
            reason, finished = f"timed out after {timeout:.0f} s", False
        started = []
        for record in read_records(results):
            if record["event"] == "start":
                started.append(record["case"])
            else:
                ended.add(record["case"])
        open_cases = [case for case in started if case not in ended and case not in crashed]
        if finished or not open_cases:
            break
        crashed[open_cases[-1]] = reason
        skip.write_text("".join(f"{case}\n" for case in (*ended, *crashed)))
    records = {r["case"]: r for r in read_records(results) if r["event"] == "end"}
    for case, record in records.items():
        outcome.cases.append(classify(outcome.file, case, record))
    for case, reason in crashed.items():
        operator = outcome.file.operators[0]
        missing = [name for name in outcome.missing if name.removesuffix("GetWorkspaceSize")
                   in outcome.file.operators]
        if missing:
            reason = f"{reason} (the tree does not export {', '.join(missing)})"
        outcome.cases.append(CaseResult(outcome.file.name, case, operator, "crashed",
                                        message=reason))


def read_records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    records = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(json.JSONDecodeError):  # a line a crash cut short
            records.append(json.loads(line))
    return records


# ---- classifying ----------------------------------------------------------------------------

COMPUTED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class StatusCheck:
    """One expectation of a case: ``expected`` (a status, or ``"an error"`` for a NE with
    success) against the status ``answered``."""

    expected: int | str
    answered: int
    passed: bool
    line: int


def status_checks(record: dict[str, Any]) -> list[StatusCheck]:
    """The case's comparisons of a phase-1 status with an expected one."""
    answered_statuses = {call["status"] for call in record["calls"]}
    checks = []
    for check in record["checks"]:
        if not check["integers"] or check["kind"] not in ("EQ", "NE"):
            continue
        a, b, which = check["a"], check["b"], check["status_operand"]
        if which == 1 or (which == -1 and a in answered_statuses and b in STATUS_VALUES):
            expected, answered = b, a  # the usual order: EXPECT_EQ(answered, expected)
        elif which == 0 or (which == -1 and b in answered_statuses and a in STATUS_VALUES):
            expected, answered = a, b
        else:
            continue
        if check["kind"] == "NE":
            if expected != 0:
                continue  # "not this error": too weak to judge
            checks.append(StatusCheck("an error", answered, check["passed"], check["line"]))
        else:
            checks.append(StatusCheck(expected, answered, check["passed"], check["line"]))
    return checks


def classify(test: TestFile, case: str, record: dict[str, Any]) -> CaseResult:
    calls = record["calls"]
    operator = calls[0]["op"] if calls else test.operators[0]
    result = CaseResult(test.name, case, operator, "agree")
    if record["exception"]:
        result.category, result.message = "harness limit", "a C++ exception"
        return result
    if not calls:  # a case that builds descriptions and calls nothing expects nothing
        result.category = "no expectation" if not record["checks"] else "harness limit"
        result.message = "no phase-1 call"
        return result
    if any(call["soc"] != MODELLED_SOC or call["arch"] != MODELLED_ARCH for call in calls):
        result.category = "other SoC"
        return result
    checks = status_checks(record)
    if not checks:
        result.category = "no expectation"
        return result
    if operator not in COMPUTED:
        result.category = "no kernel"
        return result
    failed = next((check for check in checks if not check.passed), None)
    if failed is None:
        return result
    result.expected, result.answered, result.line = failed.expected, failed.answered, failed.line
    result.message = next((call["message"] for call in calls if call["status"] == failed.answered
                           and call["message"]), "")
    if failed.expected == 0:
        result.category = "too strict"
    elif failed.answered == 0:
        result.category = "too lenient"
    else:
        result.category = "wrong code"
    return result


# ---- reporting ------------------------------------------------------------------------------


def report(outcomes: list[FileOutcome], show: list[str]) -> str:
    lines = []
    by_operator: dict[str, Counter[str]] = {}
    for outcome in outcomes:
        for case in outcome.cases:
            by_operator.setdefault(case.operator, Counter())[case.category] += 1
    computed = {op: counts for op, counts in by_operator.items() if op in COMPUTED}
    header = f"{'operator':36} {'agree':>6} {'strict':>6} {'lenient':>7} {'code':>5} " \
             f"{'crash':>5} {'other':>6} {'%':>6}"
    lines.append(header)
    lines.append("-" * len(header))

    def percent(counts: Counter[str]) -> float:
        judged = sum(counts[c] for c in JUDGED)
        return 100.0 * counts["agree"] / judged if judged else 100.0

    for op, counts in sorted(computed.items(), key=lambda item: (percent(item[1]), item[0])):
        other = sum(counts[c] for c in CATEGORIES if c not in JUDGED)
        lines.append(f"{op:36} {counts['agree']:6} {counts['too strict']:6} "
                     f"{counts['too lenient']:7} {counts['wrong code']:5} {counts['crashed']:5} "
                     f"{other:6} {percent(counts):6.1f}")
    for category in show:
        lines.append("")
        lines.append(f"== {category}")
        for outcome in outcomes:
            for case in outcome.cases:
                if case.category == category and (case.operator in COMPUTED
                                                  or category not in JUDGED):
                    lines.append(f"{case.operator} {case.file}:{case.line} {case.case}: expected "
                                 f"{case.expected}, answered {case.answered}. {case.message}")
    total: Counter[str] = Counter()
    for counts in computed.values():
        total.update(counts)
    everything: Counter[str] = Counter()
    for counts in by_operator.values():
        everything.update(counts)
    judged = sum(total[c] for c in JUDGED)
    built = sum(1 for o in outcomes if o.built)
    below = sum(1 for counts in computed.values() if percent(counts) < 90.0)
    lines.append("")
    lines.append(
        f"{built} of {len(outcomes)} files built, {sum(everything.values())} cases; computed "
        f"operators: {len(computed)}, {judged} judged cases: {total['agree']} agree, "
        f"{total['too strict']} too strict, {total['too lenient']} too lenient, "
        f"{total['wrong code']} wrong code, {total['crashed']} crashed "
        f"({100.0 * total['agree'] / judged if judged else 0:.1f}% agree; {below} operators "
        f"below 90%); not judged: "
        + ", ".join(f"{everything[c]} {c}" for c in CATEGORIES if c not in JUDGED))
    return "\n".join(lines)


# The reasons of the disagreements that stay, by case ("file: Suite.case" -> reason): CANN's
# own evidence against the unit test, or what the emulator does not model.
REASONS = HARNESS / "known_disagreements.json"


def markdown(outcomes: list[FileOutcome]) -> str:
    """The per-operator table and every disagreeing case with its reason (REASONS), as
    Markdown for docs/cann-unit-tests.md."""
    reasons: dict[str, str] = json.loads(REASONS.read_text(encoding="utf-8")) \
        if REASONS.exists() else {}
    by_operator: dict[str, Counter[str]] = {}
    disagreements = []
    for outcome in outcomes:
        for case in outcome.cases:
            if case.operator not in COMPUTED:
                continue
            by_operator.setdefault(case.operator, Counter())[case.category] += 1
            if case.category in JUDGED and case.category != "agree":
                disagreements.append(case)
    lines = ["| operator | judged | agree | % | not judged |", "| --- | --- | --- | --- | --- |"]
    total: Counter[str] = Counter()
    for op, counts in sorted(by_operator.items()):
        total.update(counts)
        judged = sum(counts[c] for c in JUDGED)
        other = sum(counts[c] for c in CATEGORIES if c not in JUDGED)
        share = f"{100.0 * counts['agree'] / judged:.1f}" if judged else "-"
        lines.append(f"| `{op}` | {judged} | {counts['agree']} | {share} | {other} |")
    judged = sum(total[c] for c in JUDGED)
    summary = (f"{judged} judged cases of {len(by_operator)} computed operators: "
               f"{total['agree']} agree ({100.0 * total['agree'] / judged if judged else 0:.1f}%), "
               f"{total['too strict']} too strict, {total['too lenient']} too lenient, "
               f"{total['wrong code']} wrong code, {total['crashed']} crashed.")
    cases = ["| operator | case | expected | answered | reason |",
             "| --- | --- | --- | --- | --- |"]
    for case in sorted(disagreements, key=lambda c: (c.operator, c.file, c.case)):
        reason = reasons.get(f"{case.file}: {case.case}", "(no reason recorded)")
        cases.append(f"| `{case.operator}` | `{case.file}` {case.case} | {case.expected} | "
                     f"{case.answered} | {reason.replace('|', '/')} |")
    return "\n".join([summary, "", *lines, "", "### The cases that disagree", "", *cases, ""])


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["--worker"]:
        worker(*arguments[1:4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", type=parse_repo, required=True,
                        help="name=path of a checkout of hicann's ops-nn, ops-math, ...")
    parser.add_argument("--layout", default="8.5", help="the emulator tree (default 8.5)")
    parser.add_argument("--operator", action="append", default=[],
                        help="only the files that call this operator (repeatable)")
    parser.add_argument("--file", action="append", default=[],
                        help="only the files whose path contains this text (repeatable)")
    parser.add_argument("--all", action="store_true",
                        help="also the files that call no computed operator")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per process")
    parser.add_argument("--work", type=Path,
                        default=Path(tempfile.gettempdir()) / "aclnn_py-cann-ut",
                        help="where the compiled files are kept (reused when unchanged)")
    parser.add_argument("--json", type=Path, help="write every case's result here")
    parser.add_argument("--markdown", type=Path,
                        help="write the per-operator table and the disagreeing cases, with their "
                        f"reasons from {REASONS.relative_to(HERE.parent)}, as Markdown")
    parser.add_argument("--show", action="append", default=[], choices=CATEGORIES,
                        type=lambda text: text.replace("-", " "),
                        help="list the cases of this category (too-strict, too-lenient, ...)")
    options = parser.parse_args(arguments)

    import aclnn_py.emulator

    global COMPUTED
    COMPUTED = frozenset(aclnn_py.emulator.kernels())
    tree = Path(aclnn_py.emulator.home(options.layout))
    work = options.work / options.layout
    work.mkdir(parents=True, exist_ok=True)
    tests = find_test_files(dict(options.repo))
    if options.operator:
        tests = [t for t in tests if set(t.operators) & set(options.operator)]
    if options.file:
        tests = [t for t in tests if any(part in t.name for part in options.file)]
    if not options.all:
        tests = [t for t in tests if set(t.operators) & COMPUTED]
    harness = build_harness(tree, work)

    def one(test: TestFile) -> FileOutcome:
        outcome = build_test(test, tree, harness, work)
        if outcome.built:
            key = digest(test.path.read_bytes(), harness.name.encode())
            run_file(outcome, tree, work, work / f"{test.path.stem}-{key}.so", options.timeout)
        return outcome

    with ThreadPoolExecutor(max_workers=max(1, options.jobs)) as pool:
        outcomes = list(pool.map(one, tests))
    for outcome in outcomes:
        if not outcome.built:
            print(f"not built: {outcome.file.name}: {outcome.error}", file=sys.stderr)
    print(report(outcomes, options.show))
    if options.markdown:
        options.markdown.write_text(markdown(outcomes), encoding="utf-8")
    if options.json:
        options.json.write_text(json.dumps(
            [{"file": c.file, "case": c.case, "operator": c.operator, "category": c.category,
              "expected": c.expected, "answered": c.answered, "message": c.message,
              "line": c.line} for o in outcomes for c in o.cases]
            + [{"file": o.file.name, "category": "not built", "message": o.error}
               for o in outcomes if not o.built], indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
