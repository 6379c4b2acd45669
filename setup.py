"""Build steps that pyproject.toml cannot express.

1. The cffi module ``aclnn_py/_ffi.py``, compiled out-of-line in ABI mode from
   the C declarations in ``headers/`` (so importing aclnn_py parses no C).
2. The host emulator: ``emulator/src/*.c`` compiled once and linked into one
   CANN-shaped tree per CANN release, ``aclnn_py/_emulator/<layout>/`` (see LAYOUTS).
3. aclnn_py's own host library ``native/host.c`` (device blocks and handles owned
   in C): ``aclnn_py/_native/libaclnn_py_host.so``.

They land in the build directory for a wheel and in the source tree for an
editable install.

Build variables: ``CC`` (the C compiler, default ``cc``), ``ACLNN_EMU_CFLAGS``
(optimisation flags of the emulator, default ``-O2``) and ``ACLNN_PY_BUILD_EMULATOR``
(``0`` builds no emulator, for hosts with CANN; the host library is always built).
The wheel holds no CPython extension, so it is tagged ``py3-none-<platform>``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import SetupError

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1 keeps it in the wheel package
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
HEADERS = ["acl_rt.h", "acl_meta.h", "aclnn_ops.h", "aclnn_emu.h", "aclnn_py_host.h"]
EMULATOR_SRC = HERE / "emulator" / "src"
RUNTIME_SOURCES = sorted(path.name for path in EMULATOR_SRC.glob("rt_*.c"))  # the runtime library
NATIVE_SRC = HERE / "native"

# Every emulator library has a SONAME of its own, never a CANN library's: a library already
# loaded satisfies any later DT_NEEDED or dlopen of the same soname (hicann/runtime builds
# CANN's libraries without RPATH, so everything goes by soname and LD_LIBRARY_PATH), and the
# emulator must never stand in for a real libascendcl.so that another library asks for.
SONAME_PREFIX = "libaclnn_py_emu_"

# Operators: (CANN name, source, the CANN operator repository that ships it from 8.5 on:
# hicann/ops-nn builds libopapi_nn.so (the losses), hicann/ops-math libopapi_math.so (aclnnAdd)).
OPERATORS = [
    ("MseLossBackward", "op_mse_loss_backward.c", "nn"),
    ("MseLoss", "op_mse_loss.c", "nn"),
    ("L1Loss", "op_l1_loss.c", "nn"),
    ("L1LossBackward", "op_l1_loss_backward.c", "nn"),
    ("SmoothL1Loss", "op_smooth_l1_loss.c", "nn"),
    ("SmoothL1LossBackward", "op_smooth_l1_loss_backward.c", "nn"),
    ("Add", "op_add.c", "math"),
    ("InplaceAdd", "op_add.c", "math"),
]
# Operators CANN declares in another operator's header
# (hicann/ops-math math/add/op_api/aclnn_add.h).
SHARED_HEADER = {"InplaceAdd": "Add"}

# The repeatable-executor API, documented from CANN 8.0.RC3 (in 8.0.RC2 the first two were
# "reserved" and rebinding was aclUpdateTensorAddr: hiascend 80RC2alpha002 aclcppdevg_03_2180
# and 80RC3alpha003 operatorlist_0041).
REPEATABLE_EXECUTOR_API = ("aclSetAclOpExecutorRepeatable", "aclSetInputTensorAddr",
                           "aclSetOutputTensorAddr", "aclDestroyAclOpExecutor")
# Documented in the 8.5 and 9.x runtime API references only (hiascend canncommercial/850
# aclcppdevg_03_1974; the id mappings aclcppdevg_03_2057 to _2060, and hicann/runtime acl_rt.h
# from its first tag, v8.5.0); nothing says they existed before, so the older trees do not
# export them. GNU ld accepts a name here that no object defines.
FROM_8_5_RUNTIME_API = ("aclFinalizeReference", "aclrtGetLogicDevIdByUserDevId",
                        "aclrtGetUserDevIdByLogicDevId", "aclrtGetLogicDevIdByPhyDevId",
                        "aclrtGetPhyDevIdByLogicDevId")


@dataclass(frozen=True)
class Layout:
    """One CANN release as the emulator builds it (file names from the facts file, section 1.1)."""

    version: str                       # written to the tree's version files
    runtime: str                       # acl/aclrt library: libascendcl.so (<= 8.3), libacl_rt.so
    operators: dict[str, tuple[str, ...]]  # operator library -> repositories it holds
    hidden: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role -> not exported
    async_copy_pinned_aligned: bool = False  # aclrtMemcpyAsync rules before 8.5 (era.h)
    headers_in_level2: bool = False  # include/aclnnop/level2/aclnn_*.h (older toolkits)


LAYOUTS = {
    "8.0.RC2": Layout("8.0.RC2", "libascendcl.so", {"libopapi.so": ("nn", "math")},
                      {"runtime": FROM_8_5_RUNTIME_API, "meta": REPEATABLE_EXECUTOR_API}, True,
                      headers_in_level2=True),
    "8.3": Layout("8.3.RC1", "libascendcl.so", {"libopapi.so": ("nn", "math")},
                  {"runtime": FROM_8_5_RUNTIME_API}, True),
    # 8.5: one operator library per repository, each linking libopapi.so (hicann/ops-nn
    # cmake/symbol.cmake at v8.5.0), which here holds the shared operator core and no operator.
    "8.5": Layout("8.5.0", "libacl_rt.so",
                  {"libopapi_nn.so": ("nn",), "libopapi_math.so": ("math",)}),
}

def write_ffi_module(path: Path) -> None:
    import cffi

    ffibuilder = cffi.FFI()
    ffibuilder.cdef("\n".join((HERE / "headers" / name).read_text() for name in HEADERS))
    ffibuilder.set_source("aclnn_py._ffi", None)
    path.parent.mkdir(parents=True, exist_ok=True)
    ffibuilder.emit_python_code(str(path))


WARNINGS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror=implicit-function-declaration"]
COMMON_CFLAGS = ["-std=gnu11", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread", *WARNINGS]


ENV_BUILD_EMULATOR = "ACLNN_PY_BUILD_EMULATOR"


def compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def check_compiler() -> None:
    """SetupError naming CC and ACLNN_PY_BUILD_EMULATOR when there is no C compiler."""
    command = compiler()
    if command and shutil.which(command[0]):
        return
    given = f"CC={os.environ['CC']!r} names no executable" if "CC" in os.environ else \
        "no `cc` is on PATH and CC is not set"
    raise SetupError(
        f"aclnn_py needs a C compiler to build its host library (native/host.c) and its CANN "
        f"emulator (emulator/src), and {given}. Install one (e.g. gcc) or set CC to a C "
        f"compiler command. On a host with CANN, {ENV_BUILD_EMULATOR}=0 skips the emulator; "
        "the host library still needs the compiler.")


def emulator_wanted() -> bool:
    value = os.environ.get(ENV_BUILD_EMULATOR, "1").strip()
    if value not in ("0", "1"):
        raise SetupError(f"{ENV_BUILD_EMULATOR} must be 0 or 1, got {value!r}")
    return value == "1"


def run(command: list[str]) -> None:
    print(" ".join(command), file=sys.stderr)
    subprocess.check_call(command)


def build_native(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    run([*compiler(), *COMMON_CFLAGS, "-O2", str(NATIVE_SRC / "host.c"),
         "-o", str(directory / "libaclnn_py_host.so"), "-Wl,--no-undefined"])


def soname(name: str) -> str:
    """The emulator's own soname for a library of CANN's file name ``name``."""
    stem = {"libascendcl.so": "acl", "libacl_rt.so": "acl"}.get(name, name[3:-3])
    return f"{SONAME_PREFIX}{stem}.so"


def compile_objects(objects: Path) -> None:
    """Every source shared by the trees, compiled once (in parallel)."""
    cflags = shlex.split(os.environ.get("ACLNN_EMU_CFLAGS", "-O2"))
    base = [*compiler(), "-c", "-std=gnu11", "-fPIC", "-pthread", *WARNINGS, *cflags,
            f"-I{EMULATOR_SRC}"]
    sources = [*RUNTIME_SOURCES, "meta.c", "ops_registry.c", "driver.c",
               *dict.fromkeys(source for _, source, _ in OPERATORS), *CUSTOM_OPERATOR_SOURCES]
    commands = [[*base, "-fvisibility=hidden", str(EMULATOR_SRC / source),
                 "-o", str(objects / (Path(source).stem + ".o"))] for source in sources]
    # The operator core is a library of its own from 8.5 (libopapi.so under libopapi_nn.so
    # and libopapi_math.so), so its functions have default visibility; the older trees'
    # export lists hide them again.
    commands.append([*base, "-fno-semantic-interposition", str(EMULATOR_SRC / "ops_core.c"),
                     "-o", str(objects / "ops_core.o")])
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for future in [pool.submit(run, command) for command in commands]:
            future.result()


def link(out: Path, objects: list[Path], needs: list[Path], hidden: list[str],
         scratch: Path, *, search: list[Path]) -> None:
    """Link one library with its own soname, no RUNPATH, and ``hidden`` kept out of its
    dynamic symbol table by a linker version script."""
    command = [*compiler(), "-shared", "-pthread", *(str(o) for o in objects), "-o", str(out),
               f"-Wl,-soname,{soname(out.name)}", *(str(n) for n in needs),
               f"-Wl,-rpath-link,{':'.join(str(d) for d in search)}",
               "-Wl,--no-undefined", "-lm"]
    if hidden:
        script = scratch / f"{out.parent.parent.name}-{out.name}.map"
        script.write_text("{\n  local:\n" + "".join(f"    {name};\n" for name in hidden) + "};\n")
        command.append(f"-Wl,--version-script,{script}")
    run(command)
    link_name = out.parent / soname(out.name)
    if link_name.name != out.name:  # the soname beside the file, for DT_NEEDED lookups
        link_name.unlink(missing_ok=True)
        link_name.symlink_to(out.name)


def header_name(operator: str) -> str:
    """CANN's header file of ``aclnn<operator>``: MseLossBackward -> aclnn_mse_loss_backward.h."""
    return "aclnn_" + re.sub(r"(?<!^)(?=[A-Z])", "_", operator).lower() + ".h"


