"""tools/replay_cann_ut.py and its harness (tools/cann_ut/): unit test files written here in
the style of CANN's op_api unit tests (googletest fixtures, OP_API_UT, TensorDesc, ScalarDesc,
the SoC switches; none of them CANN's text), compiled and replayed over the emulator, each
case landing in the category its expectation and the emulator's answer put it in."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT, load_script

import aclnn_py

SCRIPT = ROOT / "tools" / "replay_cann_ut.py"

if not SCRIPT.exists():  # an installed copy without the repository's tools/
    pytest.skip("tools/replay_cann_ut.py is not here", allow_module_level=True)

pytestmark = [pytest.mark.emulator_only, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("c++") is None, reason="needs a C++ compiler")]


replay = load_script(SCRIPT)


def _not_computed_unary() -> str:
    """An operator of the table with the prototype (self, out) that the emulator does not
    compute."""
    table = json.loads((ROOT / "aclnn_py" / "data" / "operators.json").read_text())["operators"]
    computed = set(aclnn_py.emulator.kernels())
    return next(name for name, entry in sorted(table.items())
                if name not in computed and [p for _, p in entry["parameters"]] == ["self", "out"])


HEADER = """#ifndef DEMO_ACLNN_%(guard)s_H
#define DEMO_ACLNN_%(guard)s_H
#include "aclnn/aclnn_base.h"
#include "aclnn_util.h"
#ifdef __cplusplus
extern "C" {
#endif
ACLNN_API aclnnStatus %(name)sGetWorkspaceSize(const aclTensor *self, aclTensor *out,
                                               uint64_t *workspaceSize, aclOpExecutor **executor);
ACLNN_API aclnnStatus %(name)s(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,
                               aclrtStream stream);
#ifdef __cplusplus
}
#endif
#endif
"""

CASES = r"""
#include <stdexcept>
#include <tuple>
#include "gtest/gtest.h"
#include "../../../op_api/aclnn_demo.h"
#include "op_api_ut_common/op_api_ut.h"
#include "op_api_ut_common/scalar_desc.h"
#include "op_api_ut_common/tensor_desc.h"
#include "opdev/platform.h"

using namespace op;

class demo_test : public testing::Test {
protected:
    static void SetUpTestCase() { SetPlatformSocVersion(SocVersion::ASCEND910B); }
};

static TensorDesc Nd(const std::vector<int64_t> &shape, aclDataType dtype)
{
    return TensorDesc(shape, dtype, ACL_FORMAT_ND);
}

static aclnnStatus Phase1(const TensorDesc &self, const TensorDesc &out)
{
    auto ut = OP_API_UT(aclnnGelu, INPUT(self), OUTPUT(out));
    uint64_t workspaceSize = 0;
    return ut.TestGetWorkspaceSize(&workspaceSize);
}

TEST_F(demo_test, accepted_as_expected)
{
    EXPECT_EQ(Phase1(Nd({2, 3}, ACL_FLOAT), Nd({2, 3}, ACL_FLOAT)),
              ACLNN_SUCCESS);
}

TEST_F(demo_test, refused_as_expected)
{
    auto ut = OP_API_UT(aclnnGelu, INPUT((aclTensor *)nullptr), OUTPUT(Nd({2}, ACL_FLOAT)));
    uint64_t workspaceSize = 0;
    aclnnStatus aclRet = ut.TestGetWorkspaceSize(&workspaceSize);
    EXPECT_EQ(aclRet, ACLNN_ERR_PARAM_NULLPTR) << "a null self";
}

TEST_F(demo_test, expects_a_refusal_of_a_valid_call)
{
    EXPECT_EQ(Phase1(Nd({4}, ACL_FLOAT16), Nd({4}, ACL_FLOAT16)),
              ACLNN_ERR_PARAM_INVALID);
}

TEST_F(demo_test, expects_an_unsupported_dtype_to_pass)
{
    aclnnStatus expected = ACLNN_SUCCESS;  // compared through a variable: no status constant
    EXPECT_EQ(Phase1(Nd({4}, ACL_INT32), Nd({4}, ACL_INT32)), expected);
}

