"""Discovery and loading, over fake CANN trees of both eras built from the emulator."""

from __future__ import annotations

import ast
import json
import platform
import random
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from conftest import run_python
from helpers import assert_8_5_libraries

import aclnn_py

pytestmark = pytest.mark.slow


def lib64(layout: str) -> Path:
    return Path(aclnn_py.emulator.home(layout)) / "lib64"


REPORT = """
    import json, numpy as np, aclnn_py
    info = aclnn_py.runtime_info()
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    r = aclnn_py.mse_loss_backward(np.ones_like(x), x, np.zeros_like(x), reduction="sum")
    info["result"] = r.ravel().tolist()
    import os
    info["opp"] = os.environ.get("ASCEND_OPP_PATH")
    print(json.dumps(info))
"""


def report(env: dict[str, str], home: Path) -> dict:
    done = run_python(REPORT, env, home=str(home))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def make_tree(root: Path, libdir: str, names: dict[str, str], layout: str = "8.3") -> Path:
    """A fake install: the emulator library ``source`` of ``layout`` copied as ``target`` into
    root/libdir, with what the libraries need beside them as in the emulator tree (the
    soname-named files and libruntime.so in libdir, the driver stand-in in root/driver)."""
    target_dir = root / libdir
    target_dir.mkdir(parents=True)
    for target, source in names.items():
        shutil.copy2(lib64(layout) / source, target_dir / target)
    for support in [*lib64(layout).glob("libaclnn_py_emu_*.so"), lib64(layout) / "libruntime.so"]:
        shutil.copy2(support, target_dir / support.name)
    shutil.copytree(Path(aclnn_py.emulator.home(layout)) / "driver", root / "driver")
    (root / "opp").mkdir()
    return root.resolve()


OLD_ERA = {"libascendcl.so": "libascendcl.so", "libnnopbase.so": "libnnopbase.so",
           "libopapi.so": "libopapi.so"}
# CANN 8.5 installs libascendcl.so beside libacl_rt.so for compatibility (hicann/runtime
# RuntimeSo.xml) and keeps libopapi.so, which libopapi_nn.so links.
NEW_ERA = {"libacl_rt.so": "libacl_rt.so", "libascendcl.so": "libacl_rt.so",
           "libnnopbase.so": "libnnopbase.so", "libopapi_nn.so": "libopapi_nn.so",
           "libopapi_math.so": "libopapi_math.so", "libopapi.so": "libopapi.so"}


def test_old_era_tree_through_explicit_override(tmp_path):
    root = make_tree(tmp_path / "ascend-toolkit" / "latest", "lib64", OLD_ERA)
    info = report({"ACLNN_PY_CANN_HOME": str(root), "ACLNN_PY_BACKEND": "cann"}, tmp_path)
    assert info["backend"] == "cann"
    assert info["root"] == str(root)
    assert info["libraries"] == {
        "runtime": str(root / "lib64" / "libascendcl.so"),
        "meta": str(root / "lib64" / "libnnopbase.so"),
        "ops": str(root / "lib64" / "libopapi.so"),
    }
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
    assert info["opp"] == str(root / "opp")  # defaulted from the root


def test_new_era_tree_prefers_the_new_names_and_never_mixes(tmp_path):
    arch_dir = f"{platform.machine()}-linux/lib64"
    root = make_tree(tmp_path / "cann", arch_dir, NEW_ERA, "8.5")
    (root / f"{platform.machine()}-linux" / "ascend_toolkit_install.info").write_text(
        "package_name=cann\nversion=8.5.0\n")
    info = report({"ASCEND_HOME_PATH": str(root)}, tmp_path)
    lib = root / arch_dir
    assert info["backend"] == "cann"
    assert_8_5_libraries(info, lib)
    assert info["cann_version"] == "8.5.0"
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


