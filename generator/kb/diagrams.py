"""Required Mermaid diagrams: what a page must show, derived from its kind, and what it has.

The seed prompts make some diagrams mandatory. A ``pr-deep-dive`` page (the PR deep dive
prompt) draws one in four sections: 2.1 the architecture before and after, 4.2 the call chain
(a ``sequenceDiagram``), 4.3 the data flow (a flowchart) and 5 the module relationships (a
``classDiagram``). "Every section that requests a Mermaid diagram MUST include one", or says
``N/A - reason`` when it truly does not apply, which is accepted instead.

A section is found by its number (``### 4.2 Call Chain Visualization``), or, on a page that
does not number it, by its name (``### 调用链``). Other kinds require nothing unless told: a
page's ``diagrams: N`` (an explicit override, for any kind) or its spec's
``acceptance: {diagrams: {KIND: N}}`` asks for N Mermaid diagrams anywhere on the page.

`diagram_status` is what the spec board counts; `diagram_findings` turns what is missing into
``diagram-missing`` findings for the verifier and the site build.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from generator.checks import severity_of
from generator.kb.pages import Page
from generator.model import Finding

State = Literal["present", "not-applicable", "missing", "wrong-type", "no-section"]
UNFINISHED_STATUSES = frozenset({"draft", "planned"})
"""Pages still being planned or drafted: counted by the board, but no finding yet."""


@dataclass(frozen=True)
class RequiredDiagram:
    """One diagram a kind of page must draw, in one section."""

    section: str
    """The section number (``4.2``)."""
    name: str
    """What the section is about (``call chain``), for messages."""
    keywords: tuple[str, ...]
    """Words that identify the section when its heading has no number (any language)."""
    types: tuple[str, ...] = ()
    """Accepted diagram types (first word of the diagram); empty: any type."""

    @property
    def wanted(self) -> str:
        return f"a Mermaid {self.types[0]}" if self.types else "a Mermaid diagram"


KIND_DIAGRAMS: dict[str, tuple[RequiredDiagram, ...]] = {
    "pr-deep-dive": (
        RequiredDiagram("2.1", "architecture before vs after", ("architecture", "架构")),
        RequiredDiagram(
            "4.2", "call chain", ("call chain", "调用链", "sequence"), ("sequenceDiagram",)
        ),
        RequiredDiagram("4.3", "data flow", ("data flow", "数据流"), ("flowchart", "graph")),
        RequiredDiagram(
            "5",
            "module relationships",
            ("module relationship", "模块关系", "class diagram"),
            ("classDiagram", "classDiagram-v2"),
        ),
    ),
}
"""The seed prompts' mandatory diagrams, by page kind."""


@dataclass(frozen=True)
class SectionDiagram:
    """How one required diagram stands on a page."""

    requirement: RequiredDiagram
    state: State
    line: int
    """Page line of the section's heading (of the title when the section is missing)."""
    found: str | None = None
    """The diagram type found instead (``wrong-type``)."""

    @property
    def met(self) -> bool:
        return self.state in ("present", "not-applicable")

    def describe(self) -> str:
        req = self.requirement
        where = f"section {req.section} ({req.name})"
        if self.state == "no-section":
            return f"{where} is missing, and with it {req.wanted}"
        if self.state == "wrong-type":
            return f"{where} has a {self.found}, not {req.wanted}"
        if self.state == "missing":
            return f"{where} has no {req.wanted[2:]}"
        return f"{where}: {'N/A' if self.state == 'not-applicable' else req.wanted[2:]}"


@dataclass
class DiagramStatus:
    """A page's required diagrams and how many it has: ``met`` of ``required``."""

    basis: str
    """Where the requirement comes from: ``kind pr-deep-dive``, ``diagrams: 3``, ..."""
    required: int
    met: int
    present: int
    """Mermaid diagrams on the page, in all."""
    sections: list[SectionDiagram] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.met >= self.required

    @property
    def missing(self) -> list[str]:
        """What is missing, one phrase each (empty when ``ok``)."""
        if self.sections:
            return [s.describe() for s in self.sections if not s.met]
        if self.ok:
            return []
        return [f"{self.required - self.met} of {self.required} diagrams ({self.basis})"]


@dataclass(frozen=True)
class _Heading:
    index: int
    level: int
    text: str


@dataclass(frozen=True)
class _Fence:
    index: int
    kind: str
    """The diagram's type (first word of its first line), empty when blank."""


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?(?=\s|$)")
_NOT_APPLICABLE = re.compile(r"\bN/?A\b\s*[-–—:：]\s*\S", re.IGNORECASE)


