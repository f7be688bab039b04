"""The embedded demo: upstream repositories replayed from ``demo/upstreams/<name>/``.

Each upstream is a base tree plus patches, described by ``commits.yaml``; replaying them with
fixed authors and dates gives the same commit SHAs on every machine, so the demo pages can be
pinned to them.

The demo upstreams have no GitHub, so a pull request of one is recorded: ``demo/github/*.yaml``
describes it (title, body, author, base and head by commit subject, review comments) and
:func:`record_demo_pulls` writes what GitHub would answer for it, computed from the demo history
(``demo/github/repos/...``). :func:`generate_demo_pages` serves that recording on 127.0.0.1 to
the real ``pr`` and ``review`` code and writes the demo's generated PR and review pages.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.files import atomic_write
from generator.generate.source import Placement
from generator.github.client import DEFAULT_API_URL
from generator.github.replay import ReplayServer, pull_files_from_git, serve_recording
from generator.kb.pages import load_yaml
from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.manifest import ConfigError, Manifest

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BuiltUpstream:
    name: str
    path: Path
    head: str
    tags: dict[str, str]


def build_demo_upstream(history_dir: Path, destination: Path) -> BuiltUpstream:
    """Replay ``history_dir/commits.yaml`` into a fresh repository at ``destination``."""
    spec = load_yaml((history_dir / "commits.yaml").read_text(encoding="utf-8"))
    author = (spec["author"]["name"], spec["author"]["email"])
    branch = spec.get("branch", "main")
    destination.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{destination.name}.", dir=destination.parent))
    try:
        repo = RepoBuilder.init(staging, branch=branch, author=author)
        tags: dict[str, str] = {}
        for step in spec["commits"]:
            if "tree" in step:
                repo.copy_tree(history_dir / step["tree"])
            if "patch" in step:
                repo.apply_patch(history_dir / step["patch"])
            sha = repo.commit(None, step["message"], date=step["date"], tag=step.get("tag"))
            if step.get("tag"):
                tags[step["tag"]] = sha
            if step.get("branch"):
                repo.branch_at(step["branch"], sha)
        repo.checkout(branch)
        run_git(staging, "gc", "-q", "--auto")
        head = repo.head()
        if destination.exists():
            shutil.rmtree(destination)
        staging.rename(destination)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    log.info("built demo upstream %s at %s (head %s)", spec["name"], destination, head[:7])
    return BuiltUpstream(spec["name"], destination, head, tags)


def build_all(demo_dir: Path, destination_root: Path) -> list[BuiltUpstream]:
    """Build every upstream under ``demo_dir/upstreams`` into ``destination_root/<name>``."""
    built = []
    for history in sorted((demo_dir / "upstreams").iterdir()):
        if (history / "commits.yaml").is_file():
            built.append(build_demo_upstream(history, destination_root / history.name))
    return built


# --------------------------------------------------------------------------------------------
# A recorded pull request, and the pages generated from it


GITHUB_WEB = "https://github.com"


@dataclass(frozen=True)
class DemoComment:
    """A review comment on a line (or lines) of the pull request's diff, at its head."""

    id: int
    author: str
    body: str
    created_at: str
    path: str = ""
    line: int = 0
    start_line: int | None = None
    in_reply_to: int | None = None


@dataclass(frozen=True)
class DemoPull:
    """A pull request of a demo upstream: what ``demo/github/<name>.yaml`` says beyond git.

    Its base and head are named by their commit subjects in the upstream's history; everything
    git knows (SHAs, files, counts, patches, the diff) is computed from that history.
    """

    source: Path
    repository: str  # OWNER/REPO, as in the upstream's web_url
    upstream: str
    number: int
    title: str
    body: str
    author: str
    created_at: str
    merged_at: str | None
    base_ref: str
    base_commit: str  # a commit subject
    head_ref: str
    head_commit: str  # a commit subject
    comments: tuple[DemoComment, ...]
    pages_created: datetime.date
    placement: Placement

    @property
    def owner_and_name(self) -> tuple[str, str]:
        owner, _, name = self.repository.partition("/")
        return owner, name

    @property
    def api_path(self) -> str:
        return f"repos/{self.repository}/pulls/{self.number}"