def test_the_override_beats_ascend_home_path_and_a_partial_override_is_an_error(tmp_path):
    full = make_tree(tmp_path / "full", "lib64", OLD_ERA)
    info = report({"ACLNN_PY_CANN_HOME": str(full),
                   "ASCEND_HOME_PATH": str(tmp_path / "bogus"),
                   "ASCEND_TOOLKIT_HOME": str(tmp_path / "bogus")}, tmp_path)
    assert info["backend"] == "cann" and info["root"] == str(full)
    # A named root missing a library family is not skipped for the next one.
    partial = tmp_path / "partial"
    (partial / "lib64").mkdir(parents=True)
    shutil.copy2(lib64("8.3") / "libascendcl.so", partial / "lib64")
    tried, text = first_call_error({"ACLNN_PY_CANN_HOME": str(partial),
                                    "ASCEND_HOME_PATH": str(full),
                                    "ASCEND_TOOLKIT_HOME": str(full)}, tmp_path)
    assert text.startswith(f"$ACLNN_PY_CANN_HOME names {partial} as the CANN install, but it "
                           "has no aclnn meta library (libnnopbase.so) and no operator library "
                           "(libopapi_nn.so or libopapi.so) in lib64")
    assert "While $ACLNN_PY_CANN_HOME is set, $ASCEND_HOME_PATH and $ASCEND_TOOLKIT_HOME are " \
        "not consulted" in text
    assert str(partial / "lib64" / "libnnopbase.so") in tried
    assert str(partial / "lib64" / "libopapi.so") in tried
    assert str(partial / "lib64" / "libascendcl.so") not in tried  # it is there


# --- a location the user named that does not load ------------------------------------------

FIRST_CALL = """
    import json, numpy as np, warnings
    warnings.simplefilter("error")  # a fallback warning would fail the run
    import aclnn_py, aclnn_py._c.loader as loader
    assert loader.loaded() is None  # the import succeeded and loaded nothing
    x = np.ones(3, np.float32)
    errors = []
    for call in (lambda: aclnn_py.add(x, x), lambda: aclnn_py.mse_loss(x, x),
                 aclnn_py.runtime_info):
        try:
            call()
        except aclnn_py.LibraryNotFoundError as error:
            errors.append([list(error.tried), str(error)])
        else:
            raise SystemExit("the call ran: " + str(loader.loaded().installation))
    print(json.dumps(errors))
"""


def first_call_error(env: dict[str, str], home: Path) -> tuple[list[str], str]:
    """The paths and message of the LibraryNotFoundError each of three calls raises under
    ``env`` (the same every time), after an import that loaded nothing."""
    done = run_python(FIRST_CALL, env, home=str(home))
    assert done.returncode == 0, done.stdout + done.stderr
    errors = json.loads(done.stdout.strip().splitlines()[-1])
    assert len(errors) == 3 and errors[0] == errors[1] == errors[2]
    return errors[0][0], errors[0][1]


@pytest.mark.parametrize("variable", ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME",
                                      "ACLNN_PY_CANN_HOME"])
def test_a_named_location_that_does_not_exist_raises_at_every_call(tmp_path, variable):
    bogus = tmp_path / "opt" / "bogus" / "cann"
    tried, text = first_call_error({variable: str(bogus)}, tmp_path)
    assert text.startswith(f"${variable} names {bogus} as the CANN install, but it does not "
                           "exist, so no CANN was loaded.")
    assert f"Set {variable} to a CANN install root" in text
    assert "set ACLNN_PY_BACKEND=emulator to run on aclnn_py's host emulator instead" in text
    for name in ("libacl_rt.so", "libascendcl.so", "libnnopbase.so", "libopapi.so"):
        assert str(bogus / "lib64" / name) in tried
        assert f"  {bogus / 'lib64' / name}" in text  # listed under "Paths tried:"
    assert all(path.startswith(str(bogus)) for path in tried)  # no default root, no emulator


def test_a_named_location_is_required_by_the_cann_backend_too(tmp_path):
    """ACLNN_PY_BACKEND=cann does not go on to the default roots either."""
    bogus = tmp_path / "bogus"
    tried, text = first_call_error({"ASCEND_HOME_PATH": str(bogus),
                                    "ACLNN_PY_BACKEND": "cann"}, tmp_path)
    assert text.startswith(f"$ASCEND_HOME_PATH names {bogus} as the CANN install")
    assert not any("/usr/local/Ascend" in path for path in tried)


