"""YAML read within bounds: what a document may cost before anything is built from it.

PyYAML's C composer recurses once per level of nesting (a deep enough document crashes the
process, not just the parse), and aliases let a few hundred bytes stand for gigabytes once
expanded. Pages' frontmatter and the manifest are read through these checks.
"""

from __future__ import annotations

import yaml

MAX_YAML_DEPTH = 64
"""Deepest nesting of lists and mappings read: frontmatter needs a few levels, and libyaml's
composer recurses in C (a deep enough document crashes the process, not just the parse)."""
MAX_YAML_VALUES = 10_000
"""Most values a document may stand for once its aliases are expanded: a few hundred bytes of
aliases of aliases ("billion laughs") otherwise stand for gigabytes when written out."""


_NESTING_INDICATORS = ("-", ":", "?", "[", "{")
"""Every level of nesting opens with one of these of its own: a sequence with ``-`` or ``[``,
a mapping with its first key's ``:`` or ``?``, or ``{``. A text with no more of them than the
depth allowed is not nested deeper."""


class YAMLLimitError(yaml.YAMLError):
    """A document beyond `MAX_YAML_DEPTH` or `MAX_YAML_VALUES`, or with an alias to itself."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.problem_mark = None


def check_depth(text: str, loader: type = yaml.SafeLoader) -> None:
    """Refuse nesting deeper than `MAX_YAML_DEPTH`, reading the event stream (which libyaml
    produces without recursion) before anything is composed."""
    if sum(map(text.count, _NESTING_INDICATORS)) <= MAX_YAML_DEPTH:
        return  # (a page's frontmatter, nearly always: parsed once, not twice)
    depth = 0
    for event in yaml.parse(text, Loader=loader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
            if depth > MAX_YAML_DEPTH:
                raise YAMLLimitError(f"nested more than {MAX_YAML_DEPTH} levels deep")
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def may_expand(text: str) -> bool:
    """Whether the document ``text`` could stand for more than `MAX_YAML_VALUES` values or
    hold an alias to a value it is inside of, so that `check_expansion` need walk it: only with
    an alias (``*name``), or when long enough to hold that many values without one (a value
    takes a third of a character at the least: ``?`` alone is a mapping of a null key to a null
    value). Walking took half of reading a page's usual frontmatter."""
    return "*" in text or 3 * len(text) > MAX_YAML_VALUES


def check_expansion(root: yaml.Node) -> None:
    """Refuse a document standing for more than `MAX_YAML_VALUES` values with its aliases
    expanded, or holding an alias to a node it is inside of (a value containing itself)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > MAX_YAML_VALUES:
                raise YAMLLimitError(
                    f"stands for more than {MAX_YAML_VALUES} values once its aliases are expanded"
                )
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise YAMLLimitError("an alias refers to a value that contains it")
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []
