"""``python -m aclnn_py``: what aclnn_py runs on, why, and whether it works.

:func:`report` gathers versions, the backend requested and the one chosen (with the
reason and every CANN root searched), the libraries loaded, CANN's version, the SoC,
the visible devices (their logical and physical ids, their memory), the environment
variables that steer CANN and aclnn_py, and the result of a tiny ``aclnnMseLossBackward``
call checked against numpy.
:func:`main` prints it as text or (``--json``) one JSON object and exits non-zero when
the requested backend cannot work. ``python -m aclnn_py docs [PAGE]`` prints where the
documentation's pages are (an installed package carries them in ``aclnn_py/docs/``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from . import _caches, emulator
from ._c import loader
from ._functions import mse_loss_backward
from .errors import LibraryNotFoundError
from .ops import catalog
from .ops.dtypes import soc_supports_bfloat16
from .runtime.info import runtime_info, versions
from .runtime.memory import memory_info
from .runtime.process import VISIBLE_DEVICES

ENVIRONMENT_PREFIXES = ("ASCEND_", "ACLNN_")
SELF_TEST_OPERATOR = "aclnnMseLossBackward"


def environment() -> dict[str, str]:
    """``LD_LIBRARY_PATH`` and every ``ASCEND_*`` and ``ACLNN_*`` variable that is set."""
    return {name: value for name, value in sorted(os.environ.items())
            if name == "LD_LIBRARY_PATH" or name.startswith(ENVIRONMENT_PREFIXES)}


def searched_roots() -> list[dict[str, Any]]:
    """Each CANN root in search order: where it came from and what it holds."""
    roots = []
    for source, root in loader.candidate_roots():
        found = loader.find_libraries(root, []) if root.is_absolute() else None
        roots.append({"source": source, "root": str(root), "absolute": root.is_absolute(),
                      "exists": root.is_dir(), "complete": found is not None,
                      "libraries": {family: str(path) for family, path in (found or {}).items()}})
    return roots


def self_test() -> dict[str, Any]:
    """``mse_loss_backward`` of a 2x3 float32 problem, compared with numpy's answer."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full(3, 1.5, dtype=np.float32)
    expected = (2.0 * (x.astype(np.float64) - y) / x.size).astype(np.float32)
    started = time.perf_counter()
    try:
        result = mse_loss_backward(1.0, x, y, "mean")
    except Exception as error:  # the doctor reports any failure, whatever its kind
        return {"operator": SELF_TEST_OPERATOR, "ok": False,
                "error": f"{type(error).__name__}: {error}"}
    seconds = time.perf_counter() - started
    deviation = float(np.max(np.abs(result.astype(np.float64) - expected)))
    ok = result.shape == expected.shape and bool(np.allclose(result, expected, rtol=1e-6,
                                                             atol=0))
    return {"operator": SELF_TEST_OPERATOR, "ok": ok, "inputs": "float32 (2, 3) and (3,)",
            "result": result.tolist(), "expected": expected.tolist(), "max_abs_error": deviation,
            "seconds": round(seconds, 6)}


def report(backend: str | None = None) -> dict[str, Any]:
    """Everything :func:`main` prints, as a JSON-ready dict.

    ``backend`` (``"auto"``, ``"cann"`` or ``"emulator"``) sets ``ACLNN_PY_BACKEND``
    first; it must come before aclnn_py loads anything in this process. ``ok`` is True
    when the backend loaded and the self-test gave the right numbers.
    """
    loader.request_backend(backend)
    named = loader.named_location()
    result: dict[str, Any] = {
        "ok": False,
        "versions": versions(),
        "requested_backend": os.environ.get(loader.ENV_BACKEND, "auto"),
        "backend": None,
        "reason": None,
        "emulator": None,
        "emulator_built": loader.EMULATOR_TREES.is_dir(),
        "cann_expected": loader.cann_expected(),
        "named_location": None if named is None else {"variable": named[0], "value": named[1]},
        "searched_roots": searched_roots(),
        "root": None,
        "libraries": {},
        "dependencies": [],
        "cann_version": None,
        "soc_name": None,
        "bfloat16": None,
        "device_count": None,
        "visible_devices": None,
        "devices": [],
        "operators": None,
        "custom_packages": [],
        "environment": environment(),
        "warnings": [],
        "self_test": None,
        "error": None,
        "tried": [],
    }
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            info = runtime_info()
        result["warnings"] = [str(warning.message) for warning in caught]
        result.update({key: info[key] for key in ("backend", "root", "libraries", "dependencies",
                                                  "cann_version", "soc_name", "device_count",
                                                  "visible_devices")})
        result["reason"] = loader.load().installation.reason
        result["emulator"] = emulator.loaded()
        result["bfloat16"] = soc_supports_bfloat16(info["soc_name"])
        for ids in info["devices"]:
            memory = memory_info(ids["device"])
            result["devices"].append({**ids, "total_bytes": memory["device_total_bytes"],
                                      "free_bytes": memory["device_free_bytes"]})
    except Exception as error:  # reported, with the exit status saying it failed
        result["error"] = f"{type(error).__name__}: {error}"
        result["traceback"] = traceback.format_exc()
        if isinstance(error, LibraryNotFoundError):
            result["tried"] = list(error.tried)
        return result
    result.update(operator_headers())
    result["self_test"] = self_test()
    result["ok"] = bool(result["self_test"]["ok"])
    result["caches"] = _caches.sizes()
    return result