TEST_F(demo_test, expects_another_code)
{
    EXPECT_EQ(Phase1(Nd({4}, ACL_FLOAT), Nd({5}, ACL_FLOAT)),
              ACLNN_ERR_PARAM_NULLPTR);
}

TEST_F(demo_test, expects_any_error)
{
    EXPECT_NE(Phase1(Nd({4}, ACL_FLOAT), Nd({5}, ACL_FLOAT)),
              ACLNN_SUCCESS);
}

TEST_F(demo_test, on_another_soc)
{
    SocVersionManager manager(SocVersion::ASCEND310P);
    EXPECT_EQ(Phase1(Nd({4}, ACL_FLOAT), Nd({4}, ACL_FLOAT)),
              ACLNN_ERR_PARAM_INVALID);
}

TEST_F(demo_test, expectation_commented_out)
{
    aclnnStatus aclRet = Phase1(Nd({4}, ACL_FLOAT), Nd({4}, ACL_FLOAT));
    (void)aclRet;
    // EXPECT_EQ(aclRet, ACLNN_SUCCESS);
}

TEST_F(demo_test, throws)
{
    throw std::runtime_error("not a harness feature");
}

TEST_F(demo_test, ends_its_process)
{
    std::abort();
}

TEST_F(demo_test, not_computed)
{
    auto ut = OP_API_UT(NOT_COMPUTED, INPUT(Nd({4}, ACL_FLOAT)),
                        OUTPUT(Nd({4}, ACL_FLOAT)));
    uint64_t workspaceSize = 0;
    EXPECT_EQ(ut.TestGetWorkspaceSize(&workspaceSize), ACLNN_SUCCESS);
}

TEST(demo_plain, scalar_and_assert)
{
    ScalarDesc half(1.5f, ACL_FLOAT16);
    auto made = half.ToAclType();
    ASSERT_NE(made.get(), nullptr);
    ASSERT_EQ(Phase1(Nd({1}, ACL_BF16), Nd({1}, ACL_BF16)),
              ACLNN_SUCCESS);
}

class demo_param : public testing::TestWithParam<std::tuple<aclDataType, aclnnStatus>> {};

TEST_P(demo_param, dtype)
{
    aclDataType dtype = std::get<0>(GetParam());
    EXPECT_EQ(Phase1(TensorDesc({3}, dtype, ACL_FORMAT_ND), TensorDesc({3}, dtype, ACL_FORMAT_ND)),
              std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, demo_param,
                         testing::Values(std::make_tuple(ACL_FLOAT, ACLNN_SUCCESS),
                                         std::make_tuple(ACL_DOUBLE, ACLNN_ERR_PARAM_INVALID)));
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """A made-up repository with one unit test file, and the tool's results over it."""
    root = tmp_path_factory.mktemp("demo-repo")
    other = _not_computed_unary()
    op_api = root / "activation" / "demo" / "op_api"
    tests = root / "activation" / "demo" / "tests" / "ut" / "op_api"
    op_api.mkdir(parents=True)
    tests.mkdir(parents=True)
    (op_api / "aclnn_demo.h").write_text(
        HEADER % {"guard": "GELU", "name": "aclnnGelu"}
        + HEADER % {"guard": "OTHER", "name": other})
    (tests / "test_aclnn_demo.cpp").write_text(CASES.replace("NOT_COMPUTED", other))
    (tests / "test_aclnn_broken.cpp").write_text(
        '#include "op_api_ut_common/op_api_ut.h"\n'
        "TEST(broken, x) { OP_API_UT(aclnnGelu, INPUT(; }\n")
    out = root / "results.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--repo", f"demo={root}", "--work",
         str(tmp_path_factory.mktemp("work")), "--json", str(out), "--jobs", "1",
         "--show", "too-lenient"],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return {"stdout": done.stdout, "stderr": done.stderr,
            "cases": {c.get("case", c["file"]): c for c in json.loads(out.read_text())},
            "other": other}


