"""tools/run_cann_samples.py: sample programs written here in the style of CANN's eager
examples (a plain ``main`` over acl and aclnnAdd, one of the emulator's C kernels), in a
checkout-shaped folder with a stand-in build script, built against the emulator's 8.5 tree
and run in plain processes; each lands in its category."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT, load_script

SCRIPT = ROOT / "tools" / "run_cann_samples.py"

if not SCRIPT.exists():  # an installed copy without the repository's tools/
    pytest.skip("tools/run_cann_samples.py is not here", allow_module_level=True)


samples = load_script(SCRIPT)

# A sample program adding two 2x2 float tensors; SHAPE_B lets one refuse (no broadcast).
ADD_SAMPLE = r"""
#include <cstdio>
#include <cstdint>
#include "acl/acl.h"
#include "aclnnop/aclnn_add.h"

#define CHECK(expr, what) do { int r_ = (expr); if (r_ != 0) { \
    printf("%s failed. ERROR: %d\n", what, r_); return r_; } } while (0)

static aclTensor *make(void **dev, float *host, const int64_t *shape, uint64_t n) {
    aclrtMalloc(dev, n * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST);
    aclrtMemcpy(*dev, n * sizeof(float), host, n * sizeof(float), ACL_MEMCPY_HOST_TO_DEVICE);
    int64_t strides[2] = {shape[1], 1};
    return aclCreateTensor(shape, 2, ACL_FLOAT, strides, 0, ACL_FORMAT_ND, shape, 2, *dev);
}

int main() {
    aclrtStream stream;
    CHECK(aclInit(nullptr), "aclInit");
    CHECK(aclrtSetDevice(0), "aclrtSetDevice");
    CHECK(aclrtCreateStream(&stream), "aclrtCreateStream");
    int64_t shapeA[2] = {2, 2}, shapeB[2] = SHAPE_B;
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, out[4] = {0};
    void *da, *db, *dout;
    aclTensor *ta = make(&da, a, shapeA, 4), *tb = make(&db, b, shapeB, 4);
    aclTensor *tout = make(&dout, out, shapeA, 4);
    float one = 1.0f;
    aclScalar *alpha = aclCreateScalar(&one, ACL_FLOAT);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    CHECK(aclnnAddGetWorkspaceSize(ta, tb, alpha, tout, &workspaceSize, &executor),
          "aclnnAddGetWorkspaceSize");
    void *workspace = nullptr;
    if (workspaceSize > 0) {
        CHECK(aclrtMalloc(&workspace, workspaceSize, ACL_MEM_MALLOC_HUGE_FIRST), "aclrtMalloc");
    }
    CHECK(aclnnAdd(workspace, workspaceSize, executor, stream), "aclnnAdd");
    CHECK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    aclrtMemcpy(out, sizeof(out), dout, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < 4; ++i) printf("result[%d] is: %f\n", i, out[i]);
    return out[3] == 44.0f ? 0 : 1;
}
"""

# A sample program taking exp of a 2x2 float tensor: a Python kernel, whose launch the
# emulator records for the comparison with PyTorch.
EXP_SAMPLE = ADD_SAMPLE[:ADD_SAMPLE.index("int main() {")].replace(
    "aclnn_add.h", "aclnn_exp.h") + r"""
