"""The catalog reads headers alone: signature() without a library, call() loading and binding
once; and the quick scan of headers for operator names, which must give exactly what the
full cleaning gives."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import no_device_work
from test_call import (
    BUILTIN_STYLE,
    CUSTOM_STYLE,
    OLDER_STYLE,
    _copy_package,
    _package_without_its_library,
)

import aclnn_py
from aclnn_py._c import lowlevel as ll
from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers

NOWHERE = ("ACLNN_API aclnnStatus aclnnNowhereGetWorkspaceSize(const aclTensor *self,\n"
           "    aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);\n"
           "ACLNN_API aclnnStatus aclnnNowhere(void *workspace, uint64_t workspaceSize,\n"
           "    aclOpExecutor *executor, aclrtStream stream);\n")


@pytest.fixture
def nowhere(tmp_path, fresh_catalog):
    """The install's headers, and one more declaring aclnnNowhere, which no library has."""
    folder = tmp_path / "aclnnop"
    folder.mkdir()
    (folder / "aclnn_nowhere.h").write_text(NOWHERE)
    builtin = _catalog.builtin_header_dirs
    fresh_catalog.setattr(_catalog, "builtin_header_dirs",
                          lambda root: [*builtin(root), folder])
    return folder


def test_a_header_no_library_exports_is_readable_but_not_callable(nowhere):
    signature = aclnn_py.signature("aclnnNowhere")
    assert [(p.name, p.role) for p in signature.parameters] == [("self", "input"),
                                                                 ("out", "output")]
    assert (signature.library, signature.callable) == (None, False)
    installation = ll.libraries().installation
    assert signature.looked_in == (installation.paths["ops"], *installation.extra_ops)
    text = str(signature)
    assert "not callable here" in text
    assert all(library.name in text for library in signature.looked_in)
    assert signature.header == nowhere / "aclnn_nowhere.h"


def test_calling_it_names_the_libraries_looked_in(nowhere):
    looked_in = aclnn_py.signature("aclnnNowhere").looked_in
    with no_device_work(), pytest.raises(aclnn_py.LibraryNotFoundError) as caught:
        aclnn_py.call("aclnnNowhere", np.ones(3, np.float32))
    assert list(caught.value.tried) == [str(library) for library in looked_in]
    assert "no loaded operator library exports aclnnNowhereGetWorkspaceSize" in str(caught.value)
    assert all(library.name in str(caught.value) for library in looked_in)


def test_operators_callable_here(nowhere):
    every = aclnn_py.operators()
    callable_here = aclnn_py.operators(callable=True)
    assert "aclnnNowhere" in every and "aclnnNowhere" not in callable_here
    assert set(callable_here) < set(every) and callable_here == sorted(callable_here)
    assert {"aclnnAdd", "aclnnMseLossBackward"} <= set(callable_here)
    for name in ("aclnnAdd", "aclnnNowhere"):
        assert aclnn_py.signature(name).callable == (name in callable_here)


def test_a_callable_signature_names_its_library():
    signature = aclnn_py.signature("aclnnAdd")
    assert signature.callable and signature.library in signature.looked_in
    assert f"library: {signature.library} (CANN)" in str(signature)


@pytest.mark.emulator_only
def test_a_custom_header_without_its_library(tmp_path, fresh_catalog):
    package, library = _package_without_its_library(tmp_path, fresh_catalog)
    signature = aclnn_py.signature("aclnnAddCustom")
    assert (signature.package, signature.library, signature.callable) == (package, None, False)
    assert signature.looked_in == (library,)
    assert f"its library {library} is missing" in str(signature)
    assert "aclnnAddCustom" in aclnn_py.operators()
    assert "aclnnAddCustom" not in aclnn_py.operators(callable=True)
    x = np.arange(4, dtype=np.float32)
    with no_device_work(), pytest.raises(aclnn_py.LibraryNotFoundError,
                                         match=f"its library {library} is missing") as caught:
        aclnn_py.call("aclnnAddCustom", x, x)
    assert list(caught.value.tried) == [str(library)]


@pytest.mark.emulator_only
def test_a_custom_library_is_loaded_by_the_first_call_only(tmp_path, fresh_catalog):
    from aclnn_py._c import loader as _loader

    package = _copy_package(tmp_path)
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    library = package / "op_api" / "lib" / "libcust_opapi.so"
    assert "aclnnAddCustom" in aclnn_py.operators(callable=True)
    signature = aclnn_py.signature("aclnnAddCustom")
    assert (signature.library, signature.callable) == (library, True)
    assert library not in _loader._operator_libraries
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x), 2 * x)
    assert library in _loader._operator_libraries


