"""Reading aclnn operator prototypes out of C headers, as CANN writes them.

Only what calling an operator needs is understood: the ``aclnn<Op>GetWorkspaceSize``
and ``aclnn<Op>`` prototypes, with each parameter's type (as written, spacing
normalised) and name. Everything around them is skipped without being run: comments
(doxygen, ``/* */``, ``//``, in any language), preprocessor lines (include guards,
``#include``, macros, with continuations), ``extern "C"`` blocks, visibility macros
(``ACLNN_API``, ``ACL_FUNC_VISIBILITY``, any other all-capitals word before the return
type, with its arguments if it has any: ``ACL_DEPRECATED_MESSAGE("...")``),
``__attribute__((...))`` and ``[[...]]``, a leading byte order mark, and what the braces of
function, struct, enum and initialiser bodies hold (a ``static inline`` helper's statements,
calls of ``aclnn`` functions among them, declare nothing). Parameters are told apart by
type, never by name. An operator whose prototypes cannot be understood, or are not of the
two-phase form aclnn_py calls, raises :class:`HeaderError` naming the header, the line and
why; other declarations, and other operators of the same header, never stop an operator's.

Reading takes time linear in a header's length, whatever it holds (unterminated strings or
comments, lines of escaped quotes or apostrophes, thousands of prototypes or helper bodies,
braces nested without end): the text is scanned once per step, and no regular expression
here matches beyond one token, string, character literal or whitespace run, but the one
telling a block's opening (``namespace x {``) from a body's, run once on each statement
before a brace.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

PHASE1_SUFFIX = "GetWorkspaceSize"
# The parameters phase 1 ends with and phase 2 has, which the Python call never shows.
PHASE1_TAIL = ("uint64_t *", "aclOpExecutor **")
PHASE2_TYPES = ("void *", "uint64_t", "aclOpExecutor *", "aclrtStream")

# The scanner's steps, each matching from a known offset without backtracking over the rest
# of the text: the next comment or string opening, the end of a string's body (its first
# quote or newline that no backslash escapes; a run of backslashes is the most it goes back
# over) and the next bracket of an attribute.
# A character literal opens here only if it holds a character the reader looks for (a brace,
# quote, bracket, semicolon, ...) or an escape: '{', '"', '\'', '\x7b'. Others ('a', and
# C++14 digit separators, 1'000) are passed over by the search, not one by one.
_OPENING = re.compile(r"""//|/\*|"|'(?:[^\w\s'\\]|\\.[^'\\\n]{0,8})'""")
_COMMENT_OPENING = re.compile(r"//|/\*")
# A quote or newline after an even run of backslashes (none included) is not escaped.
_STRING_END = re.compile(r'(?<!\\)(?:\\\\)*["\n]')
_DELIMITER = re.compile(r"[;{}]")
# What a block whose braces hold declarations of the header begins with.
_BLOCK = re.compile(r'(?:(?:inline\s+)?namespace(?:\s+[\w:]+)?|extern\s*"[^"]*")?')
_BRACKETS = {"(": re.compile(r"[()]"), "[": re.compile(r"[\[\]]")}
_ATTRIBUTE = re.compile(r"\b(__attribute__|__declspec|_*[A-Z][A-Z0-9_]*)\s*\(|\[\s*\[")
_EXTERN_C = re.compile(r'\bextern\s*"C"\s*')
_PROTOTYPE = re.compile(r"\b(aclnn\w+)\s*\(")
_WORD = re.compile(r"[A-Za-z_]\w*|\*|\S")
_MACRO = re.compile(r"_*[A-Z][A-Z0-9_]*$")
_QUALIFIERS = {"extern", "static", "inline", "__inline", "__inline__"}


class HeaderError(ValueError):
    """A prototype in a header that aclnn_py cannot understand."""

    def __init__(self, path: Path | str, line: int, message: str) -> None:
        self.path = Path(path)
        self.line = line
        super().__init__(f"{path}:{line}: {message}")


@dataclass(frozen=True)
class CParameter:
    """One parameter of a prototype: its C type as written (spacing normalised,
    e.g. ``const aclTensor *``) and its name."""

    c_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.c_type}{'' if self.c_type.endswith('*') else ' '}{self.name}"