def test_a_named_location_that_fails_to_load_says_how_it_was_chosen(tmp_path):
    root = make_tree(tmp_path / "cann", "lib64", OLD_ERA)
    target = root / "lib64" / "libopapi.so"
    target.write_bytes(_garbage(target.read_bytes()))
    tried, text = first_call_error({"ASCEND_HOME_PATH": str(root)}, tmp_path)
    assert tried == [str(target)]
    assert text.startswith(f"{target} is corrupt or is not a shared library")
    assert (f"(How this install was chosen: ACLNN_PY_BACKEND=auto: CANN found at {root} "
            "($ASCEND_HOME_PATH).) Set ACLNN_PY_BACKEND=emulator to run on aclnn_py's host "
            "emulator instead.") in text


def test_the_emulator_setting_runs_the_emulator_whatever_the_locations_say(tmp_path):
    done = run_python("""
        import warnings
        warnings.simplefilter("error")
        import numpy as np, aclnn_py
        x = np.arange(3, dtype=np.float32)
        print(aclnn_py.runtime_info()["backend"], aclnn_py.add(x, x).tolist())
    """, {"ACLNN_PY_BACKEND": "emulator", "ACLNN_PY_CANN_HOME": str(tmp_path / "a"),
          "ASCEND_HOME_PATH": str(tmp_path / "b"), "ASCEND_TOOLKIT_HOME": "relative"},
        home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "emulator [0.0, 2.0, 4.0]"


def test_emulator_tree_found_through_ascend_home_reports_cann(tmp_path):
    info = report({"ASCEND_HOME_PATH": aclnn_py.emulator.home(), "ACLNN_PY_BACKEND": "cann"},
                  tmp_path)
    assert info["backend"] == "cann"
    assert info["root"] == aclnn_py.emulator.home()
    assert Path(info["libraries"]["runtime"]).name == "libacl_rt.so"  # the newest layout
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]


