"""The owner rule for custom operator packages: every file and folder that decides what is
called or how, and every folder along their symbolic links; what is read and loaded is the
real file checked."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from test_call import _copy_package, refused_until_trusted

import aclnn_py
from aclnn_py._c import loader as _loader
from aclnn_py.ops import catalog as _catalog

pytestmark = pytest.mark.emulator_only

LIBRARY = Path("op_api/lib/libcust_opapi.so")
DESCRIPTIONS = Path("op_impl/ai_core/tbe/config/ascend910b")

# what decides a call, from the package root (vendors/<package>/)
PATHS: dict[str, Callable[[Path], Path]] = {
    "package root": lambda package: package,
    "op_api": lambda package: package / "op_api",
    "include": lambda package: package / "op_api" / "include",
    "header": lambda package: package / "op_api" / "include" / "aclnn_add_custom.h",
    "lib": lambda package: package / "op_api" / "lib",
    "library": lambda package: package / LIBRARY,
    "op_impl": lambda package: package / "op_impl",
    "ops-info folder": lambda package: package / DESCRIPTIONS,
    "ops-info JSON": lambda package: package / DESCRIPTIONS / "aic-ascend910b-ops-info.json",
    "vendors": lambda package: package.parent,
    "config.ini": lambda package: package.parent / "config.ini",
}


def _vendor_package(tmp_path: Path, fresh_catalog: pytest.MonkeyPatch) -> Path:
    """A copy of the emulator's package as ``<opp>/vendors/pkg``, named by config.ini."""
    vendors = tmp_path / "opp" / "vendors"
    vendors.mkdir(parents=True)
    vendors.chmod(0o755)
    package = vendors / "pkg"
    shutil.move(_copy_package(tmp_path), package)
    (vendors / "config.ini").write_text("load_priority=pkg\n")
    (vendors / "config.ini").chmod(0o644)
    fresh_catalog.setenv("ASCEND_OPP_PATH", str(tmp_path / "opp"))
    return package


def _open_folder(path: Path, mode: int = 0o777) -> Path:
    path.mkdir(parents=True)
    path.chmod(mode)
    return path


def _behind_link(path: Path, folder: Path) -> Path:
    """Move ``path`` into ``folder`` and leave a link to it in its place."""
    moved = folder / path.name
    shutil.move(path, moved)
    path.symlink_to(moved)
    return moved


# who may write, and the modes (folder, file) that let them
WRITABLE_BY = {"other users": (0o777, 0o666), "its group": (0o775, 0o664)}


@pytest.mark.parametrize(("who", "what"), [
    *(("other users", what) for what in PATHS),
    *(("its group", what) for what in ["include", "header", "op_impl", "ops-info JSON"])])
def test_a_file_or_folder_of_the_package_writable_by_others_is_refused(tmp_path,
                                                                       fresh_catalog,
                                                                       who, what):
    package = _vendor_package(tmp_path, fresh_catalog)
    path = PATHS[what](package)
    folder_mode, file_mode = WRITABLE_BY[who]
    path.chmod(folder_mode if path.is_dir() else file_mode)
    refused_until_trusted(fresh_catalog, package,
                          rf"{re.escape(str(path))} is writable by {who}")


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("what", list(PATHS))
def test_a_file_or_folder_of_another_user_is_refused(tmp_path, fresh_catalog, what):
    package = _vendor_package(tmp_path, fresh_catalog)
    path = PATHS[what](package)
    os.chown(path, 4321, -1)  # another, non-root user
    refused_until_trusted(fresh_catalog, package,
                          rf"{re.escape(str(path))} belongs to user id 4321, neither you")


@pytest.mark.parametrize("what", ["package root", "op_api", "include", "header", "lib",
                                  "library", "op_impl", "ops-info JSON", "config.ini"])
