"""Write the emulator's phase-1 rules (aclnn_py/data/phase1_rules.json) from CANN's operator docs.

Each computed operator's doc (the ``doc`` of its row in aclnn_py/data/operators.json, read from
local checkouts of hicann's operator repositories) has, in its ``aclnnXxxGetWorkspaceSize``
section, a parameter table: per parameter its usage notes, dtypes, formats, dimensions. This tool
reads that table and writes, per operator, rules in the emulator's vocabulary
(emulator/src/ops_rules.h):

* ``dtypes`` from the dtype column, for the SoCs the notes under the table do not single out
  (the notes' own lists for those, where they give one);
* ``rank`` from the dimension column ("0-8", "不超过8维", "2", "1-3" ...);
* from the usage notes: ``same_dtype`` (数据类型与X一致 ...), ``same_shape`` (shape与X一致 ...),
  ``broadcast`` (与X满足broadcast关系; shape是X与Y broadcast之后的shape), ``promote``
  (与X满足数据类型推导规则; 是X与Y推导之后可转换的数据类型), ``not_empty`` (不支持空Tensor);
* ``nullable`` parameters: the doc says they may be NULL (可传入nullptr, 可选 ...).

Then the corrections of tools/phase1_corrections/*.json are applied: rules CANN's own unit tests
(or its op_api source) show the doc to state wrongly or not at all, each with its note (one file
per family of operators; an operator is corrected in one file only). Every rule carries its
``source``: ``doc`` or ``correction``.

    python tools/cann_rules.py --repo ops-nn=PATH[@COMMIT] --repo ops-math=PATH[@COMMIT] ...
        [--out aclnn_py/data/phase1_rules.json] [--check]

``--check`` writes nothing and fails when the file would change. The operators covered are the
ones the emulator computes (aclnn_py.emulator.kernels(): aclnn_py must be installed).
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TABLE = ROOT / "aclnn_py" / "data" / "operators.json"
OUT = ROOT / "aclnn_py" / "data" / "phase1_rules.json"
CORRECTIONS = HERE / "phase1_corrections"
GENERATED_BY = "tools/cann_rules.py"

# The dtype names of the docs -> aclDataType names (headers/acl_rt.h, without ACL_).
DTYPE_NAMES = {
    "FLOAT": "FLOAT", "FLOAT32": "FLOAT", "FP32": "FLOAT", "FLOAT16": "FLOAT16", "FP16": "FLOAT16",
    "BFLOAT16": "BF16", "BF16": "BF16", "DOUBLE": "DOUBLE", "FLOAT64": "DOUBLE",
    "INT8": "INT8", "INT16": "INT16", "INT32": "INT32", "INT64": "INT64", "UINT8": "UINT8",
    "UINT16": "UINT16", "UINT32": "UINT32", "UINT64": "UINT64", "BOOL": "BOOL",
    "COMPLEX32": "COMPLEX32", "COMPLEX64": "COMPLEX64", "COMPLEX128": "COMPLEX128",
    "HIFLOAT8": "HIFLOAT8", "FLOAT8_E5M2": "FLOAT8_E5M2", "FLOAT8_E4M3FN": "FLOAT8_E4M3FN",
    "FLOAT8_E8M0": "FLOAT8_E8M0", "FLOAT4_E2M1": "FLOAT4_E2M1", "FLOAT4_E1M2": "FLOAT4_E1M2",
    "INT4": "INT4",
}
FAMILIES = ("910", "910b", "910_93", "950", "310p", "310b")
TENSOR_TYPES = ("aclTensor", "aclTensorList")


@dataclass
class Parameter:
    """One row of a GetWorkspaceSize parameter table."""

    name: str
    c_type: str
    usage: str
    dtypes: list[str]
    dims: str
    description: str


@dataclass
class OperatorRules:
    doc: str
    rules: list[dict[str, Any]] = field(default_factory=list)
    nullable: list[str] = field(default_factory=list)

    def add(self, rule: dict[str, Any]) -> None:
        rule.setdefault("source", "doc")
        key = {k: v for k, v in rule.items() if k != "source"}
        if all({k: v for k, v in r.items() if k != "source"} != key for r in self.rules):
            self.rules.append(rule)


# ---- the doc's tables -----------------------------------------------------------------------


class TableReader(HTMLParser):
    """Every <table> of a text as rows of cell texts, rowspan and colspan expanded."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: list[list[list[str]]] = []
        self._rows: list[list[str]] | None = None
        self._cell: list[str] | None = None
        self._span = (1, 1)
        self._pending: dict[int, tuple[int, str]] = {}  # column -> (rows left, text)
        self._row: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "table":
            self._rows = []
            self._pending = {}
        elif tag == "tr" and self._rows is not None:
            self._row = []
        elif tag in ("td", "th") and self._rows is not None:
            self._fill_pending()
            self._cell = []
            self._span = (int(values.get("rowspan") or 1), int(values.get("colspan") or 1))
        elif tag in ("li", "br") and self._cell is not None:
            self._cell.append("\n")

    def _fill_pending(self) -> None:
        while len(self._row) in self._pending:
            column = len(self._row)
            left, text = self._pending[column]
            self._row.append(text)
            if left <= 1:
                del self._pending[column]
            else:
                self._pending[column] = (left - 1, text)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            text = " ".join("".join(self._cell).split(" ")).strip()
            rowspan, colspan = self._span
            for _ in range(colspan):
                if rowspan > 1:
                    self._pending[len(self._row)] = (rowspan - 1, text)
                self._row.append(text)
            self._cell = None
        elif tag == "tr" and self._rows is not None:
            self._fill_pending()
            self._rows.append(self._row)
        elif tag == "table" and self._rows is not None:
            self.tables.append(self._rows)
            self._rows = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def section(text: str, operator: str) -> str:
    """The doc's text from the heading of ``operator``'s GetWorkspaceSize to the next heading of
    that level ('' when there is none)."""
    match = re.search(rf"^(#+)\s*{operator}GetWorkspaceSize\s*$", text, re.M)
    if not match:
        return ""
    level = len(match.group(1))
    end = re.search(rf"^#{{1,{level}}}\s", text[match.end():], re.M)
    return text[match.end(): match.end() + end.start() if end else len(text)]


