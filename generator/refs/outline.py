"""The outline of a source file: its classes and functions, with the lines each spans.

Python is read with `ast` (methods nested in their classes, decorators counted in a
definition's lines, base classes and the parts a class composes); other languages get a plain
outline from their definition lines. The page generator (`generator.generate.source`) drafts a
page from it, and the site (`generator.site.cards`) shows it for a reference to a whole file.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

# Definition lines of common languages, for files `ast` cannot read.
_PLAIN_DEFINITION = re.compile(
    r"^\s*(?:(?:pub(?:\([^)]*\))?|export|public|private|protected|static|async|inline|virtual)\s+)*"
    r"(?P<kind>def|class|struct|enum|trait|impl|interface|fn|func|function|type)\s+"
    r"(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
)


@dataclass(frozen=True)
class Symbol:
    """A class or function of the file, with the lines it spans (decorators included)."""

    name: str
    qualname: str
    kind: str
    """``class``, ``function``, ``method`` or the keyword of a plain outline (``fn``, ...)."""
    start: int
    end: int
    depth: int = 0
    bases: tuple[str, ...] = ()
    parts: tuple[str, ...] = ()
    """Classes this class composes: ``self.x = Part(...)`` in its methods."""


@dataclass
class Outline:
    symbols: list[Symbol] = field(default_factory=list)
    parse_error: str | None = None

    @property
    def classes(self) -> list[Symbol]:
        return [symbol for symbol in self.symbols if symbol.kind == "class"]


def outline_python(text: str) -> Outline:
    """Classes, functions and methods of a Python module, in source order."""
    try:
        tree = ast.parse(text)
    except SyntaxError as error:
        outline = outline_plain(text.splitlines())
        outline.parse_error = f"line {error.lineno}: {error.msg}"
        return outline
    outline = Outline()

    def visit(node: ast.AST, prefix: str, depth: int, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                outline.symbols.append(
                    Symbol(
                        child.name,
                        prefix + child.name,
                        "class",
                        start,
                        child.end_lineno or start,
                        depth,
                        tuple(_dotted(base) for base in child.bases if _dotted(base)),
                        tuple(sorted(_composed(child))),
                    )
                )
                visit(child, prefix + child.name + ".", depth + 1, True)
            elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                start = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                kind = "method" if in_class else "function"
                outline.symbols.append(
                    Symbol(
                        child.name,
                        prefix + child.name,
                        kind,
                        start,
                        child.end_lineno or start,
                        depth,
                    )
                )
                visit(child, prefix + child.name + ".", depth + 1, False)

    visit(tree, "", 0, False)
    return outline


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    if isinstance(node, ast.Subscript):
        return _dotted(node.value)
    return ""


def _composed(cls: ast.ClassDef) -> set[str]:
    """Class names instantiated into ``self.<attr>`` in the class's methods."""
    parts = set()
    for node in ast.walk(cls):
        if not isinstance(node, ast.Assign | ast.AnnAssign):
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        value = node.value
        if not isinstance(value, ast.Call):
            continue
        parts_of_name = _dotted(value.func).split(".")
        name = parts_of_name[-1]
        if not name[:1].isupper() and len(parts_of_name) > 1 and parts_of_name[-2][:1].isupper():
            name = parts_of_name[-2]  # an alternate constructor: Mesh.from_world(...)
        if not name[:1].isupper():
            continue  # a function call, not a class being instantiated
        if any(isinstance(t, ast.Attribute) and _dotted(t.value) == "self" for t in targets):
            parts.add(name)
    return parts


def outline_plain(lines: list[str]) -> Outline:
    """Definition lines of any language: each symbol spans to the line before the next one."""
    found = [
        (number, match)
        for number, line in enumerate(lines, 1)
        if (match := _PLAIN_DEFINITION.match(line))
    ]
    outline = Outline()
    for index, (number, match) in enumerate(found):
        end = found[index + 1][0] - 1 if index + 1 < len(found) else len(lines)
        while end > number and not lines[end - 1].strip():
            end -= 1
        kind = "class" if match.group("kind") in ("class", "struct") else match.group("kind")
        name = match.group("name")
        outline.symbols.append(Symbol(name, name, kind, number, end))
    return outline


BRACE_LANGUAGES = (
    ".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".cu", ".cuh", ".inl", ".go",
    ".rs", ".java", ".js", ".jsx", ".mjs", ".ts", ".tsx", ".kt", ".scala", ".swift", ".cs",
    ".m", ".mm", ".php",
)  # fmt: skip
"""Languages whose definitions are a header and a body in braces (`brace_definitions`)."""

