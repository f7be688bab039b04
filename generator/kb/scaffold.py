"""Scaffolding: new specs and new pages with correct frontmatter, from the templates.

``python -m generator new spec NAME`` numbers the spec like LeanSpec does (the highest number in
the specs directory, ``archived/`` included, plus one, zero-padded to ``sequenceDigits``) and fills
``.lean-spec/templates/<template>`` (``{name}``, ``{title}``, ``{date}``, ``{status}``,
``{priority}`` placeholders, as LeanSpec's own template uses).

``python -m generator new page --kind KIND --spec SPEC [--title ...] [PATH]`` writes a page with
the lifecycle fields, the spec, its kind, level and paths, and a body skeleton for its kind (from
``.lean-spec/templates/pages/KIND.md`` when that exists).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from generator.files import atomic_write, file_in_the_way
from generator.kb.paths import LEVELS, load_pages
from generator.kb.placement import Placed, Placement, place
from generator.kb.sections import ANALYSIS_KINDS
from generator.kb.specs import PRIORITIES, SPEC_STATUSES, find_spec, load_config, load_specs
from generator.upstream.manifest import ConfigError

PAGE_KINDS: dict[str, str] = {
    "pr-deep-dive": "analysis",
    "review": "analysis",
    "source-analysis": "analysis",
    "learning-path": "paths",
    "index": "",
}
"""Page kinds and the docs directory each goes into by default."""

_BODIES: dict[str, str] = {
    # The mandatory sections of the PR deep-dive prompt, numbered as the diagram checks expect.
    "pr-deep-dive": "## 1. TL;DR\n\n## 2. Big Picture\n\n### 2.1 Before vs After Architecture\n\n"
    "### 2.2 Change Scope Summary\n\n## 3. Design Rationale\n\n### 3.1 Problem Background\n\n"
    "### 3.2 Solution Approach\n\n### 3.3 Key Design Points\n\n"
    "## 4. Execution Path Deep Dive\n\n### 4.1 Entry Point\n\n### 4.2 Call Chain Visualization\n\n"
    "### 4.3 Data Flow\n\n### 4.4 Core Code Walkthrough\n\n## 5. Module Relationships\n\n"
    "## 6. Risks & Edge Cases\n\n## 7. Quick Reference\n\n### 7.1 File Change Summary\n\n"
    "### 7.2 Key Functions Index\n\n### 7.3 Related Code Pointers\n",
    # The review prompt: understand, verify tests, findings by severity, questions, and the PR's
    # own review comments.
    "review": "## 1. Summary\n\n## 2. Test Verification\n\n## 3. Findings\n\n"
    "### P0 — Critical\n\n### P1 — Important\n\n### P2 — Suggestion\n\n### P3 — Nitpick\n\n"
    "## 4. Questions for the Author\n\n## 5. GitHub Review Comments\n",
    # The same sections `python -m generator source` drafts.
    "source-analysis": "## 1. Overview\n\n## 2. Outline\n\n## 3. Class relationships\n\n"
    "## 4. Walkthrough\n\n## 5. Pitfalls and open questions\n",
    "learning-path": "## Reading order\n\n## Step by step\n\n## Where to go next\n",
    "index": "## What is covered\n\n## Learning paths\n",
}
_BODIES_ZH: dict[str, str] = {
    # The headings `kb pr --lang zh`, `kb review` and `kb source --lang zh` write, which the
    # section checks read (`generator.kb.sections`).
    "pr-deep-dive": "## 1. 概要（TL;DR）\n\n## 2. 全局视角\n\n### 2.1 架构前后对比\n\n"
    "### 2.2 变更范围\n\n## 3. 设计原理\n\n### 3.1 问题背景\n\n### 3.2 解决方案\n\n"
    "### 3.3 关键设计点\n\n## 4. 执行路径深入分析\n\n### 4.1 入口\n\n### 4.2 调用链\n\n"
    "### 4.3 数据流\n\n### 4.4 核心代码解读\n\n## 5. 模块关系\n\n## 6. 风险与边界情况\n\n"
    "## 7. 速查\n\n### 7.1 文件变更汇总\n\n### 7.2 关键函数索引\n\n### 7.3 相关代码指引\n",
    "review": "## 1. 概要\n\n## 2. 测试验证\n\n## 3. 问题\n\n### P0 — 严重\n\n### P1 — 重要\n\n"
    "### P2 — 建议\n\n### P3 — 细节\n\n## 4. 向作者提问\n\n## 5. GitHub 评审评论\n",
    "source-analysis": "## 1. 概述\n\n## 2. 大纲\n\n## 3. 类关系\n\n## 4. 逐段解读\n\n"
    "## 5. 注意事项与待解问题\n",
    "learning-path": "## 阅读顺序\n\n## 逐步学习\n\n## 下一步\n",
    "index": "## 涵盖内容\n\n## 学习路径\n",
}

_DEFAULT_SPEC_TEMPLATE = """---
status: {status}
created: '{date}'
tags: []
priority: {priority}
---

