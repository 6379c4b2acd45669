"""Build the host emulator: ``src/*.c`` compiled once and linked into one CANN-shaped tree per
CANN release (see LAYOUTS), with the operators' headers, a custom operator package, version
files and ``set_env.sh``.

The operators (and the CANN repository whose 8.5 library holds each) and the repeatable-executor
API come from ``aclnn_py/data/emulator_ops.json``, the text files of a tree from ``templates/``.
setup.py imports this module; ``python emulator/build.py OUTDIR`` builds the trees into OUTDIR
(replaced whole). Build variables: ``CC`` (the C compiler, default ``cc``), ``ACLNN_EMU_CFLAGS``
(optimisation flags of the emulator, default ``-O2``), ``ACLNN_EMU_LDFLAGS`` (added to every
link, e.g. ``-Wl,--undefined-version`` for lld) and ``ACLNN_EMU_ARCH`` (the machine the
libraries are for, as ``uname -m`` prints it, when cross-compiling; default this one's).
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import re
import shlex
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SRC = HERE / "src"
TEMPLATES = HERE / "templates"
DATA = ROOT / "aclnn_py" / "data" / "emulator_ops.json"
OPERATOR_PROTOTYPES = ROOT / "headers" / "aclnn_ops.h"
# CANN's public operators with their real prototypes and roles (tools/cann_facts.py writes it):
# each one the emulator has no C kernel for gets generated entry points over ops_generic.c.
OPERATOR_TABLE = ROOT / "aclnn_py" / "data" / "operators.json"

# Every emulator library has a SONAME of its own, never a CANN library's: a library already
# loaded satisfies any later DT_NEEDED or dlopen of the same soname (hicann/runtime builds
# CANN's libraries without RPATH, so everything goes by soname and LD_LIBRARY_PATH), and the
# emulator must never stand in for a real libascendcl.so that another library asks for.
SONAME_PREFIX = "libaclnn_py_emu_"


@dataclass(frozen=True)
class Operator:
    """One operator of the data file: aclnn<name>, defined in ``src/<source>``."""

    name: str
    source: str
    repository: str  # "nn" or "math", whose 8.5 operator library holds it
    header: str      # the operator whose header declares it (its own name if none other)

    @property
    def descriptor(self) -> str:
        """Its ops_desc in the C source: MseLossBackward -> ops_mse_loss_backward."""
        return "ops_" + snake_case(self.name)

    @property
    def symbols(self) -> tuple[str, str]:
        return f"aclnn{self.name}GetWorkspaceSize", f"aclnn{self.name}"


def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


DATA_FILE: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
OPERATORS = [Operator(entry["name"], entry["source"], entry["repository"],
                      entry.get("header", entry["name"]))
             for entry in DATA_FILE["operators"]]
REPEATABLE_EXECUTOR_API: tuple[str, ...] = tuple(DATA_FILE["repeatable_executor_api"])
# Documented in the 8.5 and 9.x runtime API references only (hiascend canncommercial/850
# aclcppdevg_03_1974; the id mappings aclcppdevg_03_2057 to _2060, and hicann/runtime acl_rt.h
# from its first tag, v8.5.0); nothing says they existed before, so the older trees do not
# export them. GNU ld accepts a name here that no object defines.
FROM_8_5_RUNTIME_API = ("aclFinalizeReference", "aclrtGetLogicDevIdByUserDevId",
                        "aclrtGetUserDevIdByLogicDevId", "aclrtGetLogicDevIdByPhyDevId",
                        "aclrtGetPhyDevIdByLogicDevId")


# Each computed operator's phase-1 rules (tools/cann_rules.py writes them from CANN's docs and
# the corrections its own unit tests call for): compiled into the generated entry points.
PHASE1_RULES = ROOT / "aclnn_py" / "data" / "phase1_rules.json"

# The C kind (aclemuArgKind, headers/aclnn_emu.h) of each parameter type of the table, const
# removed (aclnn_py._c.emulator_api.ARGUMENT_KINDS agrees: a test checks).
ARGUMENT_KINDS = {"aclTensor *": 1, "aclTensorList *": 2, "aclScalar *": 3, "aclIntArray *": 4,
                  "aclBoolArray *": 5, "aclFloatArray *": 6, "char *": 7, "int64_t": 8, "int": 8,
                  "int32_t": 8, "int8_t": 8, "uint64_t": 8, "aclDataType": 8, "bool": 9,
                  "double": 10, "float": 10, "aclScalarList *": 11}
# The table's repository -> the short name of its operator library (libopapi_<short>.so from
# 8.5: each repository's CMakeLists.txt sets PKG_NAME, cmake/variables.cmake OPAPI_NAME
# opapi_${PKG_NAME}).
REPOSITORY_NAMES = {"ops-nn": "nn", "ops-math": "math", "ops-transformer": "transformer",
                    "ops-cv": "cv"}


@dataclass(frozen=True)
class GenericOperator:
    """An operator of the table computed through the generic path (no C kernel)."""

    name: str                              # "aclnnSoftmax"
    repository: str                        # "nn", "math", "transformer" or "cv"
    header: str                            # its CANN header's file name
    parameters: tuple[tuple[str, str], ...]  # (C type, name) of phase 1 but its last two
    outputs: tuple[str, ...]
    inout: tuple[str, ...]
    # (C type, name) of what phase 2 takes besides the usual four, between the executor and
    # the stream (the table's "phase2": ops-cv's aclnnGaussianBlur takes phase 1's again).
    phase2_extra: tuple[tuple[str, str], ...] = ()

    def kind(self, c_type: str) -> int:
        bare = " ".join(c_type.replace("const", " ").split()).replace(" *", " *")
        return ARGUMENT_KINDS[bare]

    @property
    def phase1(self) -> str:
        tail = "uint64_t *workspaceSize, aclOpExecutor **executor"
        return f"aclnnStatus {self.name}GetWorkspaceSize({declared(self.parameters, tail)});"

    @property
    def phase2(self) -> str:
        head = "void *workspace, uint64_t workspaceSize, aclOpExecutor *executor"
        return (f"aclnnStatus {self.name}({head}, "
                f"{declared(self.phase2_extra, 'aclrtStream stream')});")


def declared(parameters: tuple[tuple[str, str], ...], tail: str) -> str:
    """C parameter declarations ``const aclTensor *x, int64_t n``, then ``tail``."""
    return ", ".join([*(f"{t} {n}" if not t.endswith("*") else f"{t}{n}"
                        for t, n in parameters), tail])


@functools.lru_cache(maxsize=1)
def generic_operators() -> list[GenericOperator]:
    """Every operator of the table but those of the data file (computed in C), by name."""
    table = json.loads(OPERATOR_TABLE.read_text(encoding="utf-8"))["operators"]
    own = {f"aclnn{op.name}" for op in OPERATORS}
    return [GenericOperator(name, REPOSITORY_NAMES[entry["repository"]],
                            entry["header"].rsplit("/", 1)[-1],
                            tuple((t, n) for t, n in entry["parameters"]),
                            tuple(entry["outputs"]), tuple(entry["inout"]),
                            tuple((t, n) for t, n in entry.get("phase2", ())))
            for name, entry in sorted(table.items()) if name not in own]


# Rule kinds (emulator/src/ops_rules.h): the JSON name -> the C enumerator.
RULE_KINDS = {"dtypes": "OPS_RULE_DTYPES", "same_dtype": "OPS_RULE_SAME_DTYPE",
              "rank": "OPS_RULE_RANK", "same_shape": "OPS_RULE_SAME_SHAPE",
              "broadcast": "OPS_RULE_BROADCAST", "promote": "OPS_RULE_PROMOTE",
              "castable": "OPS_RULE_CASTABLE", "format": "OPS_RULE_FORMAT", "dim": "OPS_RULE_DIM",
              "value": "OPS_RULE_VALUE", "choice": "OPS_RULE_CHOICE",
              "not_empty": "OPS_RULE_NOT_EMPTY", "same_rank": "OPS_RULE_SAME_RANK",
              "length": "OPS_RULE_LENGTH", "contiguous": "OPS_RULE_CONTIGUOUS",
              "same_format": "OPS_RULE_SAME_FORMAT", "stop_if_empty": "OPS_RULE_STOP_IF_EMPTY",
              "present": "OPS_RULE_PRESENT",
              "result_castable": "OPS_RULE_RESULT_CASTABLE",
              "strided_rank": "OPS_RULE_STRIDED_RANK"}
SOC_FAMILIES = {"910": "OPS_SOC_910", "910b": "OPS_SOC_910B", "910_93": "OPS_SOC_910_93",
                "950": "OPS_SOC_950", "310p": "OPS_SOC_310P", "310b": "OPS_SOC_310B",
                "other": "OPS_SOC_OTHER"}
RULE_FIELDS = {"rule", "params", "target", "dtypes", "formats", "min", "max", "values", "unique",
               "socs", "status", "source", "note"}
INT64_MAX = 2**63 - 1
PARAMS_PER_RULE = 8  # OPS_RULE_MAX_PARAMS


@functools.lru_cache(maxsize=1)
def phase1_rules() -> dict[str, Any]:
    """The rules file's operators (empty when there is none)."""
    if not PHASE1_RULES.exists():
        return {}
    operators: dict[str, Any] = json.loads(PHASE1_RULES.read_text(encoding="utf-8"))["operators"]
    return operators


