"""Packaging: the sdist holds what a build needs, the wheel built from it is tagged
``cp39-abi3-<platform>`` and works from outside the source tree, ``ACLNN_PY_BUILD_EMULATOR=0``
leaves the emulator out (and the backend says so), and a missing compiler is named."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT

pytestmark = pytest.mark.slow

# Build output and local state that a source distribution never comes from.
IGNORED = shutil.ignore_patterns(".git", ".venv", ".ci-venv", ".ci-wheel-venv", ".ci-sdist-venv",
                                 ".ci-dist", ".ci-docs", ".ci-artifacts", ".ci-wheels",
                                 ".ci-release-venv",
                                 "build", "dist", "*.egg-info",
                                 "__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache",
                                 "_emulator", "_native", "_ffi.py", "results")
PLATFORM = sysconfig.get_platform().replace("-", "_").replace(".", "_")


def run(command: list[str], cwd: Path, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("ACLNN_", "ASCEND_", "PYTEST_"))}
    environment.update(env or {})
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def sdist(tmp_path_factory) -> Path:
    """The source distribution of a clean copy of the project."""
    source = tmp_path_factory.mktemp("source") / "aclnn_py"
    shutil.copytree(ROOT, source, ignore=IGNORED)
    done = run([sys.executable, "-m", "build", "--sdist", "--outdir", str(source.parent),
                str(source)], cwd=source.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    (archive,) = source.parent.glob("aclnn_py-*.tar.gz")
    return archive


def wheel_from(sdist: Path, out: Path, env: dict[str, str] | None = None
               ) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(out),
                str(sdist)], cwd=out.parent, env=env)


def install_target(wheel: Path, target: Path) -> dict[str, str]:
    """Unpack ``wheel`` into ``target`` (pip install --target) and return an environment
    that imports it first."""
    done = run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target),
                str(wheel)], cwd=target.parent)
    assert done.returncode == 0, done.stdout + done.stderr
    return {"PYTHONPATH": str(target)}


def test_the_sdist_holds_what_a_build_needs(sdist):
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for header in ("acl_rt.h", "acl_meta.h", "aclnn_ops.h", "aclnn_emu.h", "aclnn_py_host.h"):
        assert f"headers/{header}" in names
    emulator = ROOT / "emulator"
    sources = {p.relative_to(ROOT).as_posix() for p in (emulator / "src").rglob("*.[ch]")}
    templates = {p.relative_to(ROOT).as_posix() for p in (emulator / "templates").rglob("*")
                 if p.is_file()}
    assert sources | templates | {"emulator/build.py", "aclnn_py/data/emulator_ops.json"} <= names
    assert {"native/host.c", "LICENSE", "README.md", "setup.py", "pyproject.toml",
            "MANIFEST.in", "examples/quickstart.py", "tests/conftest.py",
            "tests/c_client/linked_sample.c", "tests/c_client/mse_loss_backward_sample.c",
            "aclnn_py/doctor.py", "aclnn_py/testing.py", "docs/index.md",
            "tests/tools/test_docs.py"} <= names
    assert not any(name.startswith(("aclnn_py/_emulator", "aclnn_py/_native"))
                   or name == "aclnn_py/_c/_ffi.py" for name in names)


def test_a_wheel_built_from_the_sdist_runs_the_quickstart(sdist, tmp_path):
    out = tmp_path / "wheels"
    done = wheel_from(sdist, out)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("*.whl")
    assert wheel.name == f"aclnn_py-{wheel.name.split('-')[1]}-cp39-abi3-{PLATFORM}.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA")))
    for layout in ("8.0.RC2", "8.3", "8.5"):
        assert any(n.startswith(f"aclnn_py/_emulator/{layout}/lib64/") for n in names)
    assert {"aclnn_py/_native/libaclnn_py_host.so", "aclnn_py/_c/_ffi.py",
            "aclnn_py/_c/_fast_calls.abi3.so"} <= names
    # the documentation's pages travel with the package (python -m aclnn_py docs)
    pages = {f"aclnn_py/docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    assert pages | {"aclnn_py/docs/README.md"} <= names, sorted(pages - names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert b"License-Expression: Apache-2.0" in metadata
    assert b"Classifier: Operating System :: POSIX :: Linux" in metadata
    assert b"Keywords: CANN,aclnn" in metadata

    env = install_target(wheel, tmp_path / "site")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (quickstart,) = (tmp_path / "unpacked").glob("*/examples/quickstart.py")
    done = run([sys.executable, str(quickstart)], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert "backend: emulator" in done.stdout
    assert f"root {tmp_path / 'site' / 'aclnn_py' / '_emulator' / '8.5'}" in done.stdout
    assert float(done.stdout.strip().splitlines()[-1].split("=")[-1]) < 1e-6

    # A C program linked against the installed tree (whose libaclnn_py_emu_*.so entries are
    # copies, not links) gets aclnnExp from the Python kernel: one runtime, Python started.
    compiler = shutil.which("cc")
    if compiler is None:
        return
    tree = tmp_path / "site" / "aclnn_py" / "_emulator" / "8.5"
    libraries = f"{tree / 'lib64'}:{tree / 'driver' / 'lib64' / 'driver'}"
    program = tmp_path / "python_kernels"
    done = run([compiler, "-std=gnu11", f"-I{tree / 'include'}",
                str(ROOT / "tests" / "c_client" / "python_kernels.c"), f"-L{tree / 'lib64'}",
                "-lacl_rt", "-lnnopbase", "-lopapi_math", "-lopapi_nn", "-lopapi", "-lm",
                "-lpthread",
                f"-Wl,-rpath-link,{libraries}", "-o", str(program)], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = run([str(program), "exp"], cwd=tmp_path, env={"LD_LIBRARY_PATH": libraries})
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == ["status 0", "1.000000", "2.718282", "0.367879",
                                        "7.389056"]


def test_without_the_emulator_the_backend_says_it_is_absent(sdist, tmp_path):
    out = tmp_path / "wheels"
    done = wheel_from(sdist, out, {"ACLNN_PY_BUILD_EMULATOR": "0"})
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert not any("_emulator" in name for name in names)
    assert "aclnn_py/_native/libaclnn_py_host.so" in names

    env = install_target(wheel, tmp_path / "site")
    done = run([sys.executable, "-c", "import aclnn_py; aclnn_py.runtime_info()"],
               cwd=tmp_path, env={**env, "ACLNN_PY_BACKEND": "emulator"})
    assert done.returncode == 1
    assert "LibraryNotFoundError: This aclnn_py was installed without its host emulator " \
           "(ACLNN_PY_BUILD_EMULATOR=0 at build time)" in done.stderr
    done = run([sys.executable, "-m", "aclnn_py"], cwd=tmp_path,
               env={**env, "HOME": str(tmp_path)})
    assert done.returncode == 1
    assert "emulator built       no" in done.stdout
    assert "installed without its host emulator" in done.stdout


def test_a_missing_compiler_is_named(sdist, tmp_path):
    out = tmp_path / "wheels"
    done = wheel_from(sdist, out, {"CC": str(tmp_path / "no-such-cc")})
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert f"CC='{tmp_path / 'no-such-cc'}' names no executable" in output
    assert "ACLNN_PY_BUILD_EMULATOR=0 skips the emulator" in output
    done = wheel_from(sdist, out, {"ACLNN_PY_BUILD_EMULATOR": "yes"})
    assert "ACLNN_PY_BUILD_EMULATOR must be 0 or 1, got 'yes'" in done.stdout + done.stderr