def operator_prototypes() -> dict[str, list[str]]:
    """The two prototypes of each operator in headers/aclnn_ops.h (the one place they are
    written), by operator name, each as its declaration text."""
    text = re.sub(r"/\*.*?\*/", "", (HERE / "headers" / "aclnn_ops.h").read_text(), flags=re.S)
    prototypes: dict[str, list[str]] = {}
    for declaration in text.split(";"):
        match = re.search(r"aclnnStatus\s+aclnn(\w+?)(GetWorkspaceSize)?\s*\(", declaration)
        if match:
            prototypes.setdefault(match.group(1), []).append(" ".join(declaration.split()) + ";")
    return prototypes


# An operator header in the style of CANN's built-in ones (hicann/ops-nn op_api/aclnn_*.h):
# include guard, includes, extern "C", ACLNN_API, doxygen comments (CANN's are in Chinese).
BUILTIN_HEADER = """\
/**
 * aclnn{name} of the aclnn_py host emulator's CANN {version} tree, declared as CANN's
 * operator headers declare it.
 */
#ifndef OP_API_INC_{guard}_H_
#define OP_API_INC_{guard}_H_

#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"

#ifdef __cplusplus
extern "C" {{
#endif
{declarations}
#ifdef __cplusplus
}}
#endif

#endif  // OP_API_INC_{guard}_H_
"""

