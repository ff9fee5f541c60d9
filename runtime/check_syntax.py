"""The text of StableHLO test files: pieces split at ``// -----``, and the syntax of the ``check`` and
``interpreter`` dialects.

MLIR parses an op of an unregistered dialect only in the generic form (``"check.expect_eq"(%a, %b) :
(T, T) -> ()``), and StableHLO's tests write the ``check`` ops in their custom form
(``check.expect_eq %a, %b : T``), sometimes over several lines. ``generic_check_ops`` rewrites each of
them into the generic form on one line, followed by as many line breaks as the op spanned, so MLIR's
line numbers stay those of the file.
"""
from __future__ import annotations

import dataclasses
import re

_SPLIT = re.compile(r"^[ \t]*// -----.*$", re.M)  # (mlir-opt --split-input-file's marker)
# an op of the check or interpreter dialects in the custom form, with its result if it has one
_CUSTOM_OP = re.compile(r"^([ \t]*)(?:(%[\w$.\-]+)\s*=\s*)?((?:check|interpreter)\.\w+)\b", re.M)
_RESULT_LIKE_OPERAND = {"interpreter.probe"}  # (ops with one result of their operand's type)
# a *_const op written in the generic form, its constant an attribute or a property
_GENERIC_CONST = re.compile(r'^([ \t]*)()"(check\.\w+_const)"(?=\s*\()', re.M)
_SSA = re.compile(r"%[\w$.\-]+(?:#\d+)?")
_KEYWORD = re.compile(r"([A-Za-z_]\w*)\s*=\s*")
_SCALAR = re.compile(r"[-+\w.]+")
_SCALAR_TYPE = re.compile(r"\s*:\s*(?:[su]?i\d+|ui\d+|bf16|tf32|f\d+|index)\b(?!\s*<)")
_CONTINUES_AFTER = ",:="  # a line of an op that ends in one of these goes on on the next line
_CONTINUES_BEFORE = ",:={"  # so does one whose next line starts with one of these
_ATTRIBUTE_NAMES = {"iter": "iteration"}  # (custom-form keyword -> the op's attribute name)
_OPEN, _CLOSE = "<([{", ">)]}"


@dataclasses.dataclass
class Piece:
    """One ``// -----`` piece of a file: ``text`` starts with line breaks up to its first line
    (``line``, 1-based), so that MLIR's diagnostics name the file's own lines."""
    line: int
    text: str

    @property
    def is_empty(self) -> bool:
        """Only comments and blank lines (StableHLO's tests hold such pieces)."""
        return not any(ln.strip() and not ln.strip().startswith("//") for ln in self.text.splitlines())


def split_pieces(text: str) -> list:
    """``text`` split at its ``// -----`` lines, as ``mlir-opt --split-input-file`` splits it."""
    pieces, start, line = [], 0, 1
    for m in _SPLIT.finditer(text):
        pieces.append(Piece(line, "\n" * (line - 1) + text[start:m.start()]))
        end = min(m.end() + 1, len(text))  # (the piece after starts on the line after the marker)
        line += text.count("\n", start, end)
        start = end
    pieces.append(Piece(line, "\n" * (line - 1) + text[start:]))
    return pieces


def generic_check_ops(text: str) -> str:
    """``text`` with every ``check.*`` op (and ``interpreter.print``/``probe``) of the custom syntax in
    the generic form, line numbers kept; ValueError naming the line of an op it cannot read."""
    out, pos = [], 0
    found = sorted([(m, _read) for m in _CUSTOM_OP.finditer(text)] +
                   [(m, _read_generic) for m in _GENERIC_CONST.finditer(text)], key=lambda x: x[0].start())
    for m, read in found:
        if m.start() < pos:  # (inside an op already rewritten)
            continue
        indent, result, name = m.groups()
        end, body = _op_extent(text, m.end())
        line = text.count("\n", 0, m.start()) + 1
        try:
            generic = _generic(name, read(body), result or None, serial=len(out))
        except ValueError as e:
            raise ValueError(f"line {line}: cannot read {name}: {e}") from None
        out += [text[pos:m.start()], indent, generic, "\n" * text.count("\n", m.start(), end)]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def _bracket(text: str, i: int) -> int:
    """+1 for an opening bracket at ``text[i]``, -1 for a closing one (the ``>`` of ``->`` is none)."""
    c = text[i]
    if c in _OPEN:
        return 1
    if c in _CLOSE and not (c == ">" and i and text[i - 1] == "-"):
        return -1
    return 0


