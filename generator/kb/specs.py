"""LeanSpec governance: specs under ``specs/``, page lifecycle fields, and their checks.

A knowledge base is governed when its root (the directory of ``upstreams.yaml``) has a
``.lean-spec/`` directory or a ``specs/`` directory. Then:

- every spec ``specs/NNN-kebab-name/README.md`` (the digits and the file name come from
  ``.lean-spec/config.json``'s ``structure``) is checked as the LeanSpec CLI reads it: required
  ``status`` and ``created``; ``status`` in draft | planned | in-progress | complete | archived and
  ``priority`` in low | medium | high | critical, where LeanSpec's aliases (``in_progress``,
  ``inprogress``, ``completed``, ``med``, ``urgent``, any capitalisation) are accepted with a
  warning and the normalised value as the suggestion; dates; exactly one ``# Title``; empty
  sections; the token budget (``validation.warnTokens``/``maxTokens``, 3,500/5,000 by default);
  ``depends_on`` and ``parent`` targets exist and form no cycle; a complete spec with unchecked
  plan items; two specs with one number;
- every page carries the same lifecycle fields (``status``, ``created``, ...) and names the spec
  that governs it (``spec: 001-minitrain-knowledge-base``).

`governance_findings` is what the verifier calls; `validate` is ``python -m generator specs
validate``. The learning-path checks live in `generator.kb.paths` and run in both.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator.checks import PAGE_GOVERNANCE_CHECKS
from generator.kb.diagrams import diagram_findings
from generator.kb.governed import has_governance, is_governed
from generator.kb.pages import Page, load_page, problem_findings
from generator.kb.paths import (
    Curriculum,
    as_list,
    build_curriculum,
    load_pages,
    meta_position,
)
from generator.kb.sections import section_findings
from generator.model import Finding, Severity

SPEC_STATUSES: tuple[str, ...] = ("draft", "planned", "in-progress", "complete", "archived")
PRIORITIES: tuple[str, ...] = ("low", "medium", "high", "critical")
STATUS_ALIASES: dict[str, str] = {
    "in_progress": "in-progress",
    "inprogress": "in-progress",
    "completed": "complete",
}
"""What the LeanSpec CLI (0.3) accepts besides the canonical values (case-insensitively)."""
PRIORITY_ALIASES: dict[str, str] = {"med": "medium", "urgent": "critical"}
SECTIONS: tuple[str, ...] = ("Overview", "Design", "Plan", "Test", "Notes")
DATE_FIELDS: tuple[str, ...] = ("created",)
TIMESTAMP_FIELDS: tuple[str, ...] = ("created_at", "updated_at", "completed_at")
WARN_TOKENS, MAX_TOKENS = 3500, 5000

_E, _W = Severity.ERROR, Severity.WARNING
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_CHECKBOX = re.compile(r"^\s*[-*+]\s+\[([ xX])\]\s+(.*)$")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_COMMENT = re.compile(r"<!--.*?-->", re.S)


# --------------------------------------------------------------------------------------------
# Configuration


@dataclass
class LeanSpecConfig:
    """``.lean-spec/config.json``, with LeanSpec's defaults for what it does not say."""

    root: Path
    specs_dir: Path
    template: Path | None = None
    templates: dict[str, Path] = field(default_factory=dict)
    pattern: str = "flat"
    sequence_digits: int = 3
    default_file: str = "README.md"
    warn_tokens: int = WARN_TOKENS
    max_tokens: int = MAX_TOKENS
    findings: list[Finding] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.root / ".lean-spec" / "config.json"