# The custom operator package: a header as CANN's code generator writes them for custom
# operators (outputs declared `const aclTensor *` too, visibility attribute, one parameter
# per line), the operator description (ops-info JSON) and the package priority file.
CUSTOM_VENDOR = "customize"
CUSTOM_OPERATOR_SOURCES = ["custom/op_add_custom.c", "custom/op_weighted_sum_custom.c"]
CUSTOM_HEADER = """\

/*
 * aclnnAddCustom of the aclnn_py host emulator's custom operator package.
*/

#ifndef ACLNN_ADD_CUSTOM_H_
#define ACLNN_ADD_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnAddCustomGetWorkspaceSize
 * parameters :
 * x : required
 * y : required
 * z : required
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAddCustomGetWorkspaceSize(
    const aclTensor *x,
    const aclTensor *y,
    const aclTensor *z,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnAddCustom
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnAddCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
"""

# The header of aclnnWeightedSumCustom, in the same style: a tensor list in and out (dynamic input
# and output), a float array and a bool array attribute.
WEIGHTED_SUM_CUSTOM_HEADER = """\

/*
 * aclnnWeightedSumCustom of the aclnn_py host emulator's custom operator package.
*/

#ifndef ACLNN_WEIGHTED_SUM_CUSTOM_H_
#define ACLNN_WEIGHTED_SUM_CUSTOM_H_

#include "aclnn/acl_meta.h"

#ifdef __cplusplus
extern "C" {
#endif

/* funtion: aclnnWeightedSumCustomGetWorkspaceSize
 * parameters :
 * x : dynamic
 * weights : required
 * mask : required
 * y : required
 * terms : dynamic
 * workspaceSize : size of workspace(output).
 * executor : executor context(output).
 */
__attribute__((visibility("default")))
aclnnStatus aclnnWeightedSumCustomGetWorkspaceSize(
    const aclTensorList *x,
    const aclFloatArray *weights,
    const aclBoolArray *mask,
    const aclTensor *y,
    const aclTensorList *terms,
    uint64_t *workspaceSize,
    aclOpExecutor **executor);

/* funtion: aclnnWeightedSumCustom
 * parameters :
 * workspace : workspace memory addr(input).
 * workspaceSize : size of workspace(input).
 * executor : executor context(input).
 * stream : acl stream.
 */
__attribute__((visibility("default")))
aclnnStatus aclnnWeightedSumCustom(
    void *workspace,
    uint64_t workspaceSize,
    aclOpExecutor *executor,
    aclrtStream stream);

#ifdef __cplusplus
}
#endif

#endif
"""
CUSTOM_HEADERS = {"aclnn_add_custom.h": CUSTOM_HEADER,
                  "aclnn_weighted_sum_custom.h": WEIGHTED_SUM_CUSTOM_HEADER}


