"""The emulator's build and its single sources: the operators and the repeatable-executor API
of ``aclnn_py/data/emulator_ops.json`` are what the trees export, what the fault table, the
curated operators and the Python layer use; ``python emulator/build.py OUTDIR`` builds the
same trees as the install."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, run_c_client

import aclnn_py
from aclnn_py._c import loader as _loader
from aclnn_py._c import lowlevel as _lowlevel
from aclnn_py.ops.specs import SPECS

DATA = json.loads((ROOT / "aclnn_py" / "data" / "emulator_ops.json").read_text(encoding="utf-8"))
OPERATORS = {entry["name"]: entry for entry in DATA["operators"]}
REPEATABLE = tuple(DATA["repeatable_executor_api"])

pytestmark = pytest.mark.emulator_only
needs_nm = pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm (binutils)")


def load_build():
    spec = importlib.util.spec_from_file_location("emulator_build_under_test",
                                                  ROOT / "emulator" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


build = load_build()


def exported(path: Path) -> set[str]:
    listing = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


def symbols(names) -> set[str]:
    return {f"aclnn{name}{phase}" for name in names for phase in ("GetWorkspaceSize", "")}


def test_the_data_file_is_what_the_build_reads():
    assert [op.name for op in build.OPERATORS] == list(OPERATORS)
    assert len(OPERATORS) == len(DATA["operators"])
    assert build.REPEATABLE_EXECUTOR_API == REPEATABLE
    assert {op.repository for op in build.OPERATORS} == {"nn", "math"}
    for op in build.OPERATORS:
        assert op.header in OPERATORS, op
        source = (ROOT / "emulator" / "src" / op.source).read_text(encoding="utf-8")
        assert f"const ops_desc {op.descriptor} = {{" in source, op


def test_headers_declare_both_phases_of_every_operator():
    prototypes = build.operator_prototypes()
    for name in OPERATORS:
        first, second = prototypes[name]
        assert f"aclnn{name}GetWorkspaceSize(" in first and f"aclnn{name}(" in second


@pytest.mark.slow
@needs_nm
@pytest.mark.parametrize("layout", list(build.LAYOUTS))
def test_each_operator_library_exports_exactly_its_repositories_operators(layout):
    """The C operators of the data file and the table's others (the generic path), each
    in the library of its repository, with that repository's helper functions."""
    lib64 = Path(aclnn_py.emulator.home(layout)) / "lib64"
    generic = build.generic_operators()
    every = set()
    for library, repositories in build.LAYOUTS[layout].operators.items():
        names = [name for name, entry in OPERATORS.items()
                 if entry["repository"] in repositories]
        names += [op.name[len("aclnn"):] for op in generic if op.repository in repositories]
        helpers = {f for r in repositories for f in build.HELPER_FUNCTIONS.get(r, ())}
        ops = {s for s in exported(lib64 / library) if s.startswith("aclnn")}
        assert ops == symbols(names) | helpers, library
        every |= ops - helpers
    table = json.loads(build.OPERATOR_TABLE.read_text(encoding="utf-8"))["operators"]
    assert every == symbols(OPERATORS) | symbols(name[len("aclnn"):] for name in table)


def test_the_fault_table_names_both_phases_of_every_operator():
    operators = {api for api in aclnn_py.emulator.fault_apis() if api.startswith("aclnn")}
    assert operators - {"aclnnInit", "aclnnFinalize"} == symbols(OPERATORS)


def test_the_python_side_reads_the_same_lists():
    assert _lowlevel.REPEATABLE_API == REPEATABLE
    assert build.LAYOUTS["8.0.RC2"].hidden["meta"] == _lowlevel.REPEATABLE_API
    assert {spec.cann[len("aclnn"):] for spec in SPECS.values()} <= set(OPERATORS)
    assert tuple(build.LAYOUTS) == aclnn_py.emulator.LAYOUTS
    assert build.SONAME_PREFIX == _loader.EMULATOR_SONAME_PREFIX


def test_operator_headers_follow_the_shared_header():
    for layout in build.LAYOUTS:
        include = Path(aclnn_py.emulator.home(layout)) / "include" / "aclnnop"
        if build.LAYOUTS[layout].headers_in_level2:
            include = include / "level2"
        expected = {build.header_name(entry.get("header", name)) for name, entry in
                    OPERATORS.items()} | {op.header for op in build.generic_operators()}
        expected.add("aclnn_util.h")  # ACLNN_API, which every operator header includes
        expected |= set(build.HELPER_DECLARATIONS)  # aclnn_trans_quant_param.h: helpers only
        assert {p.name for p in include.glob("aclnn_*.h")} == expected
        for op in build.generic_operators():
            text = (include / op.header).read_text(encoding="utf-8")
            assert op.phase1 in text and op.phase2 in text, op.name
        for name, entry in OPERATORS.items():
            text = (include / build.header_name(entry.get("header", name))).read_text(
                encoding="utf-8")
            assert f"aclnn{name}GetWorkspaceSize(" in text and "{{" not in text


CLIENT = """
#include "acl/acl.h"
#include "aclnn/aclnn_base.h"
#include "%s"
int main(void)
{
    aclTensor *t = NULL;
    aclnnStatus (*phase1)(const aclTensor *, aclTensor *, uint64_t *, aclOpExecutor **) =
        aclnnGeluGetWorkspaceSize;
    return (ACL_FLOAT4_E2M1 == 40 && ACLNN_ERR_PARAM_INVALID == 161002 && phase1 && !t) ? 0 : 1;
}
"""