def _string_end(text: str, i: int) -> int:
    """The index after the string literal starting at ``text[i] == '"'``."""
    i += 1
    while i < len(text) and text[i] != '"':
        i += 2 if text[i] == "\\" else 1
    return i + 1


def _op_extent(text: str, start: int):
    """(end index, the op's text without comments) of the op whose name ends at ``start``: it ends at
    a line break outside brackets, unless the op visibly goes on (a trailing ``,``, ``:`` or ``=``, or
    a next line starting with one of ``,:={``)."""
    depth, i, kept = 0, start, []
    while i < len(text):
        c = text[i]
        if c == '"':
            j = _string_end(text, i)
            kept.append(text[i:j])
            i = j
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = len(text) if j < 0 else j
            continue
        if c == "\n" and depth == 0 and not _goes_on("".join(kept), text, i):
            return i, "".join(kept)
        step = _bracket(text, i)
        if step < 0 and depth == 0:  # (the enclosing block's closing brace: the op ended before it)
            return i, "".join(kept)
        depth += step
        kept.append(" " if c == "\n" else c)
        i += 1
    return i, "".join(kept)


def _goes_on(so_far: str, text: str, newline: int) -> bool:
    last = so_far.rstrip()[-1:]
    if last and last in _CONTINUES_AFTER:
        return True
    rest = text[newline + 1:]
    while rest:  # the next line that is neither blank nor a comment
        line, _, rest = rest.partition("\n")
        line = line.strip()
        if line and not line.startswith("//"):
            return line[0] in _CONTINUES_BEFORE
    return False