# {title}

## Overview

## Design

## Plan

- [ ] First page

## Test

- [ ] `python scripts/verify_code_refs.py docs/` reports no errors

## Notes
"""


def kebab(text: str) -> str:
    """``Data Packing`` -> ``data-packing``; letters and digits of every script are kept
    (``训练 流程`` -> ``训练-流程``), as file names and URLs may hold them."""
    return re.sub(r"[\W_]+", "-", text.lower()).strip("-")


def ascii_kebab(text: str) -> str:
    """``kebab`` in ASCII letters and digits only: for spec folders."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def titled(name: str) -> str:
    return " ".join(word.capitalize() for word in name.split("-"))


@dataclass(frozen=True)
class Created:
    path: Path
    id: str
    placed: tuple[Placed, ...] = ()
    """What the page was given that the command did not say (its learning path, its level):
    the user is told, with why."""


def next_spec_number(root: Path) -> int:
    config = load_config(root)
    numbers = [spec.number for spec in load_specs(config) if spec.number is not None]
    if config.specs_dir.is_dir():  # folders without a README count too, as in LeanSpec
        for folder in [*config.specs_dir.iterdir(), *config.specs_dir.glob("archived/*")]:
            match = re.match(r"^(\d+)-", folder.name)
            if folder.is_dir() and match:
                numbers.append(int(match.group(1)))
    return max(numbers, default=0) + 1


def new_spec(
    root: Path,
    name: str,
    *,
    title: str | None = None,
    status: str = "planned",
    priority: str = "medium",
    tags: list[str] | None = None,
    depends_on: list[str] | None = None,
    parent: str | None = None,
    today: dt.date | None = None,
) -> Created:
    slug = ascii_kebab(name)
    if not slug:
        raise ConfigError(
            f"spec name {name!r} has no ASCII letters or digits, which spec folders are named with",
            hint="e.g. 'memory' (the spec's title, --title, may be in any language)",
        )
    if re.match(r"^\d+-", slug):
        raise ConfigError(
            f"spec name {name!r} starts with a number", hint="give the name only; numbering is ours"
        )
    if status not in SPEC_STATUSES:
        raise ConfigError(f"status {status!r} is not one of {', '.join(SPEC_STATUSES)}")
    if priority not in PRIORITIES:
        raise ConfigError(f"priority {priority!r} is not one of {', '.join(PRIORITIES)}")
    config = load_config(root)
    specs = load_specs(config)
    for target in [*(depends_on or []), *([parent] if parent else [])]:
        if find_spec(specs, target) is None:
            raise ConfigError(f"no spec {target!r} to link to", hint="see 'specs board'")
    same = [spec.id for spec in specs if spec.name == slug]
    if same:
        raise ConfigError(
            f"a spec named {slug!r} exists already: {same[0]}",
            hint="give the new spec another name, or put the pages in that one",
        )
    number = next_spec_number(root)
    spec_id = f"{number:0{config.sequence_digits}d}-{slug}"
    folder = config.specs_dir / spec_id
    if folder.exists():
        raise ConfigError(f"{folder} already exists")
    template = (
        config.template.read_text("utf-8")
        if config.template and config.template.is_file()
        else _DEFAULT_SPEC_TEMPLATE
    )
    date = (today or dt.date.today()).isoformat()
    # A name in another script is the title as written; its folder takes the ASCII part.
    title = title or (titled(slug) if name.isascii() else " ".join(name.split()))
    text = _fill(
        template,
        {
            "name": title,
            "title": title,
            "date": date,
            "status": status,
            "priority": priority,
        },
    )
    extra: dict[str, Any] = {"status": status, "priority": priority}
    if tags:
        extra["tags"] = tags
    if depends_on:
        extra["depends_on"] = [find_spec(specs, d).id for d in depends_on]  # type: ignore[union-attr]
    if parent:
        extra["parent"] = find_spec(specs, parent).id  # type: ignore[union-attr]
    text = _merge_frontmatter(text, extra)
    atomic_write(folder / config.default_file, text.encode("utf-8"))
    return Created(folder / config.default_file, spec_id)


