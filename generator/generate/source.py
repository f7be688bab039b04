"""``source``: draft a source-analysis page for one file of an upstream, at its pin.

The page has what can be computed: an outline of the file's classes and functions as references
at the pinned commit, a Mermaid class diagram of the real inheritance and composition (``self.x =
Part(...)``), and one placeholder section per symbol for the author. Python is read with `ast`;
other languages get a plain outline from their definition lines. Everything is read from the
clone's object database, like the verifier does, so the page verifies clean as generated.
"""

from __future__ import annotations

import datetime
import json
import logging
import re
from pathlib import Path

from generator.files import atomic_write
from generator.kb.paths import load_pages
from generator.kb.placement import Placement, place
from generator.refs.outline import Outline, outline_plain, outline_python
from generator.refs.resolve import Resolver
from generator.upstream.gitstore import GitStore
from generator.upstream.manifest import ConfigError, Manifest

log = logging.getLogger(__name__)

_HEADINGS = {
    "en": {
        "title": "Source analysis",
        "generated": "The outline and the diagram are generated from the code of `{upstream}`; "
        "the prose is for the author to write. The line under the title says at which commit "
        "the site verified them.",
        "overview": "1. Overview",
        "overview_todo": "What this file is responsible for, who calls it, and what it relies on.",
        "outline": "2. Outline",
        "symbol": "Symbol",
        "kind": "Kind",
        "lines": "Lines",
        "relationships": "3. Class relationships",
        "no_classes": "N/A - the file defines no classes.",
        "walkthrough": "4. Walkthrough",
        "symbol_todo": "What it does, why, and the edge cases it handles.",
        "pitfalls": "5. Pitfalls and open questions",
        "pitfalls_todo": "Correctness, performance and compatibility risks worth knowing.",
        "syntax": "The file could not be parsed as Python ({error}); this is a plain outline.",
    },
    "zh": {
        "title": "源码分析",
        "generated": "大纲与类图由 `{upstream}` 的代码生成；正文由作者补写。"
        "标题下的一行写明站点在哪个提交验证了它们。",
        "overview": "1. 概述",
        "overview_todo": "本文件负责什么、被谁调用、依赖什么。",
        "outline": "2. 大纲",
        "symbol": "符号",
        "kind": "类型",
        "lines": "行号",
        "relationships": "3. 类关系",
        "no_classes": "N/A - 本文件未定义类。",
        "walkthrough": "4. 逐段解读",
        "symbol_todo": "做什么、为什么、处理了哪些边界情况。",
        "pitfalls": "5. 注意事项与待解问题",
        "pitfalls_todo": "值得注意的正确性、性能与兼容性风险。",
        "syntax": "无法按 Python 解析本文件（{error}），以下为普通大纲。",
    },
}