_KINDS: dict[type, str] = {str: "a string", int: "a number", list: "a list", dict: "a mapping"}
_MISSING = object()


def load_demo_pull(source: Path) -> DemoPull:
    """Read a recorded pull request's description; `ConfigError` names the file and the key."""
    try:
        data = load_yaml(source.read_text("utf-8"))
    except (OSError, yaml.YAMLError, ValueError) as error:
        raise ConfigError(
            f"cannot read the pull request description: {error}", file=source
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("expected a mapping of keys to values", file=source)

    def value(mapping: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
        return optional(mapping, key, kind, _MISSING, where)

    def optional(
        mapping: dict[str, Any], key: str, kind: type, default: object, where: str = ""
    ) -> Any:
        name = f"{where}{key}"
        if key not in mapping:
            if default is _MISSING:
                raise ConfigError("missing", file=source, key=name)
            return default
        found = mapping[key]
        if not isinstance(found, kind) or isinstance(found, bool):
            hint = "quote it" if kind is str else None
            raise ConfigError(
                f"expected {_KINDS[kind]}, got {found!r}", file=source, key=name, hint=hint
            )
        return found

    comments = []
    for index, item in enumerate(optional(data, "review_comments", list, [])):
        where = f"review_comments[{index}]."
        if not isinstance(item, dict):
            raise ConfigError("expected a mapping", file=source, key=where.rstrip("."))
        reply = optional(item, "in_reply_to", int, None, where)
        comments.append(
            DemoComment(
                id=value(item, "id", int, where),
                author=value(item, "author", str, where),
                body=value(item, "body", str, where),
                created_at=value(item, "created_at", str, where),
                path="" if reply is not None else value(item, "path", str, where),
                line=0 if reply is not None else value(item, "line", int, where),
                start_line=optional(item, "start_line", int, None, where),
                in_reply_to=reply,
            )
        )
    base = value(data, "base", dict)
    head = value(data, "head", dict)
    pages = value(data, "pages", dict)
    created = pages.get("created")
    if not isinstance(created, datetime.date):
        raise ConfigError("expected a date (YYYY-MM-DD)", file=source, key="pages.created")
    repository = value(data, "repository", str)
    if repository.count("/") != 1:
        raise ConfigError(f"expected OWNER/REPO, got {repository!r}", file=source, key="repository")
    return DemoPull(
        source=source,
        repository=repository,
        upstream=value(data, "upstream", str),
        number=value(data, "number", int),
        title=value(data, "title", str),
        body=optional(data, "body", str, ""),
        author=value(data, "author", str),
        created_at=value(data, "created_at", str),
        merged_at=optional(data, "merged_at", str, None),
        base_ref=value(base, "ref", str, "base."),
        base_commit=value(base, "commit", str, "base."),
        head_ref=value(head, "ref", str, "head."),
        head_commit=value(head, "commit", str, "head."),
        comments=tuple(comments),
        pages_created=created,
        placement=Placement(
            optional(pages, "spec", str, None, "pages."),
            tuple(optional(pages, "paths", list, [], "pages.")),
            optional(pages, "level", str, None, "pages."),
        ),
    )


def demo_pulls(demo_dir: Path) -> list[DemoPull]:
    """Every recorded pull request described in ``demo_dir/github/*.yaml``."""
    return [load_demo_pull(path) for path in sorted((demo_dir / "github").glob("*.yaml"))]


def _commit_by_subject(repo: Path, subject: str, source: Path, key: str) -> str:
    found = [
        line.split("\0", 1)[0]
        for line in run_git(repo, "log", "--format=%H%x00%s", "--all").splitlines()
        if line.split("\0", 1)[1] == subject
    ]
    if len(found) != 1:
        problem = "no commit" if not found else f"{len(found)} commits"
        raise ConfigError(f"{problem} in {repo} with the subject {subject!r}", file=source, key=key)
    return found[0]


def _diff_hunk(patch: str, line: int) -> str | None:
    """GitHub's ``diff_hunk`` for a comment on new-side ``line``: its hunk up to that line."""
    taken: list[str] = []
    new_line = 0
    for text in patch.split("\n"):
        header = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", text)
        if header:
            taken, new_line = [text], int(header[1])
            continue
        if not taken or text.startswith("\\"):
            continue
        taken.append(text)
        if text.startswith("-"):
            continue
        if new_line == line:
            return "\n".join(taken)
        new_line += 1
    return None


def pull_answers(pull: DemoPull, history: Path) -> dict[Path, str]:
    """GitHub's answers for ``pull``, computed from the upstream's git ``history``, by their
    place in a recording (``repos/OWNER/REPO/pulls/N...``)."""
    base = _commit_by_subject(history, pull.base_commit, pull.source, "base.commit")
    head = _commit_by_subject(history, pull.head_commit, pull.source, "head.commit")
    web = f"{GITHUB_WEB}/{pull.repository}"
    api = f"{DEFAULT_API_URL}/{pull.api_path}"
    files, diff = pull_files_from_git(history, base, head, blob_url=web)
    owner = pull.owner_and_name[0]
    commits = int(run_git(history, "rev-list", "--count", f"{base}..{head}").strip())
    closed = pull.merged_at is not None
    pull_json = {
        "url": api,
        "html_url": f"{web}/pull/{pull.number}",
        "number": pull.number,
        "state": "closed" if closed else "open",
        "title": pull.title,
        "user": {"login": pull.author},
        "body": pull.body,
        "created_at": pull.created_at,
        "updated_at": pull.merged_at or pull.created_at,
        "closed_at": pull.merged_at,
        "merged_at": pull.merged_at,
        "draft": False,
        "head": {"label": f"{owner}:{pull.head_ref}", "ref": pull.head_ref, "sha": head},
        "base": {"label": f"{owner}:{pull.base_ref}", "ref": pull.base_ref, "sha": base},
        "merged": closed,
        "commits": commits,
        "additions": sum(f["additions"] for f in files),
        "deletions": sum(f["deletions"] for f in files),
        "changed_files": len(files),
    }
    patches = {f["filename"]: f.get("patch") for f in files}
    by_id: dict[int, DemoComment] = {}
    comments = []
    for comment in pull.comments:
        anchor = comment
        if comment.in_reply_to is not None:
            if comment.in_reply_to not in by_id:
                raise ConfigError(
                    f"comment {comment.id} replies to {comment.in_reply_to}, which is not an "
                    "earlier comment",
                    file=pull.source,
                    key="review_comments",
                )
            anchor = by_id[comment.in_reply_to]
        by_id[comment.id] = anchor
        patch = patches.get(anchor.path)
        hunk = _diff_hunk(patch, anchor.line) if patch else None
        first = anchor.start_line or anchor.line
        if hunk is None or _diff_hunk(patch or "", first) is None:
            raise ConfigError(
                f"comment {comment.id}: {anchor.path} lines {first}-{anchor.line} are not all "
                "in the pull request's diff (GitHub takes comments on the diff's lines only)",
                file=pull.source,
                key="review_comments",
            )
        entry: dict[str, Any] = {
            "url": f"{DEFAULT_API_URL}/repos/{pull.repository}/pulls/comments/{comment.id}",
            "id": comment.id,
            "pull_request_review_id": comment.id,
            "diff_hunk": hunk,
            "path": anchor.path,
            "commit_id": head,
            "original_commit_id": head,
            "user": {"login": comment.author},
            "body": comment.body,
            "created_at": comment.created_at,
            "updated_at": comment.created_at,
            "html_url": f"{web}/pull/{pull.number}#discussion_r{comment.id}",
            "pull_request_url": api,
            "start_line": anchor.start_line,
            "original_start_line": anchor.start_line,
            "start_side": "RIGHT" if anchor.start_line else None,
            "line": anchor.line,
            "original_line": anchor.line,
            "side": "RIGHT",
        }
        if comment.in_reply_to is not None:
            entry["in_reply_to_id"] = comment.in_reply_to
        comments.append(entry)
    root = Path(pull.api_path)
    return {
        root.with_suffix(".json"): _json(pull_json),
        root.with_suffix(".diff"): diff,
        root / "files.json": _json(files),
        root / "comments.json": _json(comments),
    }


def _json(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def record_demo_pulls(demo_dir: Path, destination: Path | None = None) -> list[Path]:
    """Re-record every pull request of ``demo_dir/github/*.yaml`` from the demo histories,
    built afresh (so the recording cannot drift from ``demo/upstreams``), into ``destination``
    (default: ``demo_dir/github``). Nothing is written unless every pull request records."""
    answers: dict[Path, str] = {}
    pulls = demo_pulls(demo_dir)
    with tempfile.TemporaryDirectory(prefix="demo-record-") as scratch:
        for pull in pulls:
            history_dir = demo_dir / "upstreams" / pull.upstream
            if not (history_dir / "commits.yaml").is_file():
                raise ConfigError(
                    f"no demo upstream {pull.upstream!r} ({history_dir}/commits.yaml)",
                    file=pull.source,
                    key="upstream",
                )
            built = Path(scratch) / pull.upstream
            if not built.exists():
                build_demo_upstream(history_dir, built)
            answers.update(pull_answers(pull, built))
    root = destination or demo_dir / "github"
    for path, text in answers.items():
        atomic_write(root / path, text.encode("utf-8"))
        log.info("recorded %s", root / path)
    return [root / path for path in answers]


def generate_demo_pages(
    demo_dir: Path, manifest: Manifest, docs_dir: Path, *, force: bool = False
) -> list[Path]:
    """Draft the PR deep dive and the review page of every recorded pull request with the real
    `pr` and `review` code, fetching from a replay server on 127.0.0.1 that serves the
    recording (``GITHUB_API_URL`` points the client at it), and write them under
    ``docs_dir/analysis/``. Nothing is written when a page exists and ``force`` is not given."""
    from generator.generate.pr import _head_store, build_pr_page, place_page, refuse_existing
    from generator.generate.review import build_review_page, depend_on_deep_dives
    from generator.github.client import GitHubClient

    pages: dict[Path, str] = {}
    for pull in demo_pulls(demo_dir):
        if pull.upstream not in manifest.upstreams:
            raise ConfigError(
                f"the recorded pull request's upstream {pull.upstream!r} is not in "
                f"{manifest.display_path()}",
                file=pull.source,
                key="upstream",
            )
        upstream = manifest.upstreams[pull.upstream]
        recorded = json.loads((demo_dir / "github" / f"{pull.api_path}.json").read_text("utf-8"))
        head = recorded["head"]["sha"]
        store = _head_store(upstream, head)
        if store is None:
            raise ConfigError(
                f"the head commit {head[:12]} of {pull.repository}#{pull.number} is not in the "
                f"clone of {pull.upstream} ({upstream.clone_dir})",
                hint="run `make demo-upstreams` (python -m generator demo build, then "
                "python -m generator upstreams fetch)",
            )
        store.close()
        owner, name = pull.owner_and_name
        with ReplayServer() as server:
            serve_recording(server, demo_dir / "github")
            environment = {"GITHUB_API_URL": server.url}
            with GitHubClient.from_env(environment) as client:
                drafts = [
                    build_pr_page(
                        client, manifest, owner, name, pull.number, today=pull.pages_created
                    ),
                    build_review_page(
                        client, manifest, owner, name, pull.number, today=pull.pages_created
                    ),
                ]
        deep_dive, review = drafts
        depend_on_deep_dives(review, [deep_dive.default_output.relative_to("docs").as_posix()])
        for draft in drafts:
            place_page(draft, pull.placement)
            pages[docs_dir / draft.default_output.relative_to("docs")] = draft.text
    for path in pages:
        refuse_existing(path, force)
    for path, text in pages.items():
        atomic_write(path, text.encode("utf-8"))
        log.info("wrote %s", path)
    return list(pages)