def _fill(template: str, values: dict[str, str]) -> str:
    return re.sub(r"\{(\w+)\}", lambda m: values.get(m.group(1), m.group(0)), template)


def _yaml_line(key: str, value: Any) -> str:
    if isinstance(value, list):
        items = ", ".join(
            yaml.safe_dump(item, default_style=None).splitlines()[0] for item in value
        )
        return f"{key}: [{items}]"
    return yaml.safe_dump({key: value}, default_flow_style=False, allow_unicode=True).rstrip("\n")


def _merge_frontmatter(text: str, extra: dict[str, Any]) -> str:
    """Set keys in a template's frontmatter in place (new keys at the end), keeping the rest."""
    if not extra:
        return text
    match = re.match(r"---\n(.*?\n)---\n", text, re.S)
    if match is None:
        head = "\n".join(_yaml_line(key, value) for key, value in extra.items())
        return f"---\n{head}\n---\n\n{text}"
    lines = match.group(1).splitlines()
    done: set[str] = set()
    out = []
    for line in lines:
        key = line.split(":", 1)[0].strip() if not line.startswith((" ", "-")) else ""
        if key in extra:
            out.append(_yaml_line(key, extra[key]))
            done.add(key)
        elif not (out and out[-1].split(":", 1)[0] in done and line.startswith((" ", "-"))):
            out.append(line)
    out.extend(_yaml_line(key, value) for key, value in extra.items() if key not in done)
    return "---\n" + "\n".join(out) + "\n---\n" + text[match.end() :]


def new_page(
    root: Path,
    docs_root: Path,
    *,
    kind: str,
    spec: str,
    title: str,
    path: str | None = None,
    level: str | None = None,
    paths: list[str] | None = None,
    depends_on: list[str] | None = None,
    lang: str = "en",
    upstream: str | None = None,
    status: str = "draft",
    tags: list[str] | None = None,
    today: dt.date | None = None,
) -> Created:
    if kind not in PAGE_KINDS:
        raise ConfigError(f"unknown page kind {kind!r}", hint="kinds: " + ", ".join(PAGE_KINDS))
    if level is not None and level not in LEVELS:
        raise ConfigError(f"level {level!r} is not one of {', '.join(LEVELS)}")
    if status not in SPEC_STATUSES:
        raise ConfigError(f"status {status!r} is not one of {', '.join(SPEC_STATUSES)}")
    found = find_spec(load_specs(load_config(root)), spec)
    if found is None:
        raise ConfigError(f"no spec {spec!r}", hint="create it first: kb new spec NAME")
    if path is None:
        if not kebab(title):
            raise ConfigError(
                f"title {title!r} has no letters or digits to name the page's file",
                hint="give its path: kb new page PATH --title ...",
            )
        suffix = "" if lang == "en" else f".{lang}"
        folder = PAGE_KINDS[kind]
        path = f"{folder}/{kebab(title)}{suffix}.md" if folder else f"{kebab(title)}{suffix}.md"
    if not path.endswith(".md"):
        path += ".md"
    target = (docs_root / path).resolve()
    if docs_root.resolve() not in target.parents:
        raise ConfigError(f"{path}: a page must be inside {docs_root}")
    if target.exists():
        raise ConfigError(f"{target} already exists")
    for dep in depends_on or []:
        if not (docs_root / dep).is_file():
            raise ConfigError(f"prerequisite {dep} does not exist in {docs_root}")
    meta: dict[str, Any] = {
        "title": title,
        "kind": kind,
        "lang": lang,
        "status": status,
        "created": (today or dt.date.today()).isoformat(),
        "tags": tags or [],
    }
    if kind == "learning-path":
        meta["path"] = (paths or [kebab(title)])[0]
    if level:
        meta["level"] = level
    # (Not the level's own path when none was asked for: the knowledge base may have no such
    # path, and a page in a path nobody made would be its only page.)
    meta["paths"] = paths or []
    placed: list[Placed] = []
    if kind in ANALYSIS_KINDS and not meta["paths"]:
        # An analysis in no learning path fails the build (page-not-in-path): place it as
        # ingest places a page, in the path nearest its level or the knowledge base's only one.
        decided = place(
            meta,
            kind,
            path,
            specs=[found],
            pages=load_pages(docs_root) if docs_root.is_dir() else [],
            requested=Placement(found.id, (), level),
        )
        placed = [p for p in decided if p.key != "spec"]  # --spec is required: not decided
        meta.update((p.key, p.value) for p in placed)
    if depends_on:
        meta["depends_on"] = depends_on
    meta["spec"] = found.id
    if upstream:
        meta["upstream"] = upstream
    override = root / ".lean-spec" / "templates" / "pages" / f"{kind}.md"
    bodies = _BODIES_ZH if lang.lower().startswith("zh") else _BODIES
    body = override.read_text("utf-8") if override.is_file() else bodies[kind]
    body = _fill(body, {"title": title, "spec": found.id, "kind": kind})
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, default_flow_style=None)
    text = f"---\n{front}---\n\n# {title}\n\n{body}"
    atomic_write(target, text.encode("utf-8"))
    return Created(target, path, tuple(placed))


