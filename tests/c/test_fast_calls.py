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


@pytest.mark.parametrize("name", host.FAST_CALLS)
def test_each_function_mirrors_the_host_librarys(name):
    host.host()
    ours = _fast_calls.ffi.typeof(getattr(_fast_calls.lib, name))
    theirs = abi_ffi.typeof(getattr(host.host(), name))
    assert len(ours.args) == len(theirs.args), name
    for index, (mine, real) in enumerate(zip(ours.args, theirs.args)):
        assert mine.kind == real.kind, (name, index, mine.cname, real.cname)
        if real.kind == "primitive":
            assert mine.cname == real.cname, (name, index)
        elif real.item.kind == "primitive":  # int64_t *, int32_t *, void *const *
            assert mine.item.cname == real.item.cname, (name, index)
    assert ours.result.cname == theirs.result.cname, name


def test_the_per_call_paths_get_the_compiled_functions():
    for getter in (host.relaunch_fast_function, host.relaunch_fast_wait_function,
                   host.relaunch_run_function, host.repeat_new_function,
                   host.repeat_again_function, host.staged_call_function,
                   host.stream_synchronize_fast_function, host.stream_launching_function,
                   host.stream_sync_point_function):
        function = getter()
        assert function is getattr(_fast_calls.lib, function.__name__), getter.__name__


def test_the_module_exports_only_its_init_function():
    elftools = pytest.importorskip("elftools.elf.elffile",
                                   reason="pyelftools is not installed: pip install pyelftools")
    path = Path(_fast_calls.__file__)
    with path.open("rb") as handle:
        symbols = elftools.ELFFile(handle).get_section_by_name(".dynsym")
        defined = {symbol.name for symbol in symbols.iter_symbols()
                   if symbol["st_shndx"] != "SHN_UNDEF" and symbol.name}
    assert defined == {"PyInit__fast_calls"}, sorted(defined)