_FUNCTION_PREFIX = re.compile(
    r"""\s*(?:
    func\s*(?:\([^()]*\)\s*)?                                           # Go, a method's receiver
    |(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+"[^"]*")\s+)*fn\s+   # Rust
    |(?:export\s+)?(?:default\s+)?(?:async\s+)?function\s*\*?\s*         # JavaScript
    |[\w:<>,*&~\s\[\]]*(?:__\w+__\s*(?:\([^()]*\))?[\w:<>,*&\s]*)*      # C, C++, CUDA, Java...
    )""",
    re.VERBOSE,
)
_NOT_A_RETURN_TYPE = re.compile(
    r"\b(?:return|else|new|delete|throw|case|goto|co_return|co_await|if|while|for|switch|"
    r"sizeof|typeof|await|yield|go|defer)\b|[=(]"
)
_HEADER_ABOVE = re.compile(
    r"\s*(?:template\s*<.*>|\[\[.*\]\]|@\w.*|#\[.*\]|(?:__(?:global|device|host|forceinline)__"
    r"|static|inline|extern|virtual|constexpr|__launch_bounds__\s*\([^)]*\)|\s)+)\s*$"
)
_HEADER_REACH = 20
"""Lines after a definition's name in which its body's opening brace must come."""


def brace_definitions(lines: tuple[str, ...], name: str) -> list[tuple[int, int]]:
    """Line spans of the definitions of ``name`` in a language of braces (C, C++, CUDA, Go,
    Rust, Java, JavaScript...): a function whose header (a return type or `func`/`fn`/
    `function` before the name, a parameter list after it) opens a body before any `;`, or a
    `class`/`struct`/`enum`/... of that name with a body; each from its header (with the
    `template<...>` and attribute lines above it) to the brace that closes its body. A call, a
    declaration and a prototype are none."""
    if not name.isidentifier():
        return []
    function = re.compile(rf"(?<![\w.$>]){re.escape(name)}\s*(?:<[^;{{}}()]*>)?\s*\(")
    kind = re.compile(
        rf"\b(?:class|struct|union|enum(?:\s+class)?|interface|trait|impl|type|record|object)"
        rf"\s+{re.escape(name)}\b"
    )
    spans = []
    for index, line in enumerate(lines):
        if name not in line:
            continue
        match = kind.search(line)
        if match is None:
            match = function.search(line)
            if match is None:
                continue
            prefix = line[: match.start()]
            receiver = re.match(r"\s*func\s*\(", prefix)  # (a Go method's)
            typed = prefix.strip() and not _NOT_A_RETURN_TYPE.search(prefix.split("(", 1)[0])
            if not (receiver or typed) or not _FUNCTION_PREFIX.fullmatch(prefix):
                continue
        body = _body_from(lines, index, match.end())
        if body is None:
            continue
        start = index
        while start > 0 and _HEADER_ABOVE.fullmatch(lines[start - 1]) and lines[start - 1].strip():
            start -= 1
        spans.append((start + 1, body + 1))
    return spans


def _body_from(lines: tuple[str, ...], index: int, column: int) -> int | None:
    """The index of the line whose brace closes the body that opens after line ``index``'s
    ``column`` (before any `;` outside brackets); None when a `;` comes first."""
    depth = brackets = 0
    header_end = min(len(lines), index + _HEADER_REACH + 1)
    number = index
    while number < len(lines):
        text = _code_of(lines[number][column:] if number == index else lines[number])
        for char in text:
            if char in "([":
                brackets += 1
            elif char in ")]":
                brackets -= 1
            elif char == ";" and depth == 0 and brackets <= 0:
                return None  # a declaration or a call: no body
            elif char == "{":
                depth += 1
            elif char == "}" and depth:
                depth -= 1
                if depth == 0:
                    return number
        number += 1
        if depth == 0 and number >= header_end:
            return None
    return len(lines) - 1  # (a body never closed: to the end)


_LITERAL_OR_COMMENT = re.compile(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'|//.*|/\*.*?\*/')


def _code_of(line: str) -> str:
    """``line`` without its string and character literals and its comments (on one line)."""
    return _LITERAL_OR_COMMENT.sub("", line) if '"' in line or "/" in line or "'" in line else line