def _outline(body: str) -> tuple[list[_Heading], list[_Fence], list[str]]:
    """The body's ATX headings and Mermaid fences (by body line index), and its lines."""
    lines = body.splitlines()
    headings: list[_Heading] = []
    fences: list[_Fence] = []
    fence: str | None = None
    mermaid_at: int | None = None
    in_config = False
    for index, line in enumerate(lines):
        if fence is None:
            match = _FENCE.match(line)
            if match:
                fence = match.group(1)
                info = match.group(2).strip().strip("{}.").lower()
                mermaid_at = index if info.startswith("mermaid") else None
                continue
            heading = _HEADING.match(line)
            if heading:
                headings.append(_Heading(index, len(heading.group(1)), heading.group(2).strip()))
            continue
        stripped = line.strip()
        if stripped.startswith(fence) and not stripped[len(fence) :].strip():
            fence = None
            mermaid_at = None
            in_config = False
        elif mermaid_at is not None:
            if stripped == "---" and not in_config and index == mermaid_at + 1:
                in_config = True  # a diagram's config block comes before its type
                continue
            if in_config:
                in_config = stripped != "---"
                continue
            words = stripped.split()
            if words and not stripped.startswith("%%"):
                fences.append(_Fence(mermaid_at, words[0]))
                mermaid_at = None
    if mermaid_at is not None:  # an unclosed fence that never had a line
        fences.append(_Fence(mermaid_at, ""))
    return headings, fences, lines


def _find_section(requirement: RequiredDiagram, headings: list[_Heading]) -> int | None:
    """Index in ``headings`` of the section, by number first, then by name."""
    for position, heading in enumerate(headings):
        match = _NUMBER.match(heading.text)
        if match and match.group(1) == requirement.section:
            return position
    for position, heading in enumerate(headings):
        text = heading.text.casefold()
        if not _NUMBER.match(heading.text) and any(k in text for k in requirement.keywords):
            return position
    return None


def _body_line(page: Page) -> int:
    """The page line (1-based) of the body's first line."""
    return (page.text or "").count("\n", 0, page.body_start) + 1


def diagram_status(page: Page, kind_override: int | None = None) -> DiagramStatus | None:
    """What ``page`` must draw and what it has; ``None`` when nothing is required.

    ``kind_override`` is the spec's ``acceptance.diagrams`` count for the page's kind. A page's
    own ``diagrams: N`` wins over both it and the kind's sections.
    """
    if page.text is None:
        return None
    explicit = page.meta.get("diagrams")
    kind = page.meta.get("kind")
    if (
        explicit is None
        and kind_override is None
        and not (isinstance(kind, str) and kind in KIND_DIAGRAMS)
    ):
        return None  # nothing required: do not outline the page at all
    headings, fences, lines = _outline(page.body)
    if isinstance(explicit, int) and not isinstance(explicit, bool):
        return _counted(f"diagrams: {explicit}", explicit, len(fences))
    if isinstance(kind_override, int) and not isinstance(kind_override, bool):
        return _counted(f"spec acceptance for {kind}", kind_override, len(fences))
    requirements = KIND_DIAGRAMS.get(kind) if isinstance(kind, str) else None
    if not requirements:
        return None
    first = _body_line(page)
    title_line = next((first + h.index for h in headings if h.level == 1), first)
    sections = []
    for requirement in requirements:
        position = _find_section(requirement, headings)
        if position is None:
            sections.append(SectionDiagram(requirement, "no-section", title_line))
            continue
        heading = headings[position]
        end = len(lines)
        for later in headings[position + 1 :]:
            if later.level <= heading.level:
                end = later.index
                break
        inside = [f for f in fences if heading.index < f.index < end]
        accepted = [f for f in inside if not requirement.types or f.kind in requirement.types]
        line = first + heading.index
        if accepted:
            state: State = "present"
            found = None
        else:
            text = "\n".join(lines[heading.index + 1 : end])
            found = inside[0].kind if inside else None
            if _NOT_APPLICABLE.search(text):
                state = "not-applicable"
            else:
                state = "wrong-type" if inside else "missing"
        sections.append(SectionDiagram(requirement, state, line, found))
    met = sum(1 for section in sections if section.met)
    return DiagramStatus(f"kind {kind}", len(sections), met, len(fences), sections)


def _counted(basis: str, required: int, present: int) -> DiagramStatus:
    required = max(required, 0)
    return DiagramStatus(basis, required, min(present, required), present)


def diagram_findings(
    pages: Iterable[Page], kind_overrides: dict[str, int] | None = None
) -> list[Finding]:
    """``diagram-missing`` for each required diagram a finished page lacks.

    Draft and planned pages are counted by the board but not reported: they are unfinished.
    ``kind_overrides`` maps a page's ``rel`` to its spec's count for its kind.
    """
    from generator.kb.paths import meta_position

    findings: list[Finding] = []
    overrides = kind_overrides or {}
    for page in pages:
        if str(page.meta.get("status") or "").lower() in UNFINISHED_STATUSES:
            continue
        status = diagram_status(page, overrides.get(page.rel))
        if status is None or status.ok:
            continue
        if not status.sections:
            line, column = meta_position(page, "diagrams" if "diagrams" in page.meta else "kind")
            findings.append(
                Finding(
                    severity_of("diagram-missing"),
                    "diagram-missing",
                    page.display,
                    line,
                    column,
                    f"page requires {status.required} Mermaid diagram(s) ({status.basis}) "
                    f"and has {status.present}",
                    "add the missing ```mermaid diagrams",
                )
            )
            continue
        kind = page.meta.get("kind")
        for section in status.sections:
            if section.met:
                continue
            req = section.requirement
            findings.append(
                Finding(
                    severity_of("diagram-missing"),
                    "diagram-missing",
                    page.display,
                    section.line,
                    1,
                    f"{section.describe()}; a {kind} page draws one there",
                    f"add {req.wanted} to section {req.section} ({req.name}), "
                    "or write 'N/A - reason' there",
                )
            )
    return findings