OPERATOR_DECLARATIONS = """
/**
 * @brief aclnn{name}的第一段接口：校验参数，计算workspace大小，创建执行器。
 * @domain aclnn_ops_train
 */
ACLNN_API {phase1}

/**
 * @brief aclnn{name}的第二段接口：在stream上执行计算。
 * @param [in] workspace: 在Device侧申请的workspace内存地址。
 * @param [in] stream: acl stream流。
 * @return aclnnStatus: 返回状态码。
 */
ACLNN_API {phase2}
"""


def custom_ops_info() -> str:
    def tensor(name: str, kind: str = "required") -> dict[str, str]:
        return {"dtype": "float16,float,bfloat16", "format": "ND,ND,ND", "name": name,
                "paramType": kind, "shape": "all"}

    return json.dumps({
        "AddCustom": {
            "input0": tensor("x"), "input1": tensor("y"), "output0": tensor("z"),
            "opFile": {"value": "add_custom"}, "opInterface": {"value": "add_custom"}},
        "WeightedSumCustom": {
            "attr": {"list": "weights,mask"},
            "attr_weights": {"paramType": "required", "type": "listFloat", "value": "all"},
            "attr_mask": {"paramType": "required", "type": "listBool", "value": "all"},
            "input0": tensor("x", "dynamic"), "output0": tensor("y"),
            "output1": tensor("terms", "dynamic"),
            "opFile": {"value": "weighted_sum_custom"},
            "opInterface": {"value": "weighted_sum_custom"}}}, indent=4)


