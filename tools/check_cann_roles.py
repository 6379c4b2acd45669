"""Run aclnn_py's operator catalog over local checkouts of CANN's operator repositories and
print how the roles it gives agree with the operators' docs (the role table).

    python tools/check_cann_roles.py /path/to/ops-nn /path/to/ops-math ... [--verbose]

Every ``op_api/aclnn_*.h`` of the checkouts is put in one ``include/aclnnop/`` folder, as a
CANN install ships them (an ``experimental/`` copy gives way to the main one), and read
through ``aclnn_py.operators()`` and ``aclnn_py.signature()``, the way a call reads them.
Printed: operators and parameters read, operators refused (each with why), parameters
whose role differs from the table (each listed), operators with no output, and how many
operators CANN's conventions alone (without the table) would get wrong. No library of
those repositories is needed: signatures are read from the headers alone.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _checkouts import parse_folders


def collect_headers(checkouts: Sequence[Path], folder: Path) -> int:
    """Copy every operator header of ``checkouts`` into ``folder``; the count copied."""
    chosen: dict[str, Path] = {}
    for checkout in checkouts:
        for header in sorted(checkout.glob("**/op_api/aclnn_*.h")):
            previous = chosen.get(header.name)
            if previous is None or ("experimental" in previous.parts
                                    and "experimental" not in header.parts):
                chosen[header.name] = header
    for name, header in chosen.items():
        shutil.copyfile(header, folder / name)
    return len(chosen)


def _role_mismatches(name: str, signature: Any, entry: dict[str, Any]
                     ) -> list[tuple[str, str, str, str]]:
    """Each tensor of ``signature`` whose role is not the one the table ``entry`` gives:
    (operator, parameter, role, the table's role)."""
    found = []
    for p in signature.parameters:
        if not p.is_tensor:
            continue
        expected = ("inout" if p.name in entry["inout"] else
                    "output" if p.name in entry["outputs"] else "input")
        if p.role != expected:
            found.append((name, p.name, p.role, expected))
    return found


def _conventions_wrong(signature: Any, entry: dict[str, Any]) -> str:
    """How CANN's naming conventions alone differ from the table ``entry`` on
    ``signature`` ("" when they agree)."""
    from aclnn_py.ops import headers as _headers
    from aclnn_py.ops import roles as _roles

    rules = _roles.rule_roles([_headers.CParameter(p.c_type, p.name)
                               for p in signature.parameters])
    if (set(rules.outputs), set(rules.inout)) == (set(entry["outputs"]), set(entry["inout"])):
        return ""
    return (f"conventions: outputs {sorted(rules.outputs)}, inout {sorted(rules.inout)}; "
            f"doc: outputs {sorted(entry['outputs'])}, inout {sorted(entry['inout'])}")


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_folders(argv, __doc__, "checkouts", "--verbose", "list every disagreement")

    import aclnn_py
    from aclnn_py.ops import catalog as _catalog
    from aclnn_py.ops import headers as _headers
    from aclnn_py.ops import roles as _roles

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "aclnnop"
        folder.mkdir()
        copied = collect_headers(args.checkouts, folder)
        _catalog.forget()
        _catalog.builtin_header_dirs = lambda root: [folder]  # type: ignore[assignment]
        names = [n for n in aclnn_py.operators() if _catalog._all_sources()[n].package is None]
        refused: list[tuple[str, str]] = []
        mismatches: list[tuple[str, str, str, str]] = []
        no_output: list[tuple[str, str]] = []
        not_in_table: list[str] = []
        rules_wrong: list[tuple[str, str]] = []
        parameters = tensors = from_table = by_conventions = 0
        for name in names:
            try:
                signature = aclnn_py.signature(name)
            except (_headers.HeaderError, ValueError) as error:
                refused.append((name, str(error)))
                continue
            parameters += len(signature.parameters)
            tensors += sum(p.is_tensor for p in signature.parameters)
            entry = _roles.table_entry(name)
            if signature.roles_source == "table":
                from_table += 1
            elif entry is None:
                not_in_table.append(name)
            elif entry["basis"] == "rules" and signature.roles_source == "rule":
                by_conventions += 1  # the doc gives no roles: the table says so
            else:
                mismatches.append((name, "*", signature.roles_source,
                                   "table entry does not apply (parameter names differ)"))
            if entry is not None:
                mismatches += _role_mismatches(name, signature, entry)
                wrong = _conventions_wrong(signature, entry)
                if wrong:
                    rules_wrong.append((name, wrong))
            if not any(p.role in ("output", "inout") for p in signature.parameters):
                no_output.append((name, "writes nothing, as its doc says"
                                  if signature.returns_nothing else "roles not known"))
        _catalog.forget()

    table = _roles.table()
    print(f"headers: {copied} (from {', '.join(str(c) for c in args.checkouts)})")
    print("role table: " + ", ".join(f"{r} {v['commit'][:7]}"
                                     for r, v in sorted(table["repositories"].items())))
    print(f"operators: {len(names)} declared, {len(names) - len(refused)} read, "
          f"{len(refused)} refused; {parameters} parameters ({tensors} tensors)")
    print(f"roles from the table: {from_table}; by CANN's conventions where the doc gives "
          f"none: {by_conventions}; not in the table: {len(not_in_table)}")
    print(f"mismatches with the docs: {len(mismatches)}")
    for name, parameter, got, expected in mismatches:
        print(f"  {name} {parameter}: {got}, doc: {expected}")
    print(f"operators with no output: {len(no_output)}")
    for name, why in no_output:
        print(f"  {name}: {why}")
    print(f"refused: {len(refused)}")
    for name, why in refused:
        print(f"  {name}: {why}")
    if not_in_table:
        print(f"not in the table: {', '.join(not_in_table)}")
    nothing = sum("conventions: outputs [], inout [];" in why for _, why in rules_wrong)
    print(f"CANN's conventions alone would get {len(rules_wrong)} of "
          f"{len(names) - len(refused)} operators wrong ({nothing} of them with no output "
          "at all, which a call refuses)")
    if args.verbose:
        for name, why in rules_wrong:
            print(f"  {name}: {why}")
    unknown = [n for n, why in no_output if why == "roles not known"]
    return 1 if mismatches or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