@pytest.mark.emulator_only
def test_auto_falls_back_to_the_emulator_and_says_so(tmp_path):
    done = run_python("""
        import logging, aclnn_py
        logging.basicConfig(level=logging.INFO, format="%(name)s %(levelname)s %(message)s")
        print(aclnn_py.runtime_info()["backend"])
    """, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["emulator"]
    assert "aclnn_py INFO no CANN installation found; using the aclnn_py host emulator" \
        in done.stderr
    assert done.stderr.count("no CANN installation found") == 1
    assert "Warning" not in done.stderr  # nothing named, nothing in /usr/local/Ascend


def test_cann_backend_without_cann_lists_every_path_tried(tmp_path):
    done = run_python("""
        import aclnn_py
        try:
            aclnn_py.runtime_info()
        except aclnn_py.LibraryNotFoundError as error:
            assert isinstance(error, OSError)
            print(error)
        else:
            raise SystemExit("no error")
    """, {"ACLNN_PY_BACKEND": "cann"}, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    text = done.stdout
    arch = platform.machine()
    for path in ("/usr/local/Ascend/cann/lib64/libacl_rt.so",
                 "/usr/local/Ascend/cann/lib64/libascendcl.so",
                 f"/usr/local/Ascend/cann/{arch}-linux/lib64/libascendcl.so",
                 "/usr/local/Ascend/ascend-toolkit/latest/lib64/libascendcl.so",
                 f"{tmp_path}/Ascend/cann/lib64/libacl_rt.so",
                 f"{tmp_path}/Ascend/ascend-toolkit/latest/lib64/libascendcl.so"):
        assert path in text
    assert "set_env.sh" in text and "ACLNN_PY_CANN_HOME" in text


def test_a_relative_named_root_is_never_loaded(tmp_path):
    """Not even when it holds CANN relative to the working directory; nor does it fall back
    to the emulator."""
    make_tree(tmp_path / "here", "lib64", OLD_ERA)
    tried, text = first_call_error({"ACLNN_PY_CANN_HOME": "here"}, tmp_path)
    assert tried == ["here (not an absolute path)"]
    assert text.startswith("$ACLNN_PY_CANN_HOME is 'here', not an absolute path: aclnn_py "
                           "loads CANN only from an absolute path")
    assert "ACLNN_PY_BACKEND=emulator" in text


def test_unknown_backend_is_a_clear_value_error(tmp_path):
    done = run_python("""
        import aclnn_py
        try:
            aclnn_py.runtime_info()
        except ValueError as error:
            print(error)
    """, {"ACLNN_PY_BACKEND": "gpu"}, home=str(tmp_path))
    assert "ACLNN_PY_BACKEND='gpu' is not one of auto, cann, emulator" in done.stdout


def test_import_loads_nothing_and_never_fails_without_cann(tmp_path):
    done = run_python("""
        import aclnn_py, aclnn_py._c.loader as loader
        print(loader.loaded() is None)
    """, {"ACLNN_PY_BACKEND": "cann"}, home=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


def test_emulator_home_is_a_cann_shaped_tree_of_the_newest_layout():
    home = Path(aclnn_py.emulator.home())
    assert home == Path(aclnn_py.emulator.home("8.5"))
    for name in ("libacl_rt.so", "libnnopbase.so", "libopapi_nn.so", "libopapi_math.so"):
        assert (home / "lib64" / name).is_file()
    assert (home / "opp").is_dir()
    assert (home / "share" / "info" / "runtime" / "version.info").is_file()


def _exported_symbols(path: Path) -> set[str]:
    listing = subprocess.run(["nm", "-D", "--defined-only", str(path)], capture_output=True,
                             text=True, check=True).stdout
    return {line.split()[-1] for line in listing.splitlines() if line.strip()}


@pytest.mark.parametrize("library, own, foreign", [
    ("libacl_rt.so", ["aclInit", "aclrtMalloc", "aclGetRecentErrMsg"],
     ["aclCreateTensor", "aclnnMseLossBackward"]),
    ("libnnopbase.so", ["aclCreateTensor", "aclDestroyAclOpExecutor", "aclnnInit"],
     ["aclInit", "aclrtMalloc", "aclnnMseLossBackward"]),
    ("libopapi_nn.so", ["aclnnMseLossBackward", "aclnnMseLossGetWorkspaceSize"],
     ["aclInit", "aclCreateTensor", "aclnnAdd"]),
    ("libopapi_math.so", ["aclnnAdd", "aclnnAddGetWorkspaceSize"],
     ["aclInit", "aclCreateTensor", "aclnnMseLoss"]),
])
def test_each_emulator_library_exports_only_its_own_family(library, own, foreign):
    # dlsym through a handle also searches its dependencies (as on CANN), so read the
    # library's own dynamic symbol table: a symbol looked up in the wrong library
    # must not work here when it would not work on CANN.
    symbols = _exported_symbols(lib64("8.5") / library)
    assert set(own) <= symbols
    assert not set(foreign) & symbols


# --- a library that is there but cannot be loaded -------------------------------------------

LOAD_ERROR = """
    import aclnn_py
    try:
        aclnn_py.runtime_info()
    except aclnn_py.LibraryNotFoundError as error:
        assert isinstance(error, OSError)
        print(repr(error.tried))
        print(error)
    else:
        raise SystemExit("loaded without an error")
"""


def load_error(root: Path, home: Path) -> tuple[tuple[str, ...], str]:
    """The paths and the message of the LibraryNotFoundError that loading ``root`` raises."""
    done = run_python(LOAD_ERROR, {"ACLNN_PY_BACKEND": "cann", "ACLNN_PY_CANN_HOME": str(root)},
                      home=str(home))
    # a negative return code is a signal: the loader crashed instead of raising
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    first, _, text = done.stdout.partition("\n")
    return ast.literal_eval(first), text


def _garbage(data: bytes) -> bytes:
    return b"\0" + random.Random(0).randbytes(len(data) - 1)


def _wrong_class(data: bytes) -> bytes:  # EI_CLASS: 32-bit <-> 64-bit
    return data[:4] + bytes([3 - data[4]]) + data[5:]


def _other_machine(data: bytes) -> bytes:  # e_machine of another architecture
    other = 62 if platform.machine() in ("aarch64", "arm64") else 183  # x86-64, AArch64
    patched = bytearray(data)
    struct.pack_into("<H" if data[5] == 1 else ">H", patched, 18, other)
    return bytes(patched)


CORRUPTIONS = {  # name: (how the file is damaged, what the message must say about it)
    "garbage": (_garbage, "invalid ELF header"),
    "empty": (lambda data: b"", "file too short"),
    "header_cut": (lambda data: data[:40], "file too short"),
    "truncated_half": (lambda data: data[:len(data) // 2], "truncated"),
    "truncated_tail": (lambda data: data[:-64], "truncated"),
    "wrong_class": (_wrong_class, "wrong ELF class"),
    "other_machine": (_other_machine, "built for"),
    "linker_script": (lambda data: b"/* GNU ld script */\nINPUT(libopapi.so.1)\n",
                      "not an ELF file"),
}


@pytest.mark.parametrize("library, corruption", [
    *(("libopapi.so", name) for name in CORRUPTIONS),
    ("libascendcl.so", "garbage"), ("libnnopbase.so", "truncated_half"),
])
def test_a_corrupt_library_is_reported_as_corrupt_not_as_a_dependency_problem(
        tmp_path, library, corruption):
    damage, says = CORRUPTIONS[corruption]
    root = make_tree(tmp_path / "cann", "lib64", OLD_ERA)
    target = root / "lib64" / library
    target.write_bytes(damage(target.read_bytes()))
    tried, text = load_error(root, tmp_path)
    assert tried == (str(target),)
    assert text.startswith(f"{target} is corrupt or is not a shared library for this machine")
    assert says in text
    assert "dependenc" not in text.lower() and "depends" not in text.lower()
    if corruption not in ("truncated_half", "truncated_tail"):
        assert "dlopen said: " in text  # dlopen's own message is quoted
    else:  # a truncated file would crash the process inside dlopen (SIGBUS)
        assert "not passed to dlopen" in text


def _library_needing(directory: Path, needed_dir: Path, tmp_path: Path) -> Path:
    """directory/libopapi.so, a stand-in needing libaclnn_py_needed.so built in needed_dir."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler")
    (tmp_path / "needed.c").write_text("int aclnn_py_needed(void) { return 1; }\n")
    (tmp_path / "user.c").write_text("extern int aclnn_py_needed(void);\n"
                                     "int aclnn_py_user(void) { return aclnn_py_needed(); }\n")
    needed_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(needed_dir / "libaclnn_py_needed.so"),
                    "-Wl,-soname,libaclnn_py_needed.so", str(tmp_path / "needed.c")], check=True)
    target = directory / "libopapi.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(target), str(tmp_path / "user.c"),
                    f"-L{needed_dir}", "-Wl,--no-as-needed", "-laclnn_py_needed",
                    "-Wl,-rpath,$ORIGIN"], check=True)
    return target


def test_a_missing_dependency_is_named_with_where_it_was_looked_for(tmp_path):
    root = make_tree(tmp_path / "cann", "lib64", OLD_ERA)
    target = _library_needing(root / "lib64", tmp_path / "elsewhere", tmp_path)
    tried, text = load_error(root, tmp_path)
    assert tried[0] == str(target)
    assert str(root / "lib64" / "libaclnn_py_needed.so") in tried[1:]
    assert str(root / "driver" / "lib64" / "driver" / "libaclnn_py_needed.so") in tried[1:]
    assert text.startswith(f"Found {target} but could not load it: it needs "
                           "libaclnn_py_needed.so, which is neither in the install's library "
                           "folders nor in the driver folders nor on the dynamic loader's path")
    assert "libaclnn_py_needed.so: cannot open shared object file" in text
    assert "Source CANN's set_env.sh" in text and "ACLNN_PY_DRIVER_PATH" in text
    assert "corrupt" not in text


def test_a_corrupt_dependency_is_named_as_the_corrupt_file(tmp_path):
    root = make_tree(tmp_path / "cann", "lib64", OLD_ERA)
    lib64 = root / "lib64"
    target = _library_needing(lib64, lib64, tmp_path)
    needed = lib64 / "libaclnn_py_needed.so"
    needed.write_bytes(_garbage(needed.read_bytes()))
    tried, text = load_error(root, tmp_path)
    assert tried == (str(needed),)  # loaded first, by path, as a dependency found beside it
    assert text.startswith(f"{needed} is corrupt or is not a shared library for this machine")
    assert f"dlopen said: {needed}: invalid ELF header" in text
    assert f"(It was loaded first as a library that {target} needs.)" in text


def test_operators_are_found_in_every_operator_library_of_the_8_5_layout(tmp_path):
    """CANN >= 8.5 splits the operators by repository (libopapi_nn.so, libopapi_math.so):
    an operator missing from libopapi_nn.so is looked up in libopapi_math.so."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("needs a C compiler")
    names = {"libacl_rt.so": "libascendcl.so", "libnnopbase.so": "libnnopbase.so",
             "libopapi_math.so": "libopapi.so"}  # 8.3's libopapi.so holds every operator
    root = make_tree(tmp_path / "cann", "lib64", names)
    (tmp_path / "nn.c").write_text("int aclnn_py_no_operators_here;\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(root / "lib64" / "libopapi_nn.so"),
                    str(tmp_path / "nn.c")], check=True)  # an operator library without them
    info = report({"ACLNN_PY_CANN_HOME": str(root), "ACLNN_PY_BACKEND": "cann"}, tmp_path)
    lib = root / "lib64"
    assert info["libraries"] == {"runtime": str(lib / "libacl_rt.so"),
                                 "meta": str(lib / "libnnopbase.so"),
                                 "ops": str(lib / "libopapi_nn.so"),
                                 "opapi_math": str(lib / "libopapi_math.so")}
    assert info["result"] == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]  # found in libopapi_math.so


ONE_RUNTIME = '''
import ctypes, json, os, sys
import numpy as np


def load_as_a_program():  # as torch_npu does: libascendcl.so by name, from LD_LIBRARY_PATH
    ctypes.CDLL("libascendcl.so", mode=os.RTLD_GLOBAL)


if sys.argv[1] == "program_first":
    load_as_a_program()
import aclnn_py
result = aclnn_py.call("aclnnExp", np.zeros(2, np.float32)).tolist()
if sys.argv[1] == "aclnn_py_first":
    load_as_a_program()
maps = open("/proc/self/maps").read().splitlines()
runtimes = sorted({line.split()[-1] for line in maps
                   if line.endswith(("/libacl_rt.so", "/libaclnn_py_emu_acl.so"))})
print(json.dumps({"result": result, "runtimes": runtimes}))
'''


@pytest.mark.emulator_only
@pytest.mark.parametrize("order", ["program_first", "aclnn_py_first"])
def test_one_runtime_when_a_program_loaded_the_tree_whose_sonames_are_copies(tmp_path, order):
    """A wheel cannot carry symbolic links: its tree holds each soname's library as a copy of
    the CANN-named one. When a program (torch_npu) loaded the tree by name first, aclnn_py
    uses the copies it loaded instead of opening the CANN-named files as a second runtime;
    the other way round the program's loads find aclnn_py's by soname."""
    tree = tmp_path / "8.5"
    shutil.copytree(aclnn_py.emulator.home("8.5"), tree, symlinks=False)  # links become copies
    assert not any(path.is_symlink() for path in (tree / "lib64").iterdir())
    library_path = f"{tree / 'lib64'}:{tree / 'driver' / 'lib64' / 'driver'}"
    done = run_python(ONE_RUNTIME.replace("sys.argv[1]", repr(order)),
                      {"ACLNN_PY_BACKEND": "cann", "ACLNN_PY_CANN_HOME": str(tree),
                       "LD_LIBRARY_PATH": library_path})
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.splitlines()[-1])
    assert report["result"] == [1.0, 1.0]
    assert len(report["runtimes"]) == 1, report["runtimes"]
