"""aclnn_py.call, signature() and the catalog against unusual headers, packages and
arguments."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import numpy as np
import pytest

import aclnn_py
from aclnn_py import _catalog, _headers

PROTOTYPE = ("aclnnStatus aclnnFooGetWorkspaceSize(const aclTensor *self, aclTensor *out, "
             "uint64_t *workspaceSize, aclOpExecutor **executor);\n")
PHASE2 = ("aclnnStatus aclnnFoo(void *workspace, uint64_t workspaceSize, "
          "aclOpExecutor *executor, aclrtStream stream);\n")


def _parameters(text: str) -> list[tuple[str, str, str]]:
    prototypes = _headers.operator(text, "aclnnFoo", "h.h")
    return [(p.name, _headers.bare(p.c_type), p.role)
            for p in _catalog.roles(prototypes.parameters, None, custom=False)]


FOO = [("self", "const aclTensor *", "input"), ("out", "aclTensor *", "output")]


@pytest.mark.parametrize("text", [
    # A byte order mark before the include guard (editors on Windows write one).
    "\ufeff#ifndef ACLNN_FOO_H_\n#define ACLNN_FOO_H_\n" + PROTOTYPE + PHASE2 + "#endif\n",
    # C++ attributes and function-like macros before the return type.
    '[[deprecated("use aclnnFooV2")]] ' + PROTOTYPE + PHASE2,
    'ACL_DEPRECATED_MESSAGE("use aclnnFooV2") ACLNN_API ' + PROTOTYPE + PHASE2,
    "__ACLNN_API__ " + PROTOTYPE + PHASE2,
    # Declarations the operator does not need, which aclnn_py cannot read, stop nothing.
    "typedef aclnnStatus (*aclnnCallback)(void *data);\n" + PROTOTYPE + PHASE2,
    "aclnnStatus aclnnSetHook(void (*hook)(int));\n" + PROTOTYPE + PHASE2,
    "static inline int aclnnHelper(int a) { return aclnnOther(1); }\n" + PROTOTYPE + PHASE2,
])
def test_headers_written_in_less_common_styles(text):
    assert _parameters(text) == FOO
    assert _headers.operator_names(text)[-1] == "aclnnFoo"


def test_const_written_after_the_type_is_the_same_type():
    text = PROTOTYPE.replace("const aclTensor *self", "aclTensor const *self") + PHASE2
    assert _parameters(text) == FOO
    assert _headers.bare("aclTensor const * const") == "const aclTensor *"
    assert _headers.bare("aclTensorList const *") == "const aclTensorList *"


def test_a_prototype_of_the_operator_that_cannot_be_read_still_names_header_and_line():
    text = "typedef aclnnStatus (*aclnnCallback)(void *data);\n" + PROTOTYPE.replace(
        "const aclTensor *self", "const aclTensor &self") + PHASE2
    with pytest.raises(_headers.HeaderError, match=r"h\.h:2: .*const aclTensor &self"):
        _headers.operator(text, "aclnnFoo", "h.h")


# ---- custom packages --------------------------------------------------------------------


def _emulator_package() -> Path:
    return Path(aclnn_py.emulator.home()) / "opp" / "vendors" / "customize"


def _copy_package(where: Path) -> Path:
    shutil.copytree(_emulator_package(), where, symlinks=True)
    for path in [where, *where.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWGRP | stat.S_IWOTH))
    return where


@pytest.fixture
def fresh_catalog(monkeypatch):
    _catalog.forget()
    yield monkeypatch
    monkeypatch.undo()
    _catalog.forget()


@pytest.mark.emulator_only
def test_relative_custom_opp_path_entries_load_by_absolute_path(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path / "pkg")
    fresh_catalog.chdir(tmp_path)
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", "::pkg:")
    signature = aclnn_py.signature("aclnnAddCustom")
    assert signature.library == package / "op_api" / "lib" / "libcust_opapi.so"
    assert signature.library.is_absolute() and signature.package == package


@pytest.mark.emulator_only
def test_a_symlinked_library_in_a_folder_others_can_write_is_refused(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path / "pkg")
    library = package / "op_api" / "lib" / "libcust_opapi.so"
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone may swap the file the link leads to
    shutil.copy(library.resolve(), shared / "libcust_opapi.so")
    (shared / "libcust_opapi.so").chmod(0o755)
    library.unlink()
    library.symlink_to(shared / "libcust_opapi.so")
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    with pytest.raises(PermissionError, match=rf"{shared} is writable by other users"):
        aclnn_py.signature("aclnnAddCustom")
    _catalog.forget()
    fresh_catalog.setenv("ACLNN_PY_TRUST_CUSTOM_OPP", "1")
    assert aclnn_py.signature("aclnnAddCustom").package == package


@pytest.mark.emulator_only
def test_a_custom_header_with_a_bom_and_windows_line_endings(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path / "pkg")
    header = package / "op_api" / "include" / "aclnn_add_custom.h"
    text = header.read_text().lstrip().replace("\n", "\r\n")
    header.chmod(0o644)
    header.write_bytes("\ufeff".encode() + text.encode() + b"/* caf\xe9 */\r\n")
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    signature = aclnn_py.signature("aclnnAddCustom")
    assert [(p.name, p.role) for p in signature.parameters] == [
        ("x", "input"), ("y", "input"), ("z", "output")]
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x, out=np.empty(3, x.dtype)),
                                  2 * x)
