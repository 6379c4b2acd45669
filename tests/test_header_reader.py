"""The header reader on pathological headers: lines of escaped quotes, strings and comments
that never end, tens of thousands of prototypes and attributes. Each header is large
enough that a reader taking time quadratic in its size would not finish for minutes; the
tests check what is found (benchmarks/bench.py --headers shows the time)."""

from __future__ import annotations

import numpy as np
import pytest
from test_call import _copy_package

import aclnn_py
from aclnn_py import _headers

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
