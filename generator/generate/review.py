"""Code review pages drafted from a GitHub pull request (seed 002), and their export.

:func:`build_review_page` fetches the pull request, its files and its review comments and drafts a
review page: frontmatter pinned to the PR's head commit (base recorded), a summary with
what/why/how placeholders, the changed test files, one section per severity (P0 to P3, each
``None.`` until the reviewer fills it in), questions for the author, and the PR's GitHub review
comments grouped by file, each with its ``path:line`` reference at the head commit.

:func:`export_review` turns a finished review page into the JSON body of GitHub's "create a
review for a pull request" call (``commit_id``, ``event``, ``body``, ``comments`` with ``path``,
``line``, ``side`` and ``body``). It is written to a file; nothing is ever posted.

Everything taken from GitHub (titles, bodies, comments, file names, logins) is untrusted and goes
through :mod:`generator.github.sanitize`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from generator.generate.pr import (
    ChangedFile,
    Language,
    PrError,
    _environment,
    _file_slug,
    _path_cell,
    _quote,
    _state,
    changed_files,
    detect_language,
    find_upstream,
    frontmatter_yaml,
    pages_web_url,
    parse_repository,
    refuse_existing,
    set_frontmatter,
    touched_lines,
    write_new_file,
)
from generator.github.client import GitHubClient, PullRequest, ReviewComment, diff_hunks
from generator.github.sanitize import (
    LinkContext,
    code_span,
    inline_text,
    markdown_text,
    one_line,
    safe_url,
)
from generator.kb.pages import read_page
from generator.model import Upstream
from generator.refs.extract import extract_headings, extract_refs, scan
from generator.upstream.gitstore import GitStore, RepositoryUnavailable
from generator.upstream.manifest import Manifest

__all__ = [
    "SEVERITIES",
    "ExportError",
    "ReviewPage",
    "build_review_page",
    "is_test_file",
    "parse_repository",
    "render_review_page",
    "review_json",
    "write_review_json",
    "write_review_page",
]

logger = logging.getLogger(__name__)

SEVERITIES = ("P0", "P1", "P2", "P3")
"""The seed's severities, most severe first; each is a ``### Pn — ...`` section of the page."""

_SEVERITY_NAMES: dict[Language, dict[str, str]] = {
    "en": {"P0": "Critical", "P1": "Important", "P2": "Suggestion", "P3": "Nitpick"},
    "zh": {"P0": "严重", "P1": "重要", "P2": "建议", "P3": "细节"},
}


class ExportError(PrError):
    """A review page that cannot be exported (not a review, no pin, no findings section)."""


@dataclass
class ReviewPage:
    """A drafted review page: frontmatter fields, the Markdown text and its default place."""

    pull: PullRequest
    upstream: str
    lang: Language
    meta: dict[str, object]
    text: str
    default_output: Path
    files: tuple[ChangedFile, ...] = ()
    test_files: tuple[ChangedFile, ...] = ()
    comments: tuple[ReviewComment, ...] = ()
    notes: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# Drafting


_TEST_FILE = re.compile(
    r"(?:^|/)(?:tests?|testing|__tests__)/|(?:^|/)test_[^/]*$|_tests?\.[A-Za-z]+$|\.(?:test|spec)\.[A-Za-z]+$"
)


def is_test_file(path: str) -> bool:
    """Whether a changed file looks like a test (a ``tests/`` directory, ``test_*.py``, ...)."""
    return _TEST_FILE.search(path) is not None


@dataclass(frozen=True)
class _CommentView:
    where: str  # a ``path:line`` reference at the head, or a plain description
    author: str
    body: str
    reply: bool


def _comment_view(comment: ReviewComment, links: LinkContext) -> _CommentView:
    if comment.line is not None and comment.side != "LEFT":
        lines = (
            f"{comment.start_line}-{comment.line}"
            if comment.start_line is not None and comment.start_line < comment.line
            else str(comment.line)
        )
        where = code_span(f"{comment.path}:{lines}")
    elif comment.line is not None:
        where = f"base line {comment.line}"
    else:
        old = comment.original_line
        where = f"outdated (was line {old})" if old is not None else "outdated"
    author = inline_text(f"@{comment.author}", links) if comment.author else "—"
    text = markdown_text(comment.body, links) if comment.body.strip() else "(empty)"
    return _CommentView(where, author, _quote(text), comment.in_reply_to_id is not None)


