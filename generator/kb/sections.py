"""Mandatory sections of each page kind, from the seed prompts, and how a page stands against them.

The seed prompts fix what a page of each kind must contain, in order:

* ``pr-deep-dive`` (the PR deep dive prompt): sections 1 to 7 with their numbered subsections,
  from the TL;DR to the quick reference;
* ``pr-explanation`` (the PR explanation prompt): the problem and solution, the code walkthrough,
  the risks;
* ``review`` (the code review prompt): the summary, the findings by severity (P0 to P3, either
  under one "Findings" heading or as "Critical Issues", "Suggestions" and "Nitpicks"), the
  questions for the author and the GitHub review comments.

A section is found by its number (``### 4.2 ...``) when the page numbers its headings, or else
by its name in English or Chinese. Source analyses have no fixed outline; the collection spec
asks only that they cite code, which the ingester checks.

`section_status` says which sections a page has, which are missing and which are out of order;
`detect_kind` guesses a page's kind from its headings when its frontmatter does not say.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.checks import severity_of
from generator.kb.diagrams import UNFINISHED_STATUSES
from generator.kb.pages import Page
from generator.model import Finding, Heading
from generator.refs.extract import extract_headings, scan

PR_DEEP_DIVE, PR_EXPLANATION, REVIEW, SOURCE_ANALYSIS = (
    "pr-deep-dive",
    "pr-explanation",
    "review",
    "source-analysis",
)
ANALYSIS_KINDS: tuple[str, ...] = (PR_DEEP_DIVE, PR_EXPLANATION, REVIEW, SOURCE_ANALYSIS)
"""The kinds of analysis page the knowledge base holds (and `ingest` can import)."""


@dataclass(frozen=True)
class RequiredSection:
    """One section a kind of page must have."""

    number: str | None
    """Its number in the seed's outline (``4.2``); ``None`` when the seed does not number it."""
    name: str
    """Its name in the seed (English), for messages."""
    keywords: tuple[str, ...]
    """Lower-case words that identify its heading, in English and Chinese."""


def _s(number: str | None, name: str, *keywords: str) -> RequiredSection:
    return RequiredSection(number, name, keywords)


KIND_SECTIONS: dict[str, tuple[RequiredSection, ...]] = {
    PR_DEEP_DIVE: (
        _s("1", "TL;DR", "tl;dr", "tldr", "概要", "摘要", "总结"),
        _s("2", "Big Picture", "big picture", "全局", "整体", "overview"),
        _s("2.1", "Before vs After Architecture", "before vs after", "architecture", "架构"),
        _s("2.2", "Change Scope Summary", "change scope", "变更范围", "改动范围"),
        _s("3", "Design Rationale", "design rationale", "rationale", "设计原理", "设计动机"),
        _s("3.1", "Problem Background", "problem background", "background", "问题背景"),
        _s("3.2", "Solution Approach", "solution", "解决方案", "方案"),
        _s("3.3", "Key Design Points", "design point", "key design", "设计点", "设计要点"),
        _s("4", "Execution Path Deep Dive", "execution path", "执行路径"),
        _s("4.1", "Entry Point", "entry point", "入口"),
        _s("4.2", "Call Chain Visualization", "call chain", "调用链"),
        _s("4.3", "Data Flow", "data flow", "数据流"),
        _s("4.4", "Core Code Walkthrough", "code walkthrough", "walkthrough", "核心代码"),
        _s("5", "Module Relationships", "module relationship", "模块关系"),
        _s("6", "Risks & Edge Cases", "risk", "edge case", "风险", "边界"),
        _s("7", "Quick Reference", "quick reference", "速查", "快速参考"),
        _s("7.1", "File Change Summary", "file change", "文件变更"),
        _s("7.2", "Key Functions Index", "key function", "关键函数"),
        _s("7.3", "Related Code Pointers", "related code", "code pointer", "相关代码"),
    ),
    PR_EXPLANATION: (
        _s(None, "Problem Statement and Proposed Solution", "problem statement",
           "proposed solution", "(why)", "问题陈述", "问题与方案", "背景与方案"),
        _s(None, "Detailed Code Walkthrough", "code walkthrough", "walkthrough", "(how)",
           "代码解读", "代码走读", "代码详解"),
        _s(None, "Potential Issues & Risks", "potential issue", "risk", "watch out", "风险",
           "潜在问题"),
    ),
    REVIEW: (
        _s(None, "PR Summary", "summary", "概要", "总结", "摘要"),
        _s(None, "Findings (P0 to P3)", "finding", "critical issue", "p0", "p1", "问题", "发现"),
        _s(None, "Questions for the Author", "question", "提问", "疑问"),
        _s(None, "GitHub Review Comments", "review comment", "评审评论", "审查评论"),
    ),
}  # fmt: skip
"""The seed prompts' mandatory sections, by page kind, in the order the seeds give them."""

_NUMBER = re.compile(r"^(\d+(?:\.\d+)*)\.?(?=\s|$)")
_SEVERITY_MARK = re.compile(r"\[P[0-3]\]|\bP[0-3]\b")


def _number(heading: Heading) -> str | None:
    match = _NUMBER.match(heading.text.strip())
    return match.group(1) if match else None


def _matches(section: RequiredSection, heading: Heading, numbered: bool) -> bool:
    number = _number(heading)
    if numbered and section.number is not None and number is not None:
        return number == section.number
    text = heading.text.lower()
    return any(word in text for word in section.keywords)