def write_headers(root: Path, layout: Layout) -> None:
    """The operators' headers, under include/aclnnop/ (and level2/ before 8.3, where
    CANN's toolkits kept them)."""
    folder = root / "include" / "aclnnop"
    if layout.headers_in_level2:
        folder = folder / "level2"
    folder.mkdir(parents=True)
    prototypes = operator_prototypes()
    headers: dict[str, list[str]] = {}
    for name, _, _ in OPERATORS:
        headers.setdefault(SHARED_HEADER.get(name, name), []).append(name)
    for header, names in headers.items():
        declarations = "\n".join(OPERATOR_DECLARATIONS.format(
            name=name, phase1=prototypes[name][0], phase2=prototypes[name][1]) for name in names)
        guard = header_name(header)[:-2].upper()
        (folder / header_name(header)).write_text(BUILTIN_HEADER.format(
            name=header, version=layout.version, guard=guard, declarations=declarations))


def operator_symbols(repositories: tuple[str, ...]) -> list[str]:
    return [symbol for name, _, repository in OPERATORS if repository in repositories
            for symbol in (f"aclnn{name}GetWorkspaceSize", f"aclnn{name}")]


SET_ENV = """\
# Environment of the aclnn_py host emulator's CANN {version} tree, set as CANN's set_env.sh
# sets it (hicann/runtime scripts/package/runtime/set_env.sh): the install root, operator
# packages, and the library folders the dynamic linker needs (lib64 and the driver's).
# Source it from bash or zsh: . {{tree}}/set_env.sh
_aclnn_emu_root="$(cd "$(dirname "${{BASH_SOURCE[0]:-$0}}")" && pwd -P)"
export ASCEND_TOOLKIT_HOME="$_aclnn_emu_root"
export ASCEND_HOME_PATH="$_aclnn_emu_root"
export ASCEND_OPP_PATH="$_aclnn_emu_root/opp"
export ASCEND_AICPU_PATH="$_aclnn_emu_root"
export LD_LIBRARY_PATH="$_aclnn_emu_root/lib64:$_aclnn_emu_root/driver/lib64:\
$_aclnn_emu_root/driver/lib64/common:$_aclnn_emu_root/driver/lib64/driver\
${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}}"
unset _aclnn_emu_root
"""


def build_tree(root: Path, layout: Layout, objects: Path, scratch: Path) -> None:
    """One CANN-shaped tree: libraries, set_env.sh, version files, opp/."""
    lib64 = root / "lib64"
    driver = root / "driver" / "lib64" / "driver"
    for directory in (lib64, driver, root / "opp"):
        directory.mkdir(parents=True)
    o = {path.stem: path for path in objects.glob("*.o")}
    search = [lib64, driver]

    def library(directory: Path, name: str, parts: list[Path], needs: list[Path],
                hidden: tuple[str, ...] | list[str] = ()) -> Path:
        out = directory / name
        link(out, parts, needs, list(hidden), scratch, search=search)
        return out

    hal = library(driver, "libascend_hal.so", [o["driver"]], [])
    era = scratch / f"era-{layout.version}.o"
    run([*compiler(), "-c", "-std=gnu11", "-fPIC", "-fvisibility=hidden", *WARNINGS, "-O2",
         f"-I{EMULATOR_SRC}", f'-DEMU_ERA_CANN_VERSION="{layout.version}"',
         f"-DEMU_ERA_ASYNC_COPY_PINNED_ALIGNED={int(layout.async_copy_pinned_aligned)}",
         str(EMULATOR_SRC / "era.c"), "-o", str(era)])
    support = library(lib64, "libruntime.so", [era], [hal])
    runtime = library(lib64, layout.runtime, [o[name[:-2]] for name in RUNTIME_SOURCES], [support],
                      layout.hidden.get("runtime", ()))
    meta = library(lib64, "libnnopbase.so", [o["meta"]], [runtime], layout.hidden.get("meta", ()))
    every = tuple(repository for repositories in layout.operators.values()
                  for repository in repositories)
    op_objects = [o[source[:-2]] for source in dict.fromkeys(s for _, s, _ in OPERATORS)]
    if list(layout.operators) == ["libopapi.so"]:  # one aggregate operator library
        library(lib64, "libopapi.so", [o["ops_core"], o["ops_registry"], *op_objects],
                [meta, runtime], ["ops_*"])
    else:
        core = library(lib64, "libopapi.so", [o["ops_core"]], [meta, runtime])
        for name, repositories in layout.operators.items():
            sources = [o[source[:-2]] for source in dict.fromkeys(
                s for _, s, repository in OPERATORS if repository in repositories)]
            others = tuple(r for r in every if r not in repositories)
            library(lib64, name, [o["ops_registry"], *sources], [core, meta, runtime],
                    operator_symbols(others))

    write_headers(root, layout)
    vendor = root / "opp" / "vendors" / CUSTOM_VENDOR
    for folder in ("op_api/include", "op_api/lib", "op_impl/ai_core/tbe/config/ascend910b"):
        (vendor / folder).mkdir(parents=True)
    library(vendor / "op_api" / "lib", "libcust_opapi.so",
            [o["ops_core"], *(o[Path(source).stem] for source in CUSTOM_OPERATOR_SOURCES)],
            [meta, runtime], ["ops_*"])
    for header, text in CUSTOM_HEADERS.items():
        (vendor / "op_api" / "include" / header).write_text(text)
    (vendor / "op_impl" / "ai_core" / "tbe" / "config" / "ascend910b" /
     "aic-ascend910b-ops-info.json").write_text(custom_ops_info())
    (root / "opp" / "vendors" / "config.ini").write_text(f"load_priority={CUSTOM_VENDOR}\n")

    (root / "set_env.sh").write_text(SET_ENV.format(version=layout.version))
    (root / "opp" / "README").write_text(
        "Operator package folder of the aclnn_py host emulator. CANN reads ASCEND_OPP_PATH\n"
        "from this folder's real counterpart. vendors/ holds one custom operator package.\n")
    # Version files, as aclnn_py's loader and torch_npu read them: <arch>-linux/
    # ascend_toolkit_install.info (key version=), and from 8.5 share/info/runtime/version.info
    # (hicann/runtime runtime.xml installs it).
    arch = root / f"{platform.machine()}-linux"
    arch.mkdir()
    (arch / "ascend_toolkit_install.info").write_text(f"version={layout.version}\n")
    if layout.runtime == "libacl_rt.so":
        info = root / "share" / "info" / "runtime"
        info.mkdir(parents=True)
        (info / "version.info").write_text(f"Version={layout.version}\n")