def rule_initialiser(op: str, rule: dict[str, Any], names: list[str], prefix: str
                     ) -> tuple[str, str]:
    """One rule as a C initialiser of ops_rule, and any array it needs defined before it."""
    where = f"{PHASE1_RULES.name}: {op}: rule {rule}"
    unknown = set(rule) - RULE_FIELDS
    if unknown or rule.get("rule") not in RULE_KINDS:
        raise ValueError(f"{where}: unknown rule or fields {sorted(unknown)}")

    def index(name: str) -> int:
        if name not in names:
            raise ValueError(f"{where}: {op} has no parameter {name!r}")
        return names.index(name)

    params = [index(name) for name in rule["params"]]
    if not 1 <= len(params) <= PARAMS_PER_RULE:
        raise ValueError(f"{where}: 1 to {PARAMS_PER_RULE} params")
    params += [-1] * (PARAMS_PER_RULE - len(params))
    target = index(rule["target"]) if "target" in rule else -1
    socs = " | ".join(SOC_FAMILIES[soc] for soc in rule.get("socs", ())) or "0"
    dtypes = " | ".join(f"OPS_DT(ACL_{name})" for name in rule.get("dtypes", ())) or "0"
    formats = " | ".join(f"((uint64_t)1 << ACL_{'FORMAT_' if name != 'FRACTAL_Z_3D' else ''}{name})"
                         for name in rule.get("formats", ())) or "0"
    default_lo = 0 if rule["rule"] in ("rank", "strided_rank") else -INT64_MAX - 1
    lo = math.ceil(rule["min"]) if "min" in rule else default_lo
    hi = math.floor(rule["max"]) if "max" in rule else INT64_MAX
    if rule["rule"] == "dim":
        lo, hi = 0, int(bool(rule.get("unique", False)))
    before, values, n_values = "", "NULL", 0
    if "values" in rule:
        values = f"{prefix}_values"
        n_values = len(rule["values"])
        before = (f"static const int64_t {values}[] = "
                  f"{{{', '.join(str(int(v)) for v in rule['values'])}}};\n")

    def real(x: float) -> str:
        if math.isinf(x):
            return "INFINITY" if x > 0 else "-INFINITY"
        return repr(float(x))

    real_low = real(float(rule["min"])) if "min" in rule else "-INFINITY"
    real_high = real(float(rule["max"])) if "max" in rule else "INFINITY"
    def integer(x: int) -> str:
        return "(-9223372036854775807LL - 1)" if x <= -INT64_MAX - 1 else f"{min(x, INT64_MAX)}LL"

    text = (f"{{{RULE_KINDS[rule['rule']]}, {socs}, {{{', '.join(map(str, params))}}}, {target}, "
            f"{int(rule.get('status', 161002))}, {dtypes}, {formats}, {integer(lo)}, "
            f"{integer(hi)}, "
            f"{real_low}, "
            f"{real_high}, {values}, {n_values}}}")
    return text, before


def rule_set_source(op: GenericOperator) -> tuple[str, str]:
    """The C definitions of ``op``'s rule set and the expression its descriptor points at."""
    return rule_set_of(op.name, [n for _, n in op.parameters])


