"""Checks that only matter for the published site: frontmatter present, Mermaid fences sane.

Mermaid cannot be parsed without a browser, so ``mermaid-syntax`` looks for the mistakes that
always break a diagram: no known diagram type on the first line, and brackets or quotes that do
not close. It is a warning (``mkdocs build --strict`` fails on it); the browser test renders
every diagram of the demo for real.
"""

from __future__ import annotations

import re

from generator.checks import severity_of
from generator.kb.pages import Page
from generator.model import Finding
from generator.refs.extract import scan

DIAGRAM_TYPES = frozenset(
    # Spelled as Mermaid's detectors expect them on a diagram's first line.
    [
        *("graph", "flowchart", "sequenceDiagram", "classDiagram", "classDiagram-v2"),
        *("stateDiagram", "stateDiagram-v2", "erDiagram", "gantt", "pie", "journey", "gitGraph"),
        *("mindmap", "timeline", "quadrantChart", "xychart-beta", "xychart", "sankey-beta"),
        *("sankey", "requirementDiagram", "C4Context", "C4Container", "C4Component"),
        *("C4Dynamic", "C4Deployment", "block-beta", "block", "packet-beta", "packet"),
        *("architecture-beta", "architecture", "kanban", "radar-beta", "treemap"),
        *("treemap-beta", "zenuml", "info"),
    ]
)
_QUOTED = re.compile(r'"[^"\n]*"')
# Flowchart shapes whose brackets do not pair literally: ``id>text]`` (asymmetric), and edge
# labels between pipes, which may hold any character.
_ASYMMETRIC = re.compile(r"(?<=[\w\"])>([^\]\n]*)\]")
_EDGE_LABEL = re.compile(r"\|[^|\n]*\|")
_PAIRS = {")": "(", "]": "[", "}": "{"}


def frontmatter_missing(page: Page) -> Finding | None:
    """A page without frontmatter has no title, status, level or learning path."""
    if page.text is None or page.frontmatter is not None or page.problems:
        return None
    return Finding(
        severity_of("frontmatter-missing"),
        "frontmatter-missing",
        page.display,
        1,
        1,
        "page has no frontmatter, so it has no title, status, level or learning path",
        "start the page with a block such as: ---/title: .../level: beginner/paths: [NAME]/---",
    )


def mermaid_findings(page: Page) -> list[Finding]:
    """One finding per Mermaid fence that cannot render."""
    if page.text is None:
        return []
    layout = scan(page.text, page.body_start)
    findings = []
    for fence in layout.fences:
        if fence.language != "mermaid":
            continue
        first_newline = page.text.find("\n", fence.start, fence.end)
        if first_newline < 0:
            continue
        body_start = first_newline + 1
        body = page.text[body_start : fence.end]
        closing = re.search(r"\n?[ \t>]*(?:`{3,}|~{3,})[ \t]*\r?\n?\Z", body)
        if closing:
            body = body[: closing.start()]
        problem = diagram_problem(body)
        if problem is None:
            continue
        offset, message = problem
        line, column = layout.position(body_start + offset)
        findings.append(
            Finding(
                severity_of("mermaid-syntax"),
                "mermaid-syntax",
                page.display,
                line,
                column,
                f"Mermaid diagram will not render: {message}",
                "fix the diagram; `mkdocs serve` shows how it renders",
            )
        )
    return findings


def diagram_problem(body: str) -> tuple[int, str] | None:
    """(offset in ``body``, what is wrong) for a diagram that cannot render, or None."""
    lines = body.split("\n")
    offset = 0
    index = 0
    # Skip blank lines, %% comments and a leading ---/--- config block.
    if lines and lines[0].strip() == "---":
        for index in range(1, len(lines)):
            if lines[index].strip() == "---":
                offset = sum(len(line) + 1 for line in lines[: index + 1])
                index += 1
                break
    while index < len(lines) and (
        not lines[index].strip() or lines[index].strip().startswith("%%")
    ):
        offset += len(lines[index]) + 1
        index += 1
    if index >= len(lines):
        return 0, "the diagram is empty"
    first = lines[index].strip()
    keyword = re.split(r"[\s;:]", first, maxsplit=1)[0]
    if keyword not in DIAGRAM_TYPES:
        return offset, f"'{keyword}' is not a diagram type (flowchart, sequenceDiagram, ...)"
    stack: list[tuple[str, int]] = []
    position = offset
    for line in lines[index:]:
        if line.strip().startswith("%%"):
            position += len(line) + 1
            continue
        if line.count('"') % 2:
            return position + line.index('"'), 'a quoted label is not closed (unbalanced ")'
        masked = _QUOTED.sub(lambda m: " " * len(m.group()), line)
        masked = _EDGE_LABEL.sub(lambda m: " " * len(m.group()), masked)
        if keyword in ("graph", "flowchart"):
            masked = _ASYMMETRIC.sub(lambda m: " " * len(m.group()), masked)
        elif keyword not in (
            "classDiagram",
            "classDiagram-v2",
            "erDiagram",
            "stateDiagram",
            "stateDiagram-v2",
        ):
            position += len(line) + 1
            continue  # other diagram types use brackets freely
        for column, char in enumerate(masked):
            if char in "([{":
                stack.append((char, position + column))
            elif char in _PAIRS:
                if not stack or stack[-1][0] != _PAIRS[char]:
                    return position + column, f"'{char}' closes nothing"
                stack.pop()
        position += len(line) + 1
    if stack:
        char, where = stack[-1]
        return where, f"'{char}' is never closed"
    return None