def load_config(root: Path) -> LeanSpecConfig:
    """Read the config; problems become findings on the config file, never exceptions."""
    config = LeanSpecConfig(root=root, specs_dir=root / "specs")
    path = config.path
    if not path.is_file():
        return config
    display = _display(path, root)
    try:
        data = json.loads(path.read_text("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        line = getattr(error, "lineno", 1)
        config.findings.append(
            Finding(_E, "spec-config-invalid", display, line, 1, f"not valid JSON: {error}")
        )
        return config
    if not isinstance(data, dict):
        config.findings.append(
            Finding(_E, "spec-config-invalid", display, 1, 1, "must be a JSON object")
        )
        return config

    def bad(key: str, message: str) -> None:
        config.findings.append(
            Finding(_E, "spec-config-invalid", display, _json_line(path, key), 1, message)
        )

    specs_dir = data.get("specsDir", "specs")
    if isinstance(specs_dir, str) and specs_dir:
        config.specs_dir = root / specs_dir
    else:
        bad("specsDir", "specsDir must be a directory name")
    templates_dir = root / ".lean-spec" / "templates"
    templates = data.get("templates", {})
    if isinstance(templates, dict):
        for name, file in templates.items():
            if isinstance(file, str):
                config.templates[name] = templates_dir / file
    else:
        bad("templates", "templates must map names to template files")
    template = data.get("template")
    if isinstance(template, str):
        config.template = templates_dir / template
    elif "default" in config.templates:
        config.template = config.templates["default"]
    for name, file in [("template", config.template), *config.templates.items()]:
        if file is not None and not file.is_file():
            bad(name if name == "template" else "templates", f"template {file.name} is missing")
    structure = data.get("structure", {})
    if isinstance(structure, dict):
        config.pattern = str(structure.get("pattern", config.pattern))
        digits = structure.get("sequenceDigits", config.sequence_digits)
        if isinstance(digits, int) and not isinstance(digits, bool) and 1 <= digits <= 6:
            config.sequence_digits = digits
        else:
            bad("sequenceDigits", "structure.sequenceDigits must be a whole number from 1 to 6")
        config.default_file = str(structure.get("defaultFile", config.default_file))
    validation = data.get("validation", {})
    if isinstance(validation, dict):
        config.warn_tokens = int(validation.get("warnTokens", config.warn_tokens))
        config.max_tokens = int(validation.get("maxTokens", config.max_tokens))
    return config


def _json_line(path: Path, key: str) -> int:
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        if f'"{key}"' in line:
            return number
    return 1


def _display(path: Path, root: Path) -> str:
    """A path for findings: relative to the working directory when possible."""
    for base in (Path.cwd(), root):
        try:
            return path.resolve().relative_to(base.resolve()).as_posix()
        except ValueError:
            continue
    return str(path)


# --------------------------------------------------------------------------------------------
# Specs


@dataclass
class Spec:
    """One spec folder."""

    id: str
    """The folder name (``001-minitrain-knowledge-base``): what pages and LeanSpec call it."""
    number: int | None
    name: str
    """The kebab-case part of the folder name."""
    page: Page
    """The spec's main file, parsed like any page."""
    sub_specs: list[str] = field(default_factory=list)
    """Other Markdown files in the folder (``DESIGN.md``), by name."""

    @property
    def display(self) -> str:
        return self.page.display

    @property
    def meta(self) -> dict[str, Any]:
        return self.page.meta

    @property
    def status(self) -> str | None:
        return normalise("status", self.meta.get("status"))[0]

    @property
    def priority(self) -> str | None:
        return normalise("priority", self.meta.get("priority"))[0]

    @property
    def title(self) -> str:
        titles = headings(self.page.body, 1)
        return titles[0][1] if titles else self.id

    @property
    def tags(self) -> list[str]:
        return [str(tag) for tag in as_list(self.meta.get("tags"))]

    @property
    def depends_on(self) -> list[str]:
        return [str(item) for item in as_list(self.meta.get("depends_on"))]

    @property
    def parent(self) -> str | None:
        parent = self.meta.get("parent")
        return str(parent) if parent is not None else None

    def section(self, title: str) -> str | None:
        return sections(self.page.body).get(title.casefold())

    def checklist(self, title: str) -> list[tuple[bool, str]]:
        """``(checked, text)`` for each checkbox in a section (Plan, Test, ...)."""
        text = self.section(title) or ""
        items = []
        for line in text.splitlines():
            match = _CHECKBOX.match(line)
            if match:
                items.append((match.group(1) != " ", match.group(2).strip()))
        return items


def load_specs(config: LeanSpecConfig) -> list[Spec]:
    """Every spec folder in the specs directory (``archived/`` included), sorted by id."""
    specs: list[Spec] = []
    base = config.specs_dir
    if not base.is_dir():
        return specs
    folders = [d for d in base.iterdir() if d.is_dir() and not d.name.startswith(".")]
    archived = base / "archived"
    if archived.is_dir():
        folders.remove(archived) if archived in folders else None
        folders.extend(d for d in archived.iterdir() if d.is_dir())
    for folder in sorted(folders, key=lambda d: d.name):
        main = folder / config.default_file
        if not main.is_file():
            continue
        display = _display(main, config.root)
        page = load_page(main, display, f"{folder.name}/{main.name}")
        match = re.match(r"^(\d+)-(.*)$", folder.name)
        number = int(match.group(1)) if match else None
        name = match.group(2) if match else folder.name
        subs = sorted(p.name for p in folder.glob("*.md") if p.name != config.default_file)
        specs.append(Spec(folder.name, number, name, page, subs))
    return specs


def diagram_override(spec: Spec | None, page: Page) -> int | None:
    """How many diagrams ``spec``'s ``acceptance.diagrams`` asks of ``page``'s kind, if it says."""
    acceptance = spec.meta.get("acceptance") if spec is not None else None
    kinds = acceptance.get("diagrams") if isinstance(acceptance, dict) else None
    value = kinds.get(page.meta.get("kind")) if isinstance(kinds, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def find_spec(specs: Sequence[Spec], ref: str) -> Spec | None:
    """A spec by id (``001-x``), number (``001``, ``1``) or name (``x``) when unique."""
    ref = str(ref).strip().rstrip("/")
    ref = ref.split("/")[-2] if ref.endswith(".md") and "/" in ref else ref.split("/")[-1]
    for spec in specs:
        if spec.id == ref:
            return spec
    matches = []
    if ref.isdigit():
        matches = [spec for spec in specs if spec.number == int(ref)]
    else:
        matches = [spec for spec in specs if spec.name == ref]
    return matches[0] if len(matches) == 1 else None


# --------------------------------------------------------------------------------------------
# Markdown helpers


def _body_lines(body: str) -> list[tuple[int, str, bool]]:
    """``(index, line, in_fence)`` for each body line."""
    result = []
    fence: str | None = None
    for index, line in enumerate(body.splitlines()):
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)[0] * len(match.group(1))
            result.append((index, line, True))
            continue
        if fence is not None:
            result.append((index, line, True))
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            continue
        result.append((index, line, False))
    return result


def headings(body: str, level: int) -> list[tuple[int, str]]:
    """``(body line index, text)`` of ATX headings of ``level`` outside code fences."""
    marker = "#" * level
    found = []
    for index, line, in_fence in _body_lines(body):
        if in_fence:
            continue
        match = re.match(rf"^ {{0,3}}{marker}(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$", line)
        if match and not line.lstrip().startswith(marker + "#"):
            found.append((index, (match.group(1) or "").strip()))
    return found


def sections(body: str) -> dict[str, str]:
    """H2 sections by case-folded title, with their text up to the next H1 or H2."""
    result: dict[str, str] = {}
    current: str | None = None
    buffer: list[str] = []
    for _, line, in_fence in _body_lines(body):
        heading = None if in_fence else re.match(r"^ {0,3}(#{1,2})[ \t]+(.*?)[ \t#]*$", line)
        if heading:
            if current is not None:
                result.setdefault(current, "\n".join(buffer))
            current = heading.group(2).strip().casefold() if len(heading.group(1)) == 2 else None
            buffer = []
        elif current is not None:
            buffer.append(line)
    if current is not None:
        result.setdefault(current, "\n".join(buffer))
    return result


def mermaid_count(body: str) -> int:
    count = 0
    fence: str | None = None
    for line in body.splitlines():
        match = _FENCE.match(line)
        if fence is None and match:
            fence = match.group(1)
            if line.strip()[len(fence) :].strip().strip("{}.").lower().startswith("mermaid"):
                count += 1
        elif (
            fence is not None
            and line.strip().startswith(fence)
            and not line.strip()[len(fence) :].strip()
        ):
            fence = None
    return count


def estimate_tokens(text: str) -> int:
    """An estimate of a GPT-style (cl100k) token count, without a tokenizer download.

    Each CJK character counts as one token, each other word as one token per four characters
    (at least one), and each punctuation mark as one.
    """
    tokens = 0
    for match in re.finditer(r"[\u3000-\u9fff\uac00-\ud7af\uf900-\ufaff]|\w+|[^\w\s]", text):
        piece = match.group(0)
        if len(piece) == 1:
            tokens += 1
        else:
            tokens += max(1, (len(piece) + 3) // 4)
    return tokens


# --------------------------------------------------------------------------------------------
# Field checks shared by specs and pages


def normalise(field_name: str, value: Any) -> tuple[str | None, str | None]:
    """``(canonical value or None, 'alias' | 'invalid' | None)`` for status and priority."""
    if value is None:
        return None, None
    allowed, aliases = (
        (SPEC_STATUSES, STATUS_ALIASES)
        if field_name == "status"
        else (PRIORITIES, PRIORITY_ALIASES)
    )
    text = str(value)
    folded = text.strip().lower()
    if text in allowed:
        return text, None
    if folded in allowed:
        return folded, "alias"
    if folded in aliases:
        return aliases[folded], "alias"
    dashed = folded.replace("_", "-")
    if dashed in allowed:
        return dashed, "alias"
    return None, "invalid"


def lifecycle_findings(page: Page, what: str = "page") -> list[Finding]:
    """Required fields, enum values and dates of a spec's or a page's frontmatter."""
    findings: list[Finding] = []
    meta = page.meta

    def add(severity: Severity, check: str, key: str, message: str, hint: str | None) -> None:
        line, column = meta_position(page, key)
        findings.append(Finding(severity, check, page.display, line, column, message, hint))

    if page.text is None or any(p.check == "frontmatter-invalid" for p in page.problems):
        return findings  # the page reader already reported it
    for key in ("status", "created"):
        if meta.get(key) in (None, ""):
            add(
                _E,
                "field-missing",
                key,
                f"{what} has no '{key}' (LeanSpec requires it)",
                "add 'status: draft'"
                if key == "status"
                else f"add 'created: {dt.date.today().isoformat()}'",
            )
    for key, allowed in (("status", SPEC_STATUSES), ("priority", PRIORITIES)):
        value = meta.get(key)
        canonical, problem = normalise(key, value)
        if problem == "alias":
            add(
                _W,
                "field-alias",
                key,
                f"{key} {value!r} is a LeanSpec alias of {canonical!r}",
                f"write '{key}: {canonical}'",
            )
        elif problem == "invalid":
            add(
                _E,
                "field-invalid",
                key,
                f"{key} {value!r} is not one of {', '.join(allowed)}",
                None,
            )
    for key in DATE_FIELDS:
        value = meta.get(key)
        if value in (None, "") or (
            isinstance(value, dt.date) and not isinstance(value, dt.datetime)
        ):
            continue
        if not (isinstance(value, str) and _DATE.match(value) and _valid_date(value)):
            add(_E, "field-invalid", key, f"{key} {value!r} is not a date (YYYY-MM-DD)", None)
    for key in TIMESTAMP_FIELDS:
        value = meta.get(key)
        if value is None or isinstance(value, dt.date):
            continue
        if not (isinstance(value, str) and _valid_timestamp(value)):
            add(
                _E,
                "field-invalid",
                key,
                f"{key} {value!r} is not an ISO 8601 timestamp",
                "write e.g. '2025-01-10T12:00:00Z'",
            )
    tags = meta.get("tags")
    if tags is not None and not isinstance(tags, list):
        add(_W, "field-invalid", "tags", "tags should be a list", f"write 'tags: [{tags}]'")
    transitions = meta.get("transitions")
    if transitions is not None and not (
        isinstance(transitions, list) and all(isinstance(t, dict) for t in transitions)
    ):
        add(_E, "field-invalid", "transitions", "transitions must be a list of mappings", None)
    return findings


def _valid_date(value: str) -> bool:
    try:
        dt.date.fromisoformat(value)
    except ValueError:
        return False
    return True


def _valid_timestamp(value: str) -> bool:
    text = value.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = re.sub(r"(\.\d{6})\d+", r"\1", text)  # LeanSpec writes nanoseconds
    try:
        dt.datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------------------------
# Spec checks


def spec_findings(specs: Sequence[Spec], config: LeanSpecConfig) -> list[Finding]:
    findings: list[Finding] = list(config.findings)
    for spec in specs:
        page = spec.page
        findings.extend(problem_findings(page))
        findings.extend(lifecycle_findings(page, "spec"))
        findings.extend(_structure_findings(spec, config))
        findings.extend(_link_findings(spec, specs))
    findings.extend(_cycle_findings(specs))
    numbers: dict[int, list[Spec]] = {}
    for spec in specs:
        if spec.number is not None:
            numbers.setdefault(spec.number, []).append(spec)
    for same in numbers.values():
        for spec in same[1:]:
            findings.append(
                Finding(
                    _E,
                    "spec-number-conflict",
                    spec.display,
                    1,
                    1,
                    f"spec number {spec.number} is also used by {same[0].id}",
                    "renumber one of them (LeanSpec's 'check' reports the same conflict)",
                )
            )
    return findings


def _structure_findings(spec: Spec, config: LeanSpecConfig) -> list[Finding]:
    findings: list[Finding] = []
    page = spec.page
    if page.text is None:
        return findings
    offset = page.text[: page.body_start].count("\n")
    digits = config.sequence_digits
    if not re.fullmatch(rf"\d{{{digits}}}-[a-z0-9]+(?:-[a-z0-9]+)*", spec.id):
        findings.append(
            Finding(
                _E,
                "spec-name",
                page.display,
                1,
                1,
                f"spec folder {spec.id!r} is not NNN-kebab-name with {digits} digits",
                "rename it like LeanSpec does, e.g. "
                f"'{(spec.number or 0):0{digits}d}-{_kebab(spec.name) or 'name'}'",
            )
        )
    titles = headings(page.body, 1)
    if len(titles) != 1:
        line = offset + titles[1][0] + 1 if len(titles) > 1 else 1
        findings.append(
            Finding(
                _E,
                "spec-title",
                page.display,
                line,
                1,
                f"a spec has exactly one '# Title'; found {len(titles)}",
                "keep one H1 and make the others '##' sections",
            )
        )
    for index, title in headings(page.body, 2):
        text = sections(page.body).get(title.casefold(), "")
        if not _COMMENT.sub("", text).strip() and title.casefold() != "notes":
            findings.append(
                Finding(
                    _W,
                    "spec-section-empty",
                    page.display,
                    offset + index + 1,
                    1,
                    f"section '{title}' is empty",
                    "write it, or remove the heading",
                )
            )
    tokens = estimate_tokens(page.text)
    if tokens > config.warn_tokens:
        over = tokens > config.max_tokens
        findings.append(
            Finding(
                _E if over else _W,
                "spec-too-long",
                page.display,
                1,
                1,
                f"spec is about {tokens} tokens (warning over {config.warn_tokens}, error over "
                f"{config.max_tokens})",
                "move details into sub-spec files (DESIGN.md, PLAN.md) next to README.md",
            )
        )
    if spec.status == "complete":
        open_items = [text for checked, text in spec.checklist("Plan") if not checked]
        if open_items:
            line = offset + next(
                (i for i, t in headings(page.body, 2) if t.casefold() == "plan"), 0
            )
            findings.append(
                Finding(
                    _E,
                    "spec-incomplete-plan",
                    page.display,
                    line + 1,
                    1,
                    f"spec is complete but {len(open_items)} plan item(s) are unchecked: "
                    + "; ".join(open_items[:3]),
                    "tick the items that are done, or set 'status: in-progress'",
                )
            )
    return findings


def _link_findings(spec: Spec, specs: Sequence[Spec]) -> list[Finding]:
    findings = []
    targets = [("depends_on", item) for item in spec.depends_on]
    if spec.parent is not None:
        targets.append(("parent", spec.parent))
    for key, target in targets:
        if find_spec(specs, target) is None:
            line, column = meta_position(spec.page, key, target)
            findings.append(
                Finding(
                    _E,
                    "spec-link-missing",
                    spec.display,
                    line,
                    column,
                    f"{key} names {target!r}, which is not a spec",
                    "name an existing spec folder, e.g. " + ", ".join(s.id for s in specs[:3]),
                )
            )
        elif find_spec(specs, target) is spec:
            line, column = meta_position(spec.page, key, target)
            findings.append(
                Finding(
                    _E, "spec-cycle", spec.display, line, column, f"{key} names the spec itself"
                )
            )
    return findings


def _cycle_findings(specs: Sequence[Spec]) -> list[Finding]:
    """Cycles through depends_on, and through parent, each reported on every spec in it."""
    findings = []
    for key in ("depends_on", "parent"):
        edges: dict[str, list[str]] = {}
        for spec in specs:
            targets = spec.depends_on if key == "depends_on" else [spec.parent or ""]
            edges[spec.id] = [
                found.id
                for target in targets
                if target and (found := find_spec(specs, target)) and found is not spec
            ]
        reported: set[str] = set()
        for start in edges:
            path = _find_cycle(start, edges)
            if path is None or start in reported:
                continue
            reported.update(path[:-1])
            for spec_id in path[:-1]:
                spec = next(s for s in specs if s.id == spec_id)
                line, column = meta_position(spec.page, key)
                findings.append(
                    Finding(
                        _E,
                        "spec-cycle",
                        spec.display,
                        line,
                        column,
                        f"{key} forms a cycle: {' -> '.join(path)}",
                        f"remove one of these {key} links",
                    )
                )
    return findings


def _find_cycle(start: str, edges: dict[str, list[str]]) -> list[str] | None:
    stack = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in edges.get(node, []):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None


def _kebab(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# --------------------------------------------------------------------------------------------
# Pages


def page_findings(pages: Iterable[Page], specs: Sequence[Spec]) -> list[Finding]:
    """Lifecycle fields of each page, and the spec it names."""
    findings: list[Finding] = []
    for page in pages:
        if page.text is None:
            continue
        findings.extend(lifecycle_findings(page))
        if any(p.check == "frontmatter-invalid" for p in page.problems):
            continue
        named = page.meta.get("spec")
        if named in (None, ""):
            line, column = meta_position(page, "title")
            findings.append(
                Finding(
                    _E,
                    "page-no-spec",
                    page.display,
                    line,
                    column,
                    "page names no spec to govern it",
                    "add 'spec: " + (specs[0].id if specs else "NNN-name") + "'",
                )
            )
        elif find_spec(specs, str(named)) is None:
            line, column = meta_position(page, "spec")
            known = ", ".join(spec.id for spec in specs) or "none"
            findings.append(
                Finding(
                    _E,
                    "page-spec-unknown",
                    page.display,
                    line,
                    column,
                    f"page names spec {named!r}, which does not exist (specs: {known})",
                    "create it with 'kb new spec NAME', or fix the name",
                )
            )
    return findings


# --------------------------------------------------------------------------------------------
# Entry points


@dataclass
class Governance:
    """Everything governance knows about a knowledge base, computed once."""

    root: Path
    docs_root: Path
    config: LeanSpecConfig
    specs: list[Spec]
    pages: list[Page]
    curriculum: Curriculum
    governed: bool
    spec_findings: list[Finding]
    page_findings: list[Finding]
    diagram_findings: list[Finding] = field(default_factory=list)
    section_findings: list[Finding] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return sorted(
            [
                *self.spec_findings,
                *self.page_findings,
                *self.curriculum.findings,
                *self.diagram_findings,
                *self.section_findings,
            ],
            key=Finding.sort_key,
        )

    def spec_of(self, page: Page) -> Spec | None:
        named = page.meta.get("spec")
        return find_spec(self.specs, str(named)) if named not in (None, "") else None

    def diagram_overrides(self) -> dict[str, int]:
        """Each page's required diagram count from its spec's ``acceptance.diagrams``."""
        overrides: dict[str, int] = {}
        for page in self.pages:
            value = diagram_override(self.spec_of(page), page)
            if value is not None:
                overrides[page.rel] = value
        return overrides

    def pages_of(self, spec: Spec) -> list[Page]:
        return [
            page
            for page in self.pages
            if page.meta.get("spec") is not None
            and find_spec(self.specs, str(page.meta.get("spec"))) is spec
        ]


def load_governance(
    root: Path,
    docs_root: Path,
    pages: Sequence[Page] | None = None,
    prefix: str | None = None,
    *,
    walk: bool = True,
    curriculum: Curriculum | None = None,
    findings: bool = True,
) -> Governance:
    """Read config, specs and every page under ``docs_root`` (reusing ``pages`` by ``rel``).

    For a caller that already has its pages and their curriculum (the site build): ``walk=False``
    takes ``pages`` as the whole knowledge base, ``curriculum`` is reused, and ``findings=False``
    skips the checks, whose findings that caller already has from the verifier.
    """
    known = {page.rel: page for page in pages or ()}
    shown = prefix if prefix is not None else _display(docs_root, root)
    if walk:
        all_pages = load_pages(docs_root, shown, reuse=known) if docs_root.is_dir() else []
        loaded = {page.rel for page in all_pages}
        all_pages.extend(page for rel, page in known.items() if rel not in loaded)
    else:
        all_pages = sorted(known.values(), key=lambda page: page.rel)
    governed = is_governed(root)
    config = load_config(root)
    specs = load_specs(config) if governed else []
    governance = Governance(
        root=root,
        docs_root=docs_root,
        config=config,
        specs=specs,
        pages=all_pages,
        curriculum=curriculum if curriculum is not None else build_curriculum(all_pages),
        governed=governed,
        spec_findings=spec_findings(specs, config) if governed and findings else [],
        page_findings=page_findings(all_pages, specs) if governed and findings else [],
    )
    if findings:
        governance.diagram_findings = diagram_findings(all_pages, governance.diagram_overrides())
        governance.section_findings = section_findings(all_pages)
    return governance


def governance_findings(
    root: Path,
    docs_root: Path,
    pages: Sequence[Page],
    knowledge_base: Mapping[str, Page] | None = None,
    *,
    strict: bool = True,
) -> list[Finding]:
    """What the verifier adds to its report for ``pages`` (the pages of this run).

    ``strict``: False for ``governance: lenient`` (`lenient`).

    ``knowledge_base``: every page of the docs by ``rel``, when the caller keeps them (ingest,
    which checks one page at a time): taken instead of walking the docs directory again.

    Page findings (lifecycle, spec, learning paths) are reported for the pages of the run; spec
    findings only when the run covers every page of the docs directory. A knowledge base with
    no specs whose pages say nothing about paths, levels, prerequisites or kinds has nothing to
    check here, and is not walked at all.
    """
    if not has_governance(root, pages):
        return []
    if knowledge_base is None:
        governance = load_governance(root, docs_root, pages)
    else:
        everything = {**knowledge_base, **{page.rel: page for page in pages}}
        governance = load_governance(root, docs_root, list(everything.values()), walk=False)
    displays = {page.display for page in pages}
    findings = [
        f
        for f in [
            *governance.page_findings,
            *governance.curriculum.findings,
            *governance.diagram_findings,
            *governance.section_findings,
        ]
        if f.page in displays
    ]
    if {page.rel for page in pages} >= {page.rel for page in governance.pages}:
        findings.extend(governance.spec_findings)
    return findings if strict else lenient(findings, pages)


def lenient(findings: Iterable[Finding], pages: Iterable[Page]) -> list[Finding]:
    """``findings`` with the page-governance errors of pages that name no spec as warnings
    (`PAGE_GOVERNANCE_CHECKS`): the page has not opted in to the knowledge base's governance."""
    unplaced = {page.display for page in pages if page.meta.get("spec") in (None, "")}
    return [
        replace(finding, severity=Severity.WARNING)
        if finding.severity is Severity.ERROR
        and finding.check in PAGE_GOVERNANCE_CHECKS
        and finding.page in unplaced
        else finding
        for finding in findings
    ]


def validate(root: Path, docs_root: Path) -> list[Finding]:
    """``python -m generator specs validate``: every governance finding, sorted."""
    return load_governance(root, docs_root).findings
