"""``benchmarks/bench.py --emulated``: a case for every operator the emulator computes, each
builder reading the arrays bound for it (not a name bound again further down), and every case
running through ``aclnn_py.call`` except those ``call`` cannot describe."""

from __future__ import annotations

import ast
import importlib.util
import symtable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import aclnn_py

torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
pytestmark = pytest.mark.emulator_only

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench.py"
GROUPS = "_cases_"  # the names of bench's functions adding a group of case builders each

# Cases that cannot run through aclnn_py.call, with the reason phase 1 gives: call describes a
# tensor by its rank as torch_npu's op-plugin does (3-d NCL, 4-d NCHW, 5-d NCDHW, else ND), so
# a weight in FRACTAL_NZ (made by aclnnTransMatmulWeight) and an ND tensor of 3 to 5
# dimensions cannot be given; and an operator CANN implements on other SoC families only.
NOT_CALLABLE = {
    "aclnnMatmulWeightNz": "must be FRACTAL_NZ",
    "aclnnBatchMatMulWeightNz": "must be FRACTAL_NZ",
    "aclnnQuantMatmulWeightNz": "must have format FRACTAL_NZ",
    "aclnnExpSegsum": "it must be ND",
    "aclnnExpSegsumBackward": "it must be ND",
    "aclnnSquare": "not implemented on SoC",
}


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_for_cases", BENCH)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    return bench


def test_every_computed_operator_has_a_benchmark_case() -> None:
    bench = _bench()
    cases = bench._emulated_cases(torch)
    assert set(aclnn_py.emulator.kernels()) <= set(cases)
    assert set(cases) >= bench.EMULATED_GOAL and len(bench.EMULATED_GOAL) == 19


def _bound_more_than_once(function: ast.FunctionDef) -> dict[str, list[int]]:
    """The names ``function`` binds in its own scope, with the lines binding each."""
    lines: dict[str, list[int]] = {}

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.Lambda)):
                if isinstance(child, ast.FunctionDef):
                    lines.setdefault(child.name, []).append(child.lineno)
                continue  # a scope of its own
            if isinstance(child, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                lines.setdefault(child.id, []).append(child.lineno)
            visit(child)

    visit(function)
    return {name: found for name, found in lines.items() if len(found) > 1}


def _read_late(scope: symtable.SymbolTable) -> dict[str, set[int]]:
    """The names of ``scope`` that its nested builders read when they run (free variables
    resolving to ``scope``), with the first line of each builder reading them."""
    found: dict[str, set[int]] = {}

    def visit(table: symtable.SymbolTable, chain: list[symtable.SymbolTable]) -> None:
        for child in table.get_children():
            for name in child.get_frees():
                for owner in reversed(chain):
                    if name in owner.get_identifiers():
                        symbol = owner.lookup(name)
                        if (symbol.is_local() or symbol.is_parameter()) and not symbol.is_free():
                            if owner is scope:
                                found.setdefault(name, set()).add(child.get_lineno())
                            break
            visit(child, [*chain, child])

    visit(scope, [scope])
    return found


def test_no_builder_reads_a_name_bound_again_after_it() -> None:
    """A builder runs after the whole function adding it has: a name it reads late that the
    function binds twice gives it the last value, not the one bound above it (how aclnnAddr
    once got a 2-d index as its vector and aclnnNLLLoss2d another case's labels)."""
    source = BENCH.read_text()
    functions = {node.name: node for node in ast.parse(source).body
                 if isinstance(node, ast.FunctionDef) and node.name.startswith(GROUPS)}
    scopes = {table.get_name(): table
              for table in symtable.symtable(source, str(BENCH), "exec").get_children()
              if table.get_name() in functions}
    clashes: dict[str, Any] = {}
    seen = False
    for group, function in functions.items():
        rebound = _bound_more_than_once(function)
        late = _read_late(scopes[group])
        seen = seen or bool(late)
        clashes.update({f"{group}: {name}": (rebound[name], sorted(late[name])[:5])
                        for name in late if name in rebound})
    assert seen, "no builder reads a name of its function: the check sees nothing"
    assert clashes == {}


def _run(bench: ModuleType, name: str, case: Any) -> None:
    """One case: ``aclnn_py.call`` on device arrays with its ``out=``, then its reference
    (its device arrays go with this frame, whatever is raised)."""
    arguments = bench._device_arguments(aclnn_py, case.arguments)
    out = bench._device_out(aclnn_py, case.out)
    aclnn_py.call(name, **arguments, **({} if out is None else {"out": out}))
    aclnn_py.synchronize()
    case.reference()


@pytest.mark.slow
def test_every_case_runs_through_call_but_those_call_cannot_describe() -> None:
    """Each case once through ``aclnn_py.call`` and its PyTorch reference once (about 1 M
    elements each)."""
    bench = _bench()
    builders = bench._emulated_cases(torch)
    failed: dict[str, str] = {}
    for name in aclnn_py.emulator.kernels():
        try:
            _run(bench, name, builders[name]())
        except Exception as error:  # noqa: BLE001 - every failure is reported below
            failed[name] = f"{type(error).__name__}: {error}"
    unexpected = {name: why for name, why in failed.items()
                  if name not in NOT_CALLABLE or NOT_CALLABLE[name] not in why}
    assert unexpected == {}
    assert sorted(failed) == sorted(NOT_CALLABLE)