def test_a_link_into_a_world_writable_folder_is_refused(tmp_path, fresh_catalog, what):
    package = _vendor_package(tmp_path, fresh_catalog)
    shared = _open_folder(tmp_path / "shared")  # anyone may swap what the link leads to
    _behind_link(PATHS[what](package), shared)
    refused_until_trusted(fresh_catalog, package,
                          rf"{re.escape(str(shared))} is writable by other users "
                          r"\(mode drwxrwxrwx, not sticky\)")


def test_a_world_writable_folder_the_link_passes_through_is_refused(tmp_path, fresh_catalog):
    package = _vendor_package(tmp_path, fresh_catalog)
    shared = _open_folder(tmp_path / "shared")  # anyone may rename deep/ and put another
    _behind_link(package / "op_api" / "lib", _open_folder(shared / "deep", 0o755))
    refused_until_trusted(fresh_catalog, package,
                          rf"{re.escape(str(shared))} is writable by other users")


def test_the_folder_of_an_intermediate_link_is_checked(tmp_path, fresh_catalog):
    package = _vendor_package(tmp_path, fresh_catalog)
    real = _behind_link(package / LIBRARY, _open_folder(tmp_path / "real", 0o755))
    shared = _open_folder(tmp_path / "shared")  # anyone may replace the hop
    (shared / "hop.so").symlink_to(real)
    (package / LIBRARY).unlink()
    (package / LIBRARY).symlink_to(shared / "hop.so")
    refused_until_trusted(fresh_catalog, package,
                          rf"{re.escape(str(shared))} is writable by other users")


def test_a_link_into_a_sticky_world_writable_folder_is_accepted(tmp_path, fresh_catalog):
    # as /tmp (1777): nobody else may rename or remove what such a folder holds
    package = _vendor_package(tmp_path, fresh_catalog)
    real = _behind_link(package / LIBRARY, _open_folder(tmp_path / "sticky", 0o1777))
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    assert aclnn_py.signature("aclnnAddCustom").library == real


def test_a_sticky_world_writable_folder_of_the_package_is_refused(tmp_path, fresh_catalog):
    # the package's own folders may not take new entries from others, sticky or not
    package = _vendor_package(tmp_path, fresh_catalog)
    include = package / "op_api" / "include"
    include.chmod(0o1777)
    refused_until_trusted(fresh_catalog, package,
                          rf"{re.escape(str(include))} is writable by other users")


def test_the_real_files_checked_are_the_ones_read_and_loaded(tmp_path, fresh_catalog):
    package = _vendor_package(tmp_path, fresh_catalog)
    header = _behind_link(package / "op_api" / "include" / "aclnn_add_custom.h",
                          _open_folder(tmp_path / "headers", 0o755))
    library = _behind_link(package / LIBRARY, _open_folder(tmp_path / "libraries", 0o755))
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    signature = aclnn_py.signature("aclnnAddCustom")
    assert (signature.header, signature.library, signature.package) == (header, library,
                                                                        package)
    assert library not in _loader._operator_libraries  # signature() loads nothing
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x), 2 * x)
    assert library in _loader._operator_libraries
    assert package / LIBRARY not in _loader._operator_libraries


def test_trusting_custom_packages_still_loads_the_real_file(tmp_path, fresh_catalog):
    package = _vendor_package(tmp_path, fresh_catalog)
    library = _behind_link(package / LIBRARY, _open_folder(tmp_path / "shared"))
    fresh_catalog.setenv("ACLNN_PY_TRUST_CUSTOM_OPP", "1")
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    assert aclnn_py.signature("aclnnAddCustom").library == library


def test_an_untrusted_config_ini_is_named_by_doctor(tmp_path, fresh_catalog):
    from aclnn_py import doctor

    package = _vendor_package(tmp_path, fresh_catalog)
    config = package.parent / "config.ini"
    config.chmod(0o666)
    with pytest.raises(PermissionError, match=rf"vendor priorities {re.escape(str(config))}"):
        _catalog.custom_packages(tmp_path)
    found = doctor.operator_headers()
    assert found["custom_packages"] == []
    assert f"{config} is writable by other users" in found["operators"]
    assert "ACLNN_PY_TRUST_CUSTOM_OPP=1" in found["operators"]