def rule_set_of(name: str, names: list[str]) -> tuple[str, str]:
    """The C definitions of the rule set of operator ``name`` (parameters ``names``) and the
    expression that points at it (NULL when it has no rules)."""
    entry = phase1_rules().get(name)
    if not entry or not entry.get("rules"):
        return "", "NULL"
    short = name[len("aclnn"):]
    rules, arrays = [], []
    for i, rule in enumerate(entry["rules"]):
        text, before = rule_initialiser(name, rule, names, f"rule_{short}_{i}")
        rules.append(text)
        arrays.append(before)
    definitions = ("".join(arrays) + f"static const ops_rule rules_{short}[] = {{\n    "
                   + ",\n    ".join(rules) + "\n};\n"
                   + f"static const ops_rule_set rule_set_{short} = "
                   f"{{{len(rules)}, rules_{short}}};\n")
    return definitions, f"&rule_set_{short}"


def _description(op: GenericOperator, variable: str, api: str,
                 parameters: tuple[tuple[str, str], ...], phase1: bool = True
                 ) -> tuple[str, str]:
    """The ``ops_generic_op`` named ``variable`` describing ``parameters`` of ``op`` (``api``
    names the entry point in messages; phase 1's has the operator's rules and nullable
    parameters), and the initialiser of the values an entry point packs for it:
    (declarations, values)."""
    kinds = [op.kind(t) for t, _ in parameters]
    names = ", ".join(f'"{n}"' for _, n in parameters) or "NULL"
    roles = "".join("o" if n in op.outputs else "u" if n in op.inout else "i"
                    for _, n in parameters)
    nullable = set(phase1_rules().get(op.name, {}).get("nullable", ())) if phase1 else set()
    optional = "".join("1" if n.endswith("Optional") or n in nullable else "0"
                       for _, n in parameters)
    rule_definitions, rule_set = rule_set_source(op) if phase1 else ("", "NULL")
    values = []
    for (_, name), kind in zip(parameters, kinds):
        field = "integer" if kind in (8, 9) else "real" if kind == 10 else "pointer"
        values.append(f"{{.{field} = {name}}}")
    kind_text = "".join(f"\\{k:o}" for k in kinds)
    declarations = (f"static const char *const names_{variable}[] = {{{names}}};\n"
                    + rule_definitions
                    + f'static const ops_generic_op {variable} = {{"{op.name}", "{api}", '
                    f'{len(parameters)}, names_{variable}, "{kind_text}", "{roles}", '
                    f'"{optional}", {rule_set}}};\n')
    return declarations, "{" + (", ".join(values) or "{0}") + "}"


def write_prototype_sources(folder: Path) -> dict[str, Path]:
    """``prototypes_<repository>.c``: each C operator's ops_prototype (its header's parameters,
    the ones its rules call nullable, its rule set), for the library that holds it."""
    table = json.loads(OPERATOR_TABLE.read_text(encoding="utf-8"))["operators"]
    by_repository: dict[str, list[str]] = {}
    for op in OPERATORS:
        full = f"aclnn{op.name}"
        names = [n for _, n in table[full]["parameters"]]
        nullable = set(phase1_rules().get(full, {}).get("nullable", ()))
        definitions, rule_set = rule_set_of(full, names)
        flags = "".join("1" if n.endswith("Optional") or n in nullable else "0" for n in names)
        quoted = ", ".join(f'"{n}"' for n in names)
        by_repository.setdefault(op.repository, []).append(
            f"static const char *const names_{op.name}[] = {{{quoted}}};\n" + definitions
            + f"const ops_prototype ops_prototype_{op.name} = {{{len(names)}, names_{op.name}, "
            f'"{flags}", {rule_set}}};\n')
    written = {}
    for repository, parts in by_repository.items():
        path = folder / f"prototypes_{repository}.c"
        path.write_text(f"/* Written by emulator/build.py from {OPERATOR_TABLE.name} and "
                        f"{PHASE1_RULES.name}: the {repository} C operators' prototypes and "
                        "rules. */\n#include <math.h>\n\n#include \"ops_rules.h\"\n\n"
                        + "\n".join(parts), encoding="utf-8")
        written[repository] = path
    return written


def write_generic_sources(folder: Path, operators: list[GenericOperator]) -> dict[str, Path]:
    """``generic_<repository>.c`` per repository: each operator's two entry points, packing its
    arguments for ops_generic_phase1; phase 2 is every operator's ops_phase2, through
    ops_generic_phase2, which checks them, for one that takes parameters of its own."""
    by_repository: dict[str, list[str]] = {}
    for op in operators:
        short = op.name[len("aclnn"):]
        declaration, values = _description(op, f"op_{short}", f"{op.name}GetWorkspaceSize",
                                           op.parameters)
        phase1 = (f"EMU_EXPORT {op.phase1[:-1]}\n{{\n"
                  f"    const ops_generic_value emu_generic_values[] = {values};\n"
                  f"    return ops_generic_phase1(&op_{short}, emu_generic_values, "
                  "workspaceSize, executor);\n}\n")
        if op.phase2_extra:
            extra, extra_values = _description(op, f"phase2_{short}", op.name, op.phase2_extra,
                                               phase1=False)
            declaration += extra
            phase2 = (f"EMU_EXPORT {op.phase2[:-1]}\n{{\n"
                      f"    const ops_generic_value emu_generic_values[] = {extra_values};\n"
                      f"    return ops_generic_phase2(&phase2_{short}, emu_generic_values, "
                      "workspace, workspaceSize, executor, stream);\n}\n")
        else:
            phase2 = (f"EMU_EXPORT {op.phase2[:-1]}\n{{\n"
                      f'    return ops_phase2("{op.name}", workspace, workspaceSize, executor, '
                      "stream);\n}\n")
        by_repository.setdefault(op.repository, []).append(declaration + phase1 + phase2)
    written = {}
    for repository, parts in by_repository.items():
        path = folder / f"generic_{repository}.c"
        source = OPERATOR_TABLE.relative_to(ROOT).as_posix()
        path.write_text(f"/* Written by emulator/build.py from {source}: the {repository} "
                        "operators computed through ops_generic.c. */\n"
                        '#include <math.h>\n\n#include "ops_generic.h"\n\n' + "\n".join(parts),
                        encoding="utf-8")
        written[repository] = path
    return written


