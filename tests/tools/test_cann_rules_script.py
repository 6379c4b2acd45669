"""tools/cann_rules.py: phase-1 rules read from made-up operator docs (none of them CANN's
text), the SoC notes under their tables, the corrections, and the committed
aclnn_py/data/phase1_rules.json against the operator table and the emulator's build."""

from __future__ import annotations

import json

import pytest
from helpers import ROOT, load_script

SCRIPT = ROOT / "tools" / "cann_rules.py"
BUILD = ROOT / "emulator" / "build.py"
RULES = ROOT / "aclnn_py" / "data" / "phase1_rules.json"

if not SCRIPT.exists():  # an installed copy without the repository's tools/
    pytest.skip("tools/cann_rules.py is not here", allow_module_level=True)


rules_tool = load_script(SCRIPT, "cann_rules_under_test")


def row(name: str, c_type: str, usage: str, dtypes: str, dims: str, description: str = "-"):
    return (f"<tr><td>{name}（{c_type}）</td><td>输入</td><td>{description}</td><td>{usage}</td>"
            f"<td>{dtypes}</td><td>ND</td><td>{dims}</td><td>√</td></tr>\n")


def doc(operator: str, rows: str, notes: str = "") -> str:
    return (f"# {operator}\n\n## {operator}GetWorkspaceSize\n\n- **参数说明：**\n\n"
            "<table><thead><tr><th>参数名</th><th>输入/输出</th><th>描述</th><th>使用说明</th>"
            "<th>数据类型</th><th>数据格式</th><th>维度(shape)</th><th>非连续Tensor</th></tr>"
            f"</thead>\n<tbody>\n{rows}</tbody></table>\n\n{notes}\n\n## {operator}\n\n"
            "<table><thead><tr><th>参数名</th></tr></thead><tbody><tr><td>stream</td></tr>"
            "</tbody></table>\n")


TYPES = {"self": "const aclTensor *", "other": "const aclTensor *", "out": "aclTensor *",
         "bias": "const aclTensor *", "alpha": "const aclScalar *", "dim": "int64_t"}


def read(text: str, operator: str = "aclnnDemo") -> list[dict]:
    return rules_tool.operator_rules(operator, "demo.md", text, TYPES).rules


def test_dtypes_and_ranks_come_from_the_table():
    found = read(doc("aclnnDemo", row("self", "aclTensor*", "-", "FLOAT、FLOAT16、BFLOAT16", "0-8")
                     + row("out", "aclTensor*", "-", "FLOAT32、INT64", "不超过8维")
                     + row("dim", "int64_t", "-", "INT64", "-")))
    assert {"rule": "dtypes", "params": ["self"], "dtypes": ["FLOAT", "FLOAT16", "BF16"],
            "source": "doc"} in found
    assert {"rule": "rank", "params": ["self"], "min": 0, "max": 8, "source": "doc"} in found
    assert {"rule": "dtypes", "params": ["out"], "dtypes": ["FLOAT", "INT64"],
            "source": "doc"} in found
    assert {"rule": "rank", "params": ["out"], "min": 0, "max": 8, "source": "doc"} in found
    assert not [r for r in found if "dim" in r["params"]]  # an attribute has no dtype rule


@pytest.mark.parametrize(("cell", "bounds"), [
    ("0-8", (0, 8)), ("1~8", (1, 8)), ("2", (2, 2)), ("2维", (2, 2)), ("不超过8维", (0, 8)),
    ("大于等于1", (1, 8)), ("-", None), ("与self一致", None)])
def test_dimension_cells(cell, bounds):
    assert rules_tool.rank_bounds(cell) == bounds


def test_relations_come_from_the_usage_notes():
    found = read(doc("aclnnDemo",
                     row("self", "aclTensor*",
                         "<ul><li>数据类型与other的数据类型需满足数据类型推导规则（参见互推导关系）。"
                         "</li><li>shape需要与other满足broadcast关系。</li></ul>", "FLOAT", "0-8")
                     + row("other", "aclTensor*", "不支持空Tensor。", "FLOAT", "0-8")
                     + row("out", "aclTensor*",
                           "<ul><li>数据类型需要是self与other推导之后可转换的数据类型。</li>"
                           "<li>shape需要是self与other broadcast之后的shape。</li></ul>",
                           "FLOAT", "0-8")))
    relations = [{k: v for k, v in r.items() if k != "source"} for r in found
                 if r["rule"] not in ("dtypes", "rank")]
    assert relations == [
        {"rule": "broadcast", "params": ["other", "self"]},
        {"rule": "promote", "params": ["other", "self"]},
        {"rule": "not_empty", "params": ["other"]},
        {"rule": "broadcast", "params": ["self", "other"], "target": "out"},
        {"rule": "promote", "params": ["self", "other"], "target": "out"}]
    same = read(doc("aclnnDemo", row("self", "aclTensor*", "-", "FLOAT", "0-8")
                    + row("out", "aclTensor*",
                          "<ul><li>数据类型必须和self一致。</li><li>shape必须和self一样。</li></ul>",
                          "FLOAT", "0-8")))
    assert {"rule": "same_dtype", "params": ["out", "self"], "source": "doc"} in same
    assert {"rule": "same_shape", "params": ["out", "self"], "source": "doc"} in same


