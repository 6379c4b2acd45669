"""The 8.5 tree as a CANN 8.5 install for a compiler: the operator headers again under
include/aclnnop/level2/ (deprecated copies, no links), the operators known only from their
docs declared, and the helper functions CANN's samples call (the runtime's half-precision
conversions, ops-math's weight sizes) declared where CANN declares them and working."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT, run_c_client

import aclnn_py

pytestmark = pytest.mark.emulator_only

HOME = Path(aclnn_py.emulator.home("8.5"))
OPERATORS = json.loads((ROOT / "aclnn_py" / "data" / "operators.json").read_text(
    encoding="utf-8"))["operators"]


def needs(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"needs a compiler ({name})")
    return found


def test_the_8_5_operator_headers_are_copied_into_level2():
    aclnnop = HOME / "include" / "aclnnop"
    level2 = aclnnop / "level2"
    top = sorted(p.name for p in aclnnop.glob("*.h"))
    assert sorted(p.name for p in level2.glob("*.h")) == top
    assert not any(p.is_symlink() for p in aclnnop.rglob("*"))  # a wheel holds no links
    assert (level2 / "aclnn_util.h").read_bytes() == (aclnnop / "aclnn_util.h").read_bytes()
    gelu = (level2 / "aclnn_gelu.h").read_text(encoding="utf-8")
    assert "#warning" in gelu and "deprecated" in gelu
    assert gelu.replace(gelu.splitlines()[_warning_line(gelu)] + "\n", "") == \
        (aclnnop / "aclnn_gelu.h").read_text(encoding="utf-8")


def _warning_line(text: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if line.startswith("#warning"))


def test_older_trees_have_no_level2_copies():
    assert not (Path(aclnn_py.emulator.home("8.3")) / "include" / "aclnnop" / "level2").exists()


def test_a_level2_header_compiles_with_its_deprecation_warning(tmp_path):
    compiler = needs("cc")
    source = tmp_path / "client.c"
    source.write_text('#include "aclnnop/level2/aclnn_gelu.h"\nint main(void) { return 0; }\n')
    done = subprocess.run([compiler, "-c", f"-I{HOME / 'include'}", str(source),
                           "-o", str(tmp_path / "client.o")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "deprecated" in done.stderr


def test_operators_only_their_docs_declare_have_headers_and_symbols():
    from_docs = {name: entry for name, entry in OPERATORS.items()
                 if entry.get("prototypes") == "doc"}
    assert len(from_docs) > 100
    adam = OPERATORS["aclnnApplyAdam"]
    assert adam["prototypes"] == "doc" and adam["header"].endswith("/aclnn_apply_adam.h")
    text = (HOME / "include" / "aclnnop" / "aclnn_apply_adam.h").read_text(encoding="utf-8")
    assert "aclnnApplyAdamGetWorkspaceSize(aclTensor *varRef" in text
    if shutil.which("nm"):
        listing = subprocess.run(["nm", "-D", "--defined-only",
                                  str(HOME / "lib64" / "libopapi_nn.so")],
                                 capture_output=True, text=True, check=True).stdout
        assert " aclnnApplyAdamGetWorkspaceSize\n" in listing


HELPERS_CLIENT = r"""
#include <stdio.h>
#include "acl/acl.h"
#include "aclnnop/aclnn_trans_matmul_weight.h"
#include "aclnnop/aclnn_trans_convolution_weight.h"

static unsigned long long size_of(const int64_t *dims, uint64_t n, int v2, aclDataType dtype)
{
    uint64_t size = 0;
    aclIntArray *shape = aclCreateIntArray(dims, n);
    aclnnStatus status = v2 ? aclnnCalculateMatmulWeightSizeV2(shape, dtype, &size)
                            : aclnnCalculateMatmulWeightSize(shape, &size);
    aclDestroyIntArray(shape);
    return status == 0 ? (unsigned long long)size : 1000000000ULL + (unsigned long long)status;
}

