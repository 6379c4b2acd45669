"""Build steps that pyproject.toml cannot express.

1. The cffi module (FFI_MODULE), compiled out-of-line in ABI mode from the C declarations in
   ``headers/`` (so importing aclnn_py parses no C).
2. The host emulator, one CANN-shaped tree per CANN release under ``aclnn_py/_emulator/``
   (``emulator/build.py``, which also runs on its own).
3. aclnn_py's own host library ``native/host.c`` (device blocks and handles owned
   in C): ``aclnn_py/_native/libaclnn_py_host.so``; and its per-call entry points as a
   compiled cffi module in API mode (FAST_MODULE, ``native/fast_calls.c``), which Python
   calls directly.
4. The documentation's pages (``README.md`` and ``docs/*.md``) in ``aclnn_py/docs/``, so
   that an installed package carries the pages its docstrings and messages name
   (``python -m aclnn_py docs``).

They land in the build directory for a wheel and in the source tree for an
editable install.

Build variables: ``CC`` (the C compiler, default ``cc``), ``ACLNN_EMU_CFLAGS``
(optimisation flags of the emulator, default ``-O2``), ``ACLNN_EMU_LDFLAGS`` and
``ACLNN_EMU_ARCH`` (for cross-compiling: ``tools/build-wheels.sh``) and ``ACLNN_PY_BUILD_EMULATOR``
(``0`` builds no emulator, for hosts with CANN; the host library is always built).
The compiled module uses CPython's stable ABI (cffi's generated code defines Py_LIMITED_API),
so one wheel, tagged ``cp39-abi3-<platform>``, serves every CPython from 3.9 on. Builds for
which the stable ABI does not apply (free-threaded or debug CPython, PyPy) get the module for
that interpreter and the interpreter's own wheel tag.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import sysconfig
import tempfile
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
FFI_MODULE = Path("aclnn_py") / "_c" / "_ffi.py"  # the cffi module, relative to the package root
FAST_MODULE = "aclnn_py._c._fast_calls"  # the compiled one (native/fast_calls.c)
HEADERS = ["acl_rt.h", "acl_meta.h", "aclnn_ops.h", "aclnn_emu.h", "aclnn_py_host.h"]
ENV_BUILD_EMULATOR = "ACLNN_PY_BUILD_EMULATOR"


def load_emulator_build():
    """emulator/build.py, under a name of its own (``build`` is also PyPA's package)."""
    spec = importlib.util.spec_from_file_location("aclnn_py_emulator_build",
                                                  HERE / "emulator" / "build.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


emulator = load_emulator_build()


def write_ffi_module(path: Path) -> None:
    import cffi

    ffibuilder = cffi.FFI()
    ffibuilder.cdef("\n".join((HERE / "headers" / name).read_text() for name in HEADERS))
    ffibuilder.set_source(".".join(FFI_MODULE.with_suffix("").parts), None)
    path.parent.mkdir(parents=True, exist_ok=True)
    ffibuilder.emit_python_code(str(path))


def check_compiler() -> None:
    """SetupError naming CC and ACLNN_PY_BUILD_EMULATOR when there is no C compiler."""
    command = emulator.compiler()
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


def build_native(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    emulator.run([*emulator.compiler(), *emulator.COMMON_CFLAGS, "-O2",
                  str(HERE / "native" / "host.c"), "-o", str(directory / "libaclnn_py_host.so"),
                  "-Wl,--no-undefined", *emulator.link_flags()])


def stable_abi() -> bool:
    """Whether the compiled module uses CPython's stable ABI: as cffi's generated code decides
    (not on PyPy, nor on a debug or free-threaded CPython)."""
    return sys.implementation.name == "cpython" and not hasattr(sys, "gettotalrefcount") \
        and not sysconfig.get_config_var("Py_GIL_DISABLED")


def check_python_headers() -> Path:
    """This Python's include directory; SetupError when it has no ``Python.h``."""
    include = Path(sysconfig.get_paths()["include"])
    if not (include / "Python.h").is_file():
        raise SetupError(
            f"aclnn_py compiles a small extension module (native/fast_calls.c), which needs "
            f"Python's headers, and there is no Python.h in {include}. Install them (the "
            f"python3-dev or python3-devel package of a system Python) and build again.")
    return include


def python_headers(work: Path) -> Path:
    """The include directory to compile against: this Python's, or, for a Debian-style
    multiarch Python, whose ``pyconfig.h`` only includes ``<MULTIARCH/pythonX.Y/pyconfig.h>``
    from the build host's ``/usr/include``, a copy in ``work`` holding that file itself
    (a cross compiler such as Zig's does not search the host's ``/usr/include``). The stable
    ABI's declarations do not depend on the values it holds across 64-bit Linux machines."""
    include = check_python_headers()
    multiarch = sysconfig.get_config_var("MULTIARCH")
    own = Path("/usr/include") / multiarch / include.name / "pyconfig.h" if multiarch else None
    if own is None or not own.is_file() or own.resolve() == (include / "pyconfig.h").resolve():
        return include
    copy = work / "include"
    shutil.copytree(include, copy)
    shutil.copyfile(own, copy / "pyconfig.h")
    return copy


def build_fast_calls(root: Path) -> None:
    """FAST_MODULE under ``root``: cffi's C for the declarations of ``native/fast_calls.h``
    over ``native/fast_calls.c``, compiled against this Python's headers."""
    import cffi

    ffibuilder = cffi.FFI()
    ffibuilder.cdef((HERE / "native" / "fast_calls.h").read_text())
    ffibuilder.set_source(FAST_MODULE, '#include "fast_calls.c"')
    suffix = ".abi3.so" if stable_abi() else sysconfig.get_config_var("EXT_SUFFIX")
    package, _, name = FAST_MODULE.rpartition(".")
    target = root.joinpath(*package.split(".")) / (name + suffix)
    with tempfile.TemporaryDirectory() as work:
        include = python_headers(Path(work))
        source = Path(work) / "_fast_calls.c"
        ffibuilder.emit_c_code(str(source))
        emulator.run([*emulator.compiler(), *emulator.COMMON_CFLAGS, "-O2",
                      f"-I{HERE / 'native'}", f"-I{include}",
                      str(source), "-o", str(target), *emulator.link_flags()])


def copy_pages(directory: Path) -> None:
    """The README and docs/*.md into ``directory`` (the package's ``docs`` folder)."""
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    for page in [HERE / "README.md", *sorted((HERE / "docs").glob("*.md"))]:
        shutil.copyfile(page, directory / page.name)


class BuildPy(build_py):
    def run(self) -> None:
        super().run()
        root = HERE if getattr(self, "editable_mode", False) else Path(self.build_lib)
        write_ffi_module(root / FFI_MODULE)
        copy_pages(root / "aclnn_py" / "docs")


class BuildExt(build_ext):
    def run(self) -> None:
        super().run()
        editable = getattr(self, "editable_mode", False) or self.inplace
        root = HERE if editable else Path(self.build_lib)
        wanted = emulator_wanted()
        check_compiler()
        check_python_headers()
        if wanted:
            emulator.build_emulator(root / "aclnn_py" / "_emulator")
        else:  # no tree at all: the loader then says the emulator was left out
            shutil.rmtree(root / "aclnn_py" / "_emulator", ignore_errors=True)
            print(f"{ENV_BUILD_EMULATOR}=0: the host emulator is not built", file=sys.stderr)
        build_native(root / "aclnn_py" / "_native")
        build_fast_calls(root)


class BinaryDistribution(Distribution):
    """The wheel carries compiled libraries, so it is platform specific."""

    def has_ext_modules(self) -> bool:
        return True


class BdistWheel(bdist_wheel):
    """Tag the wheel ``cp39-abi3-<platform>`` when its compiled module uses the stable ABI
    (``stable_abi``): every CPython from 3.9 on, the package's ``requires-python``, loads it.
    Otherwise the interpreter's own tag."""

    def get_tag(self) -> tuple[str, str, str]:
        tag = super().get_tag()
        return ("cp39", "abi3", tag[2]) if stable_abi() else tag


setup(cmdclass={"build_py": BuildPy, "build_ext": BuildExt, "bdist_wheel": BdistWheel},
      distclass=BinaryDistribution)