int main() {
    aclrtStream stream;
    CHECK(aclInit(nullptr), "aclInit");
    CHECK(aclrtSetDevice(0), "aclrtSetDevice");
    CHECK(aclrtCreateStream(&stream), "aclrtCreateStream");
    int64_t shape[2] = {2, 2};
    float a[4] = {0, 1, -1, 2}, out[4] = {0};
    void *da, *dout;
    aclTensor *ta = make(&da, a, shape, 4), *tout = make(&dout, out, shape, 4);
    uint64_t workspaceSize = 0;
    aclOpExecutor *executor;
    CHECK(aclnnExpGetWorkspaceSize(ta, tout, &workspaceSize, &executor),
          "aclnnExpGetWorkspaceSize");
    CHECK(aclnnExp(nullptr, workspaceSize, executor, stream), "aclnnExp");
    CHECK(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    aclrtMemcpy(out, sizeof(out), dout, sizeof(out), ACL_MEMCPY_DEVICE_TO_HOST);
    for (int i = 0; i < 4; ++i) printf("result[%d] is: %f\n", i, out[i]);
    return 0;
}
"""

MISSING_HEADER_SAMPLE = r"""
#include "acl/acl.h"
#include "aclnnop/aclnn_demo_not_shipped.h"
int main() { return aclnnDemoNotShippedGetWorkspaceSize(nullptr, nullptr, nullptr); }
"""


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ops-nn-shaped checkout: build.sh (a stand-in) and an operator's examples/."""
    root = tmp_path_factory.mktemp("ops-demo")
    (root / "build.sh").write_text("# stand-in: the example build line is ops-nn's\n")
    examples = root / "math" / "demo" / "examples"
    (examples / "arch35").mkdir(parents=True)
    (examples / "test_aclnn_demo_add.cpp").write_text(ADD_SAMPLE.replace("SHAPE_B", "{2, 2}"))
    (examples / "test_aclnn_demo_refused.cpp").write_text(
        ADD_SAMPLE.replace("SHAPE_B", "{4, 1}"))
    (examples / "test_aclnn_demo_missing.cpp").write_text(MISSING_HEADER_SAMPLE)
    (examples / "arch35" / "test_aclnn_demo_add.cpp").write_text("#error not for this SoC\n"
                                                                 "// aclnnAddGetWorkspaceSize(")
    (examples / "test_aclnn_demo_graph.cpp").write_text("int main() { return 0; }\n")
    return root


@pytest.fixture(scope="module")
def exp_checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ops-nn-shaped checkout with one sample calling aclnnExp (a Python kernel)."""
    root = tmp_path_factory.mktemp("ops-exp")
    (root / "build.sh").write_text("# stand-in: the example build line is ops-nn's\n")
    examples = root / "math" / "exp_demo" / "examples"
    examples.mkdir(parents=True)
    (examples / "test_aclnn_exp_demo.cpp").write_text(EXP_SAMPLE)
    return root


@pytest.mark.emulator_only
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")
def test_samples_are_built_run_and_classified(checkout: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "samples.json"
    arguments = ["--repo", f"demo={checkout}", "--jobs", "2", "--work", str(tmp_path / "work"),
                 "--json", str(out), "--no-compare"]
    assert samples.main(arguments) == 0
    records = {r["path"].rsplit("examples/", 1)[1]: r for r in json.loads(out.read_text())}
    assert set(records) == {"test_aclnn_demo_add.cpp", "test_aclnn_demo_refused.cpp",
                            "test_aclnn_demo_missing.cpp", "arch35/test_aclnn_demo_add.cpp"}
    assert records["test_aclnn_demo_add.cpp"]["category"] == "ok"
    assert "result[3] is: 44" in records["test_aclnn_demo_add.cpp"]["output"]
    refused = records["test_aclnn_demo_refused.cpp"]
    assert (refused["category"], refused["detail"]) == ("refused", "161002")
    missing = records["test_aclnn_demo_missing.cpp"]
    assert (missing["category"], missing["detail"]) == ("not built", "missing header")
    assert missing["missing"] == ["missing header: aclnnop/aclnn_demo_not_shipped.h"]
    assert records["arch35/test_aclnn_demo_add.cpp"]["category"] == "other SoC"
    printed = capsys.readouterr().out
    assert ("all: 4 samples, 1 of another SoC; 2 of 3 built: 1 ok, 0 wrong, 0 no kernel, "
            "1 refused, 0 failed, 0 crashed, 0 timeout, 0 skipped on this SoC; 1 not built "
            "(1 missing header); 0 launches of 0 samples compared with PyTorch.") in printed
    assert "| 1 | header | `aclnnop/aclnn_demo_not_shipped.h` |  |" in printed
    # A second run reuses the objects and executables of the first.
    built = sorted(p.name for p in (tmp_path / "work").iterdir())
    assert samples.main(arguments) == 0
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == built


@pytest.mark.emulator_only
@pytest.mark.skipif(shutil.which("g++") is None, reason="needs a C++ compiler (g++)")
def test_recorded_launches_are_judged_against_pytorch(exp_checkout: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The sample's aclnnExp launch is recorded in its plain process and replayed through
    PyTorch: ok while the emulator agrees, wrong (naming the element) against a reference
    that differs."""
    pytest.importorskip("torch", reason="the comparison needs PyTorch")
    import torch_references  # the tool's sibling module (tools/ is on sys.path)

    out = tmp_path / "samples.json"
    arguments = ["--repo", f"demo={exp_checkout}", "--jobs", "1", "--work",
                 str(tmp_path / "work"), "--json", str(out)]
    assert samples.main(arguments) == 0
    (record,) = json.loads(out.read_text())
    assert (record["category"], record["compared"]) == ("ok", 1), record
    assert "result[3] is: 7.389056" in record["output"]

    def off_by_one_at_two(launch):  # PyTorch's exp, but 1 more where the input is 2
        x = launch.input()
        return {"out": torch_references.torch.exp(x) + (x == 2)}

    monkeypatch.setitem(torch_references.REFERENCES, "aclnnExp", off_by_one_at_two)
    assert samples.main(arguments) == 0
    (record,) = json.loads(out.read_text())
    assert record["category"] == "wrong"
    assert record["detail"] == ("aclnnExp: out[1, 1] is 7.3890557, PyTorch gives 8.3890561 "
                                "(1 of 4 differ)")


def test_random_operators_are_not_judged() -> None:
    """The operators whose outputs are random draws are the emulator's random fills, and the
    comparison judges none of their launches (their tests are statistical)."""
    import torch_references  # the tool's sibling module (tools/ is on sys.path)

    from aclnn_py.emulator._kernels.random_fills import RANDOM

    assert torch_references.RANDOM == RANDOM
    launch = torch_references.Launch("aclnnInplaceNormal", {}, {}, {}, {}, [], [])
    assert torch_references.compare(launch) is None


def test_complex_results_are_compared_in_both_parts() -> None:
    """A complex result is judged on its real and its imaginary part, as a sample prints
    both (ops-math math/polar's sample prints std::complex values): polar(1, 1) is right, a
    wrong imaginary part alone is wrong, and the message shows the value as (real,imag)."""
    pytest.importorskip("torch", reason="the comparison needs PyTorch")
    import torch_references  # the tool's sibling module (tools/ is on sys.path)

    tensors = {"input": np.array([[1.0, 2.0]], np.float32),
               "angle": np.array([[1.0, 2.0]], np.float32)}
    right = (tensors["input"] * np.exp(1j * tensors["angle"])).astype(np.complex64)

    def launch(out: np.ndarray) -> object:
        return torch_references.Launch("aclnnPolar", tensors, {"out": out},
                                       {"after/out": "complex64"}, {},
                                       ["input", "angle", "out"], ["out"])

    assert torch_references.compare(launch(right)) is None
    wrong = right.copy()
    wrong[0, 1] = complex(right[0, 1].real, 0.5)  # 2 * (cos 2 + i sin 2) with imag 0.5
    message = torch_references.compare(launch(wrong))
    assert message is not None
    assert message.startswith("out[0, 1] is (-0.8322936"), message
    assert ",0.5), PyTorch gives (-0.8322936" in message, message
    assert message.endswith(",1.8185949) (1 of 2 differ)"), message


def test_build_lines_are_the_repositories(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "lib64").mkdir(parents=True)
    (tmp_path / "math" / "scripts").mkdir(parents=True)
    (tmp_path / "math" / "scripts" / "build_example.sh").write_text("")
    (tmp_path / "math" / "build.sh").write_text("")
    (tmp_path / "nn").mkdir()
    (tmp_path / "nn" / "build.sh").write_text("")
    math, nn = samples.build_line(tmp_path / "math"), samples.build_line(tmp_path / "nn")
    assert math.compile_flags(tree) == [f"-I{tree}/include", f"-I{tree}/include/aclnn"]
    assert math.link_flags(tree)[1:] == ["-lopapi_math", "-lascendcl", "-lnnopbase"]
    assert nn.compile_flags(tree) == [f"-I{tree}/include", f"-I{tree}/include/aclnnop",
                                      f"-I{tree}/include/aclnn"]
    assert nn.link_flags(tree) == [f"-L{tree}/opp/lib64", f"-L{tree}/lib64", "-lopapi_nn",
                                   "-lopapi_math", "-lacl_rt", "-lnnopbase"]
    (tree / "lib64" / "libascendcl.so").write_text("")
    assert "-lascendcl" in nn.link_flags(tree)
    assert math.link_flags(tree, {"ascendcl": "acl_rt"})[2] == "-lacl_rt"
    with pytest.raises(ValueError, match="no known example build line"):
        samples.build_line(tmp_path)


def test_experimental_samples_build_against_their_custom_package(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    (tree / "lib64").mkdir(parents=True)
    (tmp_path / "math" / "scripts").mkdir(parents=True)
    (tmp_path / "math" / "scripts" / "build_example.sh").write_text("")
    (tmp_path / "nn").mkdir()
    (tmp_path / "nn" / "build.sh").write_text("")
    math = samples.build_line(tmp_path / "math", experimental=True)
    nn = samples.build_line(tmp_path / "nn", experimental=True)
    vendor = tree / "opp" / "vendors" / "custom_math" / "op_api"
    assert math.compile_flags(tree) == [f"-I{vendor}/include", f"-I{tree}/include",
                                        f"-I{tree}/include/aclnnop"]
    assert math.link_flags(tree) == [f"-L{vendor}/lib", f"-L{tree}/lib64", "-lcust_opapi",
                                     "-lascendcl", "-lnnopbase", f"-Wl,-rpath={vendor}/lib"]
    vendor = tree / "opp" / "vendors" / "custom_nn" / "op_api"
    assert nn.link_flags(tree) == [f"-L{vendor}/lib", f"-L{tree}/lib64", "-lcust_opapi",
                                   "-lopapi_math", "-lacl_rt", "-lnnopbase",
                                   f"-Wl,-rpath={vendor}/lib"]


def test_build_errors_and_runs_are_classified() -> None:
    compiled = ("x.cpp:3:10: error: 'aclnnFoo' was not declared in this scope\n"
                "x.cpp:4:1: error: 'aclFooType' does not name a type\n")
    assert samples.build_errors(compiled, linking=False) == (
        "missing declaration", ["missing declaration: aclnnFoo",
                                "missing declaration: aclFooType"])
    linked = ("/usr/bin/ld: cannot find -lascendcl: No such file or directory\n"
              "/usr/bin/ld: x.o: in function `main':\nx.cpp:(.text+0x1): "
              "undefined reference to `aclnnBar'\ncollect2: error: ld returned 1 exit status\n")
    assert samples.build_errors(linked, linking=True) == (
        "missing library", ["missing library: -lascendcl", "missing symbol: aclnnBar"])
    assert samples.build_errors("x.cpp:1:1: error: expected ';'\n", linking=False)[0] == \
        "compile error"
    mismatched = ("x.cpp:9:5: error: cannot convert 'float' to 'const aclScalar*'\n"
                  "aclnn_x.h:19:9: note:   initializing argument 2 of 'aclnnStatus "
                  "aclnnXGetWorkspaceSize(const aclTensor*, const aclScalar*)'\n"
                  "x.cpp:12:1: error: jump to label 'done'\n")
    assert samples.build_errors(mismatched, linking=False) == (
        "prototype mismatch", ["prototype mismatch: aclnnXGetWorkspaceSize"])
    assert samples.build_errors("x.cpp:12:1: error: jump to label 'done'\n" + mismatched,
                                linking=False)[0] == "compile error"
    assert samples.classify_run(107, "aclnnGeluGetWorkspaceSize failed. ERROR: 561003\n")[0] == \
        "no kernel"
    assert samples.classify_run(0, "aclnnX failed. ERROR: 161002\n") == ("refused", "161002")
    assert samples.classify_run(0, "result[0] is: 123456.000000\n") == ("ok", "")
    assert samples.classify_run(0, "Warning: X only supports Ascend950, current SOC 'Ascend910B3'"
                                   " is not supported. Skip test.\n")[0] == "other SoC"
    assert samples.classify_run(1, "mismatch\n") == ("failed", "exit 1")
    assert samples.classify_run(107, "")[0] == "no kernel"  # 561003 returned, not printed
    assert samples.classify_run(234, "")[0] == "refused"    # 161002
    assert samples.classify_run(-11, "") == ("crashed", "signal 11")
    assert samples.classify_run(None, "") == ("timeout", "")


def test_missing_table_counts_samples_and_finds_headers_elsewhere(tmp_path: Path) -> None:
    (tmp_path / "include" / "aclnnop").mkdir(parents=True)
    (tmp_path / "include" / "aclnnop" / "aclnn_x.h").write_text("")
    found = [samples.Sample("r", f"a/examples/test_aclnn_{i}.cpp", ("aclnnX",), False,
                            "not built", "missing header", missing)
             for i, missing in enumerate([["missing header: aclnn_x.h"],
                                          ["missing header: aclnn_x.h", "missing symbol: aclY"],
                                          ["missing symbol: aclY"], ["missing symbol: aclY"]])]
    table = samples.missing_table(found, 15, tmp_path).splitlines()
    assert table[0] == "distinct names: header 1, symbol 1"
    assert table[4:] == ["| 3 | symbol | `aclY` |  |",
                         "| 2 | header | `aclnn_x.h` | `include/aclnnop/aclnn_x.h` |"]