@dataclass(frozen=True)
class Prototype:
    """A function declared in a header, with where it was declared; ``defined`` when the
    header gives its body too (a ``static inline`` helper), which no library exports."""

    name: str
    return_type: str
    parameters: tuple[CParameter, ...]
    path: Path
    line: int
    defined: bool = False

    def __str__(self) -> str:
        return f"{self.return_type} {self.name}({', '.join(map(str, self.parameters))})"


def bare(c_type: str) -> str:
    """``c_type`` without the qualifiers that do not change how it is passed: a value
    parameter's ``const`` (``const aclrtStream`` -> ``aclrtStream``) and a pointer's own
    ``const`` (``const aclTensor *const`` -> ``const aclTensor *``)."""
    text = c_type
    while text.endswith(" const") or text.endswith("*const"):
        text = text[:-len("const")].rstrip()
    east = re.fullmatch(r"(\w+) const( \*+)", text)  # aclTensor const * -> const aclTensor *
    if east:
        text = f"const {east.group(1)}{east.group(2)}"
    if not text.endswith("*") and text.startswith("const "):
        text = text[len("const "):]
    return text


def _blank_span(text: str) -> str:
    """``text`` as spaces, its newlines kept, so line numbers stay right."""
    return "\n".join(" " * len(line) for line in text.split("\n"))


def _line_comment_end(text: str, start: int) -> int:
    """Where the ``//`` comment at ``start`` ends: at the first newline that does not follow
    a backslash (or a backslash and a carriage return), as in C, or at the end."""
    position = start + 2
    while True:
        newline = text.find("\n", position)
        if newline < 0:
            return len(text)
        before = text[newline - 1]
        if before != "\\" and not (before == "\r" and text[newline - 2] == "\\"):
            return newline
        position = newline + 1


def _without_comments_and_strings(text: str) -> str:
    """Comments, and strings' and character literals' contents (but extern "C"'s), as
    spaces, in one pass.

    A ``/*`` comment without its end runs to the end of the text. A quote whose string does
    not end on its line (or its backslash-continued lines) opens none, and neither does any
    quote before the point where that string stopped: each of them was inside the first
    string as an escaped character, so the string it would open stops at the same point.
    Remembering that point is what keeps a line of escaped quotes linear."""
    pieces = []
    kept = 0  # text[:kept] is in pieces
    search = 0
    no_string_before = 0
    while True:
        if search < no_string_before:  # only comments can open here
            found = _COMMENT_OPENING.search(text, search, no_string_before)
            if found is None:
                search = no_string_before
                continue
        else:
            found = _OPENING.search(text, search)
            if found is None:
                break
        start = found.start()
        if found.group()[0] == "'":
            pieces += [text[kept:start], "'" + " " * (found.end() - start - 2) + "'"]
            kept = search = found.end()
            continue
        if found.group() == '"':
            stop = _STRING_END.search(text, start + 1)
            end = len(text) if stop is None else stop.end() - 1
            if end == len(text) or text[end] != '"':
                no_string_before, search = end, start + 1
                continue
            literal = text[start:end + 1]
            pieces += [text[kept:start],
                       literal if literal == '"C"' else '"' + " " * (end - start - 1) + '"']
            kept = search = end + 1
            continue
        if found.group() == "//":
            end = _line_comment_end(text, start)
        else:
            close = text.find("*/", start + 2)
            end = len(text) if close < 0 else close + 2
        pieces += [text[kept:start], _blank_span(text[start:end])]
        kept = search = end
    pieces.append(text[kept:])
    return "".join(pieces)


def _without_preprocessor(text: str) -> str:
    """Preprocessor lines, and the lines their final backslashes continue them onto, as
    empty lines."""
    lines = text.split("\n")
    continued = False
    for index, line in enumerate(lines):
        if continued or line.lstrip().startswith("#"):
            continued = line.rstrip().endswith("\\")
            lines[index] = ""
    return "\n".join(lines)