# --------------------------------------------------------------------------------------------
# A knowledge base of one's own: ``kb init``

STARTER = Path(__file__).with_name("starter")
"""The files ``kb init`` writes, with ``{placeholders}`` (see `init_knowledge_base`)."""

_STARTER_FILES: dict[str, str] = {
    "mkdocs.yml": "mkdocs.yml",
    "upstreams.yaml": "upstreams.yaml",
    "docs/index.md": "index.md",
    ".gitignore": "gitignore",
    ".pre-commit-config.yaml": "pre-commit-config.yaml",
    ".github/workflows/site.yml": "site.yml",
    "requirements.txt": "requirements.txt",
    ".lean-spec/config.json": "lean-spec-config.json",
    ".lean-spec/templates/spec-template.md": "spec-template.md",
}
"""Each file of a new knowledge base (relative to its root) and the starter file it comes from."""


@dataclass(frozen=True)
class Initialized:
    root: Path
    site_name: str
    spec_id: str
    files: list[Path]
    """Every file written, relative to ``root``, in the order written."""
    requirement: str
    """What ``requirements.txt`` installs kb-generator from."""
    requirement_known: bool
    """Whether that is where this installation came from (else a line to edit before CI runs)."""


def init_knowledge_base(
    root: Path,
    name: str | None = None,
    *,
    requirement: tuple[str, bool] | None = None,
    today: dt.date | None = None,
) -> Initialized:
    """Write a new knowledge base into ``root`` (created if missing): its site configuration,
    an upstream manifest with no upstream yet, a home page, a first spec, LeanSpec's
    configuration, a ``.gitignore``, a pre-commit configuration and a GitHub workflow.

    ``name``: the site's name (default: from the directory's name). ``requirement``: the line
    ``requirements.txt`` installs kb-generator with, and whether it is known to work (default:
    `package_requirement`). Raises `ConfigError`, and writes nothing, when any of the files
    exists already: nothing of a team's is overwritten.
    """
    root = root.resolve()
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{root} exists and is not a directory")
    taken = [rel for rel in [*_STARTER_FILES, "specs"] if (root / rel).exists()]
    if taken:
        raise ConfigError(
            f"{root} already holds {', '.join(taken)}; nothing was written",
            hint="choose a new directory, or move those files away first",
        )
    site_name = (name or titled(kebab(root.name)) or "Knowledge base").strip()
    # The first spec's folder is named in ASCII (`001-kb`): a directory named in Chinese gives
    # the default name.
    slug = ascii_kebab(root.name) or ascii_kebab(name or "") or "knowledge-base"
    line, known = requirement if requirement is not None else package_requirement()
    date = (today or dt.date.today()).isoformat()
    values = {
        "site_name": site_name,
        "site_name_yaml": json.dumps(site_name, ensure_ascii=False),  # a YAML double-quoted string
        "date": date,
        "requirement": line,
    }
    made = _made_directories(root)
    written: list[Path] = []
    try:
        config_files = [rel for rel in _STARTER_FILES if rel.startswith(".lean-spec/")]
        for rel in config_files:  # the spec is numbered and filled from LeanSpec's configuration
            atomic_write(root / rel, (STARTER / _STARTER_FILES[rel]).read_bytes())
            written.append(Path(rel))
        spec = new_spec(root, slug, title=site_name, status="in-progress", today=today)
        values["spec_id"] = spec.id
        written.append(spec.path.relative_to(root))
        for rel, starter in _STARTER_FILES.items():
            if rel in config_files:
                continue
            text = _fill((STARTER / starter).read_text("utf-8"), values)
            atomic_write(root / rel, text.encode("utf-8"))
            written.append(Path(rel))
    except OSError as error:
        _take_back(root, written, made)
        raise ConfigError(
            f"cannot write the knowledge base into {root}: {error.strerror or error}; "
            "nothing was written",
            hint="choose a directory you can write to",
        ) from error
    return Initialized(root, site_name, spec.id, written, line, known)


