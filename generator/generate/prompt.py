"""Context packs: one file holding everything an LLM needs to write a PR deep dive or a review.

``python -m generator pr OWNER/REPO N --prompt`` (and ``review ... --prompt``) writes, instead of
the page, a Markdown file made of

1. the seed prompt, as shipped in ``generator/prompts/`` (the PR deep dive prompt, or the code
   review prompt);
2. how to write the page for this knowledge base: where it goes, the frontmatter to keep, the
   headings to use (read from the page the ``pr``/``review`` templates draft, so they are written
   down once), the required diagrams, and how to cite code (``path:start-end`` at the head);
3. the pull request's metadata, and its description sanitised as on the page;
4. the changed files with GitHub's counts;
5. the diff, file by file;
6. the full source of each changed Python function or class at the head commit with its line
   numbers, read from the upstream's clone (found with ``ast``, as the page's key functions are);
7. for a review, the pull request's review comments;
8. what was left out, and why.

Sizes are estimates, not tokenizer counts (see :func:`estimate_tokens`). When the pack would be
larger than the budget, whole parts are left out in this order until it fits: the code of the
largest changed definitions first (a class left out makes way for its changed methods, which
are candidates in turn), then the diffs of the largest files, then the description, then the
review comments. The prompt, the conventions, the metadata and the list of changed files are
always kept; when they alone exceed the budget, the pack says so. The same input gives the same
pack, byte for byte.
"""

from __future__ import annotations

import datetime as dt
import heapq
import itertools
import logging
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from generator.generate.pr import (
    ChangedFile,
    KeySymbol,
    Language,
    _head_store,
    _path_cell,
    _quote,
    _state,
    changed_files,
    find_upstream,
    frontmatter_yaml,
    key_symbols,
    pages_web_url,
    place_page,
    render_pr_page,
    write_new_file,
)
from generator.github.client import (
    GitHubClient,
    PullChanges,
    PullRequest,
    ReviewComment,
    diff_from_files,
    diff_hunks,
    diff_parts,
)
from generator.github.sanitize import (
    LinkContext,
    code_span,
    fenced_code,
    inline_text,
    markdown_text,
    safe_url,
)
from generator.kb.diagrams import KIND_DIAGRAMS
from generator.model import Upstream
from generator.refs.extract import extract_headings, scan
from generator.upstream.manifest import Manifest

if TYPE_CHECKING:
    from generator.generate.source import Placement

__all__ = [
    "DEFAULT_BUDGET",
    "PROMPTS",
    "ContextPack",
    "Omission",
    "build_pr_pack",
    "build_review_pack",
    "estimate_tokens",
    "render_pack",
    "write_pack",
]

logger = logging.getLogger(__name__)

PackKind = Literal["pr-deep-dive", "review"]

PROMPTS = Path(__file__).resolve().parent / "prompts"
PROMPT_FILES: dict[PackKind, str] = {"pr-deep-dive": "pr-deep-dive.md", "review": "code-review.md"}
"""The seed prompt each kind of page is written from."""

DEFAULT_BUDGET = 60_000
"""Tokens: room for the answer too in a 128k-token context window."""

PACK_DIRECTORY = Path(".cache") / "prompts"
"""Where packs go by default, under the knowledge base's root: not under docs/, where the site
would try to publish them."""

_COMMANDS: dict[PackKind, str] = {"pr-deep-dive": "pr", "review": "review"}
_LANGUAGES: dict[Language, str] = {"en": "English", "zh": "Chinese"}


def estimate_tokens(text: str) -> int:
    """About how many tokens ``text`` is: a quarter per ASCII character, one per other character.

    Four characters of English or code per token is the usual rule for GPT-style tokenizers; a
    CJK character is about one token. No tokenizer is used: the exact ones need their vocabulary
    downloaded at run time, and the pack must be buildable offline. Leave a margin.
    """
    ascii_characters = len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_characters / 4) + (len(text) - ascii_characters)


# --------------------------------------------------------------------------------------------
# Data


