"""``benchmarks/bench.py --peers``: aclnn_py's per-call cost beside CuPy's and PyTorch's on a
CUDA GPU, each over its own C floor; where a peer cannot run, its row says why."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest
from helpers import ROOT, load_script

import aclnn_py

BENCH = ROOT / "benchmarks" / "bench.py"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    module: ModuleType = load_script(BENCH, "bench_for_peers")
    return module


def test_the_cuda_floor_computes_the_kernel_or_says_there_is_no_gpu(bench, tmp_path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    binary, how = bench.build_c_floor(tmp_path, bench.CUDA_SOURCE)
    assert binary is not None, how
    done = subprocess.run([str(binary), "--rounds", "1", "--calls", "20", "--warmup", "2"],
                          capture_output=True, text=True, timeout=300)
    if done.returncode == 0:  # a machine with a CUDA GPU: the kernel's value is checked
        record = json.loads(done.stdout)
        assert len(record["median_ns"]) == 1 and record["median_ns"][0] > 0
        assert record["value"] == pytest.approx(1.5 * (3.0 - 0.5) * 2.0)
    else:
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith("cuda_floor: no CUDA "), done.stderr
    refused = subprocess.run([str(binary), "--calls", "0"], capture_output=True, text=True)
    assert refused.returncode == 1 and "positive" in refused.stderr


def test_the_cuda_floor_kernel_is_ptx_that_ptxas_assembles(bench, tmp_path) -> None:
    """Without a GPU, the CUDA toolkit's assembler still checks the kernel the driver would
    compile (for GPUs from Turing to Blackwell)."""
    ptxas = shutil.which("ptxas") or next(
        (str(path) for path in sorted(Path("/usr/local").glob("cuda*/bin/ptxas"))), None)
    if ptxas is None or shutil.which("cc") is None:
        pytest.skip("needs a C compiler and the CUDA toolkit's ptxas")
    binary, how = bench.build_c_floor(tmp_path, bench.CUDA_SOURCE)
    assert binary is not None, how
    kernel = tmp_path / "kernel.ptx"
    kernel.write_text(subprocess.run([str(binary), "--print-ptx"], capture_output=True,
                                     text=True, check=True).stdout)
    for arch in ("sm_75", "sm_80", "sm_90"):
        done = subprocess.run([ptxas, f"-arch={arch}", str(kernel), "-o",
                               str(tmp_path / f"{arch}.cubin")], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / f"{arch}.cubin").stat().st_size > 0


def test_the_torch_peer_times_the_operator_it_names(bench) -> None:
    torch = pytest.importorskip("torch", reason="PyTorch is not installed: pip install torch")
    peer = bench.torch_peer(torch, "cpu")  # the call checks its own result first
    assert peer.call is not None, peer.why
    assert peer.label == f"PyTorch {torch.__version__} {bench.PEER_ROWS['torch']}"
    peer.call()
    if not torch.cuda.is_available():
        assert bench.torch_peer(torch) == bench.Peer(
            None, f"PyTorch {bench.PEER_ROWS['torch']}",
            f"PyTorch {torch.__version__} sees no CUDA device")


@pytest.mark.emulator_only
def test_every_row_has_its_figures_or_the_reason_it_has_none(bench, capsys) -> None:
    if shutil.which("cc") is None:
        pytest.skip("needs a C compiler")
    rows = bench.run_peers(aclnn_py, quick=True)
    cuda, cupy, torch, *ours = rows
    assert cuda["row"] == bench.PEER_ROWS["cuda"]
    assert (cuda["why"] is None) == (cuda["floor_ns"] is not None), cuda
    for row, peer, key in ((cupy, "CuPy ", "cupy"), (torch, "PyTorch ", "torch")):
        assert row["row"].startswith(peer) and row["row"].endswith(bench.PEER_ROWS[key]), row
        assert (row["why"] is None) == (row["call_ns"] is not None), row
    assert [row["row"].split()[1] for row in ours] == ["one-shot", "plan.run()",
                                                       "plan.run(synchronize=True)", "1-element"]
    for row in ours:
        assert row["why"] is None and 0 < row["floor_ns"] < row["call_ns"], row
    bench.print_peers(rows)
    printed = capsys.readouterr().out
    for row in rows:
        assert row["row"] in printed
        assert row["why"] is None or f"(n/a: {row['why']})" in printed
