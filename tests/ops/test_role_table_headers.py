"""Every operator of the role table, declared in each of the styles CANN writes headers in,
reads back with the table's roles and the types written.

CANN's headers cannot be copied here, so they are generated from the table's prototypes:
ops-nn's style (``ACLNN_API``, outputs and ``...Ref`` tensors ``const`` where CANN puts it,
doxygen comments), the ``level2`` style of older toolkits (``ACL_FUNC_VISIBILITY``, one
parameter per line), and the style CANN's generator writes for custom operators (every
tensor ``const``, a visibility attribute).
"""

from __future__ import annotations

import pytest

from aclnn_py.ops import catalog as _catalog
from aclnn_py.ops import headers as _headers
from aclnn_py.ops import roles as _roles

TABLE = _roles.table()["operators"]
NAMES = sorted(TABLE)


def _declaration(name: str, parameters: list[tuple[str, str]], style: str,
                 phase2_extra: list[tuple[str, str]]) -> str:
    def joined(separator: str) -> str:
        return separator.join(f"{c_type}{'' if c_type.endswith('*') else ' '}{p}"
                              for c_type, p in parameters)

    tail = ("uint64_t *workspaceSize", "aclOpExecutor **executor")
    phase2 = ", ".join(["void *workspace", "uint64_t workspaceSize", "aclOpExecutor *executor",
                        *(f"{c}{'' if c.endswith('*') else ' '}{p}" for c, p in phase2_extra),
                        "aclrtStream stream"])
    if style == "ops-nn":
        return (f"/**\n * @brief {name}的第一段接口，计算workspace大小。\n */\n"
                f"ACLNN_API aclnnStatus {name}GetWorkspaceSize({joined(', ')}"
                f"{', ' if parameters else ''}{', '.join(tail)});\n\n"
                f"/**\n * @brief {name}的第二段接口，用于执行计算。\n */\n"
                f"ACLNN_API aclnnStatus {name}({phase2});\n")
    if style == "level2":
        lines = ",\n    ".join([*(f"{c}{'' if c.endswith('*') else ' '}{p}"
                                  for c, p in parameters), *tail])
        return (f"ACL_FUNC_VISIBILITY aclnnStatus {name}GetWorkspaceSize(\n    {lines});\n"
                f"ACL_FUNC_VISIBILITY aclnnStatus {name}({phase2});\n")
    constant = [(c if not _roles.is_tensor_type(c) or c.startswith("const") else "const " + c, p)
                for c, p in parameters]
    lines = ",\n    ".join([*(f"{c}{'' if c.endswith('*') else ' '}{p}" for c, p in constant),
                           *tail])
    return (f"/* funtion: {name}GetWorkspaceSize */\n"
            f'__attribute__((visibility("default")))\n'
            f"aclnnStatus {name}GetWorkspaceSize(\n    {lines});\n\n"
            f'__attribute__((visibility("default")))\naclnnStatus {name}(\n    '
            + phase2.replace(", ", ",\n    ") + ");\n")


def _header(names: list[str], style: str) -> str:
    body = "\n".join(_declaration(n, [tuple(p) for p in TABLE[n]["parameters"]], style,
                                  [tuple(p) for p in TABLE[n].get("phase2", ())])
                     for n in names)
    return (f"#ifndef OP_API_INC_{style.upper().replace('-', '_')}_H_\n"
            f"#define OP_API_INC_{style.upper().replace('-', '_')}_H_\n"
            '#include "aclnn/aclnn_base.h"\n#ifdef __cplusplus\nextern "C" {\n#endif\n\n'
            f"{body}\n#ifdef __cplusplus\n}}\n#endif\n#endif\n")


def test_the_table_gives_each_operator_its_prototype():
    assert len(NAMES) > 800
    for name in NAMES:
        parameters = TABLE[name]["parameters"]
        assert all(isinstance(p, list) and len(p) == 2 for p in parameters), name
        declared = {p for _, p in parameters}
        assert set(TABLE[name]["outputs"]) | set(TABLE[name]["inout"]) <= declared, name


@pytest.mark.slow
@pytest.mark.parametrize("style", ["ops-nn", "level2", "custom"])
def test_every_operator_reads_back_with_the_tables_roles(style):
    wrong = []
    for start in range(0, len(NAMES), 50):  # 50 operators to a header, as CANN's larger ones
        names = NAMES[start:start + 50]
        text = _header(names, style)
        assert _headers.operator_names(text) == names
        for name in names:
            entry = TABLE[name]
            read = _headers.operator(text, name, f"aclnn_{style}.h")
            written = [tuple(p) for p in entry["parameters"]]
            if style == "custom":
                written = [(c if not _roles.is_tensor_type(c) or c.startswith("const")
                            else "const " + c, p) for c, p in written]
            assert [(p.c_type, p.name) for p in read.parameters] == written, name
            assert [[p.c_type, p.name] for p in read.phase2_extra] == entry.get("phase2", []), name
            found = _roles.resolve(name, read.parameters)
            # Where the doc gave no roles, the table says so and CANN's conventions decide.
            assert found.source == ("rule" if entry["basis"] == "rules" else "table"), name
            parameters = _catalog.roles(read.parameters, found)
            if entry["basis"] == "rules":  # the conventions, on the const this style writes
                rules = _roles.rule_roles(read.parameters)
                entry = {**entry, "outputs": rules.outputs, "inout": rules.inout}
            for p in parameters:
                expected = ("attribute" if not _roles.is_tensor_type(p.c_type) else
                            "inout" if p.name in entry["inout"] else
                            "output" if p.name in entry["outputs"] else "input")
                if p.role != expected:
                    wrong.append((name, p.name, p.role, expected))
            assert found.returns_nothing == bool(entry.get("returns_nothing")), name
    assert wrong == []