def _frontmatter_title(pull: PullRequest, lang: Language) -> str:
    title = one_line(pull.title).replace("<", "‹").replace(">", "›").replace("`", "'")
    title = title[:150] or f"#{pull.number}"
    if lang == "zh":
        return f"PR #{pull.number} 代码评审：{title}"
    return f"PR #{pull.number} review: {title}"


def build_review_page(
    client: GitHubClient,
    manifest: Manifest,
    owner: str,
    repo: str,
    number: int,
    *,
    lang: Language | None = None,
    today: dt.date | None = None,
) -> ReviewPage:
    """Fetch pull request ``owner/repo#number`` and its review comments; draft the review page."""
    upstream = find_upstream(manifest, owner, repo)
    pull = client.pull(owner, repo, number)
    files = client.pull_files(owner, repo, number)
    comments = client.pull_review_comments(owner, repo, number)
    return render_review_page(
        pull,
        changed_files(files),
        comments,
        upstream,
        web_url=pages_web_url(client, upstream),
        lang=lang,
        today=today,
    )


def depend_on_deep_dives(page: ReviewPage, deep_dives: Sequence[str]) -> None:
    """Make the review depend on the deep dives of its pull request (docs-relative paths), so
    that learning paths put it after them, as ``ingest`` does for a review it imports."""
    if deep_dives:
        set_frontmatter(page, {"depends_on": list(deep_dives)})


def render_review_page(
    pull: PullRequest,
    files: Sequence[ChangedFile],
    comments: Sequence[ReviewComment],
    upstream: Upstream,
    *,
    web_url: str = "https://github.com",
    lang: Language | None = None,
    today: dt.date | None = None,
) -> ReviewPage:
    """Draft the page from fetched data (no network)."""
    lang = lang or detect_language(pull.title, pull.body)
    links = LinkContext(web_url=web_url, repo=f"{pull.owner}/{pull.repo}")
    meta: dict[str, object] = {
        "title": _frontmatter_title(pull, lang),
        "kind": "review",
        "lang": lang,
        "status": "draft",
        "created": today or dt.date.today(),
        "pr": pull.number,
        "upstream": upstream.name,
        "pin": pull.head_sha,
        "base": pull.base_sha,
        "tags": ["review", upstream.name],
    }
    frontmatter = frontmatter_yaml(meta)
    tests = tuple(f for f in files if is_test_file(f.path))
    test_rows = [
        (
            inline_text(f.path, links) if f.category == "deleted" else _path_cell(f.path),
            f.category,
            f"+{f.additions}, -{f.deletions}",
        )
        for f in tests
    ]
    grouped: dict[str, list[_CommentView]] = {}
    for comment in comments:
        grouped.setdefault(comment.path, []).append(_comment_view(comment, links))
    comment_groups = [(code_span(path) or "—", views) for path, views in grouped.items()]
    names = _SEVERITY_NAMES[lang]
    context = {
        "frontmatter": frontmatter,
        "number": pull.number,
        "repository": f"{pull.owner}/{pull.repo}",
        "title": inline_text(pull.title, links) or f"#{pull.number}",
        "author": inline_text(f"@{pull.author}", links) if pull.author else "—",
        "state": _state(pull, lang),
        "base_ref": code_span(pull.base_ref) or "—",
        "head_ref": code_span(pull.head_ref) or "—",
        "base_sha": pull.base_sha,
        "head_sha": pull.head_sha,
        "html_url": safe_url(pull.html_url, links) or "",
        "changed_files": pull.changed_files or len(files),
        "additions": pull.additions,
        "deletions": pull.deletions,
        "body": _quote(markdown_text(pull.body, links)) if pull.body.strip() else "",
        "test_rows": test_rows,
        "severities": [(s, names[s]) for s in SEVERITIES],
        "comment_groups": comment_groups,
        "comment_count": len(comments),
    }
    text = _environment().get_template(f"review.{lang}.md.j2").render(context)
    slug = _file_slug(pull.title)
    name = f"review-pr-{pull.number}-{slug}" if slug else f"review-pr-{pull.number}"
    if lang == "zh":
        name += ".zh"
    return ReviewPage(
        pull=pull,
        upstream=upstream.name,
        lang=lang,
        meta=meta,
        text=text,
        default_output=Path("docs") / "analysis" / f"{name}.md",
        files=tuple(files),
        test_files=tests,
        comments=tuple(comments),
    )