@dataclass(frozen=True)
class Layout:
    """One CANN release as the emulator builds it (file names from the facts file, section 1.1)."""

    version: str                       # written to the tree's version files
    runtime: str                       # acl/aclrt library: libascendcl.so (<= 8.3), libacl_rt.so
    operators: dict[str, tuple[str, ...]]  # operator library -> repositories it holds
    hidden: dict[str, tuple[str, ...]] = field(default_factory=dict)  # role -> not exported
    async_copy_pinned_aligned: bool = False  # aclrtMemcpyAsync rules before 8.5 (era.h)
    headers_in_level2: bool = False  # include/aclnnop/level2/aclnn_*.h (older toolkits)
    level2_copies: bool = False  # and a deprecated copy of each in include/aclnnop/level2/


ALL_REPOSITORIES = ("nn", "math", "transformer", "cv")
LAYOUTS = {
    "8.0.RC2": Layout("8.0.RC2", "libascendcl.so", {"libopapi.so": ALL_REPOSITORIES},
                      {"runtime": FROM_8_5_RUNTIME_API, "meta": REPEATABLE_EXECUTOR_API}, True,
                      headers_in_level2=True),
    "8.3": Layout("8.3.RC1", "libascendcl.so", {"libopapi.so": ALL_REPOSITORIES},
                  {"runtime": FROM_8_5_RUNTIME_API}, True),
    # 8.5: one operator library per repository, each linking libopapi.so (hicann/ops-nn
    # cmake/symbol.cmake at v8.5.0), which here holds the shared operator core and no operator.
    # Its operator headers are in include/aclnnop/ and, deprecated, again in level2/ under it
    # (hicann/ops-math cmake/opbuild.cmake at c41933244, lines 156-159, the built-in package:
    # ACLNN_INC_INSTALL_DIR and ACLNN_INC_LEVEL2_INSTALL_DIR of cmake/variables.cmake lines
    # 82-83; hicann/opbase cmake/package.cmake lines 163-172 does the same with aclnn_util.h).
    "8.5": Layout("8.5.0", "libacl_rt.so",
                  {f"libopapi_{name}.so": (name,) for name in ALL_REPOSITORIES},
                  level2_copies=True),
}

# The custom operator package, opp/vendors/<CUSTOM_VENDOR>/: its library is built from these
# sources, its other files (headers as CANN's code generator writes them for custom operators,
# the operator description, the package priority file) are templates/opp/.
CUSTOM_VENDOR = "customize"
CUSTOM_OPERATOR_SOURCES = ["custom/op_add_custom.c", "custom/op_weighted_sum_custom.c"]
# The packages CANN's repositories build their experimental/ operators into, and whose
# op_api/ their experimental samples are compiled against (hicann/ops-nn build.sh e5c3fa93,
# lines 1543-1565: opp/vendors/<vendor>_nn, vendor "custom" by default, -lcust_opapi; hicann/
# ops-math scripts/build_example.sh c4193324 compile_eager_example_cust: opp/vendors/
# <vendor>_math, VENDOR "custom" by default in scripts/build_options.sh): by repository, the
# vendor folder. Each holds the headers of its repository's experimental operators and a
# libcust_opapi.so that is a filter of the repository's operator library (DT_FILTER, as
# libascendcl.so of libacl_rt.so), so a process holds one copy of each operator. They are not
# in opp/vendors/config.ini: aclnn_py's catalog has these operators from the built-in package.
EXPERIMENTAL_VENDORS = {"nn": "custom_nn", "math": "custom_math"}

# Functions of an operator repository's library that are not operators, by repository: the
# file that implements them and, per operator header declaring them (hicann/ops-math
# conversion/trans_data/op_api/aclnn_trans_matmul_weight.h and
# aclnn_trans_convolution_weight.h at c41933244), their prototypes in our words.
# hicann/ops-nn quant/trans_quant_param/op_host/op_api/aclnn_trans_quant_param.h (e5c3fa93)
# declares aclnnTransQuantParam, alone in its header.
HELPER_SOURCES = {"math": "trans_weight_sizes.c", "nn": "trans_quant_param.c"}
HELPER_FUNCTIONS = {"math": ("aclnnCalculateMatmulWeightSize", "aclnnCalculateMatmulWeightSizeV2",
                             "aclnnCalculateConvolutionWeightSize"),
                    "nn": ("aclnnTransQuantParam",)}
HELPER_DECLARATIONS = {
    "aclnn_trans_matmul_weight.h": (
        "/* Elements of a float16 matmul weight of shape tensorShape (2 to 6 dimensions) in\n"
        " * the private format aclnnTransMatmulWeight writes. */\n"
        "ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSize(const aclIntArray *tensorShape,\n"
        "                                                     uint64_t *weightTensorSize);",
        "/* The same for a weight of dtype dataType (float16 and bfloat16 in 16-element blocks,\n"
        " * the others 16 x 32). */\n"
        "ACLNN_API aclnnStatus aclnnCalculateMatmulWeightSizeV2(const aclIntArray *tensorShape,\n"
        "                                                       aclDataType dataType,\n"
        "                                                       uint64_t *weightTensorSize);"),
    "aclnn_trans_convolution_weight.h": (
        "/* Elements of a convolution weight in the format aclnnTransConvolutionWeight writes\n"
        " * (Atlas 300I Duo only). */\n"
        "ACLNN_API aclnnStatus aclnnCalculateConvolutionWeightSize(\n"
        "    const aclIntArray *tensorShape, bool transposed, int64_t groups,\n"
        "    aclDataType dataType,\n"
        "    uint64_t *weightTensorSize);",),
    "aclnn_trans_quant_param.h": (
        "/* The quantisation parameters of scaleArray and offsetArray (host arrays) for the\n"
        " * quantised matmuls, in a host array the call allocates (the caller frees it). */\n"
        "ACLNN_API aclnnStatus aclnnTransQuantParam(\n"
        "    const float *scaleArray, uint64_t scaleSize, const float *offsetArray,\n"
        "    uint64_t offsetSize, uint64_t **quantParam, uint64_t *quantParamSize);",),
}

# The libraries frameworks link besides the runtime (torch_npu 2.13.0's libtorch_npu.so has
# them as DT_NEEDED; CANN installs each in lib64 since before 8.0), by the emulator source of
# each: the compile options and aclop compilation, HCCL, and the graph engine's libraries.
FRAMEWORK_LIBRARIES = {"libacl_op_compiler.so": "fw_op_compiler.c", "libhccl.so": "fw_hccl.c",
                       "libge_runner.so": "fw_graph.c", "libgraph.so": "fw_graph.c",
                       "libacl_tdt_channel.so": "fw_graph.c"}