def _made_directories(root: Path) -> list[Path]:
    """Make ``root`` and the directories above it that are missing; returns those made,
    deepest first, to take back if the writing fails. Raises `ConfigError` when a directory
    cannot be made there (a file in the way, no permission)."""
    missing = [directory for directory in (root, *root.parents) if not directory.exists()]
    blocked = file_in_the_way(root.parent)
    if blocked is not None:
        raise ConfigError(
            f"cannot create {root}: {blocked} is a file, not a directory; nothing was written",
            hint="choose another directory",
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _take_back(root, [], missing)
        raise ConfigError(
            f"cannot create {root}: {error.strerror or error}; nothing was written",
            hint="choose a directory you can write to",
        ) from error
    return missing


def _take_back(root: Path, written: list[Path], made: list[Path]) -> None:
    """Remove what a failed `init_knowledge_base` wrote: its files, then the directories it
    made, as far as they are empty (a spec's folder, a directory it created)."""
    folders: set[Path] = set()
    for rel in written:
        target = root / rel
        folders.update(parent for parent in target.parents if root in parent.parents)
        target.unlink(missing_ok=True)
    for directory in sorted(folders, key=lambda path: len(path.parts), reverse=True):
        with contextlib.suppress(OSError):
            directory.rmdir()  # (only when empty)
    for directory in made:
        with contextlib.suppress(OSError):
            directory.rmdir()


def package_requirement() -> tuple[str, bool]:
    """The ``requirements.txt`` line that installs this kb-generator, and whether it is known
    to work elsewhere: where pip installed it from (a Git URL at its commit, or a published
    version), or, for a local checkout, which CI cannot reach, the version with a note."""
    from importlib import metadata

    try:
        distribution = metadata.distribution("kb-generator")
    except metadata.PackageNotFoundError:
        return _LOCAL_REQUIREMENT.format(version="0.1.0"), False
    version = distribution.version
    direct = distribution.read_text("direct_url.json")
    if direct is None:  # from an index: the same version installs again
        return f"kb-generator=={version}", True
    try:
        origin = json.loads(direct)
    except ValueError:
        origin = {}
    vcs = origin.get("vcs_info") or {}
    url = str(origin.get("url", ""))
    if vcs.get("vcs") == "git" and url.startswith(("https://", "ssh://", "git@")):
        commit = vcs.get("commit_id") or vcs.get("requested_revision") or ""
        return f"kb-generator @ git+{url}" + (f"@{commit}" if commit else ""), True
    if url.startswith(("https://", "http://")):  # a wheel or archive on a server
        return f"kb-generator @ {url}", True
    return _LOCAL_REQUIREMENT.format(version=version), False


_LOCAL_REQUIREMENT = (
    "# kb-generator was installed here from a local checkout, which CI cannot reach: replace\n"
    "# the next line with where your team gets it, e.g.\n"
    "#   kb-generator @ git+https://github.com/OWNER/kb-generator@v{version}\n"
    "kb-generator=={version}"
)