@dataclass(frozen=True)
class Omission:
    """Something the pack does not contain: what, why, and its estimated size (0: unknown).

    ``part`` names what the budget left out (``code``, ``diff``, ``description``, ``comments``);
    it is empty for what is missing for another reason (a binary file, a commit not fetched).
    """

    what: str
    reason: str
    tokens: int = 0
    part: str = ""


@dataclass
class ContextPack:
    """A context pack, its size and what it left out."""

    kind: PackKind
    pull: PullRequest
    upstream: str
    lang: Language
    text: str
    tokens: int
    budget: int
    default_output: Path
    files: tuple[ChangedFile, ...] = ()
    diffs_shown: int = 0
    definitions_shown: int = 0
    definitions_total: int = 0
    omitted: tuple[Omission, ...] = ()
    notes: list[str] = field(default_factory=list)

    @property
    def over_budget(self) -> bool:
        return self.tokens > self.budget


@dataclass
class _Part:
    """A part of the pack that may be left out to fit the budget."""

    group: int  # the order groups are left out in: code, diffs, description, comments
    text: str
    label: str  # what the "Left out" list calls it (short: the list may be long)
    tokens: int
    position: tuple[object, ...]  # where it goes in its section (and the tie-break)
    nested: list[_Part] = field(default_factory=list)  # shown when this one is left out
    count: int = 1  # definitions it shows (code parts)
    name: str = ""  # the definition it shows (code parts)


_CODE, _DIFF, _DESCRIPTION, _COMMENTS = range(4)
_PART_NAMES = ("code", "diff", "description", "comments")
NAMED_OMISSIONS = 100
"""The "Left out" list names this many parts of a kind, then counts the rest: on a large pull
request, naming every left-out part would cost much of what leaving them out saved."""


# --------------------------------------------------------------------------------------------
# Fetching


def build_pr_pack(
    client: GitHubClient,
    manifest: Manifest,
    owner: str,
    repo: str,
    number: int,
    *,
    lang: Language | None = None,
    budget: int = DEFAULT_BUDGET,
    placement: Placement | None = None,
    today: dt.date | None = None,
) -> ContextPack:
    """Fetch pull request ``owner/repo#number`` and make the PR deep dive's context pack."""
    upstream = find_upstream(manifest, owner, repo)
    pull = client.pull(owner, repo, number)
    changes = client.pull_changes(owner, repo, number, pull=pull)
    web_url = pages_web_url(client, upstream)
    draft = render_pr_page(pull, changes, upstream, web_url=web_url, lang=lang, today=today)
    if placement is not None:
        place_page(draft, placement)
    return render_pack(
        "pr-deep-dive",
        pull,
        changes,
        upstream,
        draft_text=draft.text,
        draft_meta=draft.meta,
        page_path=draft.default_output,
        lang=draft.lang,
        web_url=web_url,
        budget=budget,
        symbols=draft.symbols if draft.symbols_source == "ast" else None,
    )


def build_review_pack(
    client: GitHubClient,
    manifest: Manifest,
    owner: str,
    repo: str,
    number: int,
    *,
    lang: Language | None = None,
    budget: int = DEFAULT_BUDGET,
    placement: Placement | None = None,
    today: dt.date | None = None,
) -> ContextPack:
    """Fetch pull request ``owner/repo#number`` and its review comments; make the review's pack."""
    from generator.generate.review import render_review_page

    upstream = find_upstream(manifest, owner, repo)
    pull = client.pull(owner, repo, number)
    changes = client.pull_changes(owner, repo, number, pull=pull)
    comments = client.pull_review_comments(owner, repo, number)
    web_url = pages_web_url(client, upstream)
    # Drafted without the comments: its headings are then the template's alone.
    draft = render_review_page(
        pull, changed_files(changes.files), (), upstream, web_url=web_url, lang=lang, today=today
    )
    if placement is not None:
        place_page(draft, placement)
    return render_pack(
        "review",
        pull,
        changes,
        upstream,
        draft_text=draft.text,
        draft_meta=draft.meta,
        page_path=draft.default_output,
        lang=draft.lang,
        web_url=web_url,
        budget=budget,
        comments=comments,
    )