def test_an_operator_is_bound_once_whatever_the_threads(fresh_catalog):
    bound = []
    bind_operator = ll.bind_operator

    def counting(library: Path, operator: str, *types: tuple[str, ...]) -> None:
        bound.append(operator)
        bind_operator(library, operator, *types)

    fresh_catalog.setattr(ll, "bind_operator", counting)
    signature = aclnn_py.signature("aclnnAdd")
    start = threading.Barrier(8)
    found = []

    def bind() -> None:
        start.wait()
        found.append(_catalog.bind(signature))

    threads = [threading.Thread(target=bind) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert bound == ["aclnnAdd"] and found == [signature.library] * 8
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAdd", x, x, 1), 2 * x)
    assert bound == ["aclnnAdd"]


# ---- the quick scan ---------------------------------------------------------------------

FOO = ("aclnnStatus aclnnFooGetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
       "    uint64_t *workspaceSize, aclOpExecutor **executor);\n")
BAR = FOO.replace("Foo", "Bar")
GHOST = "aclnnStatus aclnnGhostGetWorkspaceSize(const aclTensor *self);"

HEADERS = [
    BUILTIN_STYLE, OLDER_STYLE, CUSTOM_STYLE,
    # comments, strings and macros holding prototypes
    "/* " + GHOST + " */\n// " + GHOST + "\nstatic const char *doc = \"" + GHOST + "\";\n" + FOO,
    "#define GHOST " + GHOST + "\n#define LONG \\\n  " + GHOST + "\n" + FOO,
    "/**\n * @brief aclnnFoo的第一段接口, aclnnFooGetWorkspaceSize(...)\n */\n" + FOO,
    # what the quick scan leaves to the full cleaning
    FOO + '#define QUOTES "' + '\\"' * 2000 + "\n" + BAR,
    FOO + '#define TEXT "say ' + ('  \\"' + GHOST.replace('"', '\\"') + '\\" \\\n') * 50 + "\n"
    + BAR,
    FOO + "// the old spelling: \\\n" + (GHOST + " \\\n") * 50 + "\n" + BAR + "/* " + GHOST,
    FOO + 'static const char *a = "\\\\", *b = "' + GHOST + '";\n' + BAR,
    FOO + 'static const char *a = "\\\\\\" ' + GHOST + ' ";\n' + BAR,
    FOO + 'static const char *a = "long \\\n' + GHOST + '";\n' + BAR,
    "// the old spelling: \\\r\naclnnStatus aclnnFooGetWorkspaceSize(int old);\r\n" + BAR,
    FOO + "ACLNN_API(" + ("(" + GHOST + ")\n") * 50 + BAR,
    "\ufeff#ifndef ACLNN_FOO_H_\n#define ACLNN_FOO_H_\n" + FOO + "#endif\n",
    '[[deprecated("use aclnnFooV2")]] ' + FOO,
    'ACL_DEPRECATED_MESSAGE("use aclnnFooV2") ACLNN_API ' + FOO,
    "__ACLNN_API__ " + FOO + "static inline int aclnnHelper(int a) { return aclnnOther(1); }\n",
    "FOO /* a comment */ (" + GHOST + ")\n" + BAR,
    "aclnnFooGetWorkspaceSize /* between */ (int x);\n#define X\n" + BAR,
    "aclnnFooGetWorkspaceSize\n#if 1\n(int x);\n#endif\n" + BAR,
    "aclnnFooGetWorkspaceSize __attribute__((x)) (int x);" + BAR,
    "aclnnFooGetWorkspaceSize extern \"C\" (int x);" + BAR,
    "  #  define A(x) x /* one line */ // and the rest\n" + FOO + " /* */ #define B\n" + BAR,
    "x" + FOO + "aclnnFooGetWorkspaceSize的(int x);\naclnn的GetWorkspaceSize(int x);\n" + BAR,
    "aclnnFooGetWorkspaceSize\u3000(int x);\naclnnBarGetWorkspaceSize\x1c(int x);\n",
    "".join(f'__attribute__((visibility("default")))\naclnnStatus aclnnP{i}'
            "GetWorkspaceSize(int *ws);\n" for i in range(200)),
    "".join(f'[[deprecated("old")]]\naclnnStatus aclnnP{i}GetWorkspaceSize(int *ws);\n'
            for i in range(200)),
]


@pytest.mark.parametrize("text", HEADERS)
def test_the_quick_scan_finds_what_the_full_cleaning_finds(text):
    assert _headers.quick_operator_names(text) == _headers.operator_names(text)


FRAGMENTS = ["/*", "*/", "//", '"', "\\", "\n", "\n", "#", "#define X ", " ", "\t", "\r", "\f",
             "aclnnFooGetWorkspaceSize", "aclnnBarGetWorkspaceSize(", "(", ")", "[[", "]]", "[",
             "]", "__attribute__", "__declspec", "ACLNN_API ", "FOO", "D", "extern \"C\"", "{",
             "}", ";", "aclnn", "GetWorkspaceSize", "x", "e", "_", "c", "*", "/", "'", "\ufeff",
             "的", "\u3000", "\x1c", "aclnnStatus ", "const aclTensor *x, ", "\\\n", "  #",
             "\\\r\n", "\"C\"", "/**/", "/* x */", "// c\n", "#include \"a.h\"\n", "\n#if X\n",
             "xaclnnQGetWorkspaceSize(", "aclnnGetWorkspaceSize(", "ACL(", " \\"]


def test_the_quick_scan_agrees_on_random_headers():
    chance = random.Random(20250)
    for _ in range(4000):
        text = "".join(chance.choice(FRAGMENTS) for _ in range(chance.randint(1, 40)))
        assert _headers.quick_operator_names(text) == _headers.operator_names(text), text