def _without_attributes(text: str) -> str:
    """``__attribute__((...))``, ``__declspec(...)``, ``[[...]]`` and all-capitals macros
    with arguments as spaces, however deeply nested; one without its closing bracket hides
    the rest. Each is blanked once, in order, so the text is scanned once."""
    pieces = []
    kept = 0  # text[:kept] is in pieces
    while True:
        found = _ATTRIBUTE.search(text, kept)
        if found is None:
            break
        opening = "(" if found.group(1) else "["
        depth, end = 0, len(text) - 1
        for bracket in _BRACKETS[opening].finditer(text, text.index(opening, found.start())):
            depth += 1 if bracket.group() == opening else -1
            if depth == 0:
                end = bracket.start()
                break
        pieces += [text[kept:found.start()], _blank_span(text[found.start():end + 1])]
        kept = end + 1
    pieces.append(text[kept:])
    return "".join(pieces)


def _without_bodies(text: str) -> str:
    """What the braces of function, struct, enum and initialiser bodies hold, as spaces (the
    braces kept, so statements still end there), in one pass over the braces and semicolons:
    none of it declares anything of the header, though a helper's body may call
    ``aclnnXxxGetWorkspaceSize(...)``. The braces of ``extern "C"`` (blanked before) and
    ``namespace`` blocks hold declarations and are kept. A body without its closing brace
    hides the rest."""
    pieces = []
    kept = 0  # text[:kept] is in pieces
    statement = 0  # where the statement before the next delimiter began
    depth, opened = 0, 0
    for found in _DELIMITER.finditer(text):
        mark = found.group()
        if depth:
            depth += 1 if mark == "{" else -1 if mark == "}" else 0
            if depth == 0:
                pieces += [text[kept:opened], _blank_span(text[opened:found.start()])]
                kept = found.start()
                statement = found.end()
            continue
        if mark == "{" and not _BLOCK.fullmatch(text[statement:found.start()].strip()):
            depth, opened = 1, found.end()
        statement = found.end()
    if depth:
        pieces += [text[kept:opened], _blank_span(text[opened:])]
        kept = len(text)
    pieces.append(text[kept:])
    return "".join(pieces)


def _declarations(text: str) -> str:
    """``text`` cleaned, and with its bodies blanked out: what is declared at file scope."""
    return _without_bodies(clean(text))


def clean(text: str) -> str:
    """``text`` with comments, preprocessor lines, attributes and ``extern "C"`` blanked
    out; line numbers are unchanged. Time is linear in the text's length."""
    text = _without_comments_and_strings(text.removeprefix("\ufeff"))
    text = _without_preprocessor(text)
    text = _without_attributes(text)
    return _EXTERN_C.sub(lambda m: _blank_span(m.group(0)), text)


def operator_names(text: str) -> list[str]:
    """The operators a header declares (names with a phase-1 prototype), cheaply."""
    return [name[:-len(PHASE1_SUFFIX)] for name in _PROTOTYPE.findall(_declarations(text))
            if name.endswith(PHASE1_SUFFIX)]


def _type(words: list[str]) -> str:
    """Type words joined as C is usually written: ``const aclTensor *``, ``aclOpExecutor **``."""
    pieces: list[str] = []
    for word in words:
        if word == "*":
            pieces.append("*" if pieces and pieces[-1].endswith("*") else " *")
        else:
            pieces.append((" " if pieces else "") + word)
    return "".join(pieces)


def _parameter(text: str, path: Path, line: int, function: str) -> CParameter:
    words = _WORD.findall(text)
    for word in words:
        if word != "*" and not re.fullmatch(r"[A-Za-z_]\w*", word):
            raise HeaderError(path, line, f"{function}: cannot understand the parameter "
                                          f"{' '.join(text.split())!r} (only plain types, pointers "
                                          "and a name are)")
    if len(words) < 2 or words[-1] == "*" or words[-1] in {"const", "volatile"}:
        raise HeaderError(path, line, f"{function}: the parameter {' '.join(text.split())!r} "
                                      "has no name")
    return CParameter(_type(words[:-1]), words[-1])