def write_pack(pack: ContextPack, output: Path, *, force: bool = False) -> Path:
    """Write the pack atomically; refuses to replace an existing file unless ``force``."""
    return write_new_file(output, pack.text.encode("utf-8"), force=force)


# --------------------------------------------------------------------------------------------
# The pack


def render_pack(
    kind: PackKind,
    pull: PullRequest,
    changes: PullChanges,
    upstream: Upstream,
    *,
    draft_text: str,
    draft_meta: Mapping[str, object],
    page_path: Path,
    lang: Language,
    web_url: str = "https://github.com",
    budget: int = DEFAULT_BUDGET,
    comments: Sequence[ReviewComment] = (),
    symbols: Sequence[KeySymbol] | None = None,
) -> ContextPack:
    """Make the pack from fetched data and the drafted page (no network).

    ``symbols`` are the changed definitions when the draft already found them at the head
    (a PR deep dive's Key Functions Index); otherwise they are found here.
    """
    links = LinkContext(web_url=web_url, repo=f"{pull.owner}/{pull.repo}")
    files = changed_files(changes.files)
    notes: list[str] = []
    gaps: list[Omission] = []

    parts: list[_Part] = []
    parts += _diff_parts(changes, files, gaps)
    code, definitions = _code_parts(pull, changes, files, upstream, gaps, notes, symbols)
    parts += code
    if pull.body.strip():
        description = _quote(markdown_text(pull.body, links))
        parts.append(_Part(_DESCRIPTION, description, "the description", 0, ()))
    if comments:
        parts.append(
            _Part(_COMMENTS, _comments_text(comments, links), "the review comments", 0, ())
        )
    for part in _all_parts(parts):
        part.tokens = estimate_tokens(part.text) + 1  # with the line that separates it
    if pull.changed_files > len(files):
        gaps.append(
            Omission(
                f"{pull.changed_files - len(files):,} of the {pull.changed_files:,} changed files",
                "GitHub lists at most 3,000 files of a pull request",
            )
        )

    def assemble(kept: Sequence[_Part], left_out: Sequence[Omission], tokens: int | None) -> str:
        return _assemble(
            kind,
            pull,
            files,
            kept,
            gaps,
            left_out,
            draft_text=draft_text,
            draft_meta=draft_meta,
            page_path=page_path,
            lang=lang,
            links=links,
            budget=budget,
            tokens=tokens,
            has_comments=bool(comments),
        )

    kept, left_out = _fit(parts, budget, lambda k, o: estimate_tokens(assemble(k, o, budget)))
    # The pack states its own size: settle the number (its digits count too).
    text = assemble(kept, left_out, None)
    tokens = estimate_tokens(text)
    for _ in range(3):
        text = assemble(kept, left_out, tokens)
        if estimate_tokens(text) == tokens:
            break
        tokens = estimate_tokens(text)
    if tokens > budget:
        notes.append(
            f"the pack is about {tokens:,} tokens, over the budget of {budget:,}, with everything "
            "that may be left out left out (the prompt, conventions, metadata and file list stay)"
        )
    stem = page_path.name.removesuffix(".md")
    return ContextPack(
        kind=kind,
        pull=pull,
        upstream=upstream.name,
        lang=lang,
        text=text,
        tokens=tokens,
        budget=budget,
        default_output=PACK_DIRECTORY / f"{stem}.md",
        files=files,
        diffs_shown=sum(1 for part in kept if part.group == _DIFF),
        definitions_shown=sum(part.count for part in kept if part.group == _CODE),
        definitions_total=definitions,
        omitted=(*gaps, *left_out),
        notes=notes,
    )


def _all_parts(parts: Sequence[_Part]) -> list[_Part]:
    out: list[_Part] = []
    for part in parts:
        out.append(part)
        out.extend(_all_parts(part.nested))
    return out


def _fit(
    parts: Sequence[_Part],
    budget: int,
    measure: Callable[[list[_Part], list[Omission]], int],
) -> tuple[list[_Part], list[Omission]]:
    """The parts kept and those left out (in the order they were), to fit ``budget``.

    Sizes are added and taken away part by part, which is cheap but approximate (each part's
    estimate is rounded); the assembled pack is then measured, and more is left out while it
    is still over the budget.
    """
    kept = {id(part): part for part in parts}
    left_out: list[Omission] = []
    total = measure(list(kept.values()), left_out)
    if total <= budget:
        return list(kept.values()), left_out
    # Candidates by group, largest first; ties by position, so the result is deterministic.
    queue: list[tuple[int, int, tuple[str, ...], int, _Part]] = []
    listed: dict[str, int] = {}  # how many of each kind the list names
    sequence = itertools.count()

    def push(part: _Part) -> None:
        heapq.heappush(queue, (part.group, -part.tokens, _key(part.position), next(sequence), part))

    for part in parts:
        push(part)
    while queue:
        while queue and total > budget:
            part = heapq.heappop(queue)[-1]
            del kept[id(part)]
            omission = Omission(part.label, "over the budget", part.tokens, _PART_NAMES[part.group])
            named = listed.get(omission.part, 0)
            if not named:  # the first of its kind starts a line of the list
                total += estimate_tokens(_left_out_lines([omission])[0]) + 1
            elif named < NAMED_OMISSIONS:
                total += estimate_tokens(f"{part.label}, ")
            listed[omission.part] = named + 1
            left_out.append(omission)
            total -= part.tokens
            for inner in part.nested:
                kept[id(inner)] = inner
                total += inner.tokens
                push(inner)
        total = measure(list(kept.values()), left_out)
        if total <= budget:
            break
    return list(kept.values()), left_out


def _key(position: tuple[object, ...]) -> tuple[str, ...]:
    return tuple(f"{value:>12}" if isinstance(value, int) else str(value) for value in position)


# --------------------------------------------------------------------------------------------
# Diffs


def _diff_parts(
    changes: PullChanges, files: Sequence[ChangedFile], gaps: list[Omission]
) -> list[_Part]:
    blocks = {name: part.rstrip("\n") for name, part in diff_parts(changes.diff).items()}
    pull_files = {f.filename: f for f in changes.files}
    parts = []
    for index, f in enumerate(files):
        block = blocks.get(f.path)
        if block is None and f.path in pull_files:
            block = diff_from_files((pull_files[f.path],)).rstrip("\n")
        if f.binary:
            gaps.append(Omission(f"the content of {code_span(f.path)}", "a binary file"))
        heading = f"### {_path_cell(f.path)} ({_change(f)}, +{f.additions} -{f.deletions})"
        text = f"{heading}\n\n{fenced_code(block or '', 'diff')}"
        parts.append(_Part(_DIFF, text, code_span(f.path), 0, (f.path, index)))
    return parts


def _change(f: ChangedFile) -> str:
    if f.category == "renamed":
        return f"renamed from {code_span(f.previous_path or '')}"
    return f.category


# --------------------------------------------------------------------------------------------
# Changed code at the head


def _code_parts(
    pull: PullRequest,
    changes: PullChanges,
    files: Sequence[ChangedFile],
    upstream: Upstream,
    gaps: list[Omission],
    notes: list[str],
    known: Sequence[KeySymbol] | None,
) -> tuple[list[_Part], int]:
    """One part per outermost changed definition (its changed inner ones nested), and how many
    changed definitions there are."""
    if not any(f.is_python and f.category != "deleted" for f in files):
        return [], 0
    patches = diff_hunks(changes.diff)
    for f in changes.files:
        if f.patch is not None:
            patches[f.filename] = f.patch
    store = _head_store(upstream, pull.head_sha)
    if store is None:
        if upstream.clone_dir is None or not upstream.clone_dir.exists():
            reason = (
                f"{upstream.name} has no clone; run `kb upstreams fetch "
                f"{upstream.name}` and this again"
            )
        else:
            reason = (
                f"the head commit {pull.head_sha[:12]} is not in the clone of {upstream.name}; "
                f"fetch it (`git -C {upstream.clone_dir} fetch origin "
                f"pull/{pull.number}/head`) and run this again"
            )
        gaps.append(Omission("the code of the changed definitions", reason))
        notes.append(f"no changed code in the pack: {reason}")
        return [], 0
    by_path: dict[str, list[KeySymbol]] = {}
    try:
        symbols = (
            known if known is not None else key_symbols(files, patches, store, pull.head_sha)[0]
        )
        for symbol in symbols:
            if symbol.extent is not None:
                by_path.setdefault(symbol.path, []).append(symbol)
        tree = store.tree(pull.head_sha)
        sources = {path: store.blob(tree[path].sha).lines for path in by_path if path in tree}
    finally:
        store.close()
    parts = []
    for path, lines in sources.items():
        located = sorted(
            by_path[path],
            key=lambda s: (s.extent[0], -s.extent[1], s.name),  # type: ignore[index]
        )
        parts += _nest(path, lines, located)
    for path in dict.fromkeys(s.path for s in symbols if s.extent is None):
        gaps.append(
            Omission(
                f"the code of the changed definitions of {code_span(path)}",
                "the file does not parse as Python at the head; see its diff",
            )
        )
    return parts, len(symbols)


def _nest(path: str, lines: list[str], symbols: Sequence[KeySymbol]) -> list[_Part]:
    """Parts for ``symbols`` (sorted by start, outer first): each inside the closest enclosing
    one, whose part shows it until that part is left out."""
    roots: list[_Part] = []
    stack: list[tuple[KeySymbol, _Part]] = []
    for symbol in symbols:
        start, end = symbol.extent  # type: ignore[misc]
        while stack and stack[-1][0].extent[1] < end:  # type: ignore[index]
            stack.pop()
        part = _Part(
            _CODE,
            "",
            f"{code_span(symbol.label)} ({code_span(f'{path}:{start}-{end}')})",
            0,
            (path, start),
            name=symbol.label,
        )
        part.text = _code_text(path, lines, symbol)
        (stack[-1][1].nested if stack else roots).append(part)
        stack.append((symbol, part))
    for part in _all_parts(roots):
        part.count = 1 + len(_all_parts(part.nested))
        if part.nested:
            inner = ", ".join(
                f"{code_span(n.name)} (line {n.position[1]})" for n in _all_parts(part.nested)
            )
            part.text = part.text.replace("\n\n", f"\n\nAlso changed inside it: {inner}.\n\n", 1)
    return roots


def _code_text(path: str, lines: list[str], symbol: KeySymbol) -> str:
    start, end = symbol.extent  # type: ignore[misc]
    width = len(str(end))
    numbered = "\n".join(f"{n:>{width}} | {lines[n - 1]}" for n in range(start, end + 1))
    heading = (
        f"### {code_span(symbol.label)}: {code_span(f'{path}:{start}-{end}')} ({symbol.change})"
    )
    return f"{heading}\n\n{fenced_code(numbered, 'python')}"


# --------------------------------------------------------------------------------------------
# Review comments


def _comments_text(comments: Sequence[ReviewComment], links: LinkContext) -> str:
    from generator.generate.review import _comment_view

    out = []
    for comment in comments:
        view = _comment_view(comment, links)
        reply = " (reply)" if view.reply else ""
        out.append(f"**{view.where}**{reply} — {view.author}:\n\n{view.body}")
    return "\n\n".join(out)


# --------------------------------------------------------------------------------------------
# Assembling


def _prompt(kind: PackKind) -> str:
    return (PROMPTS / PROMPT_FILES[kind]).read_text("utf-8").rstrip("\n")


def _omission_line(omission: Omission) -> str:
    size = f", about {omission.tokens:,} tokens" if omission.tokens else ""
    return f"- {omission.what}: {omission.reason}{size}"