def test_the_soc_notes_change_the_dtypes_of_the_families_they_mark():
    notes = ('<!-- npu="910,310p" id7 -->\n'
             "- <term>Atlas 训练系列产品</term>、"
             "<term>Atlas 推理系列产品</term>：不支持BFLOAT16。\n"
             "<!-- end id7 -->\n"
             '<!-- npu="A3" id8 -->\n'
             "- <term>Atlas A3 训练系列产品</term>：self数据类型额外支持COMPLEX64。\n"
             "<!-- end id8 -->\n")
    found = read(doc("aclnnDemo", row("self", "aclTensor*", "-", "FLOAT、BFLOAT16", "0-8")
                     + row("out", "aclTensor*", "-", "FLOAT、BFLOAT16", "0-8"), notes))
    dtypes = {(tuple(r["params"]), tuple(r["socs"])): r["dtypes"] for r in found
              if r["rule"] == "dtypes"}
    assert dtypes[("self",), ("910", "310p")] == ["FLOAT"]
    assert dtypes[("self",), ("910_93",)] == ["FLOAT", "BF16", "COMPLEX64"]
    assert dtypes[("self",), ("910b", "950", "310b")] == ["FLOAT", "BF16"]
    assert dtypes[("out",), ("910", "310p")] == ["FLOAT"]  # the A3 note names self only
    assert dtypes[("out",), ("910b", "910_93", "950", "310b")] == ["FLOAT", "BF16"]


def test_nullable_parameters():
    rules = rules_tool.operator_rules("aclnnDemo", "demo.md", doc(
        "aclnnDemo", row("self", "aclTensor*", "-", "FLOAT", "0-8")
        + row("bias", "aclTensor*", "无bias场景，可传入nullptr。", "FLOAT", "1")), TYPES)
    assert rules.nullable == ["bias"]


def test_corrections_drop_add_and_need_a_note():
    rules = rules_tool.OperatorRules("demo.md", [
        {"rule": "rank", "params": ["self"], "min": 1, "max": 8, "source": "doc"},
        {"rule": "dtypes", "params": ["self"], "dtypes": ["FLOAT"], "source": "doc"}])
    rules_tool.apply_corrections("aclnnDemo", rules, {"aclnnDemo": [
        {"drop": {"rule": "rank"}, "note": "only the maximum is checked"},
        {"add": {"rule": "rank", "params": ["self"], "max": 8}, "at": 0,
         "note": "OP_CHECK_MAX_DIM"},
        {"nullable": ["bias"], "note": "bias may be NULL"}]})
    assert rules.rules[0] == {"rule": "rank", "params": ["self"], "max": 8,
                              "source": "correction", "note": "OP_CHECK_MAX_DIM"}
    assert [r["rule"] for r in rules.rules] == ["rank", "dtypes"]
    assert rules.nullable == ["bias"]
    with pytest.raises(ValueError, match="needs a note"):
        rules_tool.apply_corrections("aclnnDemo", rules, {"aclnnDemo": [{"drop": {"rule": "x"}}]})
    with pytest.raises(ValueError, match="nothing to drop"):
        rules_tool.apply_corrections("aclnnDemo", rules, {"aclnnDemo": [
            {"drop": {"rule": "value"}, "note": "n"}]})


def test_an_operator_corrected_in_two_files_is_refused(tmp_path):
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(json.dumps({"operators": {"aclnnDemo": []}}))
    with pytest.raises(ValueError, match="another file"):
        rules_tool.read_corrections(tmp_path)


# ---- the committed rules --------------------------------------------------------------------

build = load_script(BUILD, "emulator_build_for_rules")
TABLE = json.loads((ROOT / "aclnn_py" / "data" / "operators.json").read_text())["operators"]
COMMITTED = json.loads(RULES.read_text(encoding="utf-8"))


def test_every_committed_rule_compiles_and_names_parameters_of_its_operator():
    assert COMMITTED["generated_by"] == "tools/cann_rules.py"
    for operator, entry in COMMITTED["operators"].items():
        names = [n for _, n in TABLE[operator]["parameters"]]
        assert set(entry.get("nullable", ())) <= set(names), operator
        for i, rule in enumerate(entry["rules"]):
            build.rule_initialiser(operator, rule, names, f"r{i}")  # raises on a bad rule
            assert rule["source"] in ("doc", "correction")
            assert rule["source"] == "doc" or rule.get("note"), (operator, rule)


def test_every_correction_file_is_read_and_names_operators_with_rules():
    corrections = rules_tool.read_corrections(ROOT / "tools" / "phase1_corrections")
    assert set(corrections) <= set(COMMITTED["operators"])
    for operator, edits in corrections.items():
        assert all(edit.get("note") for edit in edits), operator


def test_a_bad_rule_fails_the_build_with_its_reason():
    with pytest.raises(ValueError, match="has no parameter 'nope'"):
        build.rule_initialiser("aclnnDemo", {"rule": "rank", "params": ["nope"]}, ["self"], "r")
    with pytest.raises(ValueError, match="unknown rule"):
        build.rule_initialiser("aclnnDemo", {"rule": "mystery", "params": ["self"]}, ["self"], "r")