def parse(text: str, path: Path | str = "<header>", names: Collection[str] | None = None
          ) -> list[Prototype]:
    """Every ``aclnn*`` prototype of a header's ``text`` (function definitions included),
    or only those named in ``names``: the others are not looked at."""
    path = Path(path)
    source = _declarations(text)
    prototypes = []
    # Statements end at ';', '{' and '}' (bodies, now empty, extern "C" and namespace blocks).
    start = 0
    counted, line = 0, 1  # newlines are counted once, up to each prototype in turn
    for match in re.finditer(r"[;{}]", source + ";"):
        statement = source[start:match.start()]
        start = match.end()
        found = _PROTOTYPE.search(statement)
        if found is None:
            continue
        name = found.group(1)
        if names is not None and name not in names:
            continue
        offset = start - len(statement) - 1 + found.start(1)
        line += source.count("\n", counted, offset)
        counted = offset
        prefix = _WORD.findall(statement[:found.start(1)])
        words = [w for w in prefix if w not in _QUALIFIERS and not _MACRO.match(w)]
        if not words:
            continue  # a call or a macro use, not a declaration
        rest = statement[found.end():]
        close = rest.rfind(")")
        if close < 0 or rest[close + 1:].strip():
            raise HeaderError(path, line, f"{name}: cannot find the end of its parameter list")
        inner = rest[:close]
        if "(" in inner or ")" in inner or "[" in inner:
            raise HeaderError(path, line, f"{name}: cannot understand its parameters (function "
                                          "pointer or array parameters are not supported)")
        pieces = [p for p in inner.split(",")]
        if len(pieces) == 1 and pieces[0].strip() in ("", "void"):
            parameters: tuple[CParameter, ...] = ()
        else:
            parameters = tuple(_parameter(piece, path, line, name) for piece in pieces)
        prototypes.append(Prototype(name, _type(words), parameters, path, line,
                                    match.group() == "{"))
    return prototypes


@dataclass(frozen=True)
class OperatorPrototypes:
    """The two prototypes of one operator: phase 1 without its workspace and executor
    parameters (``parameters``), and phase 2 (None when the header declares none) with the
    parameters it takes besides CANN's usual four (``phase2_extra``; see :func:`operator`)."""

    name: str
    parameters: tuple[CParameter, ...]
    phase1: Prototype
    phase2: Prototype | None = None
    phase2_extra: tuple[CParameter, ...] = ()

    @property
    def phase1_types(self) -> tuple[str, ...]:
        return tuple(p.c_type for p in self.phase1.parameters)

    @property
    def phase2_types(self) -> tuple[str, ...]:
        """Phase 2's C types, the usual four when the header declares none."""
        if self.phase2 is None:
            return PHASE2_TYPES
        return tuple(p.c_type for p in self.phase2.parameters)


_USUAL_PHASE2 = ("(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, "
                 "aclrtStream stream)")


def _phase2_error(phase2: Prototype) -> HeaderError:
    """Why aclnn_py cannot call phase 2 ``phase2``: what it takes, beside what aclnn_py
    passes (CANN's usual workspace, its size and the executor first, the stream last)."""
    extra, wanted = [], list(PHASE2_TYPES)
    for p in phase2.parameters:
        if wanted and bare(p.c_type) == wanted[0]:
            wanted.pop(0)
        else:
            extra.append(p)
    if phase2.return_type != "aclnnStatus":
        why = f"returns {phase2.return_type}, not aclnnStatus as aclnn_py expects"
    elif wanted or not extra:
        why = (f"takes {len(phase2.parameters)} parameters, not the usual {_USUAL_PHASE2}, "
               "which are what aclnn_py passes")
    else:
        why = (f"takes {len(extra)} parameters besides the usual {_USUAL_PHASE2}: "
               f"{', '.join(map(str, extra))}; aclnn_py passes parameters of its own only "
               "between the executor and the stream")
    return HeaderError(phase2.path, phase2.line,
                       f"{phase2.name}: phase 2 {why}. Its phase 2: {phase2}")


def _kind(c_type: str) -> str:
    """A C type as an argument is made: ``const`` dropped (phase 1 may declare
    ``const aclTensor *dst`` where phase 2 declares ``aclTensor *dst``)."""
    return " ".join(word for word in bare(c_type).replace("*", " * ").split()
                    if word != "const").replace(" *", "*")


