"""The compiled module of the host library's per-call entry points (``native/fast_calls.c``):
the per-call paths call it, each of its functions mirrors the host library's function of the
same name, it is bound in the order its header declares, and it exports nothing that could
stand in for the host library's own symbols."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT

from aclnn_py._c import _fast_calls, host
from aclnn_py._c._ffi import ffi as abi_ffi

HEADER = ROOT / "native" / "fast_calls.h"


def _camel(snake: str) -> str:
    return "aclpy" + "".join(part.capitalize() for part in snake.split("_"))


def test_the_binding_order_is_the_headers():
    text = HEADER.read_text()
    parameters = re.search(r"void aclpyFastBind\((.*?)\);", text, re.S).group(1)
    names = [p.split("*")[-1].strip() for p in parameters.split(",")]
    assert tuple(_camel(name) for name in names) == host.FAST_CALLS


def _untyped(ctype) -> str:
    """``ctype``'s C name with the struct it points to, at any depth, written ``void``: how
    ``fast_calls.h`` declares what the host library's header types (``aclpyRelaunch *`` as
    ``void *``, ``void *const *`` as ``void **``)."""
    depth = 0
    while ctype.kind == "pointer":
        ctype, depth = ctype.item, depth + 1
    leaf = "void" if depth and ctype.kind in ("struct", "union") else ctype.cname
    return leaf + " *" * depth


@pytest.mark.parametrize("name", host.FAST_CALLS)
def test_each_function_mirrors_the_host_librarys(name):
    ours = _fast_calls.ffi.typeof(getattr(_fast_calls.lib, name))
    theirs = abi_ffi.typeof(getattr(host.host(), name))
    assert [_untyped(a) for a in ours.args] == [_untyped(a) for a in theirs.args], name
    assert ours.result.cname == theirs.result.cname, name


def test_the_comparison_sees_each_level_of_a_pointer():
    staged = abi_ffi.typeof(host.host().aclpyStagedCall)
    assert [_untyped(a) for a in staged.args] == [
        "void *", "void *", "void *", "void * *", "int32_t *"]
    assert _untyped(abi_ffi.typeof("int64_t * *")) != _untyped(abi_ffi.typeof("void * *"))


def test_the_per_call_paths_get_the_compiled_functions():
    for getter in (host.relaunch_fast_function, host.relaunch_fast_wait_function,
                   host.relaunch_run_function, host.repeat_new_function,
                   host.repeat_again_function, host.staged_call_function,
                   host.stream_synchronize_fast_function, host.stream_launching_function,
                   host.stream_sync_point_function):
        function = getter()
        assert function is getattr(_fast_calls.lib, function.__name__), getter.__name__
    assert host._collect_block is _fast_calls.lib.aclpyBlockCollect  # each new block's


def test_a_block_cell_goes_back_to_its_pool_through_the_compiled_destructor():
    import gc

    import aclnn_py

    aclnn_py.synchronize()
    before = aclnn_py.memory_info()["used_bytes"]
    array = aclnn_py.empty((1024,), "float32")
    assert aclnn_py.memory_info()["used_bytes"] >= before + 4096
    del array
    gc.collect()
    aclnn_py.synchronize()
    assert aclnn_py.memory_info()["used_bytes"] == before


def test_the_module_exports_none_of_the_host_librarys_names():
    elftools = pytest.importorskip("elftools.elf.elffile",
                                   reason="pyelftools is not installed: pip install pyelftools")
    path = Path(_fast_calls.__file__)
    with path.open("rb") as handle:
        symbols = elftools.ELFFile(handle).get_section_by_name(".dynsym")
        defined = {symbol.name for symbol in symbols.iter_symbols()
                   if symbol["st_shndx"] != "SHN_UNDEF" and symbol.name}
    # (a linker may add its own, such as _edata and _end)
    assert "PyInit__fast_calls" in defined
    assert not [name for name in defined if name.startswith("aclpy")], sorted(defined)
