"""aclnn_py.call, signature() and the catalog against unusual headers, packages and
arguments."""

from __future__ import annotations

import pytest

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