def write_review_page(page: ReviewPage, output: Path, *, force: bool = False) -> Path:
    """Write the page atomically; refuses to replace an existing file unless ``force``."""
    return write_new_file(output, page.text.encode("utf-8"), force=force)


# --------------------------------------------------------------------------------------------
# Export


_SEVERITY_HEADING = re.compile(r"^(P[0-3])\b")
_HEADING_SEVERITIES = re.compile(r"\bP([0-3])\b")
_FINDINGS_HEADING = re.compile(
    r"critical issues|suggestions|nitpicks|严重问题|改进建议|建议|细节|吹毛求疵", re.IGNORECASE
)
_MARKER = re.compile(r"^\s*(?:\*\*)?\[?(P[0-3])\]?(?:\*\*)?\s*[:\-—]?\s*")
_QUESTIONS = re.compile(r"^(?:\d+\.\s+)?(?:Questions|向作者提问)")
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


def _sections(body: str) -> list[tuple[int, str, int, list[str]]]:
    """(level, heading, first line, lines) per heading outside fenced code; lines 1-based."""
    lines = body.split("\n")
    headings = extract_headings(scan(body))
    sections: list[tuple[int, str, int, list[str]]] = [
        (0, "", 1, lines[: headings[0].line - 1] if headings else lines)
    ]
    for index, heading in enumerate(headings):
        end = headings[index + 1].line - 1 if index + 1 < len(headings) else len(lines)
        sections.append((heading.level, heading.text, heading.line + 1, lines[heading.line : end]))
    return sections


def _items(lines: Sequence[str], first_line: int = 1) -> list[tuple[int, str]]:
    """The top-level list items of a section with their line, continuation lines dedented."""
    items: list[tuple[int, list[str]]] = []
    open_item = False
    for number, line in enumerate(lines, first_line):
        if _ITEM.match(line):
            items.append((number, [_ITEM.sub("", line, count=1)]))
            open_item = True
        elif open_item and (line.startswith((" ", "\t")) or not line.strip()):
            items[-1][1].append(line)
        elif line.strip():
            open_item = False  # a paragraph ends the item
    out = []
    for number, item in items:
        rest = [line.strip("\n") for line in item[1:]]
        indent = min((len(x) - len(x.lstrip()) for x in rest if x.strip()), default=0)
        text = "\n".join([item[0], *(x[indent:] for x in rest)]).strip()
        if text and not text.startswith("TODO(author)"):
            out.append((number, text))
    return out


def _findings_section(heading: str) -> tuple[bool, str | None]:
    """Whether a heading opens findings, and the one severity it implies (``None``: several).

    Both layouts count: this project's ``### P1 — Important`` and the seed's
    ``### 2. Critical Issues [P0/P1]``, ``### 3. Suggestions [P2]``, ``### 4. Nitpicks [P3]``.
    """
    own = _SEVERITY_HEADING.match(heading)
    if own is not None:
        return True, own[1]
    named = {f"P{n}" for n in _HEADING_SEVERITIES.findall(heading)}
    if named or _FINDINGS_HEADING.search(heading):
        return True, named.pop() if len(named) == 1 else None
    return False, None


@dataclass(frozen=True)
class Finding:
    """One item of a findings section: its severity, its text and its first ``path:line``."""

    severity: str | None
    """``P0`` to ``P3``: the item's own marker, else its section's; ``None`` when neither says."""
    text: str
    path: str | None = None
    line: int | None = None
    start_line: int | None = None
    page_line: int = 0
    """Line of the item in the text it was read from (1-based)."""

    def comment_body(self) -> str:
        """The item's text, starting with its severity (``**[P1]** ...``)."""
        return f"**[{self.severity}]** {_MARKER.sub('', self.text, count=1)}"