def _node_id(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def class_diagram(outline: Outline) -> str:
    """A Mermaid class diagram of the file's classes, their methods, bases and parts."""
    classes = outline.classes
    lines = ["classDiagram"]
    names = {symbol.name for symbol in classes}
    for cls in classes:
        methods = [
            s
            for s in outline.symbols
            if s.kind == "method" and s.qualname == f"{cls.qualname}.{s.name}"
        ]
        lines.append(f"    class {_node_id(cls.name)} {{")
        lines += [f"        +{method.name}()" for method in methods]
        lines.append("    }")
    for cls in classes:
        for base in cls.bases:
            short = base.rsplit(".", 1)[-1]
            if short not in names:
                lines.append(f"    class {_node_id(short)}")
                names.add(short)
            lines.append(f"    {_node_id(short)} <|-- {_node_id(cls.name)}")
        for part in cls.parts:
            if part not in names:
                lines.append(f"    class {_node_id(part)}")
                names.add(part)
            lines.append(f"    {_node_id(cls.name)} *-- {_node_id(part)}")
    return "\n".join(lines)


def complete_placement(placement: Placement, manifest: Manifest, kind: str) -> Placement:
    """``placement`` with what it leaves open decided as ``ingest`` decides it for a page of
    ``kind`` (`generator.kb.placement`): the knowledge base's only spec, the level of the kind,
    the learning path nearest that level. A drafted page so joins its spec and a path, and the
    next build passes without ``--spec`` and ``--path``."""
    from generator.kb.specs import load_config, load_specs
    from generator.verification.pipeline import docs_root_for

    docs_root = docs_root_for(manifest, [manifest.root / "docs"])
    pages = load_pages(docs_root) if docs_root.is_dir() else []
    specs = load_specs(load_config(manifest.root))
    decided = {
        placed.key: placed.value
        for placed in place({}, kind, "", specs=specs, pages=pages, requested=placement)
    }
    return Placement(decided.get("spec"), tuple(decided.get("paths", ())), decided.get("level"))


def render_source_page(
    upstream: str,
    commit: str,
    path: str,
    outline: Outline,
    lang: str = "en",
    today: datetime.date | None = None,
    placement: Placement | None = None,
) -> str:
    """The page's Markdown, frontmatter included."""
    words = _HEADINGS[lang]
    created = (today or datetime.date.today()).isoformat()
    title = f"{words['title']}: {path}"
    placement = placement or Placement()
    placed = [f"spec: {placement.spec}"] if placement.spec else []
    placed += [f"paths: [{', '.join(placement.paths)}]"] if placement.paths else []
    placed += [f"level: {placement.level}"] if placement.level else []
    out = [
        "---",
        f"title: {json.dumps(title, ensure_ascii=False)}",  # a JSON string is YAML too
        "kind: source-analysis",
        f"lang: {lang}",
        "status: draft",
        f"created: {created}",
        "tags: [source-analysis]",
        *placed,
        f"upstream: {upstream}",
        "---",
        "",
        f"# {words['title']}: `{path}`",
        "",
        # (No commit in the prose: a sync moves the page's references and its pin, never its
        # prose, and the trust line says which commit they were verified at.)
        f"> {words['generated'].format(upstream=upstream)}",
        "",
    ]
    if outline.parse_error:
        out += [f"> {words['syntax'].format(error=outline.parse_error)}", ""]
    out += [f"## {words['overview']}", "", f"> TODO(author): {words['overview_todo']}", ""]
    out += [
        f"## {words['outline']}",
        "",
        f"| {words['symbol']} | {words['kind']} | {words['lines']} |",
        "|---|---|---|",
    ]
    for symbol in outline.symbols:
        call = "()" if symbol.kind in ("function", "method") else ""
        out.append(
            f"| `{symbol.qualname}{call}` | {symbol.kind} | "
            f"`{_ref(path, symbol.start, symbol.end)}` |"
        )
    out += ["", f"## {words['relationships']}", ""]
    if outline.classes:
        out += ["```mermaid", class_diagram(outline), "```", ""]
    else:
        out += [words["no_classes"], ""]
    out += [f"## {words['walkthrough']}", ""]
    for number, symbol in enumerate([s for s in outline.symbols if s.depth == 0], 1):
        call = "()" if symbol.kind in ("function", "method") else ""
        out += [
            f"### 4.{number} `{symbol.name}{call}` ({_ref(path, symbol.start, symbol.end)})",
            "",
            f"> TODO(author): {words['symbol_todo']}",
            "",
        ]
        for member in outline.symbols:
            if member.depth == 1 and member.qualname == f"{symbol.qualname}.{member.name}":
                out += [
                    f"#### `{member.qualname}()` ({_ref(path, member.start, member.end)})",
                    "",
                    f"> TODO(author): {words['symbol_todo']}",
                    "",
                ]
    out += [f"## {words['pitfalls']}", "", f"> TODO(author): {words['pitfalls_todo']}", ""]
    return "\n".join(out)


def _ref(path: str, start: int, end: int) -> str:
    return f"{path}:{start}" if start == end else f"{path}:{start}-{end}"


def generate_source_page(
    manifest: Manifest,
    upstream_name: str,
    path: str,
    output: Path,
    *,
    lang: str = "en",
    force: bool = False,
    revision: str | None = None,
    placement: Placement | None = None,
) -> Path:
    """Write the source-analysis page of ``path`` to ``output``; raises `ConfigError`."""
    manifest.check_known([upstream_name])
    if lang not in _HEADINGS:
        raise ConfigError(f"unknown language '{lang}'", hint="use en or zh")
    if output.exists() and not force:
        raise ConfigError(
            f"{output} already exists; nothing was written",
            hint="pass --force to replace it, or --output another path",
        )
    upstream = manifest.upstreams[upstream_name]
    resolver = Resolver(manifest)
    try:
        store: GitStore = resolver.store(upstream)
        commit = upstream.pin if revision is None else store.resolve_given(revision)
        if commit is None:
            raise ConfigError(f"'{revision}' is not a commit of '{upstream_name}'")
        path = path.strip("/")
        entry = store.tree(commit).get(path)
        if entry is None or entry.kind != "blob" or entry.is_symlink:
            raise ConfigError(
                f"'{path}' is not a file of '{upstream_name}' at {commit[:7]}",
                hint="give the path from the repository root",
            )
        blob = store.blob(entry.sha)
        if blob.is_binary:
            raise ConfigError(f"'{path}' is a binary file; there is nothing to outline")
        if path.endswith((".py", ".pyi")):
            outline = outline_python(blob.data.decode("utf-8", "replace"))
        else:
            outline = outline_plain(blob.lines)
    finally:
        resolver.close()
    text = render_source_page(upstream_name, commit, path, outline, lang, placement=placement)
    if commit != upstream.pin:
        text = text.replace(
            f"upstream: {upstream_name}\n", f"upstream: {upstream_name}\npin: {commit}\n", 1
        )
    atomic_write(output, text.encode("utf-8"))
    log.info("wrote %s (%d symbols)", output, len(outline.symbols))
    return output


def default_output(docs_root: Path, path: str) -> Path:
    stem = re.sub(r"[^A-Za-z0-9]+", "-", path.rsplit(".", 1)[0]).strip("-").lower()
    return docs_root / "analysis" / f"{stem}-source-analysis.md"