@pytest.mark.slow
@pytest.mark.parametrize("language", ["c", "c++"])
@pytest.mark.parametrize("layout", build.LAYOUTS)
def test_a_program_builds_against_the_tree_headers_alone(tmp_path, layout, language):
    """include/acl/, include/aclnn/ and the operator headers (with aclnn_util.h beside them)
    are where CANN installs them, and compile as C and C++ with nothing else on the path."""
    compiler = shutil.which("cc" if language == "c" else "c++")
    if compiler is None:
        pytest.skip(f"needs a {language} compiler")
    home = Path(aclnn_py.emulator.home(layout))
    header = "aclnnop/level2/aclnn_gelu.h" if build.LAYOUTS[layout].headers_in_level2 \
        else "aclnnop/aclnn_gelu.h"
    source = tmp_path / ("client.c" if language == "c" else "client.cpp")
    source.write_text(CLIENT % header)
    done = subprocess.run([compiler, "-c", "-Wall", "-Werror", f"-I{home / 'include'}",
                           str(source), "-o", str(tmp_path / "client.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_template_value_left_out_is_named():
    with pytest.raises(ValueError, match=r"templates/set_env.sh: no value for version"):
        build.fill("set_env.sh")


@pytest.mark.slow
def test_the_build_runs_on_its_own(tmp_path):
    out = tmp_path / "trees"
    done = subprocess.run([sys.executable, str(ROOT / "emulator" / "build.py")],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "usage:" in done.stderr
    done = subprocess.run([sys.executable, str(ROOT / "emulator" / "build.py"), str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    for layout in build.LAYOUTS:
        installed = Path(aclnn_py.emulator.home(layout))
        files = {p.relative_to(installed) for p in installed.rglob("*")}
        assert {p.relative_to(out / layout) for p in (out / layout).rglob("*")} == files
        for name in files:
            if name.suffix != ".so" and (installed / name).is_file():
                assert (out / layout / name).read_bytes() == (installed / name).read_bytes()


def test_the_build_and_the_binding_give_each_c_type_the_same_argument_kind():
    from aclnn_py._c import emulator_api

    build = load_build()
    for c_type, kind in build.ARGUMENT_KINDS.items():
        assert emulator_api.ARGUMENT_KINDS[c_type] == kind, c_type


ASCENDCL_CLIENT = r"""
#include <dlfcn.h>
#include <stdio.h>
#include "acl/acl.h"
int main(void)
{
    uint32_t count = 0;
    int32_t device = -1;
    void *pointer = NULL;
    aclError counted = aclrtGetDeviceCount(&count); /* before aclInit, as torch_npu does */
    printf("count %d %u\n", counted, count);
    printf("init %d\n", aclInit(NULL));
    printf("set %d\n", aclrtSetDevice(1));
    aclError allocated = aclrtMalloc(&pointer, 64, ACL_MEM_MALLOC_HUGE_FIRST);
    printf("malloc %d %d\n", allocated, pointer != NULL);
    /* libacl_rt.so, as libnnopbase.so and the operator libraries load it: the same runtime */
    void *runtime = dlopen("libacl_rt.so", RTLD_NOW | RTLD_LOCAL);
    aclError (*get_device)(int32_t *) =
        runtime ? (aclError (*)(int32_t *))dlsym(runtime, "aclrtGetDevice") : NULL;
    aclError got = get_device ? get_device(&device) : -1;
    printf("libacl_rt.so sees device %d %d\n", got, device);
    printf("free %d\n", aclrtFree(pointer));
    printf("finalize %d\n", aclFinalize());
    return 0;
}
"""


def test_a_program_linked_with_ascendcl_runs_on_the_8_5_tree(tmp_path):
    """CANN 8.5 keeps libascendcl.so beside libacl_rt.so: ``-lascendcl`` links against the 8.5
    tree and runs on the one runtime that libacl_rt.so is."""
    home = Path(aclnn_py.emulator.home("8.5"))
    lines = run_c_client(tmp_path, ASCENDCL_CLIENT, home, ["-lascendcl", "-ldl"],
                         ACLNN_EMU_DEVICE_COUNT="2")
    assert lines == ["count 0 2", "init 0", "set 0", "malloc 0 1",
                                        "libacl_rt.so sees device 0 1", "free 0", "finalize 0"]


@pytest.mark.parametrize("layout", build.LAYOUTS)
def test_every_tree_has_cann_s_runtime_and_compiler_folders(layout):
    home = Path(aclnn_py.emulator.home(layout))
    version = build.LAYOUTS[layout].version
    for name in ("runtime", "compiler"):
        assert (home / name / "version.info").read_text() == f"Version={version}\n"


def test_making_a_filter_names_what_it_cannot_do(tmp_path):
    text = tmp_path / "libtext.so"
    text.write_bytes(b"INPUT(libacl_rt.so)\n")
    with pytest.raises(ValueError, match="not a 64-bit little-endian ELF file"):
        build.make_filter(text, "libaclnn_py_emu_acl.so")
    copy = tmp_path / "libnnopbase.so"
    shutil.copy2(Path(aclnn_py.emulator.home("8.5")) / "lib64" / "libnnopbase.so", copy)
    with pytest.raises(ValueError, match="no DT_NEEDED entry for libnothing.so"):
        build.make_filter(copy, "libnothing.so")
    build.make_filter(copy, "libaclnn_py_emu_acl.so")  # the runtime, which it needs
    if shutil.which("readelf"):
        listing = subprocess.run(["readelf", "-d", str(copy)], capture_output=True, text=True,
                                 check=True).stdout
        assert "(FILTER)" in listing and "[libaclnn_py_emu_acl.so]" in listing