def findings(body: str) -> list[Finding]:
    """The findings of a review page's severity sections, in page order."""
    found: list[Finding] = []
    for _level, heading, first_line, lines in _sections(body):
        is_findings, section_severity = _findings_section(heading)
        if not is_findings:
            continue
        for number, text in _items(lines, first_line):
            marker = _MARKER.match(text)
            severity = marker[1] if marker else section_severity
            ref = next((r for r in extract_refs(scan(text), "") if r.start is not None), None)
            if ref is None or ref.end is None or ref.start is None:
                found.append(Finding(severity, text, page_line=number))
                continue
            start, end = ref.start, ref.end
            found.append(
                Finding(
                    severity,
                    text,
                    path=ref.path,
                    line=end,
                    start_line=start if start < end else None,
                    page_line=number,
                )
            )
    return found


def changed_lines(upstream: Upstream, base: str, head: str) -> dict[str, set[int]]:
    """Lines each file has at ``head`` that the change ``base..head`` added or modified.

    Read from the upstream's clone (``git diff`` with rename detection); raises `PrError` when
    the clone or either commit is missing.
    """
    try:
        if upstream.clone_dir is None:
            raise RepositoryUnavailable(upstream.name)
        store = GitStore(upstream.clone_dir)
    except RepositoryUnavailable:
        raise PrError(
            f"no clone of '{upstream.name}' to read the change from; run: kb upstreams fetch"
        ) from None
    try:
        diff = store.repo.git.diff(base, head, "-M", "-U0", "--no-color", "--no-ext-diff")
    except git.GitCommandError as error:
        raise PrError(
            f"cannot diff {base[:12]}..{head[:12]} in the clone of '{upstream.name}' "
            f"({error.stderr.strip() or error}); fetch both commits into it"
        ) from error
    finally:
        store.close()
    return {path: touched_lines(patch)[0] for path, patch in diff_hunks(diff).items()}


def _spans(lines: set[int], most: int = 8) -> str:
    """``3-5, 9, 12-14``: the line numbers as runs, at most ``most`` of them named."""
    runs: list[list[int]] = []
    for number in sorted(lines):
        if runs and number == runs[-1][1] + 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    shown = [str(a) if a == b else f"{a}-{b}" for a, b in runs[:most]]
    more = f" and {len(runs) - most} more" if len(runs) > most else ""
    return ", ".join(shown) + more


def item_problems(
    items: Sequence[Finding], changed: dict[str, set[int]] | None
) -> list[tuple[Finding, str, str]]:
    """``(item, check, message)`` for each item without a severity, a ``file:line``, or whose
    lines the pull request does not change (checked when ``changed`` is known)."""
    problems: list[tuple[Finding, str, str]] = []
    for item in items:
        first = item.text.splitlines()[0][:80]
        if item.severity is None:
            problems.append(
                (item, "review-item-severity", f"finding has no severity (P0 to P3): '{first}'")
            )
        if item.path is None or item.line is None:
            problems.append(
                (item, "review-item-ref", f"finding cites no file:line of the change: '{first}'")
            )
            continue
        if changed is None:
            continue
        cited = set(range(item.start_line or item.line, item.line + 1))
        matches = [p for p in changed if p == item.path or p.endswith("/" + item.path)]
        if not matches:
            problems.append(
                (
                    item,
                    "review-line-unchanged",
                    f"{item.path} is not among the files the PR changes",
                )
            )
        elif not any(cited & changed[path] for path in matches):
            spans = "; ".join(f"{path}: {_spans(changed[path]) or 'none'}" for path in matches)
            where = (
                f"{item.path}:{item.start_line}-{item.line}"
                if item.start_line
                else (f"{item.path}:{item.line}")
            )
            problems.append(
                (
                    item,
                    "review-line-unchanged",
                    f"{where} is not a line the PR adds or changes (changed lines at the head: "
                    f"{spans})",
                )
            )
    return problems