def _left_out_lines(left_out: Sequence[Omission]) -> list[str]:
    """What the budget left out, one line per kind of part, each in the order it was left out."""
    lines = []
    for name in _PART_NAMES:
        group = [o for o in left_out if o.part == name]
        if not group:
            continue
        tokens = sum(o.tokens for o in group)
        size = f"about {tokens:,} tokens"
        if name == "code":
            head = f"the code of {len(group)} changed definition{'s' * (len(group) != 1)}"
        elif name == "diff":
            head = f"the diffs of {len(group)} file{'s' * (len(group) != 1)}"
        else:
            lines.append(f"- {group[0].what} ({size})")
            continue
        named = ", ".join(o.what for o in group[:NAMED_OMISSIONS])
        more = len(group) - NAMED_OMISSIONS
        rest = f", and {more:,} more" if more > 0 else ""
        lines.append(f"- {head} ({size}): {named}{rest}")
    return lines


def _assemble(
    kind: PackKind,
    pull: PullRequest,
    files: Sequence[ChangedFile],
    kept: Sequence[_Part],
    gaps: Sequence[Omission],
    left_out: Sequence[Omission],
    *,
    draft_text: str,
    draft_meta: Mapping[str, object],
    page_path: Path,
    lang: Language,
    links: LinkContext,
    budget: int,
    tokens: int | None,
    has_comments: bool,
) -> str:
    repository = f"{pull.owner}/{pull.repo}"
    command = f"kb {_COMMANDS[kind]} {repository} {pull.number} --prompt"
    size = f"about {tokens:,} tokens" if tokens is not None else "about ? tokens"
    out = [
        _prompt(kind),
        "",
        "---",
        "",
        f"# Context: pull request {repository}#{pull.number}",
        "",
        f"`{command}` wrote this context for the prompt above: the pull request's metadata, "
        "description, diff and changed code at the head commit are below, so there is nothing "
        f"to fetch (this answers the prompt's `curl` commands). The pull request is in "
        f"{repository}; read that wherever the prompt names another repository. Size: {size} "
        "(estimated: a quarter of a token per ASCII character, one per other character), "
        f"budget {budget:,}.",
        "",
        *_conventions(kind, pull, draft_text, draft_meta, page_path, lang),
        *_metadata(pull, files, links),
    ]
    by_group: dict[int, list[_Part]] = {}
    for part in kept:
        by_group.setdefault(part.group, []).append(part)

    def section(group: int) -> list[_Part]:
        return sorted(by_group.get(group, []), key=lambda part: _key(part.position))

    if pull.body.strip():
        out += ["## Description (quoted from GitHub)", ""]
        for part in section(_DESCRIPTION):
            out += [part.text, ""]
        if not section(_DESCRIPTION):
            out += ["Left out (see the end).", ""]
    out += _file_table(files)
    out += ["## Diff", ""]
    for part in section(_DIFF):
        out += [part.text]
    if not files:
        out += ["The pull request changes no file.", ""]
    out += ["## Changed code at the head commit", ""]
    out += [
        f"The full source of each Python function and class the diff touches, at "
        f"`{pull.head_sha}`, with its line numbers (cite these).",
        "",
    ]
    for part in section(_CODE):
        out += [part.text]
    if kind == "review":
        out += ["## Review comments on GitHub", ""]
        for part in section(_COMMENTS):
            out += [part.text, ""]
        if not has_comments:
            out += ["None yet.", ""]
        elif not section(_COMMENTS):
            out += ["Left out (see the end).", ""]
    out += ["## Left out", ""]
    if not gaps and not left_out:
        out += ["Nothing: the pack holds the whole pull request.", ""]
    out += [_omission_line(omission) for omission in gaps]
    if left_out:
        out += [
            *([""] if gaps else []),
            f"To fit the budget of {budget:,} tokens, these were left out, in this order: the "
            "code of the largest changed definitions first, then the diffs of the largest files, "
            "then the description and the review comments (the prompt, the conventions, the "
            "metadata and the list of changed files are always kept).",
            "",
            *_left_out_lines(left_out),
        ]
    return "\n".join(out).rstrip("\n") + "\n"


