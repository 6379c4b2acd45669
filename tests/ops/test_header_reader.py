"""The header reader on pathological headers: lines of escaped quotes, strings and comments
that never end, tens of thousands of prototypes and attributes. Each header is large
enough that a reader taking time quadratic in its size would not finish for minutes; the
tests check what is found (benchmarks/bench.py --headers shows the time). Then the forms
CANN's own headers use, in made-up headers: a phase 2 with more parameters, phase-1
parameters named workspace, executors named otherwise, static inline helpers with bodies;
each is read or refused alone, its neighbours still read (tools/read_cann_headers.py runs
the reader over real checkouts)."""

from __future__ import annotations

import numpy as np
import pytest
from test_call import _copy_package

import aclnn_py
from aclnn_py.ops import headers as _headers

FOO = ("aclnnStatus aclnnFooGetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
       "    uint64_t *workspaceSize, aclOpExecutor **executor);\n"
       "aclnnStatus aclnnFoo(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,\n"
       "    aclrtStream stream);\n")
BAR = FOO.replace("Foo", "Bar")
GHOST = "aclnnStatus aclnnGhostGetWorkspaceSize(const aclTensor *self);"


def _parameters(text: str, name: str) -> list[tuple[str, str]]:
    return [(p.name, p.c_type) for p in _headers.operator(text, name, "h.h").parameters]


def _line_of(text: str, name: str) -> int:
    return text[:text.index(name + _headers.PHASE1_SUFFIX)].count("\n") + 1


def _found_around(middle: str) -> None:
    """aclnnFoo before ``middle`` and aclnnBar after it are read, with the right lines, and
    nothing in ``middle`` is."""
    text = FOO + middle + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnBar"]
    assert _parameters(text, "aclnnBar") == [("self", "const aclTensor *"),
                                            ("out", "aclTensor *")]
    assert _headers.operator(text, "aclnnBar", "h.h").phase1.line == _line_of(text, "aclnnBar")
    assert [p.name for p in _headers.parse(text)] == [
        "aclnnFooGetWorkspaceSize", "aclnnFoo", "aclnnBarGetWorkspaceSize", "aclnnBar"]


def test_a_line_of_escaped_quotes_without_its_closing_quote():
    _found_around('#define QUOTES "' + '\\"' * 200_000 + "\n")


def test_strings_and_comments_still_count_after_a_string_that_never_ends():
    # The quotes open no string, but the comment opened on their line is one, and the next
    # line's string is a string again.
    quotes = '#define QUOTES "' + '\\"' * 100_000
    _found_around(quotes + " /* " + GHOST + "\n" + GHOST + " */\n"
                  + 'static const char *doc = "' + GHOST + '";\n')


def test_a_string_continued_over_many_lines_that_never_ends():
    line = '  \\"' + GHOST.replace('"', '\\"') + '\\" \\\n'
    _found_around('#define TEXT "say ' + line * 20_000 + "  the end\n")


@pytest.mark.slow
def test_comments_that_run_on_hide_what_they_hold():
    # A // comment continued by backslashes over 20,000 lines, then a /* comment that never
    # ends: everything after it is hidden.
    continued = "// the old spelling: \\\n" + (GHOST + " \\\n") * 20_000 + "\n"
    unterminated = "/* " + (GHOST + "\n") * 20_000
    text = FOO + continued + BAR + unterminated
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnBar"]
    assert _parameters(text, "aclnnBar") == [("self", "const aclTensor *"),
                                            ("out", "aclTensor *")]
    assert _headers.operator(text, "aclnnBar", "h.h").phase1.line == _line_of(text, "aclnnBar")


def test_a_string_of_escaped_quotes_that_ends_is_one_string():
    quotes = '"' + '\\"' * 200_000 + '"'
    _found_around("static const char *q = " + quotes + "; /* " + GHOST + " */\n")


@pytest.mark.parametrize("strings", [
    # An even run of backslashes escapes no quote: the first string ends, the second hides.
    'static const char *a = "\\\\", *b = "' + GHOST + '";\n',
    # An odd run does: one string, with the ghost inside it.
    'static const char *a = "\\\\\\" ' + GHOST + ' ";\n',
    # A backslash before the newline continues the string onto the next line.
    'static const char *a = "long \\\n' + GHOST + '";\n',
])
def test_the_backslashes_before_a_quote_decide_where_a_string_ends(strings):
    text = FOO + strings + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnBar"]
    assert _parameters(text, "aclnnBar") == [("self", "const aclTensor *"),
                                            ("out", "aclTensor *")]