FRAMEWORK_SOURCES = tuple(dict.fromkeys(FRAMEWORK_LIBRARIES.values()))

WARNINGS = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Werror=implicit-function-declaration"]
COMMON_CFLAGS = ["-std=gnu11", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread", *WARNINGS]


def compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def link_flags() -> list[str]:
    """``ACLNN_EMU_LDFLAGS``, added to every link."""
    return shlex.split(os.environ.get("ACLNN_EMU_LDFLAGS", ""))


def target_machine() -> str:
    """The machine the libraries are for (``ACLNN_EMU_ARCH``, default this one)."""
    return os.environ.get("ACLNN_EMU_ARCH") or platform.machine()


def run(command: list[str]) -> None:
    print(" ".join(command), file=sys.stderr)
    subprocess.check_call(command)


def soname(name: str, *, runtime: bool = True) -> str:
    """The emulator's own soname for a library of CANN's file name ``name`` (``runtime``:
    whether it is its tree's runtime, not 8.5's libascendcl.so beside libacl_rt.so)."""
    stems = {"libascendcl.so": "acl", "libacl_rt.so": "acl"} if runtime else {}
    return f"{SONAME_PREFIX}{stems.get(name, name[3:-3])}.so"


def fill(template: str, **values: str) -> str:
    """``templates/<template>`` with each ``{{key}}`` replaced by its value."""
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    missing = re.search(r"\{\{(\w+)\}\}", text)
    if missing:
        raise ValueError(f"templates/{template}: no value for {missing.group(1)}")
    return text


def runtime_sources() -> list[str]:
    """The runtime library's files (one per part of the runtime, over rt_internal.h)."""
    return sorted(path.name for path in SRC.glob("rt_*.c"))


def operator_sources(repositories: tuple[str, ...] | None = None) -> list[str]:
    """The operator files of ``repositories`` (default all), each once, in the data file's
    order."""
    return list(dict.fromkeys(op.source for op in OPERATORS
                              if repositories is None or op.repository in repositories))


def write_operator_table(folder: Path) -> None:
    """``emu_operators.h``: EMU_OPERATORS(X), one X(Name, descriptor) per operator."""
    lines = "".join(f" \\\n    X({op.name}, {op.descriptor})" for op in OPERATORS)
    (folder / "emu_operators.h").write_text(
        f"/* The emulator's operators, written by emulator/build.py from "
        f"{DATA.relative_to(ROOT).as_posix()}. */\n"
        "#ifndef ACLNN_EMU_OPERATORS_H\n#define ACLNN_EMU_OPERATORS_H\n\n"
        f"#define EMU_OPERATORS(X){lines}\n\n#endif\n")


def compile_objects(objects: Path, generated: Path) -> None:
    """Every source shared by the trees, compiled once (in parallel)."""
    cflags = shlex.split(os.environ.get("ACLNN_EMU_CFLAGS", "-O2"))
    plain = [*compiler(), "-c", "-std=gnu11", "-fPIC", "-pthread", *WARNINGS]
    includes = [f"-I{SRC}", f"-I{generated}"]
    base = [*plain, *cflags, *includes]
    sources = [*runtime_sources(), "meta.c", "ops_registry.c", "driver.c", *FRAMEWORK_SOURCES,
               *operator_sources(), *CUSTOM_OPERATOR_SOURCES, *HELPER_SOURCES.values()]
    commands = [[*base, "-fvisibility=hidden", str(SRC / source),
                 "-o", str(objects / (Path(source).stem + ".o"))] for source in sources]
    # The generated entry points: little code each, so no optimisation to wait for.
    generated_sources = [*write_generic_sources(generated, generic_operators()).values(),
                         *write_prototype_sources(generated).values()]
    commands += [[*plain, "-O0", *includes, "-fvisibility=hidden", str(path),
                  "-o", str(objects / (path.stem + ".o"))] for path in generated_sources]
    # The operator core is a library of its own from 8.5 (libopapi.so under libopapi_nn.so
    # and the other operator libraries), so its functions have default visibility; the older
    # trees' export lists hide them again.
    commands += [[*base, "-fno-semantic-interposition", str(SRC / f"{core}.c"),
                  "-o", str(objects / f"{core}.o")]
                 for core in ("ops_core", "ops_generic", "ops_rules")]
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        for future in [pool.submit(run, command) for command in commands]:
            future.result()


def link(out: Path, objects: list[Path], needs: list[Path], hidden: list[str],
         scratch: Path, *, search: list[Path], own_soname: str | None = None,
         extra: tuple[str, ...] = ()) -> None:
    """Link one library with its own soname (``own_soname``, default from its file name), no
    RUNPATH, and ``hidden`` kept out of its dynamic symbol table by a linker version script;
    ``extra``: more linker options."""
    own = own_soname or soname(out.name)
    command = [*compiler(), "-shared", "-pthread", *(str(o) for o in objects), "-o", str(out),
               f"-Wl,-soname,{own}", *extra, *(str(n) for n in needs),
               f"-Wl,-rpath-link,{':'.join(str(d) for d in search)}",
               "-Wl,--no-undefined", "-lm", *link_flags()]
    if hidden:
        script = scratch / f"{out.parent.parent.name}-{out.name}.map"
        script.write_text("{\n  local:\n" + "".join(f"    {name};\n" for name in hidden) + "};\n")
        command.append(f"-Wl,--version-script,{script}")
    run(command)
    link_name = out.parent / own
    if link_name.name != out.name:  # the soname beside the file, for DT_NEEDED lookups
        link_name.unlink(missing_ok=True)
        link_name.symlink_to(out.name)


DT_NULL, DT_NEEDED, DT_STRTAB, DT_FILTER = 0, 1, 5, 0x7FFFFFFF  # the ELF gABI's d_tag values
PT_LOAD, PT_DYNAMIC = 1, 2


def make_filter(path: Path, filtee: str) -> None:
    """Turn the DT_NEEDED entry of ``filtee`` in the 64-bit little-endian shared library
    ``path`` into a DT_FILTER entry: at run time the dynamic linker then takes every symbol
    of ``path`` from ``filtee``. Done on the linked file because not every linker has
    ``--filter`` (Zig's, which the wheels use, refuses it)."""
    data = bytearray(path.read_bytes())
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        raise ValueError(f"{path}: not a 64-bit little-endian ELF file")
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    segments = [struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize) for i in range(phnum)]

    def file_offset(address: int) -> int:
        for kind, _, offset, vaddr, _, filesz, _, _ in segments:
            if kind == PT_LOAD and vaddr <= address < vaddr + filesz:
                return address - vaddr + offset
        raise ValueError(f"{path}: address {address:#x} is in no loaded segment")

    (dynamic,) = [offset for kind, _, offset, *_ in segments if kind == PT_DYNAMIC]
    entries = []
    while True:
        tag, value = struct.unpack_from("<qQ", data, dynamic + 16 * len(entries))
        if tag == DT_NULL:
            break
        entries.append((tag, value))
    strings = file_offset(dict(entries)[DT_STRTAB])
    for index, (tag, value) in enumerate(entries):
        start = strings + value
        if tag == DT_NEEDED and data[start:data.index(0, start)].decode() == filtee:
            struct.pack_into("<q", data, dynamic + 16 * index, DT_FILTER)
            path.write_bytes(bytes(data))
            return
    raise ValueError(f"{path}: no DT_NEEDED entry for {filtee}")


