"""tools/cann_facts.py: parameter roles read from made-up operator docs and headers (none
of them CANN's text), its fallback rules, and the committed aclnn_py/data/operators.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers import ROOT, load_script

SCRIPT = ROOT / "tools" / "cann_facts.py"
DATA = ROOT / "aclnn_py" / "data" / "operators.json"
COMMIT = "0123456789abcdef0123456789abcdef01234567"

if not SCRIPT.exists():  # an installed copy without the repository's tools/
    pytest.skip("tools/cann_facts.py is not here", allow_module_level=True)


facts = load_script(SCRIPT)
P = facts.CParameter


# --------------------------------------------------------------------------------------
# Made-up repositories.

def header(*prototypes: str) -> str:
    return "#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n" + "\n".join(
        f"ACLNN_API {p};" for p in prototypes) + "\n#ifdef __cplusplus\n}\n#endif\n"


def two_phase(name: str, parameters: str) -> list[str]:
    return [f"aclnnStatus {name}GetWorkspaceSize({parameters}, uint64_t *workspaceSize, "
            "aclOpExecutor **executor)",
            f"aclnnStatus {name}(void *workspace, uint64_t workspaceSize, "
            "aclOpExecutor *executor, aclrtStream stream)"]


def html_table(rows: list[tuple[str, str, str]]) -> str:
    body = "".join(f"<tr><td>{n}</td><td>{r}</td><td>{d}</td></tr>\n" for n, r, d in rows)
    return ("<table><thead><tr><th>参数名</th><th>输入/输出</th><th>描述</th></tr></thead>\n"
            f"<tbody>\n{body}<tr><td>workspaceSize</td><td>输出</td><td>-</td></tr>\n"
            "<tr><td>executor</td><td>输出</td><td>-</td></tr></tbody></table>\n")


def doc(sections: dict[str, list[tuple[str, str, str]]], example: str = "",
        prose: str = "") -> str:
    text = "# made up\n\n## 功能说明\n\n" + prose + "\n\n"
    for name, rows in sections.items():
        text += f"## {name}GetWorkspaceSize\n\n- **参数说明：**\n\n{html_table(rows)}\n"
        text += f"## {name}\n\n- **参数说明：**\n\n" + html_table(
            [("workspace", "输入", "-"), ("stream", "输入", "-")])
    if example:
        text += "\n## 调用示例\n\n```Cpp\n" + example + "\n```\n"
    return text


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def run(root: Path, tmp_path: Path, *extra: str, name: str = "ops-made") -> dict:
    out = tmp_path / "out.json"
    assert facts.main(["--repo", f"{name}={root}@{COMMIT}", "--out", str(out), *extra]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["schema"] == facts.SCHEMA
    assert data["repositories"][name]["commit"] == COMMIT
    return data["operators"]


def roles(entry: dict) -> tuple[list[str], list[str], str]:
    """An operator's entry's outputs, in-place parameters and the basis they were found on."""
    return entry["outputs"], entry["inout"], entry["basis"]


EXAMPLE_HELPERS = """
int CreateAclTensor(const std::vector<float>& hostData, const std::vector<int64_t>& shape,
                    void** deviceAddr, aclDataType dataType, aclTensor** tensor) {
  aclrtMalloc(deviceAddr, 4, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemcpy(*deviceAddr, 4, hostData.data(), 4, ACL_MEMCPY_HOST_TO_DEVICE);
  *tensor = aclCreateTensor(shape.data(), shape.size(), dataType, nullptr, 0,
                            ACL_FORMAT_ND, shape.data(), shape.size(), *deviceAddr);
  return 0;
}
"""


# --------------------------------------------------------------------------------------
# Tables.

@pytest.mark.parametrize("cell, role", [
    ("输入", "in"), ("输出", "out"), ("输入/输出", "inout"), ("输入输出", "inout"),
    ("输入|输出", "inout"), ("输入&输出", "inout"), (" 输入 / 输出 ", "inout"),
    ("输入／输出", "inout"), ("可选输入", "in"), ("输出（可选）", "out"),
    ("输入（Ref，原地更新）", "inout"), ("属性", "in"), ("计算输出", "out"),
    ("描述", None), ("", None)])
def test_role_spellings(cell, role):
    assert facts.role_of(cell) == role


def test_table_roles_of_each_spelling(tmp_path):
    root = tmp_path / "repo"
    names = ["a", "b", "c", "d", "e", "f"]
    write(root, "math/op/op_api/aclnn_op.h", header(*two_phase(
        "aclnnOp", ", ".join(f"const aclTensor *{n}" for n in names))))
    spellings = ["输入", "输出", "输入/输出", "输入输出", "输入|输出", "输入&amp;输出"]
    write(root, "math/op/docs/aclnnOp.md",
          doc({"aclnnOp": [(n, s, "-") for n, s in zip(names, spellings)]}))
    entry = run(root, tmp_path)["aclnnOp"]
    assert roles(entry) == (["b"], ["c", "d", "e", "f"], "table")
    assert entry["doc"] == "math/op/docs/aclnnOp.md"
    assert entry["header"] == "math/op/op_api/aclnn_op.h"
    assert "note" not in entry and "returns_nothing" not in entry


def test_names_with_types_rowspan_and_markup(tmp_path):
    root = tmp_path / "repo"
    write(root, "nn/op/op_host/op_api/aclnn_op.h", header(*two_phase(
        "aclnnOp", "const aclTensor *self, const aclScalar *alpha, const aclTensor *y, "
                   "aclTensor *z")))
    table = (
        "<table><thead><tr><th>参数名</th><th>输入/输出</th><th>描述</th></tr></thead><tbody>"
        "<tr><td>self（aclTensor*）</td><td rowspan=\"2\">输入</td><td>-</td></tr>"
        "<tr><td><b>alpha</b>(aclScalar*)</td><td>-</td></tr>"
        "<tr><td>y<br>(aclTensor*)</td><td>输<br>出</td><td>-</td></tr>"
        "<tr><td>`z`</td><td>输入</td><td>-</td></tr>"
        "<tr><td>workspaceSize</td><td>输出</td><td>-</td></tr></tbody></table>")
    write(root, "nn/op/docs/aclnnOp.md",
          f"# x\n\n## aclnnOpGetWorkspaceSize\n\n{table}\n")
    entry = run(root, tmp_path)["aclnnOp"]
    assert entry["outputs"] == ["y"]  # z: the table says input, whatever its const
    assert entry["inout"] == []


def test_pipe_and_list_tables(tmp_path):
    root = tmp_path / "repo"
    write(root, "cv/p/op_api/aclnn_p.h", header(
        *two_phase("aclnnPipe", "const aclTensor *x, const aclTensor *out"),
        *two_phase("aclnnListed", "const aclTensor *self, aclTensor *result")))
    write(root, "cv/p/docs/aclnnPipe.md",
          "# p\n\n## aclnnPipeGetWorkspaceSize\n\n| 参数名 | 输入/输出 | 说明 |\n|---|---|---|\n"
          "| x | 输入 | - |\n| out | 输出 | - |\n| workspaceSize | 输出 | - |\n")
    write(root, "cv/p/docs/aclnnListed.md",
          "# l\n\n## aclnnListedGetWorkspaceSize\n\n- **参数说明：**\n\n"
          "  - self(const aclTensor*，计算输入)：一个输入。\n"
          "  - result（aclTensor*, 计算输出）：一个输出。\n"
          "  - workspaceSize(uint64_t \\*，出参)：-\n")
    operators = run(root, tmp_path)
    assert operators["aclnnPipe"]["outputs"] == ["out"]
    assert operators["aclnnListed"]["outputs"] == ["result"]
    assert operators["aclnnListed"]["basis"] == "table"


# --------------------------------------------------------------------------------------
# Precedence.

def test_example_read_back_overrides_the_table(tmp_path):
    root = tmp_path / "repo"
    write(root, "math/scale/op_api/aclnn_scale.h", header(*two_phase(
        "aclnnScaleIt", "const aclTensor *buffer, const aclScalar *factor")))
    example = EXAMPLE_HELPERS + """
int main() {
  void* bufDeviceAddr = nullptr;
  aclTensor* buf = nullptr;
  auto ret = CreateAclTensor(hostData, shape, &bufDeviceAddr, ACL_FLOAT, &buf);
  ret = aclnnScaleItGetWorkspaceSize(buf, factor, &workspaceSize, &executor);
  ret = aclnnScaleIt(workspaceAddr, workspaceSize, executor, stream);
  ret = aclrtMemcpy(result.data(), size, bufDeviceAddr, size,
                    ACL_MEMCPY_DEVICE_TO_HOST);
  return 0;
}"""
    write(root, "math/scale/docs/aclnnScaleIt.md", doc(
        {"aclnnScaleIt": [("buffer", "输入", "-"), ("factor", "输入", "-")]}, example))
    entry = run(root, tmp_path)["aclnnScaleIt"]
    # buffer matched by position: the example calls it buf
    assert roles(entry) == ([], ["buffer"], "example")
    assert "buffer" in entry["note"]


def test_example_only_adds_writes(tmp_path):
    root = tmp_path / "repo"
    write(root, "math/two/op_api/aclnn_two.h", header(*two_phase(
        "aclnnTwo", "const aclTensor *x, aclTensor *first, aclTensor *second")))
    example = EXAMPLE_HELPERS + """
int main() {
  CreateAclTensor(h, s, &xDeviceAddr, ACL_FLOAT, &x);
  CreateAclTensor(h, s, &firstDeviceAddr, ACL_FLOAT, &first);
  CreateAclTensor(h, s, &secondDeviceAddr, ACL_FLOAT, &second);
  aclnnTwoGetWorkspaceSize(x, first, second, &workspaceSize, &executor);
  aclrtMemcpy(r.data(), n, firstDeviceAddr, n, ACL_MEMCPY_DEVICE_TO_HOST);
  // an input read back while the table has outputs, and the rules say input too
  aclrtMemcpy(r.data(), n, xDeviceAddr, n, ACL_MEMCPY_DEVICE_TO_HOST);
}"""
    write(root, "math/two/docs/aclnnTwo.md", doc(
        {"aclnnTwo": [("x", "输入", "-"), ("first", "输出", "-"), ("second", "输出", "-")]},
        example))
    entry = run(root, tmp_path)["aclnnTwo"]
    assert roles(entry) == (["first", "second"], [], "table")
    assert "kept as input" in entry["note"]


# A sample program in CANN's style: its own tensor helper (the address is its void **
# parameter, whatever the variable is called), several read-backs after one call.
SAMPLE_HELPERS = """
int MakeTensor(const std::vector<float>& vals, const std::vector<int64_t>& shape, aclDataType dt,
               void** deviceAddr, aclTensor** tensor) {
  aclrtMalloc(deviceAddr, 4, ACL_MEM_MALLOC_HUGE_FIRST);
  aclrtMemcpy(*deviceAddr, 4, vals.data(), 4, ACL_MEMCPY_HOST_TO_DEVICE);
  *tensor = aclCreateTensor(shape.data(), shape.size(), dt, nullptr, 0, ACL_FORMAT_ND,
                            shape.data(), shape.size(), *deviceAddr);
  return 0;
}
"""


def gather_sample(read_back: str) -> str:
    """A sample calling aclnnGather(sums, state, momentum, result) that reads back
    ``read_back`` (device addresses dSums, dState, dResult) after the call."""
    reads = "".join(f"  aclrtMemcpy(h.data(), n, {address}, n, ACL_MEMCPY_DEVICE_TO_HOST);\n"
                    for address in read_back.split())
    return SAMPLE_HELPERS + f"""
int RunOne(aclrtStream stream) {{
  void *dSums = nullptr, *dState = nullptr, *dResult = nullptr;
  aclTensor *tSums = nullptr, *tState = nullptr, *tResult = nullptr;
  MakeTensor(sums, shape, ACL_FLOAT, &dSums, &tSums);
  MakeTensor(state, shape, ACL_FLOAT, &dState, &tState);
  MakeTensor(result, shape, ACL_FLOAT, &dResult, &tResult);
  auto ret = aclnnGatherGetWorkspaceSize(tSums, tState, 0.5f, tResult, &wsSize, &exec);
  ret = aclnnGather(ws, wsSize, exec, stream);
  aclrtSynchronizeStream(stream);
{reads}  return 0;
}}"""


GATHER = "const aclTensor *sums, aclTensor *state, float momentum, aclTensor *result"
GATHER_TABLE = [("sums", "输入", "-"), ("state", "输入", "-"), ("momentum", "输入", "-"),
                ("result", "输出", "-")]


def test_experimental_sample_read_back_makes_a_table_input_in_place(tmp_path):
    root = tmp_path / "repo"
    write(root, "norm/gather/op_api/aclnn_gather.h", header(*two_phase("aclnnGather", GATHER)))
    write(root, "norm/gather/docs/aclnnGather.md", doc({"aclnnGather": GATHER_TABLE}))
    write(root, "norm/gather/examples/test_aclnn_gather.cpp", gather_sample("dResult"))
    # The experimental twin of the operator: its header is a duplicate, its sample reads the
    # running state back after the call.
    write(root, "experimental/norm/gather/op_api/aclnn_gather.h",
          header(*two_phase("aclnnGather", GATHER)))
    sample = "experimental/norm/gather/examples/arch20/test_aclnn_gather_inplace.cpp"
    write(root, sample, gather_sample("dState dResult"))
    # Another operator's sample, reading back what it passed that operator as sums.
    other = gather_sample("dSums").replace("aclnnGather", "aclnnOther")
    write(root, "experimental/norm/other/examples/test_aclnn_other.cpp", other)
    entry = run(root, tmp_path)["aclnnGather"]
    assert entry["header"] == "norm/gather/op_api/aclnn_gather.h"
    assert roles(entry) == (["result"], ["state"], "example")
    assert "state" in entry["note"] and sample in entry["note"]


def test_sample_read_back_of_a_table_input_the_rules_call_an_input_is_kept(tmp_path):
    root = tmp_path / "repo"
    write(root, "norm/gather/op_api/aclnn_gather.h", header(*two_phase("aclnnGather", GATHER)))
    write(root, "norm/gather/docs/aclnnGather.md", doc({"aclnnGather": GATHER_TABLE}))
    sample = "experimental/norm/gather/examples/test_aclnn_gather.cpp"
    write(root, sample, gather_sample("dSums dResult"))  # sums: const, the rules say input
    entry = run(root, tmp_path)["aclnnGather"]
    assert roles(entry) == (["result"], [], "table")
    assert "sums" in entry["note"] and "kept as input" in entry["note"]


def dfx_source(operator: str, inputs: str, outputs: str) -> str:
    """An op_api source in CANN's style, its phase 1 naming its tensors for the dump."""
    return (f"aclnnStatus {operator}GetWorkspaceSize(/* ... */)\n{{\n"
            f"    L2_DFX_PHASE_1({operator},\n        DFX_IN({inputs}), DFX_OUT({outputs}));\n"
            "    auto uniqueExecutor = CREATE_EXECUTOR();\n    return ACLNN_SUCCESS;\n}\n")


CHECK = ("const aclTensor *val, aclTensor *gradRef, aclTensor *stepRef, int64_t mode, "
         "aclTensor *stats, aclTensor *result")
CHECK_TABLE = [("val", "输入", "-"), ("gradRef", "输入", "-"), ("stepRef", "输入", "-"),
               ("mode", "输入", "-"), ("stats", "输入", "-"), ("result", "输出", "-")]


def test_the_op_api_source_s_outputs_add_writes_the_table_lacks(tmp_path):
    root = tmp_path / "repo"
    write(root, "math/check/op_api/aclnn_check.h", header(*two_phase("aclnnCheck", CHECK)))
    write(root, "math/check/docs/aclnnCheck.md", doc({"aclnnCheck": CHECK_TABLE}))
    source = "math/check/op_host/op_api/aclnn_check.cpp"
    write(root, source, dfx_source("aclnnCheck", "val, gradRef, stepRef, mode",
                                   "gradRef, stepRef, stats, result"))
    entry = run(root, tmp_path)["aclnnCheck"]
    # Dumped as inputs and outputs: in place; as an output only: an output.
    assert roles(entry) == (["stats", "result"], ["gradRef", "stepRef"], "source")
    assert "gradRef, stepRef, stats" in entry["note"] and source in entry["note"]


TRANSPOSE = "const aclTensor *x, const aclIntArray *perm, aclTensor *out"
TRANSPOSE_TABLE = [("x", "输入/输出", "-"), ("perm", "输入", "-"), ("out", "输出", "-")]


def test_a_table_write_the_op_api_source_lists_among_its_inputs_only_is_an_input(tmp_path):
    root = tmp_path / "repo"
    write(root, "conversion/t/op_api/aclnn_t.h", header(*two_phase("aclnnT", TRANSPOSE)))
    write(root, "conversion/t/docs/aclnnT.md", doc({"aclnnT": TRANSPOSE_TABLE}))
    write(root, "conversion/t/op_api/aclnn_t.cpp", dfx_source("aclnnT", "x, perm", "out"))
    entry = run(root, tmp_path)["aclnnT"]
    assert roles(entry) == (["out"], [], "source")
    assert "x: table says" in entry["note"]


def test_a_read_back_outranks_the_op_api_source(tmp_path):
    root = tmp_path / "repo"
    write(root, "norm/gather/op_api/aclnn_gather.h", header(*two_phase("aclnnGather", GATHER)))
    write(root, "norm/gather/docs/aclnnGather.md", doc({"aclnnGather": GATHER_TABLE}))
    write(root, "norm/gather/op_api/aclnn_gather.cpp",
          dfx_source("aclnnGather", "sums, state, momentum", "result"))
    write(root, "experimental/norm/gather/examples/test_aclnn_gather.cpp",
          gather_sample("dState dResult"))
    entry = run(root, tmp_path)["aclnnGather"]
    assert roles(entry) == (["result"], ["state"], "example")
    # An operator whose source names no outputs says nothing about its inputs.
    write(root, "conversion/t/op_api/aclnn_t.h", header(*two_phase("aclnnT", TRANSPOSE)))
    write(root, "conversion/t/docs/aclnnT.md", doc({"aclnnT": TRANSPOSE_TABLE}))
    write(root, "conversion/t/op_api/aclnn_t.cpp", dfx_source("aclnnT", "x, perm", ""))
    assert roles(run(root, tmp_path)["aclnnT"]) == (["out"], ["x"], "table")


def test_prose_in_the_row_overrides_the_table(tmp_path):
    root = tmp_path / "repo"
    write(root, "optim/step/op_api/aclnn_step.h", header(*two_phase(
        "aclnnStep", "aclTensor *weights, const aclTensor *grad, double lr, "
                     "aclTensor *stats")))
    write(root, "optim/step/docs/aclnnStep.md", doc({"aclnnStep": [
        ("weights", "输入", "要训练的参数，计算后原地更新。"),
        ("grad", "输入", "梯度，用于更新weights。"),
        ("lr", "输入", "学习率。"),
        ("stats", "输出", "统计。")]}))
    entry = run(root, tmp_path)["aclnnStep"]
    # "用于更新weights" is not about grad itself
    assert roles(entry) == (["stats"], ["weights"], "prose")
    assert "weights" in entry["note"]


def test_multi_operator_doc_and_example(tmp_path):
    root = tmp_path / "repo"
    write(root, "math/neg/op_api/aclnn_neg.h", header(
        *two_phase("aclnnNeg", "const aclTensor *self, aclTensor *out"),
        *two_phase("aclnnInplaceNeg", "const aclTensor *selfRef")))
    example = EXAMPLE_HELPERS + """
int main() {
  CreateAclTensor(h, s, &selfDeviceAddr, ACL_FLOAT, &self);
  CreateAclTensor(h, s, &outDeviceAddr, ACL_FLOAT, &out);
  aclnnNegGetWorkspaceSize(self, out, &workspaceSize, &executor);
  aclrtMemcpy(r.data(), n, outDeviceAddr, n, ACL_MEMCPY_DEVICE_TO_HOST);
  aclnnInplaceNegGetWorkspaceSize(self, &inplaceWorkspaceSize, &inplaceExecutor);
  aclrtMemcpy(r.data(), n, selfDeviceAddr, n, ACL_MEMCPY_DEVICE_TO_HOST);
}"""
    write(root, "math/neg/docs/aclnnNeg&aclnnInplaceNeg.md", doc({
        "aclnnNeg": [("self", "输入", "-"), ("out", "输出", "-")],
        "aclnnInplaceNeg": [("selfRef（aclTensor*）", "输入", "-")]}, example))
    # Another repository-wide doc naming aclnnNeg is not preferred over the folder's own.
    write(root, "other/docs/aclnnNeg.md", doc({"aclnnNeg": [("self", "输出", "-")]}))
    operators = run(root, tmp_path)
    neg, inplace = operators["aclnnNeg"], operators["aclnnInplaceNeg"]
    assert neg["doc"] == inplace["doc"] == "math/neg/docs/aclnnNeg&aclnnInplaceNeg.md"
    assert (neg["outputs"], neg["inout"], neg["basis"]) == (["out"], [], "table")
    # Reading self back after the in-place call is that call's, not aclnnNeg's.
    assert (inplace["outputs"], inplace["inout"]) == ([], ["selfRef"])
    assert inplace["basis"] == "example"


def test_a_doc_giving_no_output(tmp_path):
    root = tmp_path / "repo"
    write(root, "mc2/wait/op_host/op_api/aclnn_wait.h", header(*two_phase(
        "aclnnWaitAll", "aclTensor *tokenRef, const char *group")))
    write(root, "mc2/wait/docs/aclnnWaitAll.md", doc(
        {"aclnnWaitAll": [("tokenRef", "输入", "只用于排序。"), ("group", "输入", "-")]},
        prose="接口内不对tokenRef做任何操作。"))
    entry = run(root, tmp_path)["aclnnWaitAll"]
    assert roles(entry) == ([], [], "table")
    assert entry["returns_nothing"] is True


def test_a_doc_giving_no_output_without_saying_so_falls_back_to_rules(tmp_path):
    root = tmp_path / "repo"
    write(root, "math/f/op_api/aclnn_f.h", header(*two_phase(
        "aclnnInplaceF", "aclTensor *selfRef")))
    write(root, "math/f/docs/aclnnInplaceF.md", doc({"aclnnInplaceF": [("selfRef", "输入",
                                                                          "-")]}))
    entry = run(root, tmp_path)["aclnnInplaceF"]
    assert entry["inout"] == ["selfRef"] and entry["basis"] == "rules"
    assert "returns_nothing" not in entry and entry["note"]


def test_no_doc_uses_the_rules(tmp_path):
    root = tmp_path / "repo"
    write(root, "nn/g/op_api/aclnn_g.h", header(*two_phase(
        "aclnnG", "const aclTensor *gradOut, const aclTensor *x, const aclTensor *gradX, "
                  "aclTensor *meanOut")))
    entry = run(root, tmp_path)["aclnnG"]
    assert entry["doc"] is None
    assert roles(entry) == (["meanOut"], [], "rules")


def test_an_operator_without_a_header_is_declared_by_its_doc(tmp_path):
    """An operator whose header CANN's code generator writes at build time (no op_api header)
    takes its prototypes from its doc's code blocks (or inline code spans), and its header's
    name from the doc's
    example; an op_api header still outranks a doc, and a scalar list is declared."""
    root = tmp_path / "repo"
    write(root, "nn/h/op_api/aclnn_h.h", header(*two_phase(
        "aclnnH", "const aclTensor *x, aclTensor *out")))
    prototypes = "\n".join(two_phase("aclnnGen", "const aclTensor *x, double scale, "
                                                 "aclTensor *out"))
    text = doc({"aclnnGen": [("x", "输入", "-"), ("scale", "输入", "-"),
                             ("out", "输出", "-")]},
               example='#include "aclnnop/aclnn_gen.h"\nint main() { return 0; }')
    write(root, "nn/gen/docs/aclnnGen.md", text.replace(
        "## 功能说明", "## 函数原型\n\n```Cpp\n" + prototypes + "\n```\n\n## 功能说明"))
    write(root, "nn/h/docs/aclnnH.md", "```Cpp\n" + "\n".join(two_phase(
        "aclnnH", "const aclTensor *other, aclTensor *out")) + "\n```\n")
    write(root, "nn/s/docs/aclnnS.md", "```Cpp\n" + "\n".join(two_phase(
        "aclnnS", "const aclTensor *x, const aclScalarList *s")) + "\n```\n")
    write(root, "math/inline/docs/aclnnInline.md", "".join(
        f"- `{p};`\n" for p in two_phase("aclnnInline", "const aclTensor *x, aclTensor *out")))
    operators = run(root, tmp_path)
    assert operators["aclnnInline"]["header"] == "math/inline/op_host/aclnn_inline.h"
    assert operators["aclnnInline"]["parameters"] == [["const aclTensor *", "x"],
                                                      ["aclTensor *", "out"]]
    entry = operators["aclnnGen"]
    assert entry["prototypes"] == "doc"
    assert entry["header"] == "nn/gen/op_host/aclnn_gen.h"
    assert entry["parameters"] == [["const aclTensor *", "x"], ["double", "scale"],
                                   ["aclTensor *", "out"]]
    assert roles(entry) == (["out"], [], "table")
    assert operators["aclnnH"]["parameters"][0] == ["const aclTensor *", "x"]
    assert "prototypes" not in operators["aclnnH"]
    assert operators["aclnnS"]["parameters"][1] == ["const aclScalarList *", "s"]


def test_an_operator_only_its_definition_declares(tmp_path):
    """An operator whose CMakeLists.txt generates its aclnn API from its OpDef
    (``ACLNNTYPE aclnn``), declared by no header or doc, takes the generated prototype: inputs
    (optional ones named ...Optional), attributes, then outputs; an output of an input's name
    makes that input a ...Ref updated in place. Without ``ACLNNTYPE aclnn`` nothing is read."""
    root = tmp_path / "repo"
    definition = """
namespace ops {
class FooBar : public OpDef {
public:
    explicit FooBar(const char* name) : OpDef(name)
    {
        this->Input("x").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
        this->Input("bias").ParamType(OPTIONAL).DataType({ge::DT_FLOAT});
        this->Input("var").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
        this->Output("y").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
        this->Output("var").ParamType(REQUIRED).DataType({ge::DT_FLOAT});
        // this->Attr("old").Int(0);
        this->Attr("alpha").AttrType(OPTIONAL).Float(1.0);
        this->Attr("axes").ListInt({0});
        this->Attr("mode").AttrType(REQUIRED).String("a");
    }
};
OP_ADD(FooBar);
}
"""
    write(root, "experimental/math/foo_bar/CMakeLists.txt",
          "add_all_modules_sources(OPTYPE foo_bar ACLNNTYPE aclnn)\n")
    write(root, "experimental/math/foo_bar/op_host/foo_bar_def.cpp", definition)
    write(root, "math/baz/op_host/CMakeLists.txt",
          "add_modules_sources(OPTYPE baz ACLNNTYPE aclnn_exclude)\n")
    write(root, "math/baz/op_host/baz_def.cpp", definition.replace("FooBar", "Baz"))
    operators = run(root, tmp_path)
    entry = operators["aclnnFooBar"]
    assert entry["prototypes"] == "def"
    assert entry["header"] == "experimental/math/foo_bar/op_host/aclnn_foo_bar.h"
    assert entry["parameters"] == [
        ["const aclTensor *", "x"], ["const aclTensor *", "biasOptional"],
        ["aclTensor *", "varRef"], ["double", "alphaOptional"],
        ["const aclIntArray *", "axes"], ["char *", "mode"], ["const aclTensor *", "y"]]
    assert roles(entry) == (["y"], ["varRef"], "rules")
    assert "aclnnBaz" not in operators


def test_duplicate_experimental_header(tmp_path):
    root = tmp_path / "repo"
    write(root, "experimental/math/d/op_api/aclnn_d.h", header(*two_phase(
        "aclnnD", "const aclTensor *x, aclTensor *y, aclTensor *z")))
    write(root, "math/d/op_api/aclnn_d.h", header(*two_phase(
        "aclnnD", "const aclTensor *x, aclTensor *y")))
    write(root, "experimental/math/d/docs/aclnnD.md",
          doc({"aclnnD": [("x", "输出", "-"), ("y", "输出", "-"), ("z", "输出", "-")]}))
    write(root, "math/d/docs/aclnnD.md", doc({"aclnnD": [("x", "输入", "-"),
                                                        ("y", "输出", "-")]}))
    entry = run(root, tmp_path)["aclnnD"]
    assert entry["header"] == "math/d/op_api/aclnn_d.h"
    assert entry["doc"] == "math/d/docs/aclnnD.md"
    assert entry["outputs"] == ["y"]
    assert "experimental_headers" not in entry  # other prototypes: not another name


def test_an_experimental_header_of_another_name_with_the_same_prototypes_is_recorded(
        tmp_path):
    """ops-math's experimental/math/is_neg_inf/op_api/aclnn_is_neg_inf.h declares
    aclnn_isneginf.h's operator alike: its name is kept for the experimental package."""
    root = tmp_path / "repo"
    prototype = header(*two_phase("aclnnE", "const aclTensor *x, aclTensor *y"))
    write(root, "math/e/op_api/aclnn_e.h", prototype)
    write(root, "experimental/math/e/op_api/aclnn_e_other.h", prototype)
    write(root, "experimental/math/f/op_api/aclnn_e.h", prototype)  # the same name: none
    entry = run(root, tmp_path)["aclnnE"]
    assert entry["header"] == "math/e/op_api/aclnn_e.h"
    assert entry["experimental_headers"] == ["experimental/math/e/op_api/aclnn_e_other.h"]


def test_a_phase_2_with_parameters_of_its_own_is_recorded(tmp_path):
    root = tmp_path / "repo"
    blur = ["aclnnStatus aclnnBlurGetWorkspaceSize(const aclTensor *src, const aclIntArray *k, "
            "double sigma, const aclTensor *dst, uint64_t *workspaceSize, "
            "aclOpExecutor **executor)",
            "aclnnStatus aclnnBlur(void *workspace, uint64_t workspaceSize, "
            "aclOpExecutor *executor, const aclTensor *src, const aclIntArray *k, double sigma, "
            "aclTensor *dst, const aclrtStream stream)"]
    write(root, "experimental/image/blur/op_api/aclnn_blur.h", header(*blur))
    write(root, "experimental/image/blur/docs/aclnnBlur.md", doc({"aclnnBlur": [
        ("src", "输入", "-"), ("k", "输入", "-"), ("sigma", "输入", "-"),
        ("dst", "输出", "-")]}))
    entry = run(root, tmp_path)["aclnnBlur"]
    assert entry["parameters"] == [["const aclTensor *", "src"], ["const aclIntArray *", "k"],
                                   ["double", "sigma"], ["const aclTensor *", "dst"]]
    assert entry["phase2"] == [["const aclTensor *", "src"], ["const aclIntArray *", "k"],
                               ["double", "sigma"], ["aclTensor *", "dst"]]
    assert roles(entry) == (["dst"], [], "table")


def test_a_phase_2_only_parameter_takes_its_role_from_the_table(tmp_path):
    root = tmp_path / "repo"
    write(root, "cv/mark/op_api/aclnn_mark.h", header(
        "aclnnStatus aclnnMarkGetWorkspaceSize(const aclTensor *x, const aclTensor *y, "
        "uint64_t *workspaceSize, aclOpExecutor **executor)",
        "aclnnStatus aclnnMark(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
        "int64_t seed, const aclTensor *statsRef, aclrtStream stream)"))
    entry = run(root, tmp_path)["aclnnMark"]  # no doc: the rules, phase 2's tensor included
    assert entry["phase2"] == [["int64_t", "seed"], ["const aclTensor *", "statsRef"]]
    assert roles(entry) == ([], ["statsRef"], "rules")


def test_odd_prototypes_are_skipped_and_listed(tmp_path, capsys):
    root = tmp_path / "repo"
    odd = ["aclnnStatus aclnnOddGetWorkspaceSize(const aclTensor *x, aclTensor *y, "
           "uint64_t *workspaceSize, aclOpExecutor **executor)",
           "aclnnStatus aclnnOdd(void *workspace, uint64_t workspaceSize, "
           "aclOpExecutor *executor, aclrtStream stream, const aclTensor *x)"]
    write(root, "cv/odd/op_api/aclnn_odd.h", header(
        *odd, *two_phase("aclnnFine", "const aclTensor *x, aclTensor *out")))
    operators = run(root, tmp_path)
    assert "aclnnOdd" not in operators
    assert operators["aclnnFine"]["outputs"] == ["out"]
    printed = capsys.readouterr().out
    assert "skipped prototypes: 1" in printed and "aclnnOdd" in printed
    assert re.search(r"operators: 1\b", printed)


def test_summary_counts_rule_disagreements(tmp_path, capsys):
    root = tmp_path / "repo"
    write(root, "math/r/op_api/aclnn_r.h", header(*two_phase(
        "aclnnR", "const aclTensor *x, const aclTensor *y")))
    write(root, "math/r/docs/aclnnR.md", doc({"aclnnR": [("x", "输入", "-"),
                                                        ("y", "输出", "-")]}))
    run(root, tmp_path, "--verbose")
    printed = capsys.readouterr().out
    assert "fallback rules vs the tables: 1 of 1 operators differ" in printed
    assert "aclnnR: rules out=[] inout=[]" in printed


@pytest.mark.slow
def test_repo_argument_needs_a_commit_outside_git(tmp_path):
    with pytest.raises(Exception, match="commit"):
        facts.parse_repo(f"ops-x={tmp_path}")
    repository = facts.parse_repo(f"ops-x={tmp_path}@{COMMIT.upper()}")
    assert repository.commit == COMMIT and repository.url == "https://github.com/hicann/ops-x"


# --------------------------------------------------------------------------------------
# The fallback rules.

@pytest.mark.parametrize("c_type, name, role", [
    ("const aclTensor *", "self", "in"),
    ("aclTensor *", "self", "out"),  # non-const tensor
    ("aclTensorList *", "outs", "out"),
    ("const aclTensor *", "out", "out"),
    ("const aclTensor *", "yOut", "out"),
    ("const aclTensor *", "meanOutOptional", "out"),
    ("const aclTensor *", "selfRef", "inout"),
    ("aclTensor *", "varRef", "inout"),
    ("const aclTensorList *", "paramsRef", "inout"),
    ("const aclTensor *", "gradOut", "in"),
    ("const aclTensor *", "gradOutput", "in"),
    ("aclTensor *", "gradInput", "out"),
    ("const aclTensor *", "timeOut", "in"),
    ("const aclScalar *", "selfRef", "in"),  # only tensors are written
    ("aclScalar *", "out", "in"),
    ("aclIntArray *", "sizes", "in"),
    ("int64_t", "out", "in"),
    ("const aclTensor *const", "x", "in"),
    ("aclTensor *const", "x", "out"),
    ("uint64_t *", "workspaceSize", "in"),
    ("aclOpExecutor **", "executor", "in"),
])
def test_rule_roles(c_type, name, role):
    outputs, inout = facts.rule_roles([P(c_type, name)])
    found = "out" if outputs == [name] else "inout" if inout == [name] else "in"
    assert (outputs + inout) in ([], [name])
    assert found == role


def test_rule_roles_keep_parameter_order():
    parameters = [P("aclTensor *", "b"), P("const aclTensor *", "aRef"),
                  P("const aclTensor *", "a"), P("const aclTensor *", "out")]
    assert facts.rule_roles(parameters) == (["b", "out"], ["aRef"])


def test_rule_roles_take_the_package_header_readers_parameters():
    text = header(*two_phase("aclnnK", "const aclTensor *x, aclTensor *y"))
    found = facts._headers.operator(text, "aclnnK", "k.h")
    assert facts.rule_roles(found.parameters) == (["y"], [])


# --------------------------------------------------------------------------------------
# The committed table.

def test_committed_operators_json_is_well_formed():
    text = DATA.read_text(encoding="utf-8")
    data = json.loads(text)
    assert data["schema"] == "aclnn_py.operators/1"
    assert data["generated_by"] == "tools/cann_facts.py"
    repositories = data["repositories"]
    assert repositories
    for name, repository in repositories.items():
        assert re.fullmatch(r"[0-9a-f]{40}", repository["commit"]), name
        assert repository["url"] == f"https://github.com/hicann/{name}"
    operators = data["operators"]
    assert len(operators) > 100
    assert list(operators) == sorted(operators)
    allowed = {"repository", "header", "doc", "outputs", "inout", "basis", "note",
               "returns_nothing", "parameters", "phase2", "prototypes", "experimental_headers"}
    for name, entry in operators.items():
        assert re.fullmatch(r"aclnn\w+", name)
        assert set(entry) <= allowed, name
        assert entry["repository"] in repositories, name
        assert entry["header"].endswith(".h")
        if entry.get("prototypes") == "doc":  # a header CANN's code generator writes
            assert "/op_host/aclnn_" in "/" + entry["header"] and entry["doc"], name
        elif entry.get("prototypes") == "def":  # written from the operator's OpDef alone
            assert "/op_host/aclnn_" in "/" + entry["header"], name
        else:
            assert "prototypes" not in entry, name
            assert "/op_api/aclnn_" in "/" + entry["header"], name
        assert entry["doc"] is None or entry["doc"].endswith(".md"), name
        for key in ("outputs", "inout"):
            assert isinstance(entry[key], list), name
            assert all(re.fullmatch(r"[A-Za-z_]\w*", p) for p in entry[key]), name
        assert not set(entry["outputs"]) & set(entry["inout"]), name
        declared = [p[1] for p in entry["parameters"] + entry.get("phase2", [])]
        assert all(isinstance(p[0], str) for p in entry["parameters"]), name
        assert entry.get("phase2", [None]), name  # present only when not empty
        assert set(entry["outputs"]) | set(entry["inout"]) <= set(declared), name
        assert entry["basis"] in facts.BASES, name
        if entry["basis"] in ("example", "source", "prose", "override"):
            assert entry.get("note"), name
        if "note" in entry:
            assert isinstance(entry["note"], str) and entry["note"].isascii(), name
        if "returns_nothing" in entry:
            assert entry["returns_nothing"] is True, name
            assert entry["outputs"] == entry["inout"] == [], name
        if entry["basis"] == "rules" and entry["doc"] is None:
            assert "returns_nothing" not in entry, name


def test_committed_operators_json_facts():
    operators = json.loads(DATA.read_text(encoding="utf-8"))["operators"]

    def roles(name):
        return operators[name]["outputs"], operators[name]["inout"]

    assert roles("aclnnInplaceAdd") == ([], ["selfRef"])
    assert roles("aclnnInplaceAddV3") == ([], ["other"])
    assert roles("aclnnRelu") == (["out"], [])
    assert set(roles("aclnnBatchNorm")[1]) == {"runningMean", "runningVar"}
    assert operators["aclnnDistributeBarrier"].get("returns_nothing") is True
    assert roles("aclnnLayerNorm")[0][1:] == ["meanOutOptional", "rstdOutOptional"]
    assert roles("aclnnMseLossBackward") == (["out"], [])
    assert all(p.endswith("Ref") for p in roles("aclnnFusedAdamw")[1])
    # ops-cv experimental/image/gaussian_blur/op_api/aclnn_gaussian_blur.h: phase 2 takes
    # phase 1's parameters again, between the executor and the stream.
    blur = operators["aclnnGaussianBlur"]
    assert blur["phase2"] == [["const aclTensor *", "src"], ["const aclIntArray *", "ksize"],
                              ["double", "sigmaX"], ["double", "sigmaY"],
                              ["int64_t", "borderType"], ["aclTensor *", "dst"]]
    assert [p[1] for p in blur["parameters"]] == [p[1] for p in blur["phase2"]]
    assert roles("aclnnGaussianBlur") == (["dst"], [])
    assert sum("phase2" in entry for entry in operators.values()) == 1
    # A sample reads mean and variance back (ops-nn experimental/norm/
    # sync_batch_norm_gather_stats/examples/test_aclnn_sync_batch_norm_gather_stats_inplace.cpp).
    assert roles("aclnnSyncBatchNormGatherStats") == (["batchMean", "batchInvstd"],
                                                      ["mean", "variance"])
    # The op_api sources' dumps of phase 1 correct the docs' tables.
    assert roles("aclnnSilentCheck") == (["result"], ["inputGradRef", "sfdaRef", "stepRef"])
    assert roles("aclnnConfusionTranspose") == (["out"], [])
    assert "attentionOut" not in roles("aclnnNsaSelectedAttentionGrad")[0]
    assert "varRef" in roles("aclnnApplyAdamW")[1]


def test_committed_json_overrides_are_few_and_explained():
    # Fewer than one operator in a hundred; each says why, and its names are declared.
    operators = json.loads(DATA.read_text(encoding="utf-8"))["operators"]
    assert len(facts.OVERRIDES) <= len(operators) // 100
    for name, override in facts.OVERRIDES.items():
        assert name.startswith("aclnn")
        assert isinstance(override["why"], str) and override["why"]
        declared = {p[1] for p in operators[name]["parameters"]}
        assert set(override["outputs"]) | set(override["inout"]) <= declared, name
        assert operators[name]["basis"] == "override", name


def test_prose_about_the_in_place_case_counts_only_for_the_inplace_operator():
    said = "Device侧的aclTensor。inplace场景将residual作为y的输出地址。"
    assert not facts.prose_in_place(said, "aclnnMatmulNorm")
    assert facts.prose_in_place(said, "aclnnInplaceMatmulNorm")
    assert facts.prose_in_place("缓存，计算结果原地更新。", "aclnnAnything")
    assert not facts.prose_in_place("用于更新运行均值的动量。", "aclnnAnything")