def test_twenty_thousand_prototypes_in_one_header():
    count = 20_000
    text = "".join(f"aclnnStatus aclnnP{i:05d}GetWorkspaceSize(int *ws);\n"
                   for i in range(count)) + FOO
    names = _headers.operator_names(text)
    assert len(names) == count + 1
    assert names[0] == "aclnnP00000" and names[-2] == "aclnnP19999" and names[-1] == "aclnnFoo"
    prototypes = _headers.parse(text, "h.h")
    assert [p.line for p in prototypes[:count]] == list(range(1, count + 1))
    assert str(prototypes[count - 1]) == "aclnnStatus aclnnP19999GetWorkspaceSize(int *ws)"
    assert prototypes[count].line == count + 1
    assert _parameters(text, "aclnnFoo") == [("self", "const aclTensor *"),
                                            ("out", "aclTensor *")]


@pytest.mark.slow
@pytest.mark.parametrize("attribute", [
    '__attribute__((visibility("default")))',
    'ACL_DEPRECATED_MESSAGE("use the next version")',
    '[[deprecated("use the next version")]]',
])
def test_twenty_thousand_prototypes_each_with_an_attribute(attribute):
    count = 20_000
    text = "".join(f"{attribute}\naclnnStatus aclnnP{i:05d}GetWorkspaceSize(int *ws);\n"
                   for i in range(count)) + attribute + "\n" + FOO
    names = _headers.operator_names(text)
    assert len(names) == count + 1 and names[-2:] == ["aclnnP19999", "aclnnFoo"]
    prototypes = _headers.parse(text, "h.h")
    assert [p.line for p in prototypes[:3]] == [2, 4, 6]
    assert prototypes[count - 1].return_type == "aclnnStatus"
    assert _headers.operator(text, "aclnnFoo", "h.h").phase1.line == 2 * count + 2


def test_an_attribute_that_never_closes_hides_the_rest():
    text = FOO + "ACLNN_API(" + ("(" + GHOST + ")\n") * 20_000 + BAR
    assert _headers.operator_names(text) == ["aclnnFoo"]
    assert _parameters(text, "aclnnFoo") == [("self", "const aclTensor *"),
                                            ("out", "aclTensor *")]