def operator_headers() -> dict[str, Any]:
    """How many operators ``aclnn_py.call`` finds, and the custom operator packages searched
    (in CANN's order, with whether each exists)."""
    try:
        count: int | str = len(catalog.operators())
    except Exception as error:  # reported, not fatal: the curated operators do not need it
        count = f"{type(error).__name__}: {error}"
    root = loader.load().installation.root
    try:
        packages = catalog.custom_packages(root)
    except PermissionError:  # an untrusted vendors/config.ini: the count above says why
        packages = []
    return {"operators": count,
            "custom_packages": [{"path": str(path), "exists": path.is_dir()}
                                for path in packages]}


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB"


def _backend_lines(found: dict[str, Any], variable: str) -> list[str]:
    """The report's backend part: requested and chosen, and the CANN roots searched."""
    given = f"{variable}={os.environ[variable]}" if variable in os.environ else f"{variable} unset"
    lines = ["", f"requested backend    {found['requested_backend']} ({given})"]
    if found["backend"] is not None:
        kind = " (aclnn_py's emulator tree)" if found["emulator"] else ""
        lines.append(f"backend              {found['backend']}{kind}")
        lines.append(f"  why                {found['reason']}")
    lines.append(f"emulator built       {'yes' if found['emulator_built'] else 'no'}")
    if found["cann_expected"]:
        lines.append(f"CANN expected        {'; '.join(found['cann_expected'])}")
    named = found["named_location"]
    if named is not None:
        lines.append(f"CANN location named  ${named['variable']}={named['value']} (the only "
                     "root searched; it must load)")
    lines.append("CANN roots searched, in order:")
    for root in found["searched_roots"]:
        state = ("not an absolute path, never loaded" if not root["absolute"] else
                 "complete" if root["complete"] else
                 "no complete library set" if root["exists"] else "does not exist")
        lines.append(f"  {root['source']:<22} {root['root']}: {state}")
    return lines


def _loaded_lines(found: dict[str, Any]) -> list[str]:
    """The report's part on a loaded backend: libraries, version, SoC, devices, operators."""
    lines = ["", f"install root         {found['root']}", "libraries loaded:"]
    lines += [f"  {family:<18} {path}" for family, path in found["libraries"].items()]
    lines.append("dependencies loaded first: " + (", ".join(found["dependencies"]) or "none"))
    lines.append(f"CANN version         {found['cann_version'] or 'unknown'}")
    bf16 = "supported" if found["bfloat16"] else "not supported"
    lines.append(f"SoC                  {found['soc_name'] or 'unknown'} (bfloat16 {bf16})")
    visible = found["visible_devices"]
    rule = (f"{VISIBLE_DEVICES} unset" if visible is None else
            f"{VISIBLE_DEVICES}={visible}")
    lines.append(f"devices              {found['device_count']} visible ({rule})")
    for device in found["devices"]:
        ids = ("ids not reported by this CANN (< 8.5)" if device["logical_id"] is None else
               f"logical id {device['logical_id']}, physical id {device['physical_id']}")
        lines.append(f"  device {device['device']:<11} {ids}; {_gib(device['total_bytes'])} "
                     f"total, {_gib(device['free_bytes'])} free")
    lines.append(f"operators            {found['operators']} found in headers "
                 "(aclnn_py.operators())")
    for package in found["custom_packages"]:
        state = "" if package["exists"] else " (does not exist)"
        lines.append(f"  custom package     {package['path']}{state}")
    return lines


def _self_test_lines(test: dict[str, Any] | None) -> list[str]:
    """The report's self-test line (none when it did not run)."""
    if test is None:
        return []
    if test["ok"]:
        return ["", f"self-test            {test['operator']} on {test['inputs']}: ok "
                f"(max abs error {test['max_abs_error']:g}, {test['seconds']:.4f} s)"]
    if "error" in test:
        return ["", f"self-test            {test['operator']} failed: {test['error']}"]
    return ["", f"self-test            {test['operator']} gave wrong numbers: "
            f"{test['result']} instead of {test['expected']}"]