def header_name(operator: str) -> str:
    """CANN's header file of ``aclnn<operator>``: MseLossBackward -> aclnn_mse_loss_backward.h."""
    return f"aclnn_{snake_case(operator)}.h"


def operator_prototypes() -> dict[str, list[str]]:
    """The two prototypes of each operator in headers/aclnn_ops.h (the one place they are
    written), by operator name, each as its declaration text."""
    text = re.sub(r"/\*.*?\*/", "", OPERATOR_PROTOTYPES.read_text(encoding="utf-8"), flags=re.S)
    prototypes: dict[str, list[str]] = {}
    for declaration in text.split(";"):
        match = re.search(r"aclnnStatus\s+aclnn(\w+?)(GetWorkspaceSize)?\s*\(", declaration)
        if match:
            prototypes.setdefault(match.group(1), []).append(" ".join(declaration.split()) + ";")
    return prototypes


def write_headers(root: Path, layout: Layout) -> None:
    """The operators' headers in the style of CANN's built-in ones (templates/operator_*.h),
    under include/aclnnop/ (and level2/ before 8.3, where CANN's toolkits kept them)."""
    folder = root / "include" / "aclnnop"
    if layout.headers_in_level2:
        folder = folder / "level2"
    folder.mkdir(parents=True)
    prototypes = operator_prototypes()
    # header file -> (operator without "aclnn", phase 1, phase 2) declared in it
    headers: dict[str, list[tuple[str, str, str]]] = {}
    for op in OPERATORS:
        headers.setdefault(header_name(op.header), []).append(
            (op.name, prototypes[op.name][0], prototypes[op.name][1]))
    for generic_op in generic_operators():
        headers.setdefault(generic_op.header, []).append(
            (generic_op.name[len("aclnn"):], generic_op.phase1, generic_op.phase2))
    for file_name in HELPER_DECLARATIONS:
        headers.setdefault(file_name, [])
    for file_name, declared in headers.items():
        declarations = "\n".join(
            [fill("operator_declarations.h", name=name, phase1=phase1, phase2=phase2)
             for name, phase1, phase2 in declared]
            + [helper + "\n" for helper in HELPER_DECLARATIONS.get(file_name, ())])
        # a header of helpers only is titled by its first function
        title = declared[0][0] if declared else \
            HELPER_DECLARATIONS[file_name][0].split(" aclnn")[2].split("(", 1)[0]
        header_text = fill("operator_header.h", name=title, version=layout.version,
                           guard=file_name[:-2].upper(), declarations=declarations)
        (folder / file_name).write_text(header_text, encoding="utf-8")
    write_api_headers(root, layout, folder)
    if layout.level2_copies:
        write_level2_copies(folder)


# The line CANN's packaging adds after the last #include of each level2/ copy (hicann/ops-math
# scripts/util/add_deprecation_warning.py, run by cmake/opbuild.cmake on the installed copies).
LEVEL2_WARNING = ('#warning "include/aclnnop/level2/ is deprecated: include the header of this '
                  'name from include/aclnnop/ instead."')


def write_level2_copies(folder: Path) -> None:
    """A copy of every header of ``folder`` (include/aclnnop/) in ``folder/level2``, each
    operator header warning that the folder is deprecated, as CANN 8.5 installs them; copies,
    not links, so that a wheel (which holds no symbolic link) carries the tree whole."""
    level2 = folder / "level2"
    level2.mkdir()
    for path in sorted(folder.glob("*.h")):
        text = path.read_text(encoding="utf-8")
        if path.name != "aclnn_util.h":
            lines = text.split("\n")
            last = max(i for i, line in enumerate(lines) if line.startswith("#include"))
            lines.insert(last + 1, LEVEL2_WARNING)
            text = "\n".join(lines)
        (level2 / path.name).write_text(text, encoding="utf-8")


# The ACL and aclnn base headers of a tree, where CANN installs them (hicann/opbase
# cmake/package.cmake installs include/nnopbase/aclnn/ as include/aclnn/ and include/aclnnop/,
# which holds aclnn_util.h; hicann/runtime installs include/external/acl/ as include/acl/):
# file -> (what it declares, the headers/ file of its declarations, the files it includes).
API_HEADERS: dict[str, tuple[str, str | None, tuple[str, ...]]] = {
    "acl/acl_base.h": ("the runtime's types, status codes and functions the emulator implements",
                       "acl_rt.h", ("<stdbool.h>", "<stddef.h>", "<stdint.h>")),
    "acl/acl_rt.h": ("the runtime API (declared in acl/acl_base.h here)", None,
                     ('"acl/acl_base.h"',)),
    # acl/acl_op.h: empty in the runtime package, kept for the programs that include it (the
    # aclop API comes with another package: hicann/runtime 681ef7610
    # include/external/acl/acl_op.h); acl/acl.h includes it after acl/acl_rt.h (acl.h there).
    "acl/acl_op.h": ("empty, as the runtime package's (the aclop API comes with another)",
                     None, ()),
    "acl/acl.h": ("the ACL entry header", None, ('"acl/acl_rt.h"', '"acl/acl_op.h"')),
    "aclnn/acl_meta.h": ("aclTensor, aclScalar, the arrays, tensor lists and executors",
                         "acl_meta.h", ('"acl/acl_base.h"',)),
    "aclnn/aclnn_base.h": ("what every operator header includes", None,
                           ('"aclnn/acl_meta.h"',)),
}
# include/aclnnop/aclnn_util.h (hicann/opbase include/aclnnop/aclnn_util.h): ACLNN_API.
ACLNN_API = '#define ACLNN_API __attribute__((visibility("default")))'


