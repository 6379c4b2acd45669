"""The emulator's phase-1 rules of each computed operator (``data/phase1_rules.json``).

``tools/cann_rules.py`` writes them from CANN's operator docs, with the corrections CANN's own
unit tests call for; the emulator's build compiles them into its phase 1 (one checker for every
computed operator, ``emulator/src/ops_rules.c``). Here they are read for what the Python side
says of an operator: whether the table states its dtypes (then a kernel's own dtype list is not
consulted) and, for ``signature()``, what each parameter accepts.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

RULES_PATH = Path(__file__).resolve().parent.parent / "data" / "phase1_rules.json"

_loaded: dict[str, Any] | None = None
_lock = threading.Lock()


def phase1_rules() -> dict[str, Any]:
    """Every operator's entry (``doc``, ``nullable``, ``rules``), by name; read on first use."""
    global _loaded
    if _loaded is None:
        with _lock:
            if _loaded is None:
                text = RULES_PATH.read_text(encoding="utf-8") if RULES_PATH.exists() else "{}"
                _loaded = json.loads(text).get("operators", {})
    return _loaded


def states_dtypes(operator: str) -> bool:
    """Whether the table states the dtypes ``operator`` accepts (then the emulator's phase 1
    checks them, before any kernel is asked)."""
    entry = phase1_rules().get(operator)
    if not entry:
        return False
    return any(rule["rule"] == "dtypes" for rule in entry["rules"])


def may_be_null(operator: str) -> frozenset[str]:
    """The parameters of ``operator`` its doc (or CANN's source, in a correction) lets be NULL,
    such as aclnnConvolution's bias (无bias场景，可传入nullptr): ``call`` takes None for them."""
    entry = phase1_rules().get(operator) or {}
    return frozenset(entry.get("nullable", ()))


def soc_family(soc: str) -> str:
    """The family key of the table's ``socs`` for the SoC named ``soc`` (``Ascend910B3`` is
    ``910b``), as the emulator's rule checker maps it (emulator/src/ops_rules.c ops_soc)."""
    for prefix, family in (("Ascend910B", "910b"), ("Ascend910_93", "910_93"),
                           ("Ascend950", "950"), ("Ascend910_95", "950"),
                           ("Ascend310P", "310p"), ("Ascend310B", "310b"), ("Ascend910", "910")):
        if soc.startswith(prefix):
            return family
    return ""


def accepted_dtypes(operator: str, soc: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(parameter, CANN dtype names) of each parameter whose dtypes the phase-1 table states
    for ``soc``, in the table's order: the first rule that applies to the SoC."""
    family = soc_family(soc)
    found: dict[str, tuple[str, ...]] = {}
    for rule in phase1_rules().get(operator, {}).get("rules", ()):
        if rule.get("rule") != "dtypes" or (rule.get("socs") and family not in rule["socs"]):
            continue
        for name in rule.get("params", ()):
            found.setdefault(name, tuple(rule["dtypes"]))
    return tuple(found.items())