@dataclass(frozen=True)
class SectionState:
    """How one required section stands on a page."""

    section: RequiredSection
    heading: Heading | None
    """The heading that holds it; ``None`` when it is missing."""
    in_order: bool = True
    """False when it comes before a section the seed puts ahead of it."""

    def describe(self) -> str:
        number, name = self.section.number, self.section.name
        label = f"{number} {name}" if number else name
        if self.heading is None:
            return f"section '{label}' is missing"
        return f"section '{label}' (line {self.heading.line}) is out of the seed's order"


@dataclass(frozen=True)
class SectionStatus:
    kind: str
    states: tuple[SectionState, ...]

    @property
    def missing(self) -> list[SectionState]:
        return [state for state in self.states if state.heading is None]

    @property
    def out_of_order(self) -> list[SectionState]:
        return [state for state in self.states if state.heading is not None and not state.in_order]

    @property
    def found(self) -> int:
        return sum(1 for state in self.states if state.heading is not None)


def page_headings(body: str, body_start_line: int = 1) -> list[Heading]:
    """The body's headings outside fenced code, with page line numbers."""
    headings = extract_headings(scan(body))
    if body_start_line == 1:
        return headings
    shift = body_start_line - 1
    return [Heading(h.level, h.text, h.line + shift, h.anchor) for h in headings]


def section_status(
    kind: str, headings: Sequence[Heading], *, by_number: bool = True
) -> SectionStatus | None:
    """Which of the kind's mandatory sections the headings hold, in order; None: no outline.

    A numbered page's sections are found by number; ``by_number=False`` finds them by name
    only (to tell kinds apart, when any numbered outline would match numbers).
    """
    required = KIND_SECTIONS.get(kind)
    if required is None:
        return None
    numbered = by_number and sum(1 for h in headings if _number(h)) >= 3
    states: list[SectionState] = []
    cursor = 0  # sections are searched after the previous one, so "问题" finds the right one
    for section in required:
        index = next(
            (i for i in range(cursor, len(headings)) if _matches(section, headings[i], numbered)),
            None,
        )
        if index is not None:
            states.append(SectionState(section, headings[index]))
            cursor = index + 1
            continue
        earlier = next((h for h in headings[:cursor] if _matches(section, h, numbered)), None)
        states.append(SectionState(section, earlier, in_order=earlier is None))
    return SectionStatus(kind, tuple(states))


@dataclass(frozen=True)
class KindGuess:
    kind: str
    basis: str
    """Why: ``frontmatter``, ``--kind``, ``12 of 19 pr-deep-dive sections``, ..."""


_PR_NUMBER = re.compile(
    r"\bPR\s*#?\d+|\bpull\s+request\s*#?\d+|/pull/\d+|(?:合并请求|拉取请求)\s*#?\d+", re.IGNORECASE
)
PR_HEAD_LINES = 5
"""How many non-blank lines at the top of a page may name the pull request it is about."""


def states_pull_request(title: str, body: str) -> bool:
    """Whether the page says it is about one pull request: a PR number (``PR #12``, a
    ``/pull/12`` link) in its title or its first `PR_HEAD_LINES` non-blank lines. A number
    mentioned further down is a source analysis citing a change in passing, not its subject."""
    if _PR_NUMBER.search(title):
        return True
    head = [line for line in body.splitlines() if line.strip()][:PR_HEAD_LINES]
    return any(_PR_NUMBER.search(line) for line in head)


def detect_kind(headings: Sequence[Heading], body: str, *, pr: bool = False) -> KindGuess:
    """The analysis kind a page's headings fit best; a source analysis when none fits.

    The PR kinds (deep dive, explanation, review) need the page to be about a pull request,
    which ``pr`` says (see `states_pull_request`). Then three of a kind's sections, found by
    name, are enough: drafts are often incomplete.
    """
    if not pr:
        return KindGuess(SOURCE_ANALYSIS, "it names no pull request at the top")
    best: tuple[float, str, int, int] | None = None
    for kind, required in KIND_SECTIONS.items():
        status = section_status(kind, headings, by_number=False)
        assert status is not None
        if status.found < 3:
            continue  # (a short outline's one section found is no evidence against a long one)
        score = status.found / len(required)
        if kind == REVIEW and not _SEVERITY_MARK.search(body):
            score /= 2  # a review grades its findings P0 to P3
        if best is None or score > best[0]:
            best = (score, kind, status.found, len(required))
    if best is None:
        return KindGuess(SOURCE_ANALYSIS, "no seed outline fits")
    _score, kind, found, total = best
    return KindGuess(kind, f"{found} of {total} {kind} sections")


def section_findings(pages: Iterable[Page], *, unfinished: bool = False) -> list[Finding]:
    """``section-missing`` and ``section-order`` for each page whose kind has an outline.

    Draft and planned pages are skipped unless ``unfinished`` is set.
    """
    findings: list[Finding] = []
    for page in pages:
        if not unfinished and str(page.meta.get("status") or "").lower() in UNFINISHED_STATUSES:
            continue
        kind = page.meta.get("kind")
        if page.text is None or not isinstance(kind, str) or kind not in KIND_SECTIONS:
            continue
        body_line = page.text.count("\n", 0, page.body_start) + 1
        headings = page_headings(page.body, body_line)
        status = section_status(kind, headings)
        assert status is not None
        title_line = next((h.line for h in headings if h.level == 1), body_line)
        for state in status.states:
            if state.heading is not None and state.in_order:
                continue
            check = "section-missing" if state.heading is None else "section-order"
            findings.append(
                Finding(
                    severity_of(check),
                    check,
                    page.display,
                    state.heading.line if state.heading is not None else title_line,
                    1,
                    f"{state.describe()}; a {kind} page has it (seed outline)",
                    "add the section, or write 'N/A - reason' under its heading"
                    if state.heading is None
                    else "move it after the sections the seed puts before it",
                )
            )
    return findings