def clean(text: str) -> str:
    """Cell text without markdown links and HTML entities."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", html.unescape(text))
    return text.replace("<", "").replace(">", "")


def parameters(section_text: str) -> tuple[list[Parameter], str]:
    """The section's parameter table, and the text after it (the SoC notes)."""
    reader = TableReader()
    reader.feed(section_text)
    for table in reader.tables:
        if not table or "参数名" not in table[0]:
            continue
        header = table[0]

        def column(*names: str, header: list[str] = header) -> int | None:
            return next((i for i, h in enumerate(header) if any(n in h for n in names)), None)

        use, dt, dims, desc = column("使用说明"), column("数据类型"), column("维度"), column("描述")
        found = []
        for row in table[1:]:
            if not row:
                continue
            cell = clean(row[0])
            match = re.match(r"\s*(\w+)\s*[（(]\s*([\w\s*]+?)\s*[）)]", cell)
            name = match.group(1) if match else cell.split()[0] if cell.split() else ""
            c_type = match.group(2) if match else ""

            def get(index: int | None, cells: list[str] = row) -> str:
                return clean(cells[index]) if index is not None and index < len(cells) else ""

            dtypes = [DTYPE_NAMES[w] for w in re.findall(r"[A-Z][A-Z0-9_]+", get(dt).upper())
                      if w in DTYPE_NAMES]
            found.append(Parameter(name, c_type, get(use), list(dict.fromkeys(dtypes)),
                                   get(dims), get(desc)))
        end = section_text.find("</table>", section_text.find("参数名"))
        return found, section_text[end:] if end >= 0 else ""
    return [], ""