def write_api_headers(root: Path, layout: Layout, operator_folder: Path) -> None:
    """The ACL and aclnn base headers (API_HEADERS), from the project's ``headers/`` files,
    and ``aclnn_util.h`` beside the operator headers, which include it by that name."""
    include = root / "include"
    files = {**{path: entry for path, entry in API_HEADERS.items()},
             operator_folder.relative_to(include).as_posix() + "/aclnn_util.h":
                 ("ACLNN_API, the operator headers' export attribute", None, ())}
    for path, (what, source, includes) in files.items():
        body = ((ROOT / "headers" / source).read_text(encoding="utf-8") if source
                else ACLNN_API + "\n" if path.endswith("aclnn_util.h") else "")
        text = fill("api_header.h", path=f"include/{path}", version=layout.version, what=what,
                    guard="ACLNN_EMU_" + re.sub(r"\W", "_", path).upper(),
                    includes="".join(f"#include {name}\n" for name in includes), body=body)
        target = include / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def operator_symbols(repositories: tuple[str, ...]) -> list[str]:
    return [symbol for op in OPERATORS if op.repository in repositories for symbol in op.symbols]


def build_tree(root: Path, layout: Layout, objects: Path, scratch: Path) -> None:
    """One CANN-shaped tree: libraries, set_env.sh, version files, opp/."""
    lib64 = root / "lib64"
    driver = root / "driver" / "lib64" / "driver"
    for directory in (lib64, driver):
        directory.mkdir(parents=True)
    shutil.copytree(TEMPLATES / "opp", root / "opp")
    o = {path.stem: path for path in objects.glob("*.o")}
    search = [lib64, driver]

    def library(directory: Path, name: str, parts: list[Path], needs: list[Path],
                hidden: tuple[str, ...] | list[str] = (), **options: Any) -> Path:
        out = directory / name
        link(out, parts, needs, list(hidden), scratch, search=search, **options)
        return out

    hal = library(driver, "libascend_hal.so", [o["driver"]], [])
    era = scratch / f"era-{layout.version}.o"
    run([*compiler(), "-c", "-std=gnu11", "-fPIC", "-fvisibility=hidden", *WARNINGS, "-O2",
         f"-I{SRC}", f'-DEMU_ERA_CANN_VERSION="{layout.version}"',
         f"-DEMU_ERA_ASYNC_COPY_PINNED_ALIGNED={int(layout.async_copy_pinned_aligned)}",
         str(SRC / "era.c"), "-o", str(era)])
    support = library(lib64, "libruntime.so", [era], [hal])
    runtime_objects = [o[name[:-2]] for name in runtime_sources()]
    runtime = library(lib64, layout.runtime, runtime_objects, [support],
                      layout.hidden.get("runtime", ()))
    if layout.runtime != "libascendcl.so":
        # CANN 8.5 still installs libascendcl.so in lib64 beside libacl_rt.so (hicann/runtime
        # scripts/package/module/ascend/RuntimeSo.xml, file_info runtime_lib; cmake/
        # package.cmake installs lib_acl/libascendcl.so to the same INSTALL_DIR), so programs
        # linked with -lascendcl keep working. Here it is a filter of libacl_rt.so (DT_FILTER):
        # it links like the runtime, and at run time its every symbol is libacl_rt.so's, so
        # a process holds one runtime whichever of the two names it loads.
        ascendcl = library(lib64, "libascendcl.so", runtime_objects, [runtime, support],
                           layout.hidden.get("runtime", ()),
                           own_soname=soname("libascendcl.so", runtime=False),
                           extra=("-Wl,--no-as-needed",))
        make_filter(ascendcl, soname(layout.runtime))
    for name, source in FRAMEWORK_LIBRARIES.items():
        library(lib64, name, [o[Path(source).stem]], [runtime, support])
    meta = library(lib64, "libnnopbase.so", [o["meta"]], [runtime], layout.hidden.get("meta", ()))
    every = tuple(repository for repositories in layout.operators.values()
                  for repository in repositories)
    def generic(repositories: tuple[str, ...]) -> list[Path]:
        return [*(o[f"{kind}_{r}"] for r in repositories for kind in ("generic", "prototypes")
                  if f"{kind}_{r}" in o),
                *(o[Path(HELPER_SOURCES[r]).stem] for r in repositories if r in HELPER_SOURCES)]

    if list(layout.operators) == ["libopapi.so"]:  # one aggregate operator library
        op_objects = [o[source[:-2]] for source in operator_sources(every)]
        library(lib64, "libopapi.so", [o["ops_core"], o["ops_generic"], o["ops_rules"],
                                       o["ops_registry"],
                                       *op_objects, *generic(every)], [meta, runtime], ["ops_*"])
    else:
        core = library(lib64, "libopapi.so", [o["ops_core"], o["ops_generic"], o["ops_rules"]],
                       [meta, runtime])
        for name, repositories in layout.operators.items():
            sources = [o[source[:-2]] for source in operator_sources(repositories)]
            others = tuple(r for r in every if r not in repositories)
            library(lib64, name, [o["ops_registry"], *sources, *generic(repositories)],
                    [core, meta, runtime], operator_symbols(others))

    write_headers(root, layout)
    vendor_lib = root / "opp" / "vendors" / CUSTOM_VENDOR / "op_api" / "lib"
    vendor_lib.mkdir()
    library(vendor_lib, "libcust_opapi.so",
            [o["ops_core"], o["ops_rules"],
             *(o[Path(source).stem] for source in CUSTOM_OPERATOR_SOURCES)],
            [meta, runtime], ["ops_*"])

    if "libopapi.so" not in layout.operators:
        for repository, vendor in EXPERIMENTAL_VENDORS.items():
            write_experimental_vendor(root / "opp" / "vendors" / vendor, repository,
                                      f"libopapi_{repository}.so", library,
                                      [o["ops_registry"],
                                       *(o[source[:-2]] for source in
                                         operator_sources((repository,))),
                                       *generic((repository,))],
                                      [core, meta, runtime],
                                      operator_symbols(tuple(r for r in every
                                                             if r != repository)))

    (root / "set_env.sh").write_text(fill("set_env.sh", version=layout.version), encoding="utf-8")
    # Version files, as aclnn_py's loader and torch_npu read them: <arch>-linux/
    # ascend_toolkit_install.info (key version=), and from 8.5 share/info/runtime/version.info
    # (hicann/runtime runtime.xml installs it).
    arch = root / f"{target_machine()}-linux"
    arch.mkdir()
    (arch / "ascend_toolkit_install.info").write_text(f"version={layout.version}\n")
    if layout.runtime == "libacl_rt.so":
        info = root / "share" / "info" / "runtime"
        info.mkdir(parents=True)
        (info / "version.info").write_text(f"Version={layout.version}\n")
    write_component_folders(root, layout)
    write_python_facts(root)