def build_emulator(home: Path) -> None:
    """Every tree of LAYOUTS under ``home`` (replaced whole: it holds only build output)."""
    if home.exists():
        shutil.rmtree(home)
    with tempfile.TemporaryDirectory(prefix="aclnn_py_emu_") as scratch_dir:
        scratch = Path(scratch_dir)
        objects = scratch / "objects"
        objects.mkdir()
        compile_objects(objects)
        for name, layout in LAYOUTS.items():
            build_tree(home / name, layout, objects, scratch)


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        root = HERE if getattr(self, "editable_mode", False) else Path(self.build_lib)
        write_ffi_module(root / "aclnn_py" / "_ffi.py")


class BuildExt(build_ext):
    def run(self) -> None:
        super().run()
        editable = getattr(self, "editable_mode", False) or self.inplace
        root = HERE if editable else Path(self.build_lib)
        wanted = emulator_wanted()
        check_compiler()
        if wanted:
            build_emulator(root / "aclnn_py" / "_emulator")
        else:  # no tree at all: the loader then says the emulator was left out
            shutil.rmtree(root / "aclnn_py" / "_emulator", ignore_errors=True)
            print(f"{ENV_BUILD_EMULATOR}=0: the host emulator is not built", file=sys.stderr)
        build_native(root / "aclnn_py" / "_native")


class BinaryDistribution(Distribution):
    """The wheel carries compiled libraries, so it is platform specific."""

    def has_ext_modules(self) -> bool:
        return True


class BdistWheel(bdist_wheel):
    """Tag the wheel ``py3-none-<platform>``: its libraries are plain C, loaded through cffi
    in ABI mode, so any Python 3 on the platform can use it."""

    def get_tag(self) -> tuple[str, str, str]:
        return ("py3", "none", super().get_tag()[2])


setup(cmdclass={"build_py": BuildPy, "build_ext": BuildExt, "bdist_wheel": BdistWheel},
      distclass=BinaryDistribution)