def format_report(found: dict[str, Any]) -> str:
    """The text form of :func:`report`."""
    lines = [f"aclnn_py {found['versions']['aclnn_py']} doctor", ""]
    for name, value in found["versions"].items():
        if name != "aclnn_py":
            lines.append(f"  {name:<18} {value}")
    variable = loader.ENV_BACKEND
    lines += _backend_lines(found, variable)
    if found["backend"] is not None:
        lines += _loaded_lines(found)
    lines += ["", "environment:"]
    variables = [f"  {name}={value}" for name, value in found["environment"].items()]
    lines += variables or ["  (none set)"]
    for warning in found["warnings"]:
        lines += ["", f"warning: {warning}"]
    if found["error"] is not None:
        lines += ["", f"error: {found['error']}"]
        if found["error"].startswith("LibraryNotFoundError") and \
                found["requested_backend"] != "emulator":
            lines.append(f"to run on the emulator instead, set {variable}=emulator (check it "
                         "with `python -m aclnn_py --backend emulator`)")
    lines += _self_test_lines(found["self_test"])
    if found.get("caches"):
        lines += ["", "caches (aclnn_py.empty_cache() empties them):"]
        for name, cache in found["caches"].items():
            lines.append(f"  {name:<26} {cache['size']} {cache['unit']}; bound: {cache['bound']}")
    lines += ["", "result: " + ("OK" if found["ok"] else "FAILED: the requested backend cannot "
                                "work here")]
    return "\n".join(lines)


def show_config(backend: str | None = None) -> None:
    """Print what ``python -m aclnn_py`` prints: the backend and why, libraries, CANN
    version, SoC, devices, environment and a tiny operator call (as ``cupy.show_config``)."""
    print(format_report(report(backend)))


def documentation() -> Path | None:
    """The folder of the documentation's pages: the installed package's ``aclnn_py/docs``
    (copied there at build time), else a source tree's ``docs``; None without either."""
    here = Path(__file__).resolve().parent
    for folder in (here / "docs", here.parent / "docs"):
        if (folder / "index.md").is_file():
            return folder
    return None


def show_documentation(page: str | None) -> int:
    """``python -m aclnn_py docs [PAGE]``: the pages' folder and their names, or one page's
    path (its name with or without ``.md``); 1 when there are none or no such page."""
    folder = documentation()
    if folder is None:
        print("aclnn_py's documentation pages are not installed here", file=sys.stderr)
        return 1
    pages = sorted(p.name for p in folder.glob("*.md"))
    if page is None:
        print(folder)
        print("\n".join(f"  {name}" for name in pages))
        return 0
    name = page if page.endswith(".md") else f"{page}.md"
    if name not in pages:
        print(f"no page {page!r} among {', '.join(pages)}", file=sys.stderr)
        return 1
    print(folder / name)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Print the report; 0 when the requested backend works, 1 when it cannot. With
    ``--conformance``, the report of :mod:`aclnn_py.conformance` instead."""
    parser = argparse.ArgumentParser(
        prog="python -m aclnn_py",
        description="Check what aclnn_py runs on here: backend and why, libraries, CANN "
                    "version, SoC, devices, environment, and a tiny operator call. "
                    "`python -m aclnn_py docs [PAGE]` prints where the documentation is.")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--backend", choices=loader.BACKENDS,
                        help="the backend to check (sets ACLNN_PY_BACKEND); default: as the "
                             "environment says")
    parser.add_argument("--conformance", action="store_true",
                        help="check that the installed CANN behaves as aclnn_py's emulator "
                             "assumes (operators against numpy, runtime behaviours); exit "
                             "status 1 when a check fails")
    parser.add_argument("--output", metavar="REPORT.json",
                        help="with --conformance: also write the JSON report there")
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["docs"]:
        if len(argv) > 2:
            parser.error("docs takes at most one page name")
        return show_documentation(argv[1] if len(argv) == 2 else None)
    arguments = parser.parse_args(argv)
    if arguments.output is not None and not arguments.conformance:
        parser.error("--output needs --conformance")
    if arguments.conformance:
        from . import conformance

        return conformance.main(arguments.output, as_json=arguments.json,
                                backend=arguments.backend)
    found = report(arguments.backend)
    if arguments.json:
        print(json.dumps(found, indent=2))
    else:
        print(format_report(found))
    return 0 if found["ok"] else 1