def _conventions(
    kind: PackKind,
    pull: PullRequest,
    draft_text: str,
    draft_meta: Mapping[str, object],
    page_path: Path,
    lang: Language,
) -> list[str]:
    required = {r.section: r for r in KIND_DIAGRAMS.get(kind, ())}
    headings = []
    for heading in extract_headings(scan(draft_text)):
        line = f"- {code_span('#' * heading.level + ' ' + heading.text)}"
        number = re.match(r"(\d+(?:\.\d+)*)\.?\s", heading.text)
        requirement = required.get(number[1]) if number else None
        if requirement is not None:
            line += f": {requirement.wanted} ({requirement.name})"
        headings.append(line)
    out = [
        "## How to write the page for this knowledge base",
        "",
        f"Write one Markdown page, `{page_path.as_posix()}`, in {_LANGUAGES[lang]}. It is "
        "checked before it is published:",
        "",
        "1. **Frontmatter.** Start the page with exactly this frontmatter. `pin` is the pull "
        "request's head commit, which every code reference is checked against; keep "
        "`status: draft` until someone has checked the page.",
        "",
        fenced_code(f"---\n{frontmatter_yaml(draft_meta)}---", "yaml").rstrip("\n"),
        "",
        "2. **Sections.** Use these headings, in this order and with these names (the knowledge "
        "base finds the sections, and the diagrams they require, by them). A section that does "
        "not apply says `N/A - reason`.",
        "",
        *headings,
        "",
        "3. **Code references.** Cite code as `path:start-end` (or `path:line`) in backticks, "
        f"the path from the repository root and the lines those of the head commit "
        f"`{pull.head_sha}`: the numbers in the code below, and on the `+` side of the diff. "
        "A range past the end of the file, or one that does not contain the function named "
        "next to it, is an error. Files the pull request deletes, and the old names of "
        "renamed files, do not exist at the head: name them without a line.",
    ]
    if kind == "review":
        out += [
            "",
            "4. **Findings.** Under each severity heading, one list item per finding, starting "
            "with its severity (`**[P1]**`), then the file and line as a code span "
            "(`path:line`), the issue, and indented **Problem** and **Fix** lines; under a "
            "severity without findings, keep `None.` as the text. Each finding that cites a "
            "line the diff adds or changes becomes an inline comment on GitHub "
            f"(`kb review --export-review-json {page_path.as_posix()}`).",
        ]
    out += [
        "",
        f"{'5' if kind == 'review' else '4'}. **Markdown only.** Diagrams are ```` ```mermaid "
        "```` fences; no raw HTML.",
        "",
    ]
    return out


def _metadata(pull: PullRequest, files: Sequence[ChangedFile], links: LinkContext) -> list[str]:
    author = inline_text(f"@{pull.author}", links) if pull.author else "—"
    link = safe_url(pull.html_url, links) or ""
    return [
        "## Pull request",
        "",
        f"| PR | {pull.owner}/{pull.repo}#{pull.number} |",
        "|---|---|",
        f"| Title | {inline_text(pull.title, links) or '—'} |",
        f"| Author | {author} |",
        f"| State | {_state(pull, 'en')} |",
        f"| Created | {inline_text(pull.created_at or '') or '—'} |",
        f"| Merged | {inline_text(pull.merged_at or '') or '—'} |",
        f"| Base | {code_span(pull.base_ref) or '—'} `{pull.base_sha}` |",
        f"| Head | {code_span(pull.head_ref) or '—'} `{pull.head_sha}` |",
        f"| Size | {_count(pull.changed_files or len(files), 'file')}, +{pull.additions} / "
        f"-{pull.deletions}, {_count(pull.commits, 'commit')} |",
        f"| Link | {code_span(link) or '—'} |",
        "",
    ]


def _file_table(files: Sequence[ChangedFile]) -> list[str]:
    out = ["## Changed files", ""]
    if not files:
        return [*out, "None.", ""]
    out += ["| Change | File | + | - |", "|---|---|---|---|"]
    for f in files:
        change = _change(f).replace("|", "\\|")
        if f.binary:
            change += ", binary"
        out.append(f"| {change} | {_path_cell(f.path)} | {f.additions} | {f.deletions} |")
    return [*out, ""]


def _count(number: int, word: str) -> str:
    return f"{number} {word}{'' if number == 1 else 's'}"
