#!/usr/bin/env python3
"""Whether the quick scan of headers for operator names gives exactly what the full
cleaning gives, on every ``aclnn_*.h`` (and ``op_api/aclnn_*/*.h``) below the folders named
(CANN's operator sources, an install).

Usage::

    python benchmarks/check_scan.py /path/to/ops-nn /path/to/ops-math ...

Prints the headers and operators compared, how many headers the quick scan left to the full
cleaning, and each header where the two differ; exits 1 if any does.
"""

from __future__ import annotations

import sys
from fnmatch import fnmatch
from pathlib import Path

from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers


def main(folders: list[str]) -> int:
    headers = sorted(p for folder in folders for p in Path(folder).rglob("*.h") if p.is_file()
                     and (p.name.startswith("aclnn_") or fnmatch(str(p), "*op_api/aclnn_*.h")))
    full_cleaning = _headers.operator_names
    cleaned = 0

    def counting(text: str) -> list[str]:
        nonlocal cleaned
        cleaned += 1
        return full_cleaning(text)

    differences = operators = 0
    for header in headers:
        text = _catalog._header_text(header)
        expected = full_cleaning(text)
        _headers.operator_names = counting
        try:
            found = _headers.quick_operator_names(text)
        finally:
            _headers.operator_names = full_cleaning
        operators += len(expected)
        if found != expected:
            differences += 1
            print(f"{header}: quick {found}, full {expected}")
    print(f"{len(headers)} headers, {operators} operators, {cleaned} left to the full "
          f"cleaning, {differences} differences")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