def _phase2_extra(phase1: Prototype, phase2: Prototype) -> tuple[CParameter, ...]:
    """The parameters phase 2 takes besides CANN's usual four, which must come first
    (workspace, its size, the executor) and last (the stream), as in ops-cv's
    ``experimental/image/gaussian_blur/op_api/aclnn_gaussian_blur.h``. Each one phase 1 also
    names must be of the same type, ``const`` aside: the call passes it phase 1's object."""
    types = tuple(bare(p.c_type) for p in phase2.parameters)
    if (phase2.return_type != "aclnnStatus" or len(types) < len(PHASE2_TYPES)
            or types[:3] != PHASE2_TYPES[:3] or types[-1] != PHASE2_TYPES[-1]):
        raise _phase2_error(phase2)
    extra = phase2.parameters[3:-1]
    ours = {p.name: p for p in phase1.parameters[:-2]}
    names = [p.name for p in extra]
    for p in extra:
        if names.count(p.name) > 1:
            raise HeaderError(phase2.path, phase2.line,
                              f"{phase2.name}: phase 2 names {p.name} twice: {phase2}")
        same = ours.get(p.name)
        if same is not None and _kind(same.c_type) != _kind(p.c_type):
            raise HeaderError(phase2.path, phase2.line,
                              f"{phase2.name}: phase 2's {p} is not phase 1's {same} (aclnn_py "
                              "passes phase 2 the object it passed phase 1 of that name): "
                              f"{phase2}")
    return extra


def operator(text: str, name: str, path: Path | str) -> OperatorPrototypes:
    """The prototypes of operator ``name`` in a header; HeaderError when they are missing,
    not of the two-phase form, or defined in the header rather than declared. Parameters
    are told apart by type: their names (``workspace``, ``opExecutor``) do not matter.

    Phase 2 takes CANN's usual ``(void *workspace, uint64_t workspaceSize, aclOpExecutor
    *executor, aclrtStream stream)``, with parameters of its own between the executor and the
    stream when it has any (``phase2_extra``): the same objects as phase 1's of the same name,
    or others the call is given after phase 1's."""
    path = Path(path)
    prototypes = parse(text, path, (name + PHASE1_SUFFIX, name))
    found = {p.name: p for p in prototypes}
    phase1 = found.get(name + PHASE1_SUFFIX)
    if phase1 is None:
        raise HeaderError(path, 1, f"{name + PHASE1_SUFFIX} is not declared here")
    defined = next((p for p in prototypes if p.defined), None)
    if defined is not None:
        raise HeaderError(path, defined.line, f"{defined.name} is defined in the header (it has "
                                              "a body), so no operator library exports it; "
                                              "aclnn_py calls only exported phase-1 and phase-2 "
                                              "functions")
    types = tuple(bare(p.c_type) for p in phase1.parameters)
    if phase1.return_type != "aclnnStatus" or types[-2:] != PHASE1_TAIL:
        raise HeaderError(path, phase1.line, f"{phase1.name} is not an aclnn phase-1 prototype "
                                             "(aclnnStatus ...(..., uint64_t *workspaceSize, "
                                             f"aclOpExecutor **executor)): {phase1}")
    phase2 = found.get(name)
    extra = () if phase2 is None else _phase2_extra(phase1, phase2)
    return OperatorPrototypes(name, phase1.parameters[:-2], phase1, phase2, extra)


# The quick scan (quick_operator_names) reads the raw text token by token. Each token opens
# with a character of a small set, so the search skips everything else in C: a comment, a
# string without escapes, a run of preprocessor lines (with their continuations, plain
# strings and one-line comments), the suffix of a phase-1 name, an opening bracket that
# may be an attribute's or a macro's, and what the scan does not decide alone (``other``:
# the full cleaning decides instead).
_BLOCK_COMMENT = r'\*[^*]*\*+(?:[^/*][^*]*\*+)*/'  # after its '/': up to the first */
# A preprocessor line after its '#': plain characters, plain strings, one-line comments and
# backslash continuations, written so that nothing is matched two ways (no backtracking).
_PREPROCESSOR_LINE = (r'[^\n/"\\]*(?:(?:"[^"\\\n]*"|/(?![/*])|/\*[^*\n]*\*+(?:[^/*\n][^*\n]*\*+)*/'
                      r'|\\[ \t\r\f\v]*\n)[^\n/"\\]*)*(?://[^\n\\]*)?(?=\n|\Z)')
