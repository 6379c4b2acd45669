#!/usr/bin/env python3
"""Generate ``aclnn_py/data/operators.json``: which parameters of each aclnn operator
the operator writes, read from local checkouts of CANN's operator repositories.

CANN's headers cannot say it: outputs are declared ``const aclTensor *out`` as often as
not, in-place tensors are ``const`` too, and some non-const inputs are updated in place.
So the roles come from each operator's doc (``docs/aclnnXxx.md``) and the sample programs
of its repository, in this order of precedence when they disagree:

1. the read-backs of the doc's example code and of the sample programs that call the
   operator (``**/examples/**/*.cpp``, the ``experimental/`` ones included, whichever of
   an operator's twin folders declared it): a tensor one of them copies back from the
   device after calling the operator is written by it (an output when the table says so,
   else in place). A tensor the table calls an input is taken as written only when the
   table gives the operator no write at all or CANN's conventions make it written too
   (declared without ``const``); its name says output or in place. The programs only add
   writes: a table output none of them reads back stays an output.
2. what the operator's op_api source dumps of its phase 1 (``L2_DFX_PHASE_1(aclnnXxx,
   DFX_IN(...), DFX_OUT(...))``), when it names outputs: a tensor dumped as an output is
   written (its name says output or in place); a tensor the table calls written that is
   dumped only as an input, and that no program reads back, is an input (a ``...Ref`` keeps
   its role). The dump is not taken alone for more: it omits running statistics that
   formulas update (aclnnBatchNorm), and some sources dump no outputs at all.
3. the description cells of the parameter table saying the tensor is updated in place, or
   is used as the output's address;
4. the parameter table's input/output column.

Operators without a doc get their roles from the sample programs' read-backs, else from
:func:`rule_roles`, the fallback the library also uses; the summary measures those rules
against the tables. A few operators whose docs cannot be read right are fixed by hand in
``OVERRIDES``.

Each entry gives the phase-1 prototype (``parameters``, without ``workspaceSize`` and
``executor``) and, for an operator whose phase 2 takes parameters besides the usual four
(between the executor and the stream, as ops-cv's aclnnGaussianBlur), those (``phase2``);
roles cover phase 1's parameters and those only phase 2 takes.

Usage::

    python tools/cann_facts.py --repo ops-nn=/work/cann-src/ops-nn@<commit> \\
        --repo ops-math=/path/to/ops-math [--out aclnn_py/data/operators.json] [--verbose]

A checkout's commit is taken from ``@<commit>`` or, for a git checkout, ``git rev-parse
HEAD``. Only names and roles are written: no text of the docs or headers.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import json
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent


def _load_package() -> tuple[ModuleType, ModuleType]:
    """The package's header reader and role rules: the installed ``aclnn_py.ops.headers`` and
    ``aclnn_py.ops.roles``, or (in an unbuilt source tree, whose package cannot be imported)
    their files, which need only the stdlib, loaded without the package's ``__init__``."""
    try:
        from aclnn_py.ops import headers as _headers
        from aclnn_py.ops import roles as _roles
    except ImportError:
        package = ModuleType("_cann_facts_aclnn_py")
        package.__path__ = [str(ROOT / "aclnn_py")]
        sys.modules[package.__name__] = package
        _headers = importlib.import_module(f"{package.__name__}.ops.headers")
        _roles = importlib.import_module(f"{package.__name__}.ops.roles")
    return _headers, _roles


_headers, _roles = _load_package()
CParameter = _headers.CParameter

SCHEMA = "aclnn_py.operators/1"
GENERATED_BY = "tools/cann_facts.py"
BASES = ("table", "example", "source", "prose", "override", "rules")
DEFAULT_OUT = ROOT / "aclnn_py" / "data" / "operators.json"
SUFFIX = _headers.PHASE1_SUFFIX
TAIL_NAMES = ("workspaceSize", "executor")
NO_TABLE = "the doc has no parameter table for it"

# Operators whose docs cannot be read right by the rules above; each says why. Keys are
# operator names; "outputs" and "inout" replace what the doc gave.
_STUB = ("the repository's doc is a stub pointing to hiascend.com's operator reference, "
         "(aclnnGroupedMatmul, V3: CANN 8.0.RC3 aolapi), which gives y as the output")
OVERRIDES: dict[str, dict[str, object]] = {
    "aclnnGroupedMatmul": {"outputs": ["y"], "inout": [], "why": _STUB},
    "aclnnGroupedMatmulV2": {"outputs": ["y"], "inout": [], "why": _STUB},
    "aclnnGroupedMatmulV3": {"outputs": ["y"], "inout": [], "why": _STUB},
    "aclnnFFN": {"outputs": ["y"], "inout": [],
                 "why": "the repository's doc is a stub; aclnnFFNV3, declared with the same "
                        "parameters, has y as its output (its example reads y back)"},
    "aclnnFFNV2": {"outputs": ["y"], "inout": [],
                   "why": "the repository's doc is a stub; aclnnFFNV3, declared with the same "
                          "parameters, has y as its output (its example reads y back)"},
    "aclnnBatchNormGatherStatsWithCounts": {
        "outputs": ["meanAll", "invstdAll"], "inout": ["runningMean", "runningVar"],
        "why": "runningMean, runningVar: table says input, but the doc's formulas update each "
               "from its own value with momentum (as torch.batch_norm_gather_stats_with_counts "
               "updates running_mean and running_var in place)"},
    "aclnnDataFormatDimMap": {
        "outputs": ["y"], "inout": [],
        "why": "its README's parameter table gives y as the output, but names the attributes "
               "src_format/dst_format where the header says srcFormat/dstFormat, so the table "
               "is not matched to the header"},
    "aclnnRReluWithNoise": {
        "outputs": ["out"], "inout": ["noise"],
        "why": "noise: table says input, but in training the op_api writes the slopes drawn "
               "into it (ops-nn activation/leaky_relu/op_api/aclnn_rrelu_with_noise.cpp "
               "HandleNoiseOutput, a ViewCopy into noise) and the doc gives its formula"},
    "aclnnInplaceRReluWithNoise": {
        "outputs": [], "inout": ["self", "noise"],
        "why": "self holds the result (the doc's in-place form); noise: as for "
               "aclnnRReluWithNoise, the slopes drawn in training are written into it"},
    "aclnnBatchNorm": {
        "outputs": ["output", "saveMean", "saveInvstd"],
        "inout": ["runningMean", "runningVar"],
        "why": "runningMean, runningVar: table says input and the example reads back only "
               "output, but the doc says momentum updates the running mean and variance "
               "(in training, as torch.nn.functional.batch_norm does)",
    },
}


# --------------------------------------------------------------------------------------
# The fallback rules.

_output_by_name = _roles.named_output


def rule_roles(parameters: Iterable[CParameter]) -> tuple[list[str], list[str]]:
    """The (outputs, inout) parameter names of a phase-1 prototype by CANN's conventions
    alone (``aclnn_py.ops.roles.rule_roles``, the one statement of them), for operators no doc
    describes."""
    found = _roles.rule_roles(tuple(parameters))
    return list(found.outputs), list(found.inout)


# --------------------------------------------------------------------------------------
# Reading docs: tables.

_ROLE_IN, _ROLE_OUT, _ROLE_INOUT = "in", "out", "inout"


def role_of(text: str) -> str | None:
    """A table's input/output cell as in/out/inout, or None when it is neither.

    输入, 输出 and the in-place spellings 输入/输出, 输入输出, 输入|输出, 输入&输出; an
    optional mark (可选输入, 输入（可选）) does not change the role, an attribute (属性) is
    an input, and a remark in parentheses saying in place (输入（Ref，原地更新）) makes it
    in place."""
    value = re.sub(r"\s+", "", text)
    value = value.translate(str.maketrans("／｜＆、（）", "/|&,()"))
    remark = "".join(re.findall(r"\(([^)]*)\)", value))
    value = re.sub(r"\([^)]*\)", "", value).replace("可选", "").replace("计算", "")
    if value in ("属性", "入参"):
        return _ROLE_IN
    if value == "出参":
        return _ROLE_OUT
    if value == "输入":
        return _ROLE_INOUT if re.search(r"原地|[Rr]ef|in-?place", remark) else _ROLE_IN
    if value == "输出":
        return _ROLE_OUT
    if value in ("输入/输出", "输入输出", "输入|输出", "输入&输出", "输入,输出", "输出/输入"):
        return _ROLE_INOUT
    return None


def cell_text(fragment: str) -> str:
    """A table cell's visible text: tags dropped (``<br>`` as a space), entities and
    markdown emphasis and code marks removed, whitespace collapsed."""
    text = re.sub(r"<br\s*/?>", " ", fragment, flags=re.I)
    text = re.sub(r"<[^>]*>", " ", text)
    text = html.unescape(text)
    text = text.replace("**", "").replace("`", "").replace("\\|", "|")
    return " ".join(text.split())


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def row_name(text: str) -> str | None:
    """The parameter name a table's first cell starts with (``selfRef（aclScalar*）`` ->
    ``selfRef``)."""
    found = _NAME.match(text.strip().lstrip("*_ "))
    return found.group() if found else None


