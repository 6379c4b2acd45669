"""A record of every Python kernel's launch, for checking a program's numbers afterwards.

With ``ACLNN_EMU_TRACE`` set to a folder, each phase-2 run of a Python kernel writes one
``.npz`` file there: the operator's tensors before the kernel ran (``before/<name>``), the
tensors it may write after (``after/<name>``; a tensor list's members are ``<name>[<i>]``),
and, under ``meta``, a JSON text with the operator's name and its other arguments (scalars,
integers, arrays of numbers, strings). bfloat16 tensors are kept as float32 (``meta`` names
their dtype). The files are numbered in launch order per process, so a program's calls can
be replayed against a reference (``tools/run_cann_samples.py`` does so with PyTorch).
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ...ops.dtypes import is_bfloat16

_counter = itertools.count()
_lock = threading.Lock()


def folder() -> Path | None:
    """The folder ``ACLNN_EMU_TRACE`` names, or None when launches are not recorded."""
    value = os.environ.get("ACLNN_EMU_TRACE", "")
    return Path(value) if value else None


def _arrays(values: dict[str, Any], names: list[str]) -> dict[str, np.ndarray]:
    """Copies of the tensors among ``values[name]`` for ``names``, by key."""
    found: dict[str, np.ndarray] = {}
    for name in names:
        value = values[name]
        members = value if isinstance(value, list) else [value]
        for index, member in enumerate(members):
            if isinstance(member, np.ndarray):
                key = f"{name}[{index}]" if isinstance(value, list) else name
                found[key] = _recorded(member)
    return found


def _recorded(array: np.ndarray) -> np.ndarray:
    """A copy of ``array`` as a reference reads it: a FRACTAL_NZ tensor as its matrix."""
    from .matmul import recorded

    return recorded(array)


def snapshot(values: dict[str, Any]) -> dict[str, np.ndarray]:
    """Copies of every tensor of a call, taken before its kernel runs."""
    return _arrays(values, list(values))


def _plain(value: Any) -> Any:
    """``value`` as JSON can hold it (numbers, strings, lists of them), or its repr."""
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)) and not any(isinstance(v, np.ndarray) for v in value):
        return [_plain(v) for v in value]
    return repr(value)


def record(operator: str, before: dict[str, np.ndarray], values: dict[str, Any],
           written: list[str], where: Path) -> Path:
    """Write one launch of ``operator`` into ``where``: ``before`` (from :func:`snapshot`),
    the tensors of ``written`` as the kernel left them, and the other arguments."""
    after = _arrays(values, written)
    arrays: dict[str, np.ndarray] = {}
    dtypes: dict[str, str] = {}
    for prefix, group in (("before", before), ("after", after)):
        for key, array in group.items():
            dtypes[f"{prefix}/{key}"] = "bfloat16" if is_bfloat16(array.dtype) else array.dtype.name
            arrays[f"{prefix}/{key}"] = array.astype(np.float32) if is_bfloat16(array.dtype) \
                else array
    other = {name: _plain(value) for name, value in values.items()
             if not isinstance(value, np.ndarray)
             and not (isinstance(value, list) and value and isinstance(value[0], np.ndarray))}
    meta = json.dumps({"operator": operator, "arguments": other, "dtypes": dtypes,
                       "order": list(values), "written": written})
    with _lock:
        number = next(_counter)
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{os.getpid()}-{number:06d}-{operator}.npz"
    contents: dict[str, Any] = {"meta": np.array(meta), **arrays}
    np.savez(path, **contents)
    return path