# What a comment or preprocessor line is followed by in one token: more comments (a // one
# without backslashes) and preprocessor lines, across whitespace.
_MORE_BLANKED = (r'(?:\s*/(?:' + _BLOCK_COMMENT + r'|/[^\n\\]*(?=\n|\Z))'
                 r'|\s*\n[ \t]*\#' + _PREPROCESSOR_LINE + r')*')
_QUICK_COMMON = (
    r'(?<=/)(?P<comment>(?:' + _BLOCK_COMMENT + r'|/[^\n\\]*(?=\n|\Z))' + _MORE_BLANKED
    + r'|/[^\n]*)'
    r'|(?<=")(?P<string>[^"\\\n]*")'
    r'|(?<=\#)(?P<preprocessor>' + _PREPROCESSOR_LINE + _MORE_BLANKED + r')'
    r'|(?<=[/"#\\])(?P<other>(?<=/)(?=\*)|(?<=[^/]))')
_QUICK = re.compile(
    r'[/"#\\(\[G{](?:' + _QUICK_COMMON +
    r'|(?<=G)(?P<suffix>etWorkspaceSize(?!\w))'
    r'|(?<=[A-Z0-9_c\s/]\()(?P<paren>)'
    r'|(?<=\[)(?P<square>\s*(?:\[|/[/*]|\#))'
    r'|(?<=\{)(?P<brace>))', re.S)
# Inside an attribute's brackets: what the scan skips, and the brackets it counts.
_QUICK_BRACKETS = re.compile(
    r'[/"#\\()\[\]](?:' + _QUICK_COMMON + r'|(?<=[()\[\]])(?P<bracket>))', re.S)
_ASCII_WORD = "".join(c for c in map(chr, range(128)) if c.isalnum() or c == "_")
_WORD_CHARACTER = re.compile(r"\w")
_ATTRIBUTE_WORD = re.compile(r"__attribute__|__declspec|_*[A-Z][A-Z0-9_]*")
# After a phase-1 name: its opening bracket, or what blanking could turn into spaces before one.
_AFTER_NAME = re.compile(r"\s*(?:(\()|(extern\b|[/#\[_A-Z]))?")
_SKIPPED = frozenset(("comment", "string", "preprocessor"))
# A brace the quick scan leaves to the full cleaning (a body's contents are no
# declarations) unless it opens an extern "C" or a namespace block.
_QUICK_BLOCK = re.compile(r'(?:extern\s*"C"|\bnamespace(?:\s+[\w:]+)?)\s*\Z')
_WINDOW = 256  # the longest word looked back at; a longer one is left to the full cleaning


def _word_before(text: str, end: int) -> str | None:
    """The word ending at ``end``, or None when it may hold other than ASCII or be longer
    than the window."""
    start = max(0, end - _WINDOW)
    chunk = text[start:end]
    rest = chunk.rstrip(_ASCII_WORD)
    if (not rest and start > 0) or (rest and not rest[-1].isascii()
                                     and _WORD_CHARACTER.match(rest[-1])):
        return None
    return chunk[len(rest):]


def _at_line_start(text: str, position: int) -> bool:
    """Whether only spaces and tabs stand between the newline before ``position`` and it."""
    while text[position - 1] in " \t":
        position -= 1
    return text[position - 1] == "\n"


def quick_operator_names(text: str) -> list[str]:
    """:func:`operator_names` of ``text`` (the same names, in order), cheaply: one pass over
    the raw text that skips comments, plain strings and preprocessor lines whole and steps
    over attributes' brackets. A header holding what this pass does not decide alone
    (escapes, continued ``//`` comments, unterminated comments or strings, a comment or
    preprocessor line between a name or macro and its bracket) is cleaned in full instead."""
    try:
        return _QuickScan(text).names()
    except _Undecided:
        return operator_names(text)