# ---- rules ----------------------------------------------------------------------------------


def rank_bounds(text: str) -> tuple[int, int] | None:
    """A dimension cell as (min, max) ranks, or None."""
    text = text.replace(" ", "")
    for pattern, make in (
            (r"^(\d+)[-~至](\d+)(维)?$", lambda m: (int(m[1]), int(m[2]))),
            (r"^(不超过|小于等于|最多|<=)(\d+)维?$", lambda m: (0, int(m[2]))),
            (r"^(\d+)维?$", lambda m: (int(m[1]), int(m[1]))),
            (r"^(大于等于|至少|>=)(\d+)维?$", lambda m: (int(m[2]), 8))):
        match = re.match(pattern, text)
        if match:
            return make(match)
    return None


# The products of the docs' notes, as their markers name them (<!-- npu="A3,910b" idN -->).
NPU_MARKERS = {"910": "910", "910b": "910b", "A3": "910_93", "950": "950", "310p": "310p",
               "310b": "310b"}
NOTE_BLOCK = re.compile(r'<!--\s*npu="([^"]*)"[^>]*-->(.*?)<!--\s*end', re.S)


@dataclass(frozen=True)
class Note:
    """A note under a parameter table: what the dtypes are on some SoC families."""

    families: tuple[str, ...]
    action: str                 # "only" (these and no others), "add" or "remove"
    dtypes: tuple[str, ...]
    params: tuple[str, ...]     # the parameters it names (none: every tensor)


def dtype_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(DTYPE_NAMES[w] for w in re.findall(r"[A-Z][A-Z0-9_]+", text.upper())
                               if w in DTYPE_NAMES))


def notes_of(text: str, names: set[str]) -> list[Note]:
    """The dtype notes of the text after a table: each marked block's products and what its
    sentences say ("数据类型支持 X", "额外支持 X", "不支持 X")."""
    found = []
    for marker, block in NOTE_BLOCK.findall(text):
        families = tuple(NPU_MARKERS[m.strip()] for m in marker.split(",")
                         if m.strip() in NPU_MARKERS)
        for sentence in re.split(r"[。\n]", re.sub(r"<[^>]+>", "", block)):
            params = tuple(n for n in sorted(names) if re.search(
                rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])", sentence))
            for action, pattern in (("add", r"额外支持([A-Z0-9_、，,\s]+)"),
                                    ("remove", r"不支持([A-Z0-9_、，,\s]+)"),
                                    ("only", r"数据类型(?:仅)?支持([A-Z0-9_、，,\s]+)")):
                match = re.search(pattern, sentence)
                if match and dtype_words(match[1]) and families:
                    found.append(Note(families, action, dtype_words(match[1]), params))
                    break
    return found


def dtypes_by_family(p: Parameter, notes: list[Note]) -> dict[str, list[str]]:
    """The dtypes ``p`` takes on each SoC family: the table's, changed by the notes that
    apply to it (those naming it, or naming no parameter)."""
    lists = {family: list(p.dtypes) for family in FAMILIES}
    for note in notes:
        if note.params and p.name not in note.params:
            continue
        for family in note.families:
            current = lists[family]
            if note.action == "add":
                if note.params or any(d in current for d in ("FLOAT", "FLOAT16", "BF16", "DOUBLE")):
                    lists[family] = current + [d for d in note.dtypes if d not in current]
            elif note.action == "remove":
                lists[family] = [d for d in current if d not in note.dtypes]
            elif note.params or set(note.dtypes) & set(current):
                lists[family] = [d for d in note.dtypes]
    return lists


# The usage notes' phrasings of each relation (X, Y: parameter names).
SAME_DTYPE = re.compile(r"数据类型(?:需要|必须|需)?(?:和|与|同)(\w+?)(?:的数据类型)?(?:保持)?"
                        r"(?:一致|相同|一样)")