int main(void)
{
    float values[] = {1.0f, -2.5f, 65504.0f, 70000.0f, 1e-7f, 0.0f};
    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++)
        printf("to16 %04x\n", (unsigned)aclFloatToFloat16(values[i]));
    printf("inf %04x nan %04x\n", (unsigned)aclFloatToFloat16(1.0f / 0.0f),
           (unsigned)aclFloatToFloat16(0.0f / 0.0f));
    printf("from16 %g %g %g %g\n", aclFloat16ToFloat(0x3C00), aclFloat16ToFloat(0xC100),
           aclFloat16ToFloat(0x7C00), aclFloat16ToFloat(0x7E00));
    int64_t mk[] = {3, 17, 33};
    int64_t zero[] = {0, 16};
    int64_t one[] = {16};
    printf("v1 %llu v2fp16 %llu v2int8 %llu\n", size_of(mk, 3, 0, ACL_FLOAT16),
           size_of(mk, 3, 1, ACL_FLOAT16), size_of(mk, 3, 1, ACL_INT8));
    printf("v1zero %llu v2zero %llu rank1 %llu\n", size_of(zero, 2, 0, ACL_FLOAT16),
           size_of(zero, 2, 1, ACL_FLOAT16), size_of(one, 1, 0, ACL_FLOAT16));
    uint64_t size = 0;
    printf("null %d\n", (int)aclnnCalculateMatmulWeightSize(NULL, &size));
    int64_t conv[] = {16, 16, 3, 3};
    aclIntArray *shape = aclCreateIntArray(conv, 4);
    printf("conv %d\n", (int)aclnnCalculateConvolutionWeightSize(shape, false, 1, ACL_FLOAT16,
                                                                 &size));
    aclDestroyIntArray(shape);
    printf("sizes %zu %zu %zu %zu %zu %zu %zu %zu %zu\n", aclDataTypeSize(ACL_FLOAT),
           aclDataTypeSize(ACL_FLOAT16), aclDataTypeSize(ACL_INT8), aclDataTypeSize(ACL_INT64),
           aclDataTypeSize(ACL_COMPLEX64), aclDataTypeSize(ACL_COMPLEX128),
           aclDataTypeSize(ACL_INT4), aclDataTypeSize(ACL_STRING),
           aclDataTypeSize(ACL_DT_UNDEFINED));
    return 0;
}
"""


def test_the_helper_functions_samples_call_compile_link_and_answer(tmp_path):
    """aclFloatToFloat16 / aclFloat16ToFloat saturate as hicann/runtime acl_base_rt.h notes;
    the matmul weight sizes round the last two dimensions up to 16 (float16) or 16 x 32
    (int8), V2 refuses a 0 dimension, both refuse fewer than 2 (161002) and a NULL shape
    (161001); the convolution weight size is for the Atlas 300I Duo only (161002 here);
    aclDataTypeSize gives hicann/runtime's sizes (data_buffer.cpp): INT4 one byte, a string
    or an undefined type none."""
    # ops-math's example line: -lopapi_math -lascendcl -lnnopbase (tools/run_cann_samples.py)
    lines = run_c_client(tmp_path, HELPERS_CLIENT, HOME,
                         ["-lopapi_math", "-lascendcl", "-lnnopbase"])
    assert lines == [
        "to16 3c00", "to16 c100", "to16 7bff", "to16 7bff", "to16 0002", "to16 0000",
        "inf 7bff nan 7bff",
        "from16 1 -2.5 65536 98304",
        f"v1 {3 * 32 * 48} v2fp16 {3 * 32 * 48} v2int8 {3 * 32 * 64}",
        "v1zero 0 v2zero 1000161002 rank1 1000161002",
        "null 161001",
        "conv 161002",
        "sizes 4 2 1 8 8 16 1 0 0"]


QUANT_CLIENT = r"""
#include <stdio.h>
#include <stdlib.h>
#include "aclnnop/aclnn_trans_quant_param.h"