@pytest.mark.parametrize(("case", "category"), [
    ("demo_test.accepted_as_expected", "agree"),
    ("demo_test.refused_as_expected", "agree"),
    ("demo_test.expects_a_refusal_of_a_valid_call", "too lenient"),
    ("demo_test.expects_an_unsupported_dtype_to_pass", "too strict"),
    ("demo_test.expects_another_code", "wrong code"),
    ("demo_test.expects_any_error", "agree"),
    ("demo_test.on_another_soc", "other SoC"),
    ("demo_test.expectation_commented_out", "no expectation"),
    ("demo_test.throws", "harness limit"),
    ("demo_test.ends_its_process", "crashed"),
    ("demo_test.not_computed", "no kernel"),
    ("demo_plain.scalar_and_assert", "agree"),
    ("Dtypes/demo_param.dtype/0", "agree"),
    ("Dtypes/demo_param.dtype/1", "agree"),
])
def test_each_case_lands_in_its_category(demo, case, category):
    assert demo["cases"][case]["category"] == category, demo["cases"][case]


def test_a_disagreement_carries_the_statuses_and_the_emulators_message(demo):
    strict = demo["cases"]["demo_test.expects_an_unsupported_dtype_to_pass"]
    assert (strict["expected"], strict["answered"]) == (0, 161002)
    assert "aclnnGeluGetWorkspaceSize" in strict["message"]
    code = demo["cases"]["demo_test.expects_another_code"]
    assert (code["expected"], code["answered"]) == (161001, 161002)
    assert demo["cases"]["demo_test.not_computed"]["operator"] == demo["other"]


def test_a_crash_ends_one_case_and_the_file_goes_on(demo):
    """The case that aborts is the only one lost: the cases after it ran in a new process."""
    assert "abort" in demo["cases"]["demo_test.ends_its_process"]["message"].lower() or \
        "exit status" in demo["cases"]["demo_test.ends_its_process"]["message"]
    assert demo["cases"]["demo_test.not_computed"]["category"] == "no kernel"


def test_a_file_that_does_not_compile_is_reported_not_counted(demo):
    broken = next(c for key, c in demo["cases"].items() if "test_aclnn_broken.cpp" in key)
    assert broken["category"] == "not built" and "error" in broken["message"]
    assert "not built:" in demo["stderr"]


def test_the_table_and_the_summary(demo):
    lines = demo["stdout"].splitlines()
    row = next(line for line in lines if line.startswith("aclnnGelu "))
    # agree, too strict, too lenient, wrong code, crashed, the others, and the percentage
    assert row.split()[1:] == ["6", "1", "1", "1", "1", "3", "60.0"]
    summary = lines[-1]
    assert summary.startswith("1 of 2 files built, 14 cases")
    assert "10 judged cases: 6 agree, 1 too strict, 1 too lenient, 1 wrong code, 1 crashed" \
        in summary
    assert "(60.0% agree; 1 operators below 90%)" in summary
    assert "== too lenient" in demo["stdout"]
    assert "expects_a_refusal_of_a_valid_call: expected 161002, answered 0" in demo["stdout"]


def test_status_checks_read_either_operand_order():
    record = {"calls": [{"status": 161002}], "checks": [
        {"integers": True, "kind": "EQ", "a": 161002, "b": 161002, "status_operand": -1,
         "passed": True, "line": 1},
        {"integers": True, "kind": "EQ", "a": 0, "b": 161002, "status_operand": -1,
         "passed": False, "line": 2},
        {"integers": True, "kind": "EQ", "a": 3, "b": 4, "status_operand": -1,
         "passed": False, "line": 3},
        {"integers": True, "kind": "NE", "a": 161002, "b": 161001, "status_operand": 1,
         "passed": True, "line": 4},
    ]}
    checks = replay.status_checks(record)
    assert [(c.expected, c.answered, c.line) for c in checks] == [(161002, 161002, 1),
                                                                  (0, 161002, 2)]