@pytest.mark.emulator_only
def test_a_custom_header_of_escaped_quotes_still_lists_and_calls(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    header = package / "op_api" / "include" / "aclnn_add_custom.h"
    header.chmod(0o644)
    header.write_text(header.read_text() + '#define QUOTES "' + '\\"' * 200_000 + "\n")
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    assert "aclnnAddCustom" in aclnn_py.operators()
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(aclnn_py.call("aclnnAddCustom", x, x, out=np.empty(3, x.dtype)),
                                  2 * x)


# ---- forms CANN's own headers use (made up here, each beside operators that still read) ----

FOO_PARAMETERS = [("self", "const aclTensor *"), ("out", "aclTensor *")]
USUAL = ("(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
         "aclrtStream stream)")
WARP_PHASE1 = ("aclnnStatus aclnnWarpGetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
               "    uint64_t *workspaceSize, aclOpExecutor **executor);\n")


def _neighbours_read(text: str) -> None:
    assert _parameters(text, "aclnnFoo") == FOO_PARAMETERS
    assert _parameters(text, "aclnnBar") == FOO_PARAMETERS
    assert _headers.operator(text, "aclnnBar", "h.h").phase1.line == _line_of(text, "aclnnBar")


def _refusal(text: str, name: str) -> _headers.HeaderError:
    with pytest.raises(_headers.HeaderError) as caught:
        _headers.operator(text, name, "h.h")
    return caught.value


@pytest.mark.parametrize("phase2, why", [
    ("aclnnStatus aclnnWarp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,\n"
     "    aclrtStream stream, const aclTensor *grid, int mode);",
     f"takes 2 parameters besides the usual {USUAL}: const aclTensor *grid, int mode; aclnn_py "
     "passes parameters of its own only between the executor and the stream"),
    ("aclnnStatus aclnnWarp(const aclTensor *grid, void *workspace, uint64_t workspaceSize,\n"
     "    aclOpExecutor *executor, aclrtStream stream);",
     f"takes 1 parameters besides the usual {USUAL}: const aclTensor *grid; aclnn_py "
     "passes parameters of its own only between the executor and the stream"),
    ("aclnnStatus aclnnWarp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor);",
     f"takes 3 parameters, not the usual {USUAL}, which are what aclnn_py passes"),
    ("void aclnnWarp(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor,\n"
     "    aclrtStream stream);", "returns void, not aclnnStatus as aclnn_py expects"),
], ids=["more parameters after the stream", "more parameters first", "fewer parameters",
        "another return type"])
def test_a_phase_2_aclnn_py_cannot_call_refuses_that_operator_only(phase2, why):
    text = FOO + WARP_PHASE1 + phase2 + "\n" + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnWarp", "aclnnBar"]
    line = _line_of(text, "aclnnWarp") + 2
    printed = " ".join(phase2.split()).removesuffix(";")
    refused = _refusal(text, "aclnnWarp")
    assert str(refused) == f"h.h:{line}: aclnnWarp: phase 2 {why}. Its phase 2: {printed}"
    assert refused.line == line
    _neighbours_read(text)


def test_a_phase_1_parameter_named_workspace_is_an_ordinary_parameter():
    scratch = ("aclnnStatus aclnnScratchGetWorkspaceSize(const aclTensor *self, void *workspace,\n"
               "    uint64_t workspaceSize2, aclTensor *workspaceOut, uint64_t *workspaceSize,\n"
               "    aclOpExecutor **executor);\n"
               + FOO.split(";\n", 1)[1].replace("Foo", "Scratch"))
    text = FOO + scratch + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnScratch", "aclnnBar"]
    assert _parameters(text, "aclnnScratch") == [
        ("self", "const aclTensor *"), ("workspace", "void *"), ("workspaceSize2", "uint64_t"),
        ("workspaceOut", "aclTensor *")]
    assert _headers.operator(text, "aclnnScratch", "h.h").phase1_types == (
        "const aclTensor *", "void *", "uint64_t", "aclTensor *", "uint64_t *",
        "aclOpExecutor **")
    _neighbours_read(text)


def test_the_workspace_executor_and_stream_parameters_go_by_type_not_name():
    renamed = ("aclnnStatus aclnnRenamedGetWorkspaceSize(const aclTensor *self, aclTensor *out,\n"
               "    uint64_t *workspace_size, aclOpExecutor **opExecutor);\n"
               "aclnnStatus aclnnRenamed(void *ws, const uint64_t workspace_size,\n"
               "    aclOpExecutor *const opExecutor, const aclrtStream s);\n")
    text = FOO + renamed + BAR
    prototypes = _headers.operator(text, "aclnnRenamed", "h.h")
    assert [(p.name, p.c_type) for p in prototypes.parameters] == FOO_PARAMETERS
    assert prototypes.phase1_types[-2:] == ("uint64_t *", "aclOpExecutor **")
    # Names that say workspace and executor do not make a tail of the wrong types one.
    wrong = renamed.replace("uint64_t *workspace_size", "uint64_t workspaceSize")
    refused = _refusal(FOO + wrong + BAR, "aclnnRenamed")
    assert refused.line == 5 and "is not an aclnn phase-1 prototype" in str(refused)
    _neighbours_read(FOO + wrong + BAR)


HELPERS = (
    "static inline aclnnStatus aclnnFooTwice(const aclTensor *self, aclTensor *out,\n"
    "    void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream) {\n"
    "    uint64_t size = 0;\n"
    "    aclnnStatus aclnnGhostGetWorkspaceSize(const aclTensor *self);\n"
    "    if (aclnnInnerFooGetWorkspaceSize(self, out, &size, &executor) != 0) { return 1; }\n"
    "    const char braces[] = {'{', '}', '\\'', '\\x7b'};\n"
    "    static const long many = 1'000'000;\n"
    "    for (int i = 0; i < 2; ++i) { if (i) { continue; } }\n"
    "    return aclnnFoo(workspace, workspaceSize, executor, stream);\n"
    "}\n"
    "typedef struct { int (*aclnnGhostGetWorkspaceSize)(int); int n; } aclnnHolder;\n"
    "static const int aclnnTable[] = {1, 2, 3};\n"
    "enum aclnnMode : int { ACLNN_A = 0, ACLNN_B = 1 };\n"
    "namespace aclnn_helpers {\n"
    "inline bool IsOn(void) { return aclnnGhostGetWorkspaceSize(nullptr) == 0; }\n"
    "}\n"
)


def test_helper_bodies_declare_nothing_and_their_calls_are_calls():
    text = FOO + HELPERS + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnBar"]
    prototypes = _headers.parse(text, "h.h")
    assert [(p.name, p.defined) for p in prototypes] == [
        ("aclnnFooGetWorkspaceSize", False), ("aclnnFoo", False), ("aclnnFooTwice", True),
        ("aclnnBarGetWorkspaceSize", False), ("aclnnBar", False)]
    assert [p.name for p in prototypes[2].parameters] == [
        "self", "out", "workspace", "workspaceSize", "executor", "stream"]
    assert prototypes[2].line == _line_of(text, "aclnnFoo") + 4
    _neighbours_read(text)


def test_an_operator_defined_in_the_header_is_refused_alone():
    inline = ("static inline aclnnStatus aclnnWrapGetWorkspaceSize(const aclTensor *self,\n"
              "    uint64_t *workspaceSize, aclOpExecutor **executor) {\n"
              "    return aclnnInnerWrapGetWorkspaceSize(self, workspaceSize, executor);\n"
              "}\n")
    text = FOO + inline + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnWrap", "aclnnBar"]
    assert str(_refusal(text, "aclnnWrap")) == (
        "h.h:5: aclnnWrapGetWorkspaceSize is defined in the header (it has a body), so no "
        "operator library exports it; aclnn_py calls only exported phase-1 and phase-2 "
        "functions")
    _neighbours_read(text)


def test_a_body_that_never_closes_hides_the_rest():
    text = FOO + "static inline int aclnnHelper(void) {\n    if (1) { return 0; }\n" + BAR
    assert _headers.operator_names(text) == ["aclnnFoo"]
    assert _parameters(text, "aclnnFoo") == FOO_PARAMETERS


@pytest.mark.slow
def test_twenty_thousand_helper_bodies_and_deeply_nested_braces():
    count = 20_000
    helper = ("static inline int aclnnH{0:05d}(int a) {{ if (a) {{ return "
              "aclnnGhostGetWorkspaceSize('{{'); }} return 0; }}\n")
    nested = "static const int aclnnDeep[] = " + "{" * 100_000 + "1" + "}" * 100_000 + ";\n"
    text = FOO + "".join(helper.format(i) for i in range(count)) + nested + BAR
    assert _headers.operator_names(text) == ["aclnnFoo", "aclnnBar"]
    prototypes = _headers.parse(text, "h.h")
    assert len(prototypes) == count + 4 and prototypes[count + 1].name == "aclnnH19999"
    assert prototypes[count + 1].line == count + 4
    _neighbours_read(text)


def test_a_line_of_apostrophes_opens_no_character_literals():
    _found_around("static const long n = 1" + "'0" * 200_000 + ";\n")


@pytest.mark.emulator_only
def test_a_custom_header_with_a_phase_2_aclnn_py_cannot_call(tmp_path, fresh_catalog):
    package = _copy_package(tmp_path)
    header = package / "op_api" / "include" / "aclnn_add_custom.h"
    header.chmod(0o644)
    header.write_text(header.read_text() + WARP_PHASE1.replace("Warp", "WarpCustom")
                      + "aclnnStatus aclnnWarpCustom(void *workspace, uint64_t workspaceSize,\n"
                        "    aclOpExecutor *executor, aclrtStream stream, int mode);\n"
                      + HELPERS.replace("aclnnFoo", "aclnnAddCustom"))
    fresh_catalog.setenv("ASCEND_CUSTOM_OPP_PATH", str(package))
    assert {"aclnnAddCustom", "aclnnWarpCustom"} <= set(aclnn_py.operators())
    x = np.arange(3, dtype=np.float32)
    with pytest.raises(_headers.HeaderError, match=r"aclnn_add_custom\.h:\d+: aclnnWarpCustom: "
                                                   r"phase 2 takes 1 parameters besides the usual"
                                                   r" .*: int mode; aclnn_py passes parameters of "
                                                   r"its own only between the executor and"):
        aclnn_py.call("aclnnWarpCustom", x, out=np.empty(3, x.dtype))
    np.testing.assert_array_equal(
        aclnn_py.call("aclnnAddCustom", x, x, out=np.empty(3, x.dtype)), 2 * x)