def _questions(body: str) -> list[str]:
    for _level, heading, _first, lines in _sections(body):
        if _QUESTIONS.match(heading):
            return [text for _number, text in _items(lines)]
    return []


def review_json(page_path: Path, manifest: Manifest | None = None) -> dict[str, Any]:
    """The JSON body of GitHub's "create a review" call for a finished review page.

    Each finding citing a ``path:line`` becomes an inline comment on the right (head) side whose
    body starts with its severity; the other findings and the questions for the author make up
    the review's body. The review is pinned to the page's ``pin`` (the PR's head commit).

    Raises `ExportError` for a finding without a severity and, when ``manifest`` has a clone
    holding the page's ``base`` and ``pin``, for a comment on a line the PR does not change
    (GitHub refuses those).
    """
    page = read_page(page_path)
    meta = page.meta or {}
    if meta.get("kind") != "review":
        raise ExportError(f"{page_path} is not a review page (kind: {meta.get('kind')!r})")
    pin = str(meta.get("pin") or "")
    if not re.fullmatch(r"[0-9a-f]{40}", pin):
        raise ExportError(f"{page_path} has no pin (the PR's head commit) in its frontmatter")
    body_text = page.body.replace("\r\n", "\n")
    items = findings(body_text)
    changed = _page_changes(meta, pin, manifest)
    body_line = page.text.count("\n", 0, page.body_start) if page.text else 0
    problems = [
        f"{page_path}:{item.page_line + body_line}: {message}"
        for item, check, message in item_problems(items, changed)
        if check != "review-item-ref"  # a finding without a line goes in the review's body
    ]
    if problems:
        raise ExportError("cannot export the review:\n  " + "\n  ".join(problems))
    comments: list[dict[str, Any]] = []
    general: list[str] = []
    for item in items:
        if item.path is None or item.line is None:
            general.append(f"- {item.comment_body()}")
            continue
        comment: dict[str, Any] = {"path": item.path, "line": item.line, "side": "RIGHT"}
        if item.start_line is not None:
            comment["start_line"] = item.start_line
            comment["start_side"] = "RIGHT"
        comment["body"] = item.comment_body()
        comments.append(comment)
    parts = []
    if general:
        parts.append("\n".join(general))
    questions = _questions(body_text)
    if questions:
        parts.append("Questions for the author:\n\n" + "\n".join(f"- {q}" for q in questions))
    if not parts:
        parts.append(
            f"{len(comments)} inline comment(s)." if comments else "No findings. Looks good."
        )
    return {"commit_id": pin, "event": "COMMENT", "body": "\n\n".join(parts), "comments": comments}


def _page_changes(
    meta: dict[str, Any], pin: str, manifest: Manifest | None
) -> dict[str, set[int]] | None:
    """The PR's changed lines when the page names its base and the clone has both commits."""
    base, name = str(meta.get("base") or ""), meta.get("upstream")
    if (
        manifest is None
        or not re.fullmatch(r"[0-9a-f]{40}", base)
        or name not in manifest.upstreams
    ):
        return None
    try:
        return changed_lines(manifest.upstreams[name], base, pin)
    except PrError as error:
        logger.info("changed lines not checked: %s", error)
        return None


def write_review_json(
    page_path: Path, output: Path, *, force: bool = False
) -> tuple[Path, dict[str, Any]]:
    """Export ``page_path`` to ``output`` atomically; refuses to replace a file unless ``force``."""
    refuse_existing(output, force)  # before reading anything, as the CLI promises
    if not page_path.is_file():
        raise ExportError(f"{page_path} is not a file")
    payload = review_json(page_path, _manifest_near(page_path))
    data = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return write_new_file(output, data.encode("utf-8"), force=force), payload


def _manifest_near(page_path: Path) -> Manifest | None:
    """The knowledge base's manifest above the page, if it loads; else no line check."""
    from generator.upstream.manifest import ConfigError, find_manifest, load_manifest

    found = find_manifest(page_path.resolve().parent)
    if found is None:
        return None
    try:
        return load_manifest(found)
    except ConfigError as error:
        logger.info("changed lines not checked: %s", error)
        return None
