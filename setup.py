"""Build steps that pyproject.toml cannot express.

1. The cffi module ``aclnn_py/_ffi.py``, compiled out-of-line in ABI mode from
   the C declarations in ``headers/`` (so importing aclnn_py parses no C).
2. The host emulator: ``emulator/src/*.c`` built into a CANN-shaped tree
   ``aclnn_py/_emulator/lib64/{libascendcl,libnnopbase,libopapi}.so``.
3. aclnn_py's own host library ``native/host.c`` (device blocks and handles owned
   in C): ``aclnn_py/_native/libaclnn_py_host.so``.

Both land in the build directory for a wheel and in the source tree for an
editable install.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
HEADERS = ["acl_rt.h", "acl_meta.h", "aclnn_ops.h", "aclnn_emu.h", "aclnn_py_host.h"]
EMULATOR_SRC = HERE / "emulator" / "src"
NATIVE_SRC = HERE / "native"

# (library, sources, libraries it links against): the order is the build order.
EMULATOR_LIBRARIES = [
    ("libascendcl.so", ["runtime.c"], []),
    ("libnnopbase.so", ["meta.c"], ["ascendcl"]),
    ("libopapi.so", ["ops_core.c", "ops_registry.c", "op_mse_loss_backward.c", "op_mse_loss.c",
                     "op_l1_loss.c", "op_l1_loss_backward.c", "op_smooth_l1_loss.c",
                     "op_smooth_l1_loss_backward.c", "op_add.c"], ["nnopbase", "ascendcl"]),
]


def write_ffi_module(path: Path) -> None:
    import cffi

    ffibuilder = cffi.FFI()
    ffibuilder.cdef("\n".join((HERE / "headers" / name).read_text() for name in HEADERS))
    ffibuilder.set_source("aclnn_py._ffi", None)
    path.parent.mkdir(parents=True, exist_ok=True)
    ffibuilder.emit_python_code(str(path))


COMMON_CFLAGS = ["-std=gnu11", "-fPIC", "-shared", "-fvisibility=hidden", "-pthread", "-Wall",
                 "-Wextra", "-Wno-unused-parameter", "-Werror=implicit-function-declaration"]


def build_native(directory: Path) -> None:
    cc = shlex.split(os.environ.get("CC", "cc"))
    directory.mkdir(parents=True, exist_ok=True)
    command = [*cc, *COMMON_CFLAGS, "-O2", str(NATIVE_SRC / "host.c"),
               "-o", str(directory / "libaclnn_py_host.so"), "-Wl,--no-undefined"]
    print(" ".join(command), file=sys.stderr)
    subprocess.check_call(command)


def build_emulator(lib64: Path) -> None:
    cc = shlex.split(os.environ.get("CC", "cc"))
    cflags = shlex.split(os.environ.get("ACLNN_EMU_CFLAGS", "-O2"))
    lib64.mkdir(parents=True, exist_ok=True)
    common = COMMON_CFLAGS
    for name, sources, links in EMULATOR_LIBRARIES:
        command = [*cc, *common, *cflags, f"-I{EMULATOR_SRC}",
                   *(str(EMULATOR_SRC / s) for s in sources),
                   "-o", str(lib64 / name), f"-Wl,-soname,{name}",
                   f"-L{lib64}", *(f"-l{lib}" for lib in links),
                   "-Wl,-rpath,$ORIGIN", "-Wl,--no-undefined", "-lm"]
        print(" ".join(command), file=sys.stderr)
        subprocess.check_call(command)


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
        build_emulator(root / "aclnn_py" / "_emulator" / "lib64")
        build_native(root / "aclnn_py" / "_native")


class BinaryDistribution(Distribution):
    """The wheel carries compiled libraries, so it is platform specific."""

    def has_ext_modules(self) -> bool:
        return True


setup(cmdclass={"build_py": BuildPy, "build_ext": BuildExt}, distclass=BinaryDistribution)