class _TableParser(HTMLParser):
    """Rows of one HTML table, rowspan and colspan expanded: each row a list of cells'
    text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=False)
        self.rows: list[list[str]] = []
        self._pending: dict[int, tuple[str, int]] = {}  # column -> (text, rows left)
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._spans = (1, 1)
        self._depth = 0  # nested tables inside a cell are flattened into it

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._depth += 1
            if self._depth > 1 and self._cell is not None:
                return
        if self._depth > 1:
            if self._cell is not None and tag == "br":
                self._cell.append(" ")
            return
        if tag == "tr":
            self._end_row()
            self._row = []
        elif tag in ("td", "th"):
            self._end_cell()
            if self._row is None:
                self._row = []
            values = dict(attrs)

            def span(key: str) -> int:
                try:
                    return max(1, int((values.get(key) or "1").strip()))
                except ValueError:
                    return 1

            self._spans = (span("rowspan"), span("colspan"))
            self._cell = []
        elif tag == "br" and self._cell is not None:
            self._cell.append(" ")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._depth -= 1
            if self._depth == 0:
                self._end_row()
            return
        if self._depth > 1:
            return
        if tag in ("td", "th"):
            self._end_cell()
        elif tag == "tr":
            self._end_row()

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_entityref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&{name};"))

    def handle_charref(self, name: str) -> None:
        self.handle_data(html.unescape(f"&#{name};"))

    def _take_pending(self) -> None:
        assert self._row is not None
        while len(self._row) in self._pending:
            column = len(self._row)
            text, left = self._pending.pop(column)
            self._row.append(text)
            if left > 1:
                self._pending[column] = (text, left - 1)

    def _end_cell(self) -> None:
        if self._cell is None or self._row is None:
            return
        self._take_pending()
        text = cell_text("".join(self._cell))
        rows, columns = self._spans
        for _ in range(columns):
            if rows > 1:
                self._pending[len(self._row)] = (text, rows - 1)
            self._row.append(text)
        self._cell = None

    def _end_row(self) -> None:
        self._end_cell()
        if self._row is not None:
            self._take_pending()
            if self._row:
                self.rows.append(self._row)
        self._row = None


@dataclass
class Table:
    """A parameter table of a doc: its rows as (name, role, description), where it starts,
    and the operator heading it sits under."""

    offset: int
    heading: str | None
    rows: list[tuple[str, str | None, str]] = field(default_factory=list)

    @property
    def names(self) -> set[str]:
        return {name for name, _, _ in self.rows}


def _parameter_rows(rows: list[list[str]]) -> list[tuple[str, str | None, str]] | None:
    """(name, role, rest of the row) of a parameter table's rows, or None when ``rows``
    are not a parameter table (first header 参数名..., a header naming 输入/输出)."""
    if not rows:
        return None
    header = [re.sub(r"\s+", "", h) for h in rows[0]]
    if not header or not header[0].startswith("参数"):
        return None
    role_column = next((i for i, h in enumerate(header)
                        if i > 0 and "输入" in h and "输出" in h), None)
    if role_column is None:
        return None
    found = []
    seen = set()
    for row in rows[1:]:
        if len(row) <= role_column:
            continue
        name = row_name(row[0])
        if name is None or name in TAIL_NAMES or name in seen:
            continue
        seen.add(name)
        rest = "\n".join(row[1:role_column] + row[role_column + 1:])
        found.append((name, role_of(row[role_column]), rest))
    return found


_HTML_TABLE = re.compile(r"<table\b.*?</table\s*>", re.S | re.I)
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|[-*]\s*\*\*|\*\*).*$", re.M)
_OPERATOR_NAME = re.compile(r"aclnn[A-Za-z0-9_]+")
_FENCE_LINE = re.compile(r"^[ \t]*```[ \t]*(\S*)[^\n]*$", re.M)


def code_blocks(text: str) -> list[tuple[int, int, str]]:
    """(start, end, body) of each fenced code block. A fence naming a language
    (```Cpp) always opens a block: one met inside a block closes that block first, as a
    doc that forgot a closing fence means."""
    blocks = []
    opened: tuple[int, int] | None = None  # (fence start, body start)
    for match in _FENCE_LINE.finditer(text):
        if opened is None:
            opened = (match.start(), match.end() + 1)
        elif match.group(1):
            blocks.append((opened[0], match.start(), text[opened[1]:match.start()]))
            opened = (match.start(), match.end() + 1)
        else:
            blocks.append((opened[0], match.end(), text[opened[1]:match.start()]))
            opened = None
    if opened is not None:
        blocks.append((opened[0], len(text), text[opened[1]:]))
    return blocks


def without_code(text: str) -> str:
    pieces, kept = [], 0
    for start, end, _ in code_blocks(text):
        pieces.append(text[kept:start])
        kept = end
    return "".join(pieces + [text[kept:]])


def _pipe_tables(text: str) -> Iterable[tuple[int, list[list[str]]]]:
    """Markdown pipe tables: (offset, rows), the separator row dropped."""
    lines = text.split("\n")
    offset = 0
    offsets = []
    for line in lines:
        offsets.append(offset)
        offset += len(line) + 1
    index = 0
    while index < len(lines) - 1:
        line, below = lines[index].strip(), lines[index + 1].strip()
        if line.startswith("|") and re.fullmatch(r"\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?",
                                                  below):
            rows = [_pipe_cells(line)]
            index += 2
            while index < len(lines) and lines[index].strip().startswith("|"):
                rows.append(_pipe_cells(lines[index].strip()))
                index += 1
            yield offsets[index - len(rows) - 1], rows
        else:
            index += 1


def _pipe_cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    return [cell_text(c) for c in re.split(r"(?<!\\)\|", line)]


_PARENTHESIS = r"[（(]([^（()）\n]*(?:[（(][^()（）\n]*[)）][^()（）\n]*)*)[)）]"
_LIST_ROW = re.compile(r"^[ \t]*[-*][ \t]+\**`?([A-Za-z_][A-Za-z0-9_]*)`?\**[ \t]*"
                       + _PARENTHESIS + r"\**[ \t]*[：:]?(.*)$", re.M)


def _list_tables(text: str) -> Iterable[tuple[int, list[tuple[str, str | None, str]]]]:
    """Parameters described as a list, as older docs do: ``- self(const aclTensor*，计算输入)：
    ...`` (the role is the parenthesis' last comma-separated part): (offset, rows) of each
    run of such items between two headings."""
    headings = [m.start() for m in _HEADING.finditer(text)] + [len(text)]
    runs: dict[int, tuple[int, list[tuple[str, str | None, str]]]] = {}
    for match in _LIST_ROW.finditer(text):
        parts = re.split(r"[，,]", match.group(2))
        role = role_of(parts[-1]) if len(parts) > 1 else None
        if role is None:
            continue
        name = match.group(1)
        if name in TAIL_NAMES:
            continue
        section = next(h for h in headings if h > match.start())
        offset, rows = runs.setdefault(section, (match.start(), []))
        if name not in {r[0] for r in rows}:
            rows.append((name, role, cell_text(match.group(3))))
    yield from runs.values()


def _headings(text: str) -> list[tuple[int, str]]:
    """(offset, operator name) of each heading-like line naming a phase-1 prototype, or
    (offset, "") for other headings."""
    found = []
    for match in _HEADING.finditer(text):
        names = [n for n in _OPERATOR_NAME.findall(match.group()) if n.endswith(SUFFIX)]
        if match.group().lstrip().startswith("#") or names:
            found.append((match.start(), names[0][:-len(SUFFIX)] if names else ""))
    return found


def doc_tables(text: str) -> list[Table]:
    """The parameter tables of a doc, outside its code blocks, in order."""
    code = [(start, end) for start, end, _ in code_blocks(text)]

    def in_code(offset: int) -> bool:
        return any(start <= offset < end for start, end in code)

    headings = [h for h in _headings(text) if not in_code(h[0])]
    raw: list[tuple[int, list[list[str]]]] = []
    for match in _HTML_TABLE.finditer(text):
        if in_code(match.start()):
            continue
        parser = _TableParser()
        parser.feed(match.group())
        parser.close()
        raw.append((match.start(), parser.rows))
    raw += [(o, r) for o, r in _pipe_tables(text) if not in_code(o)]
    parsed = [(o, _parameter_rows(r)) for o, r in raw]
    parsed += [(o, r) for o, r in _list_tables(text) if not in_code(o)]
    tables = []
    for offset, parameter_rows in sorted(parsed, key=lambda item: item[0]):
        if not parameter_rows:
            continue
        heading = None
        for start, name in headings:
            if start > offset:
                break
            heading = name or None
        tables.append(Table(offset, heading, parameter_rows))
    return tables


def table_for(tables: Sequence[Table], operator: str, parameters: Sequence[str]
              ) -> Table | None:
    """The table describing ``operator``'s phase 1: the one under its heading, else the
    one naming most of its parameters (at least half of them)."""
    for table in tables:
        if table.heading == operator:
            return table
    wanted = set(parameters)
    if not wanted:
        return None
    best, score = None, 0.0
    for table in tables:
        # Under another operator's heading: only when its names fit exactly.
        if table.heading not in (None, operator) and table.names != wanted:
            continue
        shared = len(wanted & table.names) / len(wanted | table.names)
        if shared > score:
            best, score = table, shared
    return best if score >= 0.5 else None


# Wording in a parameter's own table row saying the operator writes it in place or puts
# its result there. Each matches only in the row of the parameter it is about.
_IN_PLACE_WORDS = re.compile(
    r"原地更新|原地计算|原地修改|原地写|就地更新|结果原地|(?:作为|复用为?)\S{0,20}输出地址"
    r"|\bin-?place\b|(?:会|将)被(?:原地)?更新|更新后(?:的值)?(?:写回|输出)|接口后刷新"
    r"|计算结果(?:直接)?(?:保存|存放|写回|写入)(?:在|到|于)?(?:该|此|本)"
    , re.I)


_IN_PLACE_CASE = re.compile(r"in-?place\s*(?:场景|情况|模式)", re.I)


def prose_in_place(description: str, operator: str = "") -> bool:
    """Whether a parameter row's description says the operator writes it in place. Said
    only of the in-place case (inplace场景...), as a doc shared by an operator and its
    ``Inplace`` twin may, it counts only for an operator whose name says ``Inplace``."""
    for found in _IN_PLACE_WORDS.finditer(description):
        sentence = re.split(r"[。；;\n]", description[:found.start()])[-1]
        if _IN_PLACE_CASE.search(sentence + found.group()) and "Inplace" not in operator:
            continue
        return True
    return False


# --------------------------------------------------------------------------------------
# Reading docs: the example code.

_IDENT = re.compile(r"[A-Za-z_]\w*")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^<>;(){}]*>)?\s*\(")
_KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "catch", "static_cast",
             "reinterpret_cast", "const_cast", "decltype"}


def _strip_comments(code: str) -> str:
    code = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group()), code, flags=re.S)
    code = re.sub(r'"(?:\\.|[^"\\\n])*"', lambda m: '"' + " " * (len(m.group()) - 2) + '"',
                  code)
    return re.sub(r"//[^\n]*", "", code)


def _arguments(code: str, open_paren: int) -> tuple[list[str], int] | None:
    """The top-level comma-separated arguments of the call whose ``(`` is at
    ``open_paren``, and the offset after its ``)``."""
    depth = 0
    pieces: list[str] = []
    start = open_paren + 1
    for index in range(open_paren, len(code)):
        char = code[index]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                pieces.append(code[start:index])
                args = [p.strip() for p in pieces]
                return ([] if args == [""] else args), index + 1
        elif char == "," and depth == 1:
            pieces.append(code[start:index])
            start = index + 1
        elif char == ";" and depth <= 1:
            return None
    return None


@dataclass
class Call:
    name: str
    args: list[str]
    start: int
    end: int
    target: str | None  # `x = name(...)`: x


def _calls(code: str) -> list[Call]:
    calls = []
    for match in _CALL.finditer(code):
        name = match.group(1)
        if name in _KEYWORDS:
            continue
        parsed = _arguments(code, match.end() - 1)
        if parsed is None:
            continue
        args, end = parsed
        before = code[max(0, match.start() - 80):match.start()]
        assigned = re.search(r"([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*=\s*(?:\*\s*)?$", before)
        calls.append(Call(name, args, match.start(), end,
                          assigned.group(1) if assigned else None))
    return calls


def variable(expression: str) -> str | None:
    """The variable an argument expression names: ``&x`` -> x, ``x.get()`` -> x,
    ``data.outAddr`` -> outAddr, ``addrs[i]`` -> addrs, ``(void*)x`` -> x; an element at a
    literal index is a variable of its own, ``t[5]`` -> t[5] (a sample's arrays of tensors
    and of their addresses)."""
    text = expression.strip()
    text = re.sub(r"^\((?:const\s+)?[A-Za-z_]\w*\s*\**\s*\)", "", text).strip()
    text = re.sub(r"^(?:static|reinterpret|const)_cast\s*<[^>]*>\s*\((.*)\)$", r"\1",
                  text).strip()
    text = text.lstrip("&*( ").rstrip(") ")
    text = re.sub(r"\.(?:get|data)\(\)$", "", text)
    element = re.search(r"\[\s*(\d+)\s*\]$", text)
    text = re.sub(r"\[[^\]]*\]$", "", text)
    if not re.fullmatch(r"[A-Za-z_]\w*(?:(?:\.|->)[A-Za-z_]\w*)*", text):
        return None
    name = re.split(r"\.|->", text)[-1]
    if name in ("nullptr", "NULL", "true", "false"):
        return None
    return f"{name}[{int(element.group(1))}]" if element else name


@dataclass
class ExampleFacts:
    """What an example shows: for each phase-1 call, in order, the operator and the
    variables passed; and each device address read back, with where."""

    phase1: list[tuple[str, list[str | None], int]]
    readbacks: list[tuple[str, int]]
    address_of: dict[str, set[str]]  # tensor variable -> device addresses


@dataclass
class Function:
    """A function an example defines: its name, its parameters' names and declarations
    (``void** deviceAddr``), and where its body is."""

    name: str
    parameters: list[str]
    declarations: list[str]
    start: int
    end: int

    def positions(self, pointer_to: str) -> list[int]:
        """The positions of its parameters declared as pointers to pointers of type
        ``pointer_to`` (``void``: a device address it sets; ``aclTensor``: a tensor it makes)."""
        pattern = re.compile(rf"(?:^|\W){pointer_to}\s*\*\s*\*")
        return [index for index, text in enumerate(self.declarations) if pattern.search(text)]


def _function_bodies(code: str) -> list[Function]:
    """Each function defined in ``code``."""
    found = []
    for call in _calls(code):
        rest = code[call.end:call.end + 40]
        if not re.match(r"\s*(?:const\s*)?\{", rest):
            continue
        head = code[max(0, call.start - 120):call.start]
        if not re.search(r"[\w>*&]\s+$", head) or re.search(r"=\s*$", head):
            continue
        brace = code.index("{", call.end)
        depth = 0
        end = len(code)
        for index in range(brace, len(code)):
            if code[index] == "{":
                depth += 1
            elif code[index] == "}":
                depth -= 1
                if depth == 0:
                    end = index
                    break
        names = [variable(_IDENT.findall(a)[-1]) if _IDENT.findall(a) else None
                 for a in call.args]
        found.append(Function(call.name, [n or "" for n in names], list(call.args), brace, end))
    return found


_D2H = "ACL_MEMCPY_DEVICE_TO_HOST"


def _copies_to_host(call: Call) -> bool:
    """Whether ``call`` copies device memory back to the host (``aclrtMemcpy`` with
    ``ACL_MEMCPY_DEVICE_TO_HOST``)."""
    return call.name == "aclrtMemcpy" and any(_D2H in a for a in call.args)


def _copied_parameter(function: Function, copy: Call) -> int | None:
    """The position of the parameter of ``function`` whose memory ``copy``, a copy to the
    host inside it, reads: the parameter itself or a member of it (``data.outAddr``)."""
    source = variable(copy.args[2])
    base = _IDENT.search(re.sub(r"^\([^()]*\)", "", copy.args[2].strip()))
    parameters = function.parameters
    if source in parameters:
        return parameters.index(source)
    if base is not None and base.group() in parameters:
        return parameters.index(base.group())
    return None


class ParameterReaders(NamedTuple):
    """The helpers of an example (other than main) that copy a parameter back to the host:
    the positions of the parameters each copies, and the offsets of those copies."""

    positions: dict[str, set[int]]
    copies: set[int]


def _parameter_readers(functions: Sequence[Function], calls: Sequence[Call]) -> ParameterReaders:
    """The helpers among ``functions`` that copy a parameter back to the host. A helper's
    copy of its own local address (a sample's RunOne making, calling and reading back) is
    not one of them: it stays a read-back where it is."""
    positions: dict[str, set[int]] = {}
    copies: set[int] = set()
    for function in functions:
        if function.name == "main":
            continue
        for call in calls:
            if not (function.start < call.start < function.end and _copies_to_host(call)
                    and len(call.args) >= 3):
                continue
            index = _copied_parameter(function, call)
            if index is None:
                continue
            positions.setdefault(function.name, set()).add(index)
            copies.add(call.start)
    return ParameterReaders(positions, copies)


class MakerPositions(NamedTuple):
    """Where a tensor-making helper takes the device addresses it sets (``void **``) and the
    tensors it makes (``aclTensor **``)."""

    addresses: list[int]
    tensors: list[int]


def _tensor_makers(functions: Sequence[Function]) -> dict[str, MakerPositions]:
    """The helpers among ``functions`` that make tensors, by their parameters' declarations."""
    return {function.name: MakerPositions(function.positions("void"),
                                          function.positions("aclTensor"))
            for function in functions
            if function.positions("void") and function.positions("aclTensor")}


@dataclass
class ExampleHelpers:
    """The functions an example defines, with those of them that read parameters back to the
    host and those that make tensors."""

    functions: list[Function]
    readers: ParameterReaders
    makers: dict[str, MakerPositions]

    def defines(self, call: Call) -> bool:
        """Whether ``call`` is the head of one of the functions' definitions."""
        return any(function.start - 1 <= call.start < function.start
                   for function in self.functions)

    def inside_reader(self, offset: int) -> bool:
        """Whether ``offset`` is in the body of a helper that reads a parameter back."""
        return any(function.start < offset < function.end for function in self.functions
                   if function.name in self.readers.positions)


def _is_phase1_call(call: Call) -> bool:
    """Whether ``call`` is an operator's phase 1, its executor passed by address last."""
    return call.name.startswith("aclnn") and call.name.endswith(SUFFIX) \
        and len(call.args) >= 2 and call.args[-1].lstrip().startswith("&")


def _tie_addresses_by_name(call: Call, args: Sequence[str | None],
                           address_of: dict[str, set[str]]) -> None:
    """Tie the tensors a helper call makes to the device addresses it sets, by their names
    (``CreateAclTensor(host, shape, &addr, type, &tensor)``). With one address and the tensor
    last, they go together; with several (a helper making all the inputs), each address goes
    with the tensor it is named after."""
    addresses = [name for name in args[:-1] if name and _address_like(name)]
    tensors = [name for text, name in zip(call.args, args)
               if name and text.lstrip().startswith("&") and not _address_like(name)]
    if len(addresses) == 1 and len(tensors) == 1 and tensors[0] == args[-1]:
        address_of.setdefault(tensors[0], set()).add(addresses[0])
    else:
        for tensor in tensors:
            for address in addresses:
                if address in _named_addresses(tensor):
                    address_of.setdefault(tensor, set()).add(address)


def _record_call(call: Call, helpers: ExampleHelpers, facts: ExampleFacts) -> None:
    """Add to ``facts`` what one call of an example shows: a phase-1 call, a read-back
    (its own or through a helper reading a parameter back), or tensors tied to their
    device addresses."""
    args = [variable(a) for a in call.args]
    readers = helpers.readers
    if _is_phase1_call(call):
        facts.phase1.append((call.name[:-len(SUFFIX)], args[:-2], call.start))
    elif _copies_to_host(call):
        if len(args) >= 3 and args[2] and call.start not in readers.copies:
            facts.readbacks.append((args[2], call.start))
    elif call.name in readers.positions and not helpers.inside_reader(call.start):
        for index in sorted(readers.positions[call.name]):
            if index < len(args) and args[index]:
                facts.readbacks.append((args[index], call.start))
    elif call.target and call.name.startswith("aclCreateTensor") and args:
        if args[-1]:
            facts.address_of.setdefault(call.target, set()).add(args[-1])
    elif call.name in helpers.makers and _made_tensors(helpers.makers[call.name], call.args,
                                                       facts.address_of):
        pass
    elif call.args and call.args[-1].lstrip().startswith("&") and args[-1]:
        _tie_addresses_by_name(call, args, facts.address_of)


def example_facts(code: str) -> ExampleFacts:
    """What example ``code`` shows of its operators' calls: each phase 1 with the variables
    passed, each device address copied back to the host, and which addresses each tensor
    is on."""
    code = _strip_comments(code)
    calls = _calls(code)
    functions = _function_bodies(code)
    helpers = ExampleHelpers(functions, _parameter_readers(functions, calls),
                             _tensor_makers(functions))
    facts = ExampleFacts([], [], {})
    for call in calls:
        if not helpers.defines(call):
            _record_call(call, helpers, facts)
    return facts


def _made_tensors(maker: MakerPositions, expressions: list[str],
                  address_of: dict[str, set[str]]) -> bool:
    """Tie the tensors a helper call makes to the device addresses it sets, by the helper's
    own declarations (``MakeTensor(vals, shape, dt, &dMean, &tMean)`` with ``void**`` and
    ``aclTensor**`` parameters): one address per tensor, in order, or all of them to its one
    tensor. False when the call does not fit the helper."""
    if max(maker.addresses + maker.tensors) >= len(expressions):
        return False
    args = [variable(expression) for expression in expressions]
    addresses = [args[i] for i in maker.addresses]
    tensors = [args[i] for i in maker.tensors]
    if None in addresses or None in tensors:
        return False
    if len(tensors) == 1:
        pairs = [(tensors[0], address) for address in addresses]
    elif len(tensors) == len(addresses):
        pairs = list(zip(tensors, addresses))
    else:
        return False
    for tensor, address in pairs:
        assert tensor is not None and address is not None
        address_of.setdefault(tensor, set()).add(address)
    return True


_ADDRESS_SUFFIXES = ("DeviceAddr", "DevAddr", "Addr", "_dev", "Dev", "Device", "DeviceAddrs",
                     "Addrs", "AddrList")


def _address_like(name: str) -> bool:
    lowered = name.lower()
    return "addr" in lowered or lowered.endswith("_dev") or lowered.endswith("device") \
        or re.match(r"(?:dev|d_)[A-Z0-9_]", name) is not None


def _named_addresses(tensor: str) -> set[str]:
    """The device addresses a tensor variable's name suggests: ``x`` -> ``xDeviceAddr``."""
    return {tensor + suffix for suffix in _ADDRESS_SUFFIXES}


def _addresses(facts: ExampleFacts, name: str | None) -> set[str]:
    """The device addresses a tensor variable passed to a call may be on: those a helper
    or ``aclCreateTensor`` tied it to, else the ones its name suggests."""
    if not name:
        return set()
    tied = facts.address_of.get(name)
    return {name} | (tied if tied else _named_addresses(name))


@dataclass(frozen=True)
class Program:
    """Example code that may read tensors back: a code block of the operator's doc
    (``where`` is "") or a sample program of its repository (``where``: its path there)."""

    where: str
    code: str


def example_writes(programs: Sequence[Program], operator: str, parameters: Sequence[str],
                   table_roles: dict[str, str | None]) -> dict[str, list[str]]:
    """The parameters of ``operator`` that the ``programs`` read back after calling it,
    each with where the programs reading it back are (in order, each once).

    A read-back address belongs to the latest phase-1 call before it that passed a tensor
    on that address, preferring one whose table says it writes there. Calls of
    ``operator`` are matched to its parameters by position."""
    written: dict[str, list[str]] = {}
    for program in programs:
        if _D2H not in program.code:
            continue
        facts = example_facts(program.code)
        for address, offset in facts.readbacks:
            candidates = []
            for name, args, start in facts.phase1:
                if start > offset:
                    break
                for position, arg in enumerate(args):
                    if address in _addresses(facts, arg):
                        candidates.append((name, position, start))
            if not candidates:
                continue
            writers = [c for c in candidates if c[0] == operator and c[1] < len(parameters)
                       and table_roles.get(parameters[c[1]]) in (_ROLE_OUT, _ROLE_INOUT)]
            name, position, start = max(writers or candidates, key=lambda c: c[2])
            if writers:
                # Others calls after the writer and before the read-back also passed it.
                latest = max(candidates, key=lambda c: c[2])
                if latest[2] > start and latest[0] != operator:
                    continue
            if name == operator and position < len(parameters):
                # Every call of the operator before the read-back at this position counts
                # once; later ones with other positions are separate read-backs.
                for other_name, other_position, other_start in candidates:
                    if other_name == operator and other_start == start:
                        readers = written.setdefault(parameters[other_position], [])
                        if program.where not in readers:
                            readers.append(program.where)
    return written


def _read_back_by(written: dict[str, list[str]], names: Sequence[str]) -> str:
    """Who read ``names`` back, in words: the doc's example and the sample programs."""
    places = list(dict.fromkeys(where for name in names for where in written[name]))
    words = []
    if "" in places:
        words.append("the example")
    samples = [where for where in places if where]
    if samples:
        words.append(("the sample " if len(samples) == 1 else "the samples ")
                     + ", ".join(samples))
    return " and ".join(words) + (" read" if len(places) > 1 else " reads")


_PHASE1_CALL = re.compile(r"\b(aclnn\w+)" + SUFFIX + r"\s*\(")


@dataclass(frozen=True)
class Dump:
    """What an operator's op_api source dumps of its phase 1 (``L2_DFX_PHASE_1(aclnnXxx,
    DFX_IN(...), DFX_OUT(...))``): the names of its inputs and of its outputs, and where."""

    where: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


_DUMP = re.compile(r"\bL2_DFX_PHASE_1\s*\(")
_DUMP_LIST = re.compile(r"DFX_(IN|OUT)\s*\(")


def dumps_index(root: Path) -> dict[str, Dump]:
    """The phase-1 dumps of a repository's op_api sources (``**/op_api/*.cpp``), by operator:
    the first found, those outside ``experimental/`` first."""
    index: dict[str, Dump] = {}
    paths = sorted(root.glob("**/op_api/*.cpp"),
                   key=lambda p: (_experimental(p.relative_to(root)), str(p)))
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        if "L2_DFX_PHASE_1" not in text:
            continue
        code = _strip_comments(text)
        for found in _DUMP.finditer(code):
            parsed = _arguments(code, found.end() - 1)
            if parsed is None or len(parsed[0]) < 3:
                continue
            args = parsed[0]
            lists: dict[str, tuple[str, ...]] = {}
            for arg in args[1:]:
                opening = _DUMP_LIST.match(arg)
                inner = _arguments(arg, opening.end() - 1) if opening else None
                if opening and inner is not None:
                    lists[opening.group(1)] = tuple(
                        name for name in map(variable, inner[0]) if name)
            if args[0] not in index and set(lists) == {"IN", "OUT"}:
                where = path.relative_to(root).as_posix()
                index[args[0]] = Dump(where, lists["IN"], lists["OUT"])
    return index


class Samples:
    """The sample programs of a repository, by the operators they call, each read once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.paths = samples_index(root)
        self._read: dict[Path, Program] = {}

    def of(self, operator: str) -> list[Program]:
        """The sample programs calling ``operator``'s phase 1."""
        found = []
        for path in self.paths.get(operator, ()):
            if path not in self._read:
                text = (self.root / path).read_text(encoding="utf-8", errors="replace")
                self._read[path] = Program(path.as_posix(), text)
            found.append(self._read[path])
        return found


def samples_index(root: Path) -> dict[str, list[Path]]:
    """The sample programs of a repository (``**/examples/**/*.cpp``, the ``experimental/``
    ones included) by the operators whose phase 1 each calls (paths relative to ``root``)."""
    index: dict[str, list[Path]] = {}
    for path in sorted(root.glob("**/examples/**/*.cpp")):
        text = path.read_text(encoding="utf-8", errors="replace")
        for name in dict.fromkeys(_PHASE1_CALL.findall(text)):
            index.setdefault(name, []).append(path.relative_to(root))
    return index


# --------------------------------------------------------------------------------------
# Repositories.

@dataclass
class Repository:
    name: str
    path: Path
    commit: str

    @property
    def url(self) -> str:
        return f"https://github.com/hicann/{self.name}"


def parse_repo(argument: str) -> Repository:
    """``name=path[@commit]``; without a commit, the checkout's ``git rev-parse HEAD``."""
    name, sep, rest = argument.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--repo wants name=path[@commit], not {argument!r}")
    path_text, at, commit = rest.rpartition("@") if re.search(r"@[0-9a-fA-F]{40}$", rest) \
        else (rest, "", "")
    path = Path(path_text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{path} is not a directory")
    if not at:
        try:
            commit = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"],
                                    check=True, capture_output=True, text=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError) as error:
            raise argparse.ArgumentTypeError(
                f"{path}: give its commit as {name}={path}@<40 hex>: {error}") from error
    if not re.fullmatch(r"[0-9a-f]{40}", commit.lower()):
        raise argparse.ArgumentTypeError(f"{name}: {commit!r} is not a 40-hex commit")
    return Repository(name, path, commit.lower())


def _experimental(path: Path) -> bool:
    return "experimental" in path.parts


def _operator_folder(relative: Path) -> Path:
    """The operator's folder of a header: the part of its path before ``op_api`` or
    ``op_host``."""
    parts = relative.parts
    for index, part in enumerate(parts):
        if part in ("op_api", "op_host"):
            return Path(*parts[:index])
    return relative.parent


def doc_names(path: Path) -> list[str]:
    """The operators a doc's file name covers: ``aclnnAdd&aclnnInplaceAdd.md``."""
    return [n.strip() for n in path.stem.split("&") if _OPERATOR_NAME.fullmatch(n.strip())]


@dataclass
class Entry:
    name: str
    repository: str
    header: str
    parameters: tuple[CParameter, ...]
    phase2: tuple[CParameter, ...] = ()  # phase 2's parameters besides the usual four
    doc: str | None = None
    outputs: list[str] = field(default_factory=list)
    inout: list[str] = field(default_factory=list)
    basis: str = "rules"
    note: str | None = None
    returns_nothing: bool = False
    rules_disagree: bool = False
    table_missing: list[str] = field(default_factory=list)
    declared_in_doc: bool = False  # the prototypes are the doc's: no op_api header has them
    declared_in_def: bool = False  # the prototypes are generated from the operator's OpDef
    # other names of the header in the repository's experimental/ op_api, with the same
    # prototypes: the custom package of its experimental operators installs them by these names
    experimental_headers: list[str] = field(default_factory=list)

    @property
    def call_parameters(self) -> tuple[CParameter, ...]:
        """The parameters a call gives: phase 1's, then those only phase 2 takes."""
        names = {p.name for p in self.parameters}
        return self.parameters + tuple(p for p in self.phase2 if p.name not in names)

    def as_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "repository": self.repository, "header": self.header, "doc": self.doc,
            "outputs": self.outputs, "inout": self.inout, "basis": self.basis,
            "parameters": [[p.c_type, p.name] for p in self.parameters]}
        if self.phase2:
            data["phase2"] = [[p.c_type, p.name] for p in self.phase2]
        if self.declared_in_doc:
            data["prototypes"] = "doc"
        elif self.declared_in_def:
            data["prototypes"] = "def"
        if self.note:
            data["note"] = self.note
        if self.returns_nothing:
            data["returns_nothing"] = True
        if self.experimental_headers:
            data["experimental_headers"] = self.experimental_headers
        return data


@dataclass
class Report:
    headers: int = 0
    duplicates: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    unreadable_docs: list[str] = field(default_factory=list)
    from_docs: int = 0  # operators whose prototypes only their docs give
    unmodelled: set[str] = field(default_factory=set)  # left out: a type aclnn_py lacks


def _prototypes(repository: Repository, report: Report, entries: dict[str, Entry]) -> None:
    headers = sorted(repository.path.glob("**/op_api/aclnn_*.h"),
                     key=lambda p: (_experimental(p.relative_to(repository.path)), str(p)))
    for path in headers:
        relative = path.relative_to(repository.path)
        report.headers += 1
        text = path.read_text(encoding="utf-8", errors="replace")
        names = list(dict.fromkeys(_headers.operator_names(text)))
        for name in names:
            try:
                found = _headers.operator(text, name, relative)
            except _headers.HeaderError as error:
                report.skipped.append(f"{repository.name}: {error}")
                continue
            if name in entries:
                kept = entries[name]
                if (_experimental(relative) and kept.repository == repository.name
                        and not _experimental(Path(kept.header))
                        and relative.name != Path(kept.header).name
                        and found.parameters == kept.parameters
                        and found.phase2_extra == kept.phase2
                        and relative.as_posix() not in kept.experimental_headers):
                    kept.experimental_headers.append(relative.as_posix())
                report.duplicates.append(f"{name}: {repository.name}/{relative} "
                                         f"(kept {entries[name].repository}/"
                                         f"{entries[name].header})")
                continue
            entries[name] = Entry(name, repository.name, relative.as_posix(), found.parameters,
                                  found.phase2_extra)


# Types of operators' parameters that aclnn_py's headers do not declare (their operators are
# left out of the table): none since headers/acl_meta.h declares aclScalarList.
UNMODELLED_TYPES: frozenset[str] = frozenset()
_CODE_BLOCK = re.compile(r"```[ \t]*(?:cpp|c\+\+|c)?[ \t]*\n(.*?)```", re.S | re.I)
_INLINE_PROTOTYPE = re.compile(r"`(aclnnStatus\s+aclnn\w+\s*\([^`]*\))\s*;?\s*`")
_DOC_INCLUDE = re.compile(r'#include\s*"(?:aclnnop/(?:level2/)?)?(aclnn_\w+\.h)"')


def _doc_header(name: str, text: str) -> str:
    """The header an operator known only from its doc is in: the one the doc's example
    includes under the operator's snake-case name (``aclnnSwiGlu``: ``aclnn_swi_glu.h``), else
    its only aclnn header, else that name (the name CANN's code generator gives it)."""
    snake = "aclnn_" + re.sub(r"(?<!^)(?=[A-Z])", "_", name[len("aclnn"):]).lower() + ".h"
    included = list(dict.fromkeys(_DOC_INCLUDE.findall(text)))
    plain = snake.replace("aclnn_inplace_", "aclnn_")
    for header in (snake, plain):
        if header in included:
            return header
    own = [h for h in included if h not in ("aclnn_util.h",)]
    return own[0] if len(own) == 1 else snake


def _doc_prototypes(repository: Repository, report: Report, entries: dict[str, Entry]) -> None:
    """The operators declared in no op_api header (their headers are written at build time by
    CANN's code generator from op_host's definitions), from the prototype blocks of their
    docs (``docs/aclnnXxx.md``: its code blocks without ``#include``, else its inline code
    spans holding a prototype); each entry's header is
    ``<operator folder>/op_host/<header>``, the header named as :func:`_doc_header` says."""
    docs = sorted(repository.path.glob("**/docs/**/aclnn*.md"),
                  key=lambda p: (_experimental(p.relative_to(repository.path)), str(p)))
    for path in docs:
        names = [n for n in doc_names(path) if n not in entries]
        if not names:
            continue
        relative = path.relative_to(repository.path)
        if "docs" not in relative.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        # the prototypes, each ended by ';' (a doc's block often leaves it out)
        declarations = ";\n".join(
            re.sub(r"\)\s*(?=aclnnStatus\b)", ");\n", block)
            for block in _CODE_BLOCK.findall(text)
            if "#include" not in block and "main(" not in block)
        if SUFFIX + "(" not in declarations:
            declarations = ";\n".join(_INLINE_PROTOTYPE.findall(text))
        folder = Path(*relative.parts[:relative.parts.index("docs")])
        for name in names:
            if f"{name}{SUFFIX}(" not in declarations:
                continue
            try:
                found = _headers.operator(declarations + ";", name, relative)
            except _headers.HeaderError as error:
                report.skipped.append(f"{repository.name}: {error}")
                continue
            unmodelled = [p.c_type for p in found.parameters
                          if p.c_type.replace("const ", "").strip() in UNMODELLED_TYPES]
            if unmodelled:
                report.unmodelled.add(name)
                report.skipped.append(f"{repository.name}: {name}: {relative}: "
                                      f"{unmodelled[0]} is a type aclnn_py does not model")
                continue
            if found.phase2 is None:
                report.skipped.append(f"{repository.name}: {name}: {relative} declares no "
                                      "phase 2")
                continue
            report.from_docs += 1
            entries[name] = Entry(name, repository.name,
                                  (folder / "op_host" / _doc_header(name, text)).as_posix(),
                                  found.parameters, found.phase2_extra, declared_in_doc=True)


# An operator definition (``op_host/*_def.cpp``): ``class Xxx : public OpDef``, its
# ``this->Input("x")``, ``this->Output("y")`` and ``this->Attr("a")`` chains, ``OP_ADD(Xxx)``.
_OP_DEF_CLASS = re.compile(r"class\s+(\w+)\s*:\s*public\s+OpDef\b")
_OP_DEF_ITEM = re.compile(r'this\s*->\s*(Input|Output|Attr)\s*\(\s*"(\w+)"\s*\)')
_OP_DEF_PARAM_TYPE = re.compile(r"\.\s*ParamType\s*\(\s*(REQUIRED|OPTIONAL|DYNAMIC)\s*\)")
_OP_DEF_ATTR_TYPE = re.compile(r"\.\s*AttrType\s*\(\s*(REQUIRED|OPTIONAL)\s*\)")
_OP_DEF_ATTR_VALUE = re.compile(
    r"\.\s*(ListListInt|ListInt|ListFloat|ListBool|Int|Float|Bool|String)\s*\(")
# The C type of an attribute of each kind in the aclnn prototype CANN's code generator writes
# for an operator defined by its OpDef alone (ACLNNTYPE aclnn in the operator's CMakeLists.txt:
# hicann/ops-math cmake/func.cmake, add_all_modules_sources): as the generated headers of the
# repositories' sample programs are called (e.g. hicann/ops-math c4193324
# experimental/math/lin_space_d/examples, an int64_t num; experimental/math/bias_add, a
# char * data format).
_OP_DEF_ATTR_TYPES = {"Int": "int64_t", "Float": "double", "Bool": "bool", "String": "char *",
                      "ListInt": "const aclIntArray *", "ListFloat": "const aclFloatArray *",
                      "ListBool": "const aclBoolArray *", "ListListInt": "const aclIntArray *"}
_ACLNN_TYPE = re.compile(r"ACLNNTYPE\s+(\w+)")
_DEF_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)


def _generated_aclnn(folder: Path) -> bool:
    """Whether CANN's build writes the aclnn API of the operator in ``folder`` from its
    definition: its CMakeLists.txt or its op_host's declares it ``ACLNNTYPE aclnn``."""
    return any("aclnn" in _ACLNN_TYPE.findall(cmake.read_text(encoding="utf-8", errors="replace"))
               for cmake in (folder / "CMakeLists.txt", folder / "op_host" / "CMakeLists.txt")
               if cmake.is_file())


def op_def_prototype(code: str) -> tuple[str, tuple[CParameter, ...], list[str], list[str]] | None:
    """The operator type, phase-1 parameters (without workspaceSize and executor), outputs and
    in-place parameters of the aclnn API CANN's code generator writes for one OpDef source:
    inputs, then attributes, then outputs; an input ``const aclTensor *`` (an optional one
    named ``<name>Optional``, a dynamic one an ``aclTensorList``), an output of an input's name
    makes that input ``aclTensor *<name>Ref`` (updated in place) and is not repeated, the other
    outputs ``const aclTensor *`` (dynamic: ``aclTensorList``); attributes by
    :data:`_OP_DEF_ATTR_TYPES` (an optional one named ``<name>Optional``)."""
    code = _DEF_COMMENT.sub(" ", code)  # (no definition's string holds "//" or "/*")
    found = _OP_DEF_CLASS.search(code)
    if found is None:
        return None
    items = list(_OP_DEF_ITEM.finditer(code, found.end()))
    inputs: list[tuple[str, str]] = []
    outputs: list[tuple[str, str]] = []
    attrs: list[tuple[str, str, str]] = []
    for index, item in enumerate(items):
        end = items[index + 1].start() if index + 1 < len(items) else len(code)
        chain = code[item.end():end].split(";", 1)[0]
        kind, name = item.group(1), item.group(2)
        if kind == "Attr":
            value = _OP_DEF_ATTR_VALUE.search(chain)
            optional = _OP_DEF_ATTR_TYPE.search(chain)
            if value is None:
                return None
            attrs.append((name, value.group(1), optional.group(1) if optional else "REQUIRED"))
            continue
        param = _OP_DEF_PARAM_TYPE.search(chain)
        (inputs if kind == "Input" else outputs).append(
            (name, param.group(1) if param else "REQUIRED"))
    input_names = {name for name, _ in inputs}
    parameters: list[CParameter] = []
    written: list[str] = []
    inout: list[str] = []
    for name, param in inputs:
        if name in {n for n, _ in outputs}:
            parameters.append(CParameter("aclTensor *", f"{name}Ref"))
            inout.append(f"{name}Ref")
        elif param == "DYNAMIC":
            parameters.append(CParameter("const aclTensorList *", name))
        else:
            parameters.append(CParameter("const aclTensor *",
                                         f"{name}Optional" if param == "OPTIONAL" else name))
    for name, value, optional in attrs:
        parameters.append(CParameter(_OP_DEF_ATTR_TYPES[value],
                                     f"{name}Optional" if optional == "OPTIONAL" else name))
    for name, param in outputs:
        if name in input_names:
            continue
        parameters.append(CParameter("const aclTensorList *" if param == "DYNAMIC"
                                     else "const aclTensor *", name))
        written.append(name)
    return found.group(1), tuple(parameters), written, inout


def _def_prototypes(repository: Repository, report: Report, entries: dict[str, Entry]) -> None:
    """The operators whose aclnn API CANN's build generates from their definition alone
    (:func:`op_def_prototype`) and that neither a header nor a doc declares; each entry's
    header is ``<operator folder>/op_host/aclnn_<folder name>.h``, the name the generator
    gives it (the repositories' samples include it by that name)."""
    paths = sorted(repository.path.glob("**/op_host/*_def.cpp"),
                   key=lambda p: (_experimental(p.relative_to(repository.path)), str(p)))
    for path in paths:
        relative = path.relative_to(repository.path)
        folder = _operator_folder(relative)
        if "scripts" in relative.parts or not _generated_aclnn(repository.path / folder):
            continue
        found = op_def_prototype(path.read_text(encoding="utf-8", errors="replace"))
        if found is None:
            continue
        op_type, parameters, outputs, inout = found
        name = f"aclnn{op_type}"
        if name in entries or name in report.unmodelled:  # its doc's prototype prevails
            continue
        entry = Entry(name, repository.name,
                      (folder / "op_host" / f"aclnn_{folder.name}.h").as_posix(), parameters,
                      declared_in_def=True)
        entry.outputs, entry.inout, entry.basis = outputs, inout, "rules"
        entries[name] = entry


def _docs_index(repository: Repository) -> dict[str, list[Path]]:
    index: dict[str, list[Path]] = {}
    for path in sorted(repository.path.glob("**/docs/**/aclnn*.md")):
        for name in doc_names(path):
            index.setdefault(name, []).append(path.relative_to(repository.path))
    return index


def _readme(entry: Entry, repository: Repository) -> Path | None:
    """The operator folder's README, for an operator without a ``docs/aclnn*.md`` (CANN's
    ``experimental/`` operators describe their parameters there)."""
    relative = _operator_folder(Path(entry.header)) / "README.md"
    return relative if (repository.path / relative).is_file() else None


def _choose_doc(entry: Entry, candidates: Sequence[Path]) -> Path | None:
    if not candidates:
        return None
    folder = _operator_folder(Path(entry.header))

    def key(path: Path) -> tuple[bool, bool, int, str]:
        near = folder in path.parents
        return (not near, _experimental(path), len(path.parts), str(path))

    return min(candidates, key=key)


def _format_names(names: Iterable[str]) -> str:
    return ", ".join(names)


_OPERATOR_IN_PLACE = re.compile(r"直接在输入(?:张量|tensor|Tensor)?的内存中存储"
                                r"|原地(?:计算|更新|修改)|\bin-?place\b", re.I)
_OUTPUT_DESCRIPTION = re.compile(
    r"^(?:表示)?(?:公式中的)?输出(?:张量|tensor|Tensor)?(?:[，。,.（(\s]|$|[A-Za-z])", re.M)
# A doc saying the operator does nothing to its tensors (they only order the work).
_DOES_NOTHING = re.compile(r"不(?:对\S{0,20})?做任何操作")


def operator_prose_in_place(text: str, operator: str) -> bool:
    """Whether a line of the doc outside its code names ``operator`` (followed by a
    colon) and says it stores its result in its input's memory."""
    prose = without_code(text)
    pattern = re.compile(re.escape(operator) + r"(?![A-Za-z0-9_])[^\n]{0,8}?[：:]([^\n]*)")
    return any(_OPERATOR_IN_PLACE.search(m.group(1)) for m in pattern.finditer(prose))


@dataclass
class RoleReading:
    """An operator's parameter roles as its doc, its programs and its op_api source are read
    in turn: what the table says (the rules where it has no row), the roles found so far, and
    the basis and notes that explain them."""

    operator: str
    names: list[str]  # the parameters a call gives, in order
    tensors: list[str]  # those of them that are tensors
    descriptions: dict[str, str]  # each table row's description
    rule_outputs: list[str]
    rule_inout: list[str]
    table: dict[str, str]
    roles: dict[str, str]
    basis: str = "table"
    notes: list[str] = field(default_factory=list)

    def written_by_rules(self, name: str) -> bool:
        """Whether CANN's conventions make ``name`` an output or in place."""
        return name in self.rule_outputs or name in self.rule_inout

    def assign(self, names: Iterable[str], role: str) -> None:
        """Give each of ``names`` the role ``role``."""
        for name in names:
            self.roles[name] = role


def _names_with(names: Sequence[str], roles: dict[str, str], role: str) -> list[str]:
    """Those of ``names`` whose role in ``roles`` is ``role``, in order."""
    return [name for name in names if roles[name] == role]


def _table_or_rule_roles(parameters: Sequence[CParameter], table_roles: dict[str, str | None],
                         rule_outputs: Sequence[str], rule_inout: Sequence[str]
                         ) -> dict[str, str]:
    """Each parameter's role by its table row, or by the rules where the table gives none."""
    roles: dict[str, str] = {}
    for parameter in parameters:
        role = table_roles.get(parameter.name)
        if role is None:
            role = (_ROLE_OUT if parameter.name in rule_outputs else
                    _ROLE_INOUT if parameter.name in rule_inout else _ROLE_IN)
        roles[parameter.name] = role
    return roles


def _apply_row_prose(reading: RoleReading) -> None:
    """A table input whose row's own description says it is updated in place is in place
    (precedence 3)."""
    prose = [n for n in reading.names if reading.table[n] == _ROLE_IN
             and prose_in_place(reading.descriptions.get(n, ""), reading.operator)]
    reading.assign(prose, _ROLE_INOUT)
    if prose:
        reading.basis = "prose"
        reading.notes.append(f"{_format_names(prose)}: table says input, its description "
                             "says updated in place")


def _apply_read_backs(reading: RoleReading, programs: Sequence[Program]
                      ) -> dict[str, list[str]]:
    """The read-backs of the doc's example and of the sample programs (precedence 1): a table
    input read back is trusted when the table gives the operator no write at all, or the
    rules make that parameter written too; it is an output when its name is an output's
    (out, ...Out), else in place. Returns what the programs read back, each parameter with
    the programs reading it (:func:`example_writes`)."""
    written = example_writes(programs, reading.operator, reading.names, reading.table)
    table_writes = any(r != _ROLE_IN for r in reading.table.values())
    read = [n for n in reading.names if n in written and reading.table[n] == _ROLE_IN
            and n in reading.tensors]
    trusted = [n for n in read if not table_writes or reading.written_by_rules(n)]
    untrusted = [n for n in read if n not in trusted]
    as_output = [n for n in trusted if _output_by_name(n) and not n.endswith("Ref")]
    as_inout = [n for n in trusted if n not in as_output]
    reading.assign(as_output, _ROLE_OUT)
    reading.assign(as_inout, _ROLE_INOUT)
    example_notes = []
    if as_inout:
        example_notes.append(f"{_format_names(as_inout)}: table says input, "
                             f"{_read_back_by(written, as_inout)} it back")
    if as_output:
        example_notes.append(f"{_format_names(as_output)}: table says input, "
                             f"{_read_back_by(written, as_output)} it back and its name is "
                             "an output's")
    if example_notes:
        reading.basis = "example"
        reading.notes[:0] = example_notes
    if untrusted:
        reading.notes.append(f"{_format_names(untrusted)}: "
                             f"{_read_back_by(written, untrusted)} it back but the table and "
                             "rules say input; kept as input")
    return written


def _apply_dump(reading: RoleReading, source: Dump, written: dict[str, list[str]]) -> None:
    """The op_api source's dump of phase 1 (``L2_DFX_PHASE_1``'s ``DFX_IN`` and ``DFX_OUT``),
    when it names outputs (precedence 2): a tensor it dumps as an output is written (in place
    when it is dumped as an input too, or named so); a table write it dumps only as an input,
    that no program reads back (``written``), is not (a Ref's name keeps it in place)."""
    roles, table = reading.roles, reading.table
    dumped = [n for n in reading.tensors if roles[n] == _ROLE_IN and n in source.outputs]
    from_table = [n for n in reading.tensors if roles[n] != _ROLE_IN and roles[n] == table[n]
                  and n not in written and n in source.inputs and n not in source.outputs
                  and not n.endswith("Ref")]
    for name in dumped:
        in_place = name.endswith("Ref") or (name in source.inputs
                                            and not _output_by_name(name))
        roles[name] = _ROLE_INOUT if in_place else _ROLE_OUT
    reading.assign(from_table, _ROLE_IN)
    if dumped:
        reading.notes.append(f"{_format_names(dumped)}: table says input, {source.where} "
                             "dumps it as an output of phase 1")
    if from_table:
        said = {_ROLE_OUT: "output", _ROLE_INOUT: "input/output"}
        reading.notes.append(
            f"{_format_names(from_table)}: table says "
            f"{' or '.join(sorted({said[table[n]] for n in from_table}))}, "
            f"{source.where} dumps it as an input of phase 1 only and no program reads it back")
    if (dumped or from_table) and reading.basis != "example":
        reading.basis = "source"


def _apply_doc_without_writes(reading: RoleReading, text: str) -> None:
    """For a doc that, all else read, gives the operator no write at all: a row may describe
    the output tensor while its role says input; else the operator-level prose may say it
    works in place (then its Ref tensors, or else its first tensor, are in place); else,
    unless the doc says the operator does nothing to its tensors, the rules decide."""
    tensors = reading.tensors
    described = [n for n in tensors if reading.table[n] == _ROLE_IN
                 and _OUTPUT_DESCRIPTION.search(reading.descriptions.get(n, ""))]
    if described:
        reading.assign(described, _ROLE_OUT)
        reading.basis = "prose"
        reading.notes.append(f"{_format_names(described)}: table says input, its description "
                             "calls it the output")
    elif tensors and operator_prose_in_place(text, reading.operator):
        targets = [n for n in tensors if n.endswith("Ref")] or tensors[:1]
        reading.assign(targets, _ROLE_INOUT)
        reading.basis = "prose"
        reading.notes.append(f"{_format_names(targets)}: table says input, the doc says the "
                             "operator stores its result in its input")
    elif ((reading.rule_outputs or reading.rule_inout)
          and not _DOES_NOTHING.search(without_code(text))):
        reading.assign(reading.rule_outputs, _ROLE_OUT)
        reading.assign(reading.rule_inout, _ROLE_INOUT)
        reading.basis = "rules"
        reading.notes.append("the doc gives it no output and does not say it writes nothing; "
                             "roles by rules")


def describe(entry: Entry, text: str, samples: Sequence[Program] = (),
             source: Dump | None = None) -> None:
    """Fill ``entry``'s roles from its doc's ``text``, the sample programs of its
    repository that call it and what its op_api ``source`` dumps."""
    names = [p.name for p in entry.call_parameters]
    table = table_for(doc_tables(text), entry.name, names)
    rule_outputs, rule_inout = rule_roles(entry.call_parameters)
    if table is None:
        entry.outputs, entry.inout = rule_outputs, rule_inout
        entry.basis = "rules"
        entry.note = NO_TABLE
        return
    table_roles = {name: role for name, role, _ in table.rows}
    missing = [n for n in names if n not in table_roles]
    entry.table_missing = missing
    roles = _table_or_rule_roles(entry.call_parameters, table_roles, rule_outputs, rule_inout)
    reading = RoleReading(
        entry.name, names,
        tensors=[p.name for p in entry.call_parameters if _roles.is_tensor_type(p.c_type)],
        descriptions={name: rest for name, _, rest in table.rows},
        rule_outputs=rule_outputs, rule_inout=rule_inout, table=roles, roles=dict(roles))
    _apply_row_prose(reading)
    programs = [Program("", body) for _, _, body in code_blocks(text)] + list(samples)
    written = _apply_read_backs(reading, programs)
    if source is not None and source.outputs:
        _apply_dump(reading, source, written)
    if all(r == _ROLE_IN for r in reading.roles.values()):
        _apply_doc_without_writes(reading, text)
    if missing:
        reading.notes.append(f"{_format_names(missing)}: not in the table, role by rules")
    unknown = [n for n, r in table_roles.items() if r is None and n in names]
    if unknown:
        reading.notes.append(f"{_format_names(unknown)}: table role unreadable, input")
    entry.outputs = _names_with(names, reading.roles, _ROLE_OUT)
    entry.inout = _names_with(names, reading.roles, _ROLE_INOUT)
    entry.basis = reading.basis
    entry.note = "; ".join(reading.notes) or None
    entry.rules_disagree = (rule_outputs, rule_inout) != (_names_with(names, roles, _ROLE_OUT),
                                                          _names_with(names, roles, _ROLE_INOUT))


def apply_override(entry: Entry) -> None:
    override = OVERRIDES.get(entry.name)
    if override is None:
        return
    entry.outputs = list(override["outputs"])  # type: ignore[call-overload]
    entry.inout = list(override["inout"])  # type: ignore[call-overload]
    entry.basis = "override"
    entry.note = str(override["why"])
    entry.returns_nothing = False


def collect(repositories: Sequence[Repository], report: Report) -> dict[str, Entry]:
    entries: dict[str, Entry] = {}
    for repository in repositories:
        _prototypes(repository, report, entries)
    for repository in repositories:
        _doc_prototypes(repository, report, entries)
    for repository in repositories:
        _def_prototypes(repository, report, entries)
    for repository in repositories:
        mine = {n: e for n, e in entries.items() if e.repository == repository.name}
        index = _docs_index(repository)
        samples = Samples(repository.path)
        dumps = dumps_index(repository.path)
        texts: dict[Path, str] = {}
        for entry in mine.values():
            doc = _choose_doc(entry, index.get(entry.name, ())) or _readme(entry, repository)
            if doc is None and entry.declared_in_def:  # its definition said which are written
                continue
            if doc is None:
                entry.outputs, entry.inout = rule_roles(entry.call_parameters)
                entry.basis = "rules"
                apply_override(entry)
                continue
            entry.doc = doc.as_posix()
            if doc not in texts:
                texts[doc] = (repository.path / doc).read_text(encoding="utf-8",
                                                               errors="replace")
            describe(entry, texts[doc], samples.of(entry.name), dumps.get(entry.name))
            entry.returns_nothing = (entry.note != NO_TABLE and not entry.outputs
                                     and not entry.inout)
            apply_override(entry)
        for entry in mine.values():
            if not (entry.outputs or entry.inout or entry.returns_nothing):
                from_examples(entry, samples.of(entry.name))
    return entries


def from_examples(entry: Entry, samples: Sequence[Program]) -> None:
    """Roles for an operator its doc gives none (or that has no doc) from the sample
    programs of its repository that call it: what they read back after calling it is
    written by it; an output, unless its name says it is updated in place."""
    names = [p.name for p in entry.call_parameters]
    tensors = {p.name for p in entry.call_parameters
               if _roles.is_tensor_type(p.c_type)}
    writes = example_writes(samples, entry.name, names, {})
    written = [n for n in names if n in tensors and n in writes]
    if not written:
        return
    entry.inout = [n for n in written if n.endswith("Ref")]
    entry.outputs = [n for n in written if n not in entry.inout]
    entry.basis = "example"
    entry.note = "; ".join(filter(None, [
        entry.note, f"{_format_names(written)}: the doc gives no output; "
                    f"{_read_back_by(writes, written)} it back"]))


def document(repositories: Sequence[Repository], entries: dict[str, Entry]) -> str:
    """The JSON text: keys sorted, one operator (and one repository) per line, so that a
    regeneration's diff shows the operators that changed."""
    def line(value: object) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)

    def block(items: dict[str, object]) -> str:
        rows = [f"  {line(name)}: {line(items[name])}" for name in sorted(items)]
        return "{\n" + ",\n".join(rows) + "\n }"

    repos: dict[str, object] = {r.name: {"url": r.url, "commit": r.commit}
                                for r in repositories}
    operators: dict[str, object] = {n: e.as_json() for n, e in entries.items()}
    return ("{\n"
            f' "generated_by": {line(GENERATED_BY)},\n'
            f' "operators": {block(operators)},\n'
            f' "repositories": {block(repos)},\n'
            f' "schema": {line(SCHEMA)}\n'
            "}\n")


def summary(repositories: Sequence[Repository], entries: dict[str, Entry], report: Report,
            verbose: bool) -> str:
    lines = ["repositories: " + ", ".join(f"{r.name}@{r.commit[:12]}" for r in repositories),
             f"headers read: {report.headers}",
             f"operators declared only by their docs: {report.from_docs}",
             f"operators: {len(entries)}"]
    with_doc = [e for e in entries.values() if e.doc]
    lines.append(f"  with doc: {len(with_doc)}, without doc: {len(entries) - len(with_doc)}")
    bases = Counter(e.basis for e in entries.values())
    lines.append("  basis: " + ", ".join(f"{b} {bases[b]}" for b in BASES))
    lines.append(f"duplicate declarations ignored: {len(report.duplicates)}")
    if verbose:
        lines += [f"  {d}" for d in report.duplicates]
    lines.append(f"skipped prototypes: {len(report.skipped)}")
    lines += [f"  {s}" for s in report.skipped]
    nothing = sorted(n for n, e in entries.items() if e.returns_nothing)
    lines.append(f"operators returning nothing: {len(nothing)}"
                 + (f" ({_format_names(nothing)})" if nothing else ""))
    tabled = [e for e in entries.values() if e.doc and e.note != NO_TABLE]
    wrong = sorted(e.name for e in tabled if e.rules_disagree)
    lines.append(f"fallback rules vs the tables: {len(wrong)} of {len(tabled)} operators "
                 "differ")
    missing = sorted(e.name for e in entries.values() if e.table_missing)
    lines.append(f"operators with parameters missing from their table: {len(missing)}")
    if verbose:
        for name in wrong:
            entry = entries[name]
            outputs, inout = rule_roles(entry.call_parameters)
            lines.append(f"  {name}: rules out={outputs} inout={inout}; "
                         f"doc out={entry.outputs} inout={entry.inout} ({entry.basis})")
        for name in missing:
            lines.append(f"  missing from table: {name}: "
                         f"{_format_names(entries[name].table_missing)}")
        for entry in sorted(entries.values(), key=lambda e: e.name):
            if entry.note:
                lines.append(f"  note {entry.name} [{entry.basis}]: {entry.note}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", action="append", type=parse_repo, required=True,
                        metavar="NAME=PATH[@COMMIT]", help="a checkout of an ops-* repository")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help="where to write the JSON (default: %(default)s)")
    parser.add_argument("--verbose", action="store_true",
                        help="list duplicates, the rules' disagreements and every note")
    args = parser.parse_args(argv)
    report = Report()
    entries = collect(args.repo, report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(document(args.repo, entries), encoding="utf-8")
    print(summary(args.repo, entries, report, args.verbose))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