SAME_SHAPE = re.compile(r"shape(?:需要|必须|需)?(?:和|与|同)(\w+?)(?:的shape)?(?:保持)?"
                        r"(?:一致|相同|一样)")
BROADCASTS_WITH = re.compile(r"(?:和|与)(\w+?)(?:的shape)?(?:需要|需)?满足\s*broadcast关系")
BROADCAST_SHAPE = re.compile(r"shape(?:需要|必须)?(?:是|为)(\w+?)(?:和|与)(\w+?)\s*broadcast"
                             r"(?:之后|后)的shape")
PROMOTES_WITH = re.compile(r"(?:和|与)(\w+?)(?:的数据类型)?(?:需要|需)?满足数据类型推导规则")
PROMOTED_TO = re.compile(r"数据类型(?:需要)?是(\w+?)(?:和|与)(\w+?)推导(?:之后|后)可转换的数据类型")


def relations(p: Parameter, names: set[str]) -> list[dict[str, Any]]:
    """The rules a parameter's usage notes state about it and the others."""
    usage = p.usage
    rules: list[dict[str, Any]] = []

    def named(*words: str) -> bool:
        return all(word in names and word != p.name for word in words)

    for match in SAME_DTYPE.finditer(usage):
        if named(match[1]):
            rules.append({"rule": "same_dtype", "params": [p.name, match[1]]})
    for match in SAME_SHAPE.finditer(usage):
        if named(match[1]):
            rules.append({"rule": "same_shape", "params": [p.name, match[1]]})
    for match in BROADCASTS_WITH.finditer(usage):
        if named(match[1]):
            rules.append({"rule": "broadcast", "params": sorted([p.name, match[1]])})
    for match in BROADCAST_SHAPE.finditer(usage):
        if named(match[1], match[2]):
            rules.append({"rule": "broadcast", "params": [match[1], match[2]], "target": p.name})
    for match in PROMOTES_WITH.finditer(usage):
        if named(match[1]):
            rules.append({"rule": "promote", "params": sorted([p.name, match[1]])})
    for match in PROMOTED_TO.finditer(usage):
        if named(match[1], match[2]):
            rules.append({"rule": "promote", "params": [match[1], match[2]], "target": p.name})
    if "不支持空Tensor" in usage:
        rules.append({"rule": "not_empty", "params": [p.name]})
    return rules


NULLABLE = re.compile(r"可(?:以)?(?:传入|传|为|是)\s*(?:nullptr|空指针|NULL|空)"
                      r"|可选(?:输入|参数)?[，。,]|为nullptr时")


def operator_rules(operator: str, doc_path: str, text: str, c_types: dict[str, str]
                   ) -> OperatorRules:
    """The rules the doc states for ``operator`` (``c_types``: its parameters' C types, from
    its header)."""
    result = OperatorRules(doc_path)
    found, notes = parameters(section(text, operator))
    for p in found:
        p.c_type = c_types.get(p.name, p.c_type)
    names = {p.name for p in found}
    notes_found = notes_of(notes, names)
    for p in found:
        tensor = any(t in p.c_type for t in TENSOR_TYPES)
        scalar = "aclScalar" in p.c_type
        if p.dtypes and (tensor or scalar):
            lists = dtypes_by_family(p, notes_found)
            groups: dict[tuple[str, ...], list[str]] = {}
            for family in FAMILIES:
                groups.setdefault(tuple(lists[family]), []).append(family)
            for dtypes, families in groups.items():
                rule: dict[str, Any] = {"rule": "dtypes", "params": [p.name],
                                        "dtypes": list(dtypes)}
                result.add(rule if len(groups) == 1 else {**rule, "socs": families})
        bounds = rank_bounds(p.dims) if tensor else None
        if bounds:
            result.add({"rule": "rank", "params": [p.name], "min": bounds[0], "max": bounds[1]})
        for rule in relations(p, names):
            result.add(rule)
        if NULLABLE.search(p.description + " " + p.usage) or "Optional" in p.name:
            result.nullable.append(p.name)
    return result