class _Cursor:
    """Reads the operands, keyword attributes, attribute dictionary and types of one op."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def skip(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1
        return self.text[self.pos:self.pos + 1]

    def eat(self, char: str) -> bool:
        if self.skip() == char:
            self.pos += 1
            return True
        return False

    def match(self, pattern: re.Pattern):
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def balanced(self) -> str:
        """The text up to the next ``,`` or ``{`` outside brackets (or the end), trimmed."""
        depth, start = 0, self.pos
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == '"':
                self.pos = _string_end(self.text, self.pos)
                continue
            if depth == 0 and c in ",{":
                break
            depth += _bracket(self.text, self.pos)
            self.pos += 1
        return self.text[start:self.pos].strip()

    def group(self) -> str:
        """A bracketed group starting here (``{...}``), without its brackets."""
        depth, start = 0, self.pos
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == '"':
                self.pos = _string_end(self.text, self.pos)
                continue
            depth += _bracket(self.text, self.pos)
            self.pos += 1
            if depth == 0:
                return self.text[start + 1:self.pos - 1].strip()
        raise ValueError(f"unbalanced brackets in {self.text[start:].strip()!r}")

    def value(self) -> str:
        """A keyword's value: a string or a number/word, with a scalar type if one follows."""
        if self.skip() == '"':
            start = self.pos
            self.pos = _string_end(self.text, self.pos)
            return self.text[start:self.pos]
        m = self.match(_SCALAR)
        if not m:
            raise ValueError(f"expected a value at {self.text[self.pos:].strip()!r}")
        typed = _SCALAR_TYPE.match(self.text, self.pos)
        if typed:
            self.pos = typed.end()
            return m.group(0) + " " + typed.group(0).strip()
        return m.group(0)

    def types(self) -> list:
        out = []
        while self.skip():
            out.append(self.balanced())
            if not self.eat(","):
                break
        return out


@dataclasses.dataclass
class _Op:
    operands: list
    attributes: list  # "name = value" texts
    types: list


def _read(body: str) -> _Op:
    cur = _Cursor(body)
    first = cur.match(_SSA)
    if not first:
        raise ValueError(f"expected an operand (%name) at {body.strip()!r}")
    op = _Op([first.group(0)], [], [])
    while cur.eat(","):
        if cur.skip() == "%":
            op.operands.append(cur.match(_SSA).group(0))
            continue
        keyword = cur.match(_KEYWORD)
        if keyword:
            name = keyword.group(1)
            op.attributes.append(f"{_ATTRIBUTE_NAMES.get(name, name)} = {cur.value()}")
            continue
        value = cur.balanced()  # (the *_const forms' constant)
        if not value:
            raise ValueError(f"expected an operand, a constant or name = value at {body[cur.pos:].strip()!r}")
        op.attributes.append(f"value = {value}")
    if cur.skip() == "{":
        op.attributes += _entries(cur.group())
    if cur.eat(":"):
        if cur.skip() == "{":
            op.attributes += _entries(cur.group())
        op.types = cur.types()
    if cur.skip():
        raise ValueError(f"unexpected {body[cur.pos:].strip()!r}")
    return op


def _entries(inside: str) -> list:
    cur, out = _Cursor(inside), []
    while cur.skip():
        out.append(cur.balanced())
        cur.eat(",")
    return [e for e in out if e]


def _constant_type(attributes: list) -> str | None:
    """The type of the ``value = <constant> : <type>`` attribute, if there is one."""
    for a in attributes:
        if a.startswith("value = "):
            text = a[len("value = "):]
            colons = [i for i, c, depth in _outside_strings(text) if c == ":" and depth == 0]
            return text[colons[-1] + 1:].strip() if colons else None
    return None


def _outside_strings(text: str):
    """(index, char, bracket depth before it) of every character outside string literals."""
    i, depth = 0, 0
    while i < len(text):
        if text[i] == '"':
            i = _string_end(text, i)
            continue
        yield i, text[i], depth
        depth += _bracket(text, i)
        i += 1


def _read_generic(body: str) -> _Op:
    """``(%x) <{properties}> {attributes} : (T) -> ()``, the generic form's operands, attributes and types."""
    cur = _Cursor(body)
    if not cur.eat("("):
        raise ValueError(f"expected (operands) at {body.strip()!r}")
    op = _Op([], [], [])
    while cur.skip() == "%":
        op.operands.append(cur.match(_SSA).group(0))
        cur.eat(",")
    if not cur.eat(")"):
        raise ValueError(f"expected ) at {body[cur.pos:].strip()!r}")
    if cur.skip() == "<":
        cur.pos += 1
        op.attributes += _entries(cur.group())
        cur.eat(">")
    if cur.skip() == "{":
        op.attributes += _entries(cur.group())
    if not cur.eat(":") or cur.skip() != "(":
        raise ValueError(f"expected : (types) -> () at {body[cur.pos:].strip()!r}")
    op.types = _entries(cur.group())
    return op


def _generic(name: str, op: _Op, result: str | None, serial: int) -> str:
    """The op in the generic form; a ``*_const`` op's constant becomes a ``stablehlo.constant`` before
    it on the same line, and its second operand (MLIR's Python bindings cannot read some constants,
    complex ones, back from an attribute)."""
    constant = next((a for a in op.attributes if a.startswith("value = ")), None)
    prefix = ""
    if constant is not None:
        value_type = _constant_type([constant])
        if value_type is None:
            raise ValueError(f"the constant {constant[len('value = '):]!r} has no type")
        expected = f"%check.expected.{serial}"
        prefix = f'{expected} = "stablehlo.constant"() {{{constant}}} : () -> {value_type} '
        op.attributes.remove(constant)
        op.operands.append(expected)
        op.types = op.types[:1] * 2 if op.types else [value_type]
    types = op.types
    if len(types) == 1:
        types = types * len(op.operands)
    if len(types) != len(op.operands):
        raise ValueError(f"{len(op.operands)} operand(s) but {len(types)} type(s)")
    if result is not None and name not in _RESULT_LIKE_OPERAND:
        raise ValueError(f"{name} has no result, but the line assigns one ({result})")
    attributes = f" {{{', '.join(op.attributes)}}}" if op.attributes else ""
    results = types[0] if result is not None else "()"
    assign = f"{result} = " if result is not None else ""
    return f'{prefix}{assign}"{name}"({", ".join(op.operands)}){attributes} : ({", ".join(types)}) -> {results}'