int main(void)
{
    float scales[] = {1.0f, 0.5f};
    float offsets[] = {3.4f, -300.0f};
    uint64_t *param = NULL;
    uint64_t size = 0;
    printf("status %d\n", (int)aclnnTransQuantParam(scales, 2, offsets, 2, &param, &size));
    printf("size %llu\n", (unsigned long long)size);
    for (uint64_t i = 0; i < 3; i++)
        printf("%llx\n", (unsigned long long)param[i]);
    free(param);
    printf("one %d", (int)aclnnTransQuantParam(scales, 1, NULL, 0, &param, &size));
    printf(" %llu %llx\n", (unsigned long long)size, (unsigned long long)param[0]);
    free(param);
    printf("no scales %d\n", (int)aclnnTransQuantParam(NULL, 0, NULL, 0, &param, &size));
    printf("no out %d\n", (int)aclnnTransQuantParam(scales, 1, NULL, 0, NULL, &size));
    return 0;
}
"""


def test_trans_quant_param_encodes_scales_and_offsets(tmp_path):
    """aclnnTransQuantParam (ops-nn's quant/trans_quant_param): the size rounded up to 16
    unless 1, a scale's float32 bits with bit 46, an offset rounded and clamped to 9 bits at
    bit 37; a NULL scale array is 161002, a NULL output 161001."""
    # ops-nn's example line (tools/run_cann_samples.py): -lopapi_nn -lopapi_math ...
    lines = run_c_client(tmp_path, QUANT_CLIENT, HOME,
                         ["-lopapi_nn", "-lopapi_math", "-lascendcl", "-lnnopbase"],
                         compiler="c++", includes=("aclnnop",))
    flag = 1 << 46
    assert lines == [
        "status 0", "size 16",
        f"{0x3F800000 | flag | (3 << 37):x}", f"{0x3F000000 | flag | (0x100 << 37):x}", "0",
        f"one 0 1 {0x3F800000 | flag:x}",
        "no scales 161002", "no out 161001"]


@pytest.mark.parametrize("repository,short", [("ops-nn", "nn"), ("ops-math", "math")])
def test_experimental_operators_have_their_custom_package(repository, short):
    """opp/vendors/custom_<short>/op_api: the headers of the repository's experimental
    operators, the other names its experimental op_api gives released operators' headers
    (copies, as ops-math's experimental/math/is_neg_inf/op_api/aclnn_is_neg_inf.h declares
    aclnn_isneginf.h's operator), and a libcust_opapi.so filtering the repository's operator
    library."""
    api = HOME / "opp" / "vendors" / f"custom_{short}" / "op_api"
    expected = {entry["header"].rsplit("/", 1)[-1] for entry in OPERATORS.values()
                if entry["repository"] == repository
                and entry["header"].startswith("experimental/")}
    other_names = {other.rsplit("/", 1)[-1]: entry["header"].rsplit("/", 1)[-1]
                   for entry in OPERATORS.values() if entry["repository"] == repository
                   for other in entry.get("experimental_headers", ())}
    assert expected and other_names
    assert {p.name for p in (api / "include").glob("*.h")} == expected | set(other_names)
    for name, built_in in other_names.items():
        if name not in expected:
            assert (api / "include" / name).read_bytes() == (
                HOME / "include" / "aclnnop" / built_in).read_bytes()
    config = (HOME / "opp" / "vendors" / "config.ini").read_text(encoding="utf-8")
    assert f"custom_{short}" not in config
    if shutil.which("readelf"):
        dynamic = subprocess.run(["readelf", "-d", str(api / "lib" / "libcust_opapi.so")],
                                 capture_output=True, text=True, check=True).stdout
        assert f"Filter library: [libaclnn_py_emu_opapi_{short}.so]" in dynamic


def test_operators_only_their_definitions_declare_have_headers():
    from_defs = {name: entry for name, entry in OPERATORS.items()
                 if entry.get("prototypes") == "def"}
    assert len(from_defs) > 100
    text = (HOME / "include" / "aclnnop" / "aclnn_acos_v2.h").read_text(encoding="utf-8")
    assert "aclnnAcosV2GetWorkspaceSize(const aclTensor *self, const aclTensor *out" in text
    scalar_list = (HOME / "include" / "aclnnop" / "aclnn_foreach_add_scalar_list.h").read_text(
        encoding="utf-8")
    assert "const aclScalarList *scalars" in scalar_list
