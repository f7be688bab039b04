"""The Markdown extensions the site depends on, added to ``mkdocs.yml``'s when it lacks them.

A team adds ``plugins: [knowledge-base]`` to its own ``mkdocs.yml`` and nothing else. Its pages
were written for GitHub, and the verifier checks their ``#anchors`` as GitHub makes them, so the
plugin makes the site read Markdown as GitHub does (`GITHUB_MARKDOWN`) and give headings
GitHub's ids (`ANCHORS`). An extension the user configured is left as configured, options and
all; only a configuration that cannot agree with what the verifier checks is refused, with the
option to change.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from mkdocs.config.defaults import MkDocsConfig
from pymdownx.superfences import fence_code_format

from generator.refs.slugs import slugify

log = logging.getLogger("mkdocs.plugins.knowledge_base")

ANCHORS = "generator.site.anchors"
GITHUB_BLOCKS = "generator.site.gfm"
SUPERFENCES = "pymdownx.superfences"
MERMAID_FENCE = {"name": "mermaid", "class": "mermaid", "format": fence_code_format}
"""Material's native Mermaid support: the fence becomes ``<pre class="mermaid">``."""

# List extensions that replace Python-Markdown's list parsing: a user who chose one keeps it,
# and GitHub's block structure (which re-indents lists for Python-Markdown's) is not added.
OWN_LIST_HANDLING = frozenset({"mdx_truly_sane_lists", "mdx_breakless_lists", "mdx_better_lists"})


@dataclass(frozen=True)
class Wanted:
    """An extension the site needs, with the options it gets when the user has not set it up."""

    name: str
    why: str
    options: dict[str, Any] = field(default_factory=dict)


GITHUB_MARKDOWN = (
    Wanted("footnotes", "footnotes ([^1])"),
    Wanted("md_in_html", "Markdown inside <details> blocks"),
    Wanted("pymdownx.tasklist", "task lists (- [ ])", {"custom_checkbox": True}),
    Wanted("pymdownx.tilde", "~~strikethrough~~", {"subscript": False}),
    Wanted(
        SUPERFENCES,
        "fenced code inside list items, Mermaid diagrams",
        {"custom_fences": [MERMAID_FENCE]},
    ),
    Wanted(GITHUB_BLOCKS, "lists right after a paragraph, lists nested two spaces in"),
)
"""What GitHub renders that Python-Markdown does not by itself (tables and fenced code are
MkDocs' own defaults)."""


class MarkdownConfigError(Exception):
    """``markdown_extensions`` configures an extension in a way the site cannot work with."""


def configure_markdown(config: MkDocsConfig, *, github_markdown: bool) -> list[str]:
    """Add the extensions the site needs to ``config`` where it lacks them; the names added.

    ``github_markdown``: also the ones that render Markdown written for GitHub as GitHub does
    (the plugin's ``github_markdown`` option). GitHub's anchors are always needed: the verifier
    checks links against them.
    """
    configured = {canonical_name(extension) for extension in config.markdown_extensions}
    _check_toc(config)
    added = []
    toc_options = _options(config, "toc")
    if "slugify" not in toc_options:
        toc_options["slugify"] = slugify
        config.mdx_configs["toc"] = toc_options
    wanted = [Wanted(ANCHORS, "GitHub's heading ids")]
    if github_markdown:
        wanted.extend(GITHUB_MARKDOWN)
        if SUPERFENCES in configured:
            _add_mermaid_fence(config)
    for extension in wanted:
        if extension.name in configured:
            continue
        if extension.name == GITHUB_BLOCKS and configured & OWN_LIST_HANDLING:
            log.info(
                "knowledge-base: lists are left to %s, as mkdocs.yml configures; a list right "
                "after a paragraph may not render as on GitHub",
                ", ".join(sorted(configured & OWN_LIST_HANDLING)),
            )
            continue
        config.markdown_extensions.append(extension.name)
        if extension.options:
            config.mdx_configs[extension.name] = {
                key: list(value) if isinstance(value, list) else value
                for key, value in extension.options.items()
            }
        added.append(extension.name)
    if added:
        log.debug("knowledge-base: Markdown extensions added: %s", ", ".join(added))
    return added


def canonical_name(extension: Any) -> str:
    """``markdown.extensions.toc`` and ``toc`` alike as ``toc``; an instance by its module."""
    name = extension if isinstance(extension, str) else type(extension).__module__
    name = name.split(":", 1)[0]
    return name.removeprefix("markdown.extensions.")


def _options(config: MkDocsConfig, name: str) -> dict[str, Any]:
    for key in (name, f"markdown.extensions.{name}"):
        if key in config.mdx_configs:
            return config.mdx_configs[key]
    return {}


def _check_toc(config: MkDocsConfig) -> None:
    chosen = _options(config, "toc").get("slugify")
    if chosen is None or chosen is slugify:
        return
    shown = f"{getattr(chosen, '__module__', '?')}.{getattr(chosen, '__qualname__', chosen)}"
    raise MarkdownConfigError(
        f"mkdocs.yml sets markdown_extensions: toc: slugify to {shown}, but the knowledge base "
        "checks every #anchor against the ids GitHub gives headings, which the site's headings "
        "must have too; remove that `slugify` line (the plugin sets GitHub's) or set it to "
        "!!python/name:generator.refs.slugs.slugify"
    )


def _add_mermaid_fence(config: MkDocsConfig) -> None:
    """The user's superfences, with Material's Mermaid fence added when it has none."""
    options = _options(config, SUPERFENCES)
    fences = list(options.get("custom_fences") or [])
    if any(isinstance(fence, dict) and fence.get("name") == "mermaid" for fence in fences):
        return
    options["custom_fences"] = [*fences, MERMAID_FENCE]
    config.mdx_configs[SUPERFENCES] = options