# ---- corrections and output -----------------------------------------------------------------


def matches(rule: dict[str, Any], pattern: dict[str, Any]) -> bool:
    return all(rule.get(k) == v for k, v in pattern.items())


def read_corrections(folder: Path) -> dict[str, list[dict[str, Any]]]:
    """Every file's corrections, by operator (an operator in two files is an error)."""
    found: dict[str, list[dict[str, Any]]] = {}
    for path in sorted(folder.glob("*.json")):
        for operator, edits in json.loads(path.read_text(encoding="utf-8"))["operators"].items():
            if operator in found:
                raise ValueError(f"{path.name}: {operator} is corrected in another file too")
            found[operator] = edits
    return found


def apply_corrections(operator: str, rules: OperatorRules, corrections: dict[str, Any]) -> None:
    """The corrections of one operator, in order: ``drop`` (the rules matching a pattern),
    ``add`` (a rule, at the end or ``at`` a position), ``nullable`` / ``required``
    (parameters); each with a note."""
    for edit in corrections.get(operator, []):
        if "note" not in edit:
            raise ValueError(f"{CORRECTIONS.name}: {operator}: every correction needs a note: "
                             f"{edit}")
        if "drop" in edit:
            before = len(rules.rules)
            rules.rules = [r for r in rules.rules if not matches(r, edit["drop"])]
            if len(rules.rules) == before:
                raise ValueError(f"{CORRECTIONS.name}: {operator}: nothing to drop: {edit['drop']}")
        if "add" in edit:
            rule = {**edit["add"], "source": "correction", "note": edit["note"]}
            position = edit.get("at")
            if position is None:
                rules.rules.append(rule)
            else:
                rules.rules.insert(int(position), rule)
        if "nullable" in edit:
            rules.nullable = sorted(set(rules.nullable) | set(edit["nullable"]))
        if "required" in edit:
            rules.nullable = [n for n in rules.nullable if n not in edit["required"]]


def parse_repo(argument: str) -> tuple[str, Path, str]:
    name, sep, rest = argument.partition("=")
    path, _, commit = rest.partition("@")
    if not sep or not Path(path).is_dir():
        raise argparse.ArgumentTypeError(f"--repo wants name=path[@commit], not {argument!r}")
    return name, Path(path), commit


# Rules relating a tensor to others, trivial when they all name the in-place tensor
RELATIONAL = frozenset({"same_shape", "same_dtype", "broadcast", "promote", "castable"})


def inplace_pairs() -> dict[str, str]:
    """The in-place forms the emulator computes through their out-of-place operator's kernel
    (aclnn_py.emulator._kernels.inplace.INPLACE_OF)."""
    from aclnn_py.emulator._kernels.inplace import INPLACE_OF

    return dict(INPLACE_OF)


def derive_inplace(operators: dict[str, Any], table: dict[str, Any],
                   corrections: dict[str, Any]) -> None:
    """An in-place form's rules are its out-of-place operator's (CANN's aclnnInplaceXxx runs
    the checks of aclnnXxx with its tensor as both input and output: ops-math math/cos/op_api/
    aclnn_cos.cpp aclnnInplaceCosGetWorkspaceSize and the like; both are one doc page), the
    first tensor and out renamed to the in-place tensor, the other parameters by position;
    a relation of the in-place tensor with itself is left out. Unless the form has corrections
    of its own, this replaces what its doc page's table gave it."""
    for name, base in inplace_pairs().items():
        if name in corrections or base not in operators or name not in table:
            continue
        base_params = [n for _, n in table[base]["parameters"]]
        params = [n for _, n in table[name]["parameters"]]
        others = [p for p in base_params if p not in (base_params[0], "out")]
        mapping = {base_params[0]: params[0], "out": params[0], **dict(zip(others, params[1:]))}
        rules = []
        for rule in operators[base]["rules"]:
            if any(p not in mapping for p in rule["params"]) or \
                    rule.get("target", base_params[0]) not in mapping:
                continue
            mapped = {**rule, "params": [mapping[p] for p in rule["params"]]}
            if "target" in rule:
                mapped["target"] = mapping[rule["target"]]
            named = set(mapped["params"]) | ({mapped["target"]} if "target" in mapped else set())
            if rule["rule"] in RELATIONAL and len(named) == 1:
                continue
            if mapped not in rules:
                rules.append(mapped)
        record: dict[str, Any] = {"doc": operators[base]["doc"]}
        nullable = sorted({mapping[n] for n in operators[base].get("nullable", ())
                           if n in mapping})
        if nullable:
            record["nullable"] = nullable
        record["rules"] = rules
        operators[name] = record