def experimental_headers(repository: str) -> list[str]:
    """The header files of the operators of the table under ``experimental/`` in the
    repository of short name ``repository``."""
    table = json.loads(OPERATOR_TABLE.read_text(encoding="utf-8"))["operators"]
    return sorted({entry["header"].rsplit("/", 1)[-1] for entry in table.values()
                   if REPOSITORY_NAMES[entry["repository"]] == repository
                   and entry["header"].startswith("experimental/")})


def experimental_header_names(repository: str) -> dict[str, str]:
    """The other names under which the experimental/ op_api of the repository of short name
    ``repository`` declares operators of the table with the same prototypes (the table's
    ``experimental_headers``, e.g. hicann/ops-math c41933244 experimental/math/is_neg_inf/
    op_api/aclnn_is_neg_inf.h for aclnn_isneginf.h): file name -> the built-in header's name,
    which the vendor holds a copy of under that name, as CANN's custom package installs it."""
    table = json.loads(OPERATOR_TABLE.read_text(encoding="utf-8"))["operators"]
    names: dict[str, str] = {}
    for entry in table.values():
        if REPOSITORY_NAMES[entry["repository"]] != repository:
            continue
        for other in entry.get("experimental_headers", ()):
            names.setdefault(other.rsplit("/", 1)[-1], entry["header"].rsplit("/", 1)[-1])
    return dict(sorted(names.items()))


def write_experimental_vendor(vendor: Path, repository: str, operator_library: str,
                              library: Callable[..., Path], parts: list[Path],
                              needs: list[Path], hidden: list[str]) -> None:
    """``vendor``/op_api/: the headers of ``repository``'s experimental operators, copied from
    include/aclnnop/, and lib/libcust_opapi.so, linked like ``operator_library`` and then
    made its filter (:data:`EXPERIMENTAL_VENDORS`)."""
    include = vendor / "op_api" / "include"
    include.mkdir(parents=True)
    built_in = vendor.parents[2] / "include" / "aclnnop"
    for name in experimental_headers(repository):
        if (built_in / name).is_file():
            shutil.copyfile(built_in / name, include / name)
    for name, header in experimental_header_names(repository).items():
        if (built_in / header).is_file() and not (include / name).exists():
            shutil.copyfile(built_in / header, include / name)
    lib = vendor / "op_api" / "lib"
    lib.mkdir(parents=True)
    cust = library(lib, "libcust_opapi.so", parts, [*needs, lib.parents[4] / "lib64" /
                                                     operator_library], hidden,
                   own_soname=f"{SONAME_PREFIX}cust_opapi_{repository}.so",
                   extra=("-Wl,--no-as-needed",))
    make_filter(cust, soname(operator_library))


def write_python_facts(root: Path) -> None:
    """``share/aclnn_py/python.cfg``: the Python the tree is built for, read by the emulator
    when a program without Python calls an operator computed in Python (rt_python.c): where its
    libpython is (``libdir`` with ``instsoname`` or ``ldlibrary``), its interpreter (from which
    Python finds its standard library) and its site-packages."""
    config = sysconfig.get_config_vars()
    paths = sysconfig.get_paths()
    facts = {"version": f"{sys.version_info.major}.{sys.version_info.minor}",
             "libdir": config.get("LIBDIR") or "", "instsoname": config.get("INSTSONAME") or "",
             "ldlibrary": config.get("LDLIBRARY") or "", "purelib": paths.get("purelib", ""),
             "platlib": paths.get("platlib", ""),
             "executable": os.path.join(config.get("BINDIR") or "",
                                        f"python{sys.version_info.major}.{sys.version_info.minor}")}
    folder = root / "share" / "aclnn_py"
    folder.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key} = {value}\n" for key, value in facts.items())
    (folder / "python.cfg").write_text(lines, encoding="utf-8")


# The install's component folders that clients look for (torch_npu's import checks that
# $ASCEND_HOME_PATH/runtime and $ASCEND_HOME_PATH/compiler exist): runtime/, where the runtime
# package installs its version.info (hicann/runtime scripts/package/runtime/runtime.xml:
# version_info install_path="runtime", dir_info "runtime" and "runtime/include"; runtime_func.sh
# looks for <install>/runtime/version.info), and compiler/, the compiler package's folder
# (compiler/include and compiler/lib64: hicann/ops-cv docs/zh/invocation/
# quick_op_invocation.md; hicann/runtime docs/zh/log_ref/viewing_logs_ep.md), which keeps its
# version.info the same way (each package's own folder: ops-nn's ops_nn.xml version_info
# install_path="ops_nn"). A file in each, so that a wheel, which keeps no empty folder, has them.
COMPONENT_FOLDERS = ("runtime", "compiler")


def write_component_folders(root: Path, layout: Layout) -> None:
    """``runtime/`` and ``compiler/`` of the install, each with its ``version.info``."""
    for name in COMPONENT_FOLDERS:
        folder = root / name
        folder.mkdir()
        (folder / "version.info").write_text(f"Version={layout.version}\n")


def build_emulator(home: Path) -> None:
    """Every tree of LAYOUTS under ``home`` (replaced whole: it holds only build output)."""
    if home.exists():
        shutil.rmtree(home)
    with tempfile.TemporaryDirectory(prefix="aclnn_py_emu_") as scratch_dir:
        scratch = Path(scratch_dir)
        objects, generated = scratch / "objects", scratch / "include"
        objects.mkdir()
        generated.mkdir()
        write_operator_table(generated)
        compile_objects(objects, generated)
        for name, layout in LAYOUTS.items():
            build_tree(home / name, layout, objects, scratch)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTDIR  (the trees go to OUTDIR/<layout>/)")
    build_emulator(Path(sys.argv[1]).resolve())