class _Undecided(Exception):
    """The quick scan met what it does not decide alone: the full cleaning decides."""


def _continued_comment(token: re.Match[str]) -> bool:
    """Whether a comment token ends in a backslash, which continues a ``//`` comment."""
    return token.group().endswith(("\\", "\\\r"))


class _QuickScan:
    """The state of :func:`quick_operator_names`' pass: where it is, where the last comment
    or preprocessor line ended, and the names found so far."""

    __slots__ = ("text", "found", "position", "blanked_end")

    def __init__(self, text: str) -> None:
        self.text = "\n" + text.removeprefix("\ufeff")  # a preprocessor line opens after a newline
        self.found: list[str] = []
        self.position = 0
        self.blanked_end = -1

    def names(self) -> list[str]:
        """The phase-1 names, token by token (:class:`_Undecided` for the full cleaning)."""
        text = self.text
        while True:
            token = _QUICK.search(text, self.position)
            if token is None:
                return self.found
            kind = token.lastgroup
            self.position = token.end()
            if kind in _SKIPPED:
                self._skipped(token, kind)
            elif kind == "other":
                raise _Undecided
            elif kind == "brace":
                start = token.start()
                if _QUICK_BLOCK.search(text, max(0, start - _WINDOW), start) is None:
                    raise _Undecided
            elif kind == "suffix":
                self._phase1_name()
            elif self._opens_attribute(token, kind) and not self._step_over(token, kind):
                return self.found  # a bracket never closed hides the rest

    def _skipped(self, token: re.Match[str], kind: str) -> None:
        """A comment, string or preprocessor line, skipped whole."""
        if kind == "comment":
            if _continued_comment(token):
                raise _Undecided
        elif kind == "preprocessor" and not _at_line_start(self.text, token.start()):
            raise _Undecided
        if kind != "string":
            self.blanked_end = self.position

    def _phase1_name(self) -> None:
        """After a ``GetWorkspaceSize`` suffix: the name, when an ``aclnn`` word opens it and
        its bracket follows."""
        word = _word_before(self.text, self.position)
        if word is None:
            raise _Undecided
        if not word.startswith("aclnn"):
            return
        after = _AFTER_NAME.match(self.text, self.position)
        assert after is not None  # it matches the empty string
        if after.group(2) is not None:
            raise _Undecided
        if after.group(1) is not None:
            self.found.append(word[:-len(PHASE1_SUFFIX)])
            self.position = after.end()

    def _opens_attribute(self, token: re.Match[str], kind: str | None) -> bool:
        """Whether an opening bracket is an attribute's (or a macro's), to step over."""
        if kind != "paren":  # "[[", or "[" and a comment or preprocessor line
            if token.group()[-1] != "[":
                raise _Undecided  # a comment or preprocessor line inside [ [
            return True
        end = token.start()
        while end > self.blanked_end and self.text[end - 1].isspace():
            end -= 1
        if end == self.blanked_end:
            raise _Undecided  # a macro's name may precede the blanked text
        word = _word_before(self.text, end)
        if word is None:
            raise _Undecided
        return _ATTRIBUTE_WORD.fullmatch(word) is not None

    def _step_over(self, token: re.Match[str], kind: str | None) -> bool:
        """Past the brackets ``token`` opens; False when they never close."""
        text = self.text
        opening, closing = ("[", "]") if kind == "square" else ("(", ")")
        self.position = token.start() + 1
        depth = 1
        while depth:
            inner = _QUICK_BRACKETS.search(text, self.position)
            if inner is None:
                return False
            self.position = inner.end()
            inner_kind = inner.lastgroup
            if inner_kind == "other" or (inner_kind == "comment" and _continued_comment(inner)):
                raise _Undecided
            if inner_kind == "preprocessor" and not _at_line_start(text, inner.start()):
                raise _Undecided
            if inner_kind == "bracket":
                bracket = inner.group()
                depth += (bracket == opening) - (bracket == closing)
        return True