def build(repositories: list[tuple[str, Path, str]], computed: list[str]) -> dict[str, Any]:
    table = json.loads(TABLE.read_text(encoding="utf-8"))["operators"]
    corrections = read_corrections(CORRECTIONS)
    roots = {name: path for name, path, _ in repositories}
    operators: dict[str, Any] = {}
    for operator in sorted(computed):
        entry = table.get(operator)
        if not entry or entry["repository"] not in roots:
            continue
        doc = entry.get("doc")
        text = (roots[entry["repository"]] / doc).read_text(encoding="utf-8") if doc else ""
        rules = operator_rules(operator, doc or "", text, {n: t for t, n in entry["parameters"]})
        parameter_names = {n for _, n in entry["parameters"]}
        rules.rules = [r for r in rules.rules
                       if set(r["params"]) <= parameter_names
                       and r.get("target", next(iter(parameter_names), "")) in parameter_names]
        rules.nullable = [n for n in rules.nullable if n in parameter_names]
        apply_corrections(operator, rules, corrections)
        if rules.rules or rules.nullable:
            record: dict[str, Any] = {"doc": rules.doc}
            if rules.nullable:
                record["nullable"] = sorted(set(rules.nullable))
            record["rules"] = rules.rules
            operators[operator] = record
    derive_inplace(operators, table, corrections)
    unknown = set(corrections) - set(operators)
    if unknown:
        raise ValueError(f"{CORRECTIONS.name}: corrections for operators not written: "
                         f"{sorted(unknown)}")
    return {"generated_by": GENERATED_BY,
            "sources": {name: commit or "unknown" for name, _, commit in repositories},
            "corrections": CORRECTIONS.relative_to(ROOT).as_posix() + "/",
            "operators": operators}


def dump(data: dict[str, Any]) -> str:
    """One operator per line group, one rule per line: diffs stay readable."""
    lines = ["{", f' "generated_by": {json.dumps(data["generated_by"])},',
             f' "sources": {json.dumps(data["sources"], sort_keys=True)},',
             f' "corrections": {json.dumps(data["corrections"])},', ' "operators": {']
    names = list(data["operators"])
    for i, name in enumerate(names):
        entry = data["operators"][name]
        head = {k: v for k, v in entry.items() if k != "rules"}
        head_text = json.dumps(head, ensure_ascii=False, sort_keys=True)[1:-1]
        lines.append(f'  {json.dumps(name)}: {{{head_text}, "rules": [')
        rules = [f"   {json.dumps(rule, ensure_ascii=False)}" for rule in entry["rules"]]
        lines.append(",\n".join(rules))
        lines.append("  ]}" + ("," if i < len(names) - 1 else ""))
    lines.append(" }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", action="append", type=parse_repo, required=True)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the file is not what would be written")
    options = parser.parse_args(argv)
    import aclnn_py.emulator

    text = dump(build(options.repo, list(aclnn_py.emulator.kernels())))
    if options.check:
        current = options.out.read_text(encoding="utf-8") if options.out.exists() else ""
        if current != text:
            print(f"{options.out} is not current: run tools/cann_rules.py", file=sys.stderr)
            return 1
        return 0
    options.out.write_text(text, encoding="utf-8")
    print(f"wrote {options.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
