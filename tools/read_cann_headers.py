"""Read every operator of every ``op_api/aclnn_*.h`` header under the given folders (CANN's
operator repositories, e.g. checkouts of ops-nn, ops-math, ops-transformer, ops-cv) the way
``aclnn_py.call`` does, and report what is read, what is refused (with the reason) and what
fails otherwise, which should never happen.

    python tools/read_cann_headers.py /path/to/ops-nn /path/to/ops-math ...

Exits 1 when any operator fails with anything but a ``HeaderError``.
"""

from __future__ import annotations

import sys
import traceback
from pathlib import Path

from _checkouts import parse_folders

from aclnn_py.ops import headers as _headers


def headers(folders: list[Path]) -> list[Path]:
    """The ``aclnn_*.h`` files in an ``op_api`` folder (at any depth) under ``folders``."""
    found = set()
    for folder in folders:
        found.update(path for path in folder.rglob("aclnn_*.h")
                     if "op_api" in path.relative_to(folder).parts[:-1] and path.is_file())
    return sorted(found)


def main(argv: list[str] | None = None) -> int:
    args = parse_folders(argv, __doc__, "folders", "--quiet", "print only the figures")
    paths = headers(args.folders)
    operators = read = 0
    refused: list[str] = []
    failed: list[str] = []
    for path in paths:
        text = path.read_text("utf-8", errors="replace")
        try:
            names = _headers.operator_names(text)
        except Exception:  # noqa: BLE001 - every failure is reported
            failed.append(f"{path}: operator_names: {traceback.format_exc()}")
            continue
        for name in names:
            operators += 1
            try:
                _headers.operator(text, name, path)
            except _headers.HeaderError as error:
                refused.append(f"{name}: {error}")
            except Exception:  # noqa: BLE001
                failed.append(f"{path}: {name}: {traceback.format_exc()}")
            else:
                read += 1
    if not args.quiet:
        for title, entries in (("refused", refused), ("other exceptions", failed)):
            if entries:
                print(f"{title}:")
                print("\n".join(f"  {entry}" for entry in entries))
    print(f"headers {len(paths)}, operators {operators}, prototypes read {read}, "
          f"refused {len(refused)}, other exceptions {len(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
