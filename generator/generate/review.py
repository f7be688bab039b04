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
through :mod:`generator.sanitize`.
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

import yaml

from generator.extract import extract_headings, extract_refs, scan
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
    pages_web_url,
    parse_repository,
    refuse_existing,
    write_new_file,
)
from generator.github import GitHubClient, PullRequest, ReviewComment
from generator.manifest import Manifest
from generator.model import Upstream
from generator.pages import read_page
from generator.sanitize import (
    LinkContext,
    code_span,
    inline_text,
    markdown_text,
    one_line,
    safe_url,
)

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
    frontmatter = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1000)
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
_MARKER = re.compile(r"^\s*(?:\*\*)?\[?(P[0-3])\]?(?:\*\*)?\s*[:\-—]?\s*")
_QUESTIONS = re.compile(r"^\d+\.\s+(?:Questions|向作者提问)")
_ITEM = re.compile(r"^(?:[-*+]|\d+[.)])\s+")


def _sections(body: str) -> list[tuple[int, str, list[str]]]:
    """(level, heading, lines) for every heading of the page outside fenced code."""
    lines = body.split("\n")
    headings = extract_headings(scan(body))
    sections: list[tuple[int, str, list[str]]] = [
        (0, "", lines[: headings[0].line - 1] if headings else lines)
    ]
    for index, heading in enumerate(headings):
        end = headings[index + 1].line - 1 if index + 1 < len(headings) else len(lines)
        sections.append((heading.level, heading.text, lines[heading.line : end]))
    return sections


def _items(lines: Sequence[str]) -> list[str]:
    """The top-level list items of a section, each with its indented continuation, dedented."""
    items: list[list[str]] = []
    open_item = False
    for line in lines:
        if _ITEM.match(line):
            items.append([_ITEM.sub("", line, count=1)])
            open_item = True
        elif open_item and (line.startswith((" ", "\t")) or not line.strip()):
            items[-1].append(line)
        elif line.strip():
            open_item = False  # a paragraph ends the item
    out = []
    for item in items:
        if not item:
            continue
        rest = [line.strip("\n") for line in item[1:]]
        indent = min((len(x) - len(x.lstrip()) for x in rest if x.strip()), default=0)
        text = "\n".join([item[0], *(x[indent:] for x in rest)]).strip()
        if text and not text.startswith("TODO(author)"):
            out.append(text)
    return out


@dataclass(frozen=True)
class Finding:
    """One item of a severity section: its severity, its text and its first ``path:line``."""

    severity: str
    text: str
    path: str | None = None
    line: int | None = None
    start_line: int | None = None

    def comment_body(self) -> str:
        """The item's text, starting with its severity (``**[P1]** ...``)."""
        return f"**[{self.severity}]** {_MARKER.sub('', self.text, count=1)}"


def findings(body: str) -> list[Finding]:
    """The findings of a review page's P0 to P3 sections, in page order."""
    found: list[Finding] = []
    for _level, heading, lines in _sections(body):
        severity = _SEVERITY_HEADING.match(heading)
        if severity is None:
            continue
        for text in _items(lines):
            ref = next((r for r in extract_refs(scan(text), "") if r.start is not None), None)
            if ref is None or ref.end is None:
                found.append(Finding(severity[1], text))
                continue
            start, end = ref.start, ref.end
            found.append(
                Finding(
                    severity[1],
                    text,
                    path=ref.path,
                    line=end,
                    start_line=start if start < end else None,
                )
            )
    return found


def _questions(body: str) -> list[str]:
    for _level, heading, lines in _sections(body):
        if _QUESTIONS.match(heading):
            return _items(lines)
    return []


def review_json(page_path: Path) -> dict[str, Any]:
    """The JSON body of GitHub's "create a review" call for a finished review page.

    Each finding citing a ``path:line`` becomes an inline comment on the right (head) side whose
    body starts with its severity; the other findings and the questions for the author make up
    the review's body. The review is pinned to the page's ``pin`` (the PR's head commit).
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


def write_review_json(
    page_path: Path, output: Path, *, force: bool = False
) -> tuple[Path, dict[str, Any]]:
    """Export ``page_path`` to ``output`` atomically; refuses to replace a file unless ``force``."""
    refuse_existing(output, force)  # before reading anything, as the CLI promises
    if not page_path.is_file():
        raise ExportError(f"{page_path} is not a file")
    payload = review_json(page_path)
    data = json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
    return write_new_file(output, data.encode("utf-8"), force=force), payload
