"""The upstream manifest (``upstreams.yaml`` at the repository root).

Example::

    cache_dir: .cache/upstreams          # optional; where clones live (ignored by git)
    upstreams:
      slime:
        url: https://github.com/THUDM/slime.git   # clone URL, or a path relative to this file
        branch: main                     # tracked branch (default: main)
        pin: 0123456789abcdef0123456789abcdef01234567   # full commit SHA refs are checked at
        prefixes: [slime/]               # paths that route a ref here (default: [NAME/])
        search_roots: [slime/backends/]  # preferred directories for bare file names
        web_url: https://github.com/THUDM/slime   # browsable home (default: from a GitHub url)
        # code_url: "{web_url}/-/blob/{commit}/{path}#L{start}-{end}"   # site links, non-GitHub

Every problem is a `ConfigError` naming the file, line and key, and what to do about it.
"""

from __future__ import annotations

import difflib
import stat
import string
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from generator.files import atomic_write
from generator.model import Upstream
from generator.patterns import lazy_pattern
from generator.yamlsafe import check_depth

MANIFEST_NAME = "upstreams.yaml"
DEFAULT_CACHE_DIR = ".cache/upstreams"
_SHA = lazy_pattern(r"^[0-9a-f]{40}$")
_NAME = lazy_pattern(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")
_TOP_KEYS = ("cache_dir", "governance", "upstreams")
GOVERNANCE_MODES = ("lenient", "strict")
"""``governance:``: ``lenient`` (the default) reports the lifecycle and learning-path findings of
a page that names no spec as warnings; ``strict`` reports them as errors on every page."""
_UPSTREAM_KEYS = ("url", "branch", "pin", "prefixes", "search_roots", "web_url", "code_url")
_REQUIRED_KEYS = ("url", "pin")
CODE_URL_FIELDS = ("web_url", "kind", "commit", "path", "start", "end")
"""The placeholders a ``code_url`` pattern may use (see generator.site.codelinks)."""
_WEB_SCHEMES = ("http", "https")
_URL_UNSAFE = frozenset("\"'<>\\`{}")
"""Characters with no place in a link a reader clicks (quotes and angle brackets end an HTML
attribute or tag)."""
_GITHUB_URL = lazy_pattern(
    r"^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"(?P<slug>[^/]+/[^/]+?)(?:\.git)?/?$"
)


class ConfigError(Exception):
    """A configuration problem: a bad manifest, a missing clone, an unknown pin."""

    def __init__(
        self,
        message: str,
        *,
        file: Path | str | None = None,
        line: int | None = None,
        key: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.message = message
        self.file = str(file) if file is not None else None
        self.line = line
        self.key = key
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        location = ""
        if self.file:
            location = self.file + (f":{self.line}" if self.line else "") + ": "
        key = f"{self.key}: " if self.key else ""
        text = f"{location}{key}{self.message}"
        if self.hint:
            text += f"\n  hint: {self.hint}"
        return text


@dataclass
class Manifest:
    path: Path
    cache_dir: Path
    upstreams: dict[str, Upstream] = field(default_factory=dict)
    governance: str = "lenient"
    """One of `GOVERNANCE_MODES`."""
    lines: dict[str, int] = field(default_factory=dict)
    """Line of each key (``upstreams.slime.pin``), for error messages."""

    @property
    def root(self) -> Path:
        return self.path.parent

    def display_path(self) -> str:
        try:
            return str(self.path.relative_to(Path.cwd()))
        except ValueError:
            return str(self.path)

    def check_known(self, names: Sequence[str]) -> None:
        """Raise `ConfigError` naming those of ``names`` that no upstream is called, with the
        upstreams there are and the one a misspelt name likely meant."""
        unknown = [name for name in names if name not in self.upstreams]
        if not unknown:
            return
        known = sorted(self.upstreams)
        close = difflib.get_close_matches(unknown[0], known, n=1)
        hint = (f"did you mean {close[0]}? " if close else "") + (
            "known: " + ", ".join(known) if known else "none is declared: kb upstreams add NAME URL"
        )
        raise ConfigError(
            f"unknown upstream{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}",
            file=self.display_path(),
            hint=hint,
        )

    def error(self, message: str, key: str, hint: str | None = None) -> ConfigError:
        return ConfigError(
            message, file=self.display_path(), line=self.lines.get(key), key=key, hint=hint
        )


def find_manifest(start: Path) -> Path | None:
    """The nearest ``upstreams.yaml`` in ``start`` or one of its parents."""
    start = start.resolve()
    for directory in [start, *start.parents]:
        candidate = directory / MANIFEST_NAME
        if candidate.is_file():
            return candidate
    return None


MAX_MANIFEST_BYTES = 1024 * 1024
"""Largest manifest read: a few upstreams take a few hundred bytes."""


def load_manifest(path: Path) -> Manifest:
    """Load and validate a manifest. Raises `ConfigError`."""
    path = path.resolve()
    display = _display(path)
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a FIFO or device would hang or never end
            raise ConfigError("not a regular file", file=display)
        with path.open("rb") as file:
            raw = file.read(MAX_MANIFEST_BYTES + 1)
        if len(raw) > MAX_MANIFEST_BYTES:
            raise ConfigError(
                f"over {MAX_MANIFEST_BYTES // 1024} KiB, more than a manifest needs", file=display
            )
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(
            "no such file",
            file=display,
            hint="run this inside a knowledge base (kb init DIRECTORY starts one), or pass "
            "--manifest FILE",
        ) from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"not valid UTF-8 ({error.reason})", file=display) from None
    except OSError as error:
        raise ConfigError(f"cannot be read: {error.strerror or error}", file=display) from None
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        check_depth(text, loader)
        root = yaml.compose(text, Loader=loader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise ConfigError(
            f"not valid YAML: {problem}", file=display, line=mark.line + 1 if mark else None
        ) from None
    if root is None:
        raise ConfigError(
            "the manifest is empty",
            file=display,
            hint="declare at least one upstream under 'upstreams:'",
        )
    manifest = Manifest(path=path, cache_dir=path.parent / DEFAULT_CACHE_DIR)
    top = _mapping(root, "(top level)", display)
    for key, (key_node, value_node) in top.items():
        manifest.lines[key] = key_node.start_mark.line + 1
        if key not in _TOP_KEYS:
            raise _unknown_key(key, _TOP_KEYS, display, key_node)
        if key == "cache_dir":
            manifest.cache_dir = path.parent / _string(value_node, key, display)
            _check_cache_dir(manifest, _string(value_node, key, display))
        if key == "governance":
            mode = _string(value_node, key, display)
            if mode not in GOVERNANCE_MODES:
                raise ConfigError(
                    f"'{mode}' is not a governance mode",
                    file=display,
                    line=key_node.start_mark.line + 1,
                    key=key,
                    hint="use 'lenient' (the default) or 'strict'",
                )
            manifest.governance = mode
    if "upstreams" not in top:
        raise ConfigError(
            "missing key 'upstreams'",
            file=display,
            line=1,
            hint="add 'upstreams:' (an empty one is fine); kb upstreams add NAME URL declares "
            "one under it",
        )
    # None of them yet is a knowledge base just made (`kb init`): its references are reported as
    # unattributed until `kb upstreams add` declares one.
    upstream_nodes = _mapping(top["upstreams"][1], "upstreams", display, empty_ok=True)
    for name, (name_node, spec_node) in upstream_nodes.items():
        manifest.lines[f"upstreams.{name}"] = name_node.start_mark.line + 1
        # A name becomes a directory (cache_dir/NAME): letters, digits, _ . - only, never
        # "..", "a/b" or a trailing newline (fullmatch, not match).
        if not _NAME.fullmatch(name):
            raise ConfigError(
                f"'{name}' is not a valid upstream name (letters, digits, _ . -)",
                file=display,
                line=name_node.start_mark.line + 1,
                key="upstreams",
            )
        manifest.upstreams[name] = _upstream(name, spec_node, manifest, display)
    _check_prefixes(manifest, display)
    return manifest


def _upstream(name: str, node: yaml.Node, manifest: Manifest, display: str) -> Upstream:
    where = f"upstreams.{name}"
    spec = _mapping(node, where, display)
    values: dict[str, Any] = {}
    for key, (key_node, value_node) in spec.items():
        manifest.lines[f"{where}.{key}"] = key_node.start_mark.line + 1
        if key not in _UPSTREAM_KEYS:
            raise _unknown_key(key, _UPSTREAM_KEYS, display, key_node, where)
        if key in ("prefixes", "search_roots"):
            values[key] = _string_list(value_node, f"{where}.{key}", display)
        else:
            values[key] = _string(value_node, f"{where}.{key}", display)
    for key in _REQUIRED_KEYS:
        if key not in values:
            raise ConfigError(
                f"missing required key '{key}'",
                file=display,
                line=node.start_mark.line + 1,
                key=where,
                hint=_REQUIRED_HINTS[key],
            )
    pin = values["pin"].strip()
    if not _SHA.match(pin):
        raise ConfigError(
            f"'{pin}' is not a full 40-character lowercase commit SHA",
            file=display,
            line=manifest.lines[f"{where}.pin"],
            key=f"{where}.pin",
            hint=f"use the full SHA, e.g. `git -C {_rel(manifest.cache_dir / name)} rev-parse "
            f"{pin or 'HEAD'}`",
        )
    url_problem = _clone_url_problem(values["url"])
    if url_problem:
        raise manifest.error(url_problem, f"{where}.url", _CLONE_URL_HINT)
    prefixes = tuple(_directory(prefix) for prefix in values.get("prefixes", [f"{name}/"]))
    if "" in prefixes:
        # It would claim every path, bare names included, which are then never searched for.
        raise manifest.error(
            "an empty prefix claims every path, for this upstream alone",
            f"{where}.prefixes",
            "give directories (`megatron/`); a file at the repository's root is found by its "
            "bare name (`setup.py:3`), which every upstream is searched for",
        )
    search_roots = tuple(_directory(root) for root in values.get("search_roots", []))
    web_url = values.get("web_url")
    if web_url is None:
        github = _GITHUB_URL.match(values["url"])
        if github:
            web_url = f"https://github.com/{github.group('slug')}"
    # web_url and code_url end up in every code link the site shows to readers: only http(s)
    # links, and only patterns whose placeholders are filled in plainly.
    if web_url is not None:
        key = f"{where}.web_url" if "web_url" in values else f"{where}.url"
        problem = web_url_problem(web_url)
        if problem:
            raise manifest.error(
                f"'{web_url}' {problem}", key, "give the repository's https:// address"
            )
    code_url = values.get("code_url")
    if code_url is not None:
        problem = code_url_problem(code_url, web_url)
        if problem:
            raise manifest.error(
                problem,
                f"{where}.code_url",
                "placeholders: " + ", ".join("{" + n + "}" for n in CODE_URL_FIELDS) + ", e.g. "
                '"{web_url}/-/blob/{commit}/{path}#L{start}-{end}"',
            )
    return Upstream(
        name=name,
        url=values["url"],
        branch=values.get("branch", "main"),
        pin=pin,
        prefixes=prefixes,
        search_roots=search_roots,
        web_url=web_url.rstrip("/") if web_url else None,
        code_url=code_url,
        clone_dir=manifest.cache_dir / name,
    )


def web_url_problem(url: str) -> str | None:
    """What makes ``url`` unfit for a link shown to readers, or None: http or https with a host
    only, no white space, control or invisible characters, quotes or angle brackets."""
    bad = next((c for c in url if c in _URL_UNSAFE or unicodedata.category(c)[0] in "CZ"), None)
    if bad is not None:
        return f"contains {bad!r}, which has no place in a link"
    parts = urlsplit(url)
    if parts.scheme.lower() not in _WEB_SCHEMES:
        scheme = f"'{parts.scheme}:'" if parts.scheme else "no scheme"
        return f"is not an http or https address ({scheme})"
    if not parts.hostname:
        return "has no host"
    return None


def code_url_problem(pattern: str, web_url: str | None) -> str | None:
    """What is wrong with a ``code_url`` pattern, or None.

    Only the known placeholders, each written plainly: a format spec (``{start:>30000000}``
    builds a string of any size) or a conversion is refused, as are attribute and index lookups.
    The links the pattern makes must be http or https."""
    try:
        fields = [
            (name, spec, conversion)
            for _, name, spec, conversion in string.Formatter().parse(pattern)
            if name is not None
        ]
    except ValueError as error:
        return f"not a valid pattern ({error})"
    for name, spec, conversion in fields:
        if name not in CODE_URL_FIELDS:
            return f"unknown placeholder {{{name}}}"
        if spec or conversion:
            written = "{" + name + (f"!{conversion}" if conversion else "")
            written += (f":{spec}" if spec else "") + "}"
            return f"placeholder {written} has a format spec or conversion; write {{{name}}}"
    names = {name for name, _, _ in fields}
    if "commit" not in names or "path" not in names:
        return "the pattern needs {commit} and {path}"
    example = pattern.format(
        web_url=web_url or "https://example.org/owner/repo",
        kind="blob",
        commit="0" * 40,
        path="dir/file.py",
        start=1,
        end=2,
    )
    problem = web_url_problem(example)
    if problem:
        return f"makes links like '{example}', which {problem}"
    return None


_CLONE_URL_HINT = "a clone URL (https://, ssh://, git@host:path, file://) or a local path"


def _clone_url_problem(url: str) -> str | None:
    """What makes ``url`` unsafe to hand to ``git clone``, or None."""
    if not url.strip():
        return "is empty"
    if url.startswith("-"):
        return f"'{url}' starts with '-', which git would read as an option"
    if url.lower().startswith("ext::"):
        return f"'{url}' uses git's ext:: transport, which runs a command"
    if any(unicodedata.category(c) == "Cc" for c in url):
        return "contains a control character"
    return None


def _check_cache_dir(manifest: Manifest, value: str) -> None:
    """Refuse a ``cache_dir`` that cannot hold clones safely: clones go to cache_dir/NAME."""
    if not value.strip() or any(unicodedata.category(c) == "Cc" for c in value):
        raise manifest.error(
            "expected a directory path (no control characters)",
            "cache_dir",
            "e.g. cache_dir: .cache/upstreams",
        )
    cache = manifest.cache_dir.resolve()
    root = manifest.root.resolve()
    if cache == root or cache.is_relative_to(root / "docs"):
        raise manifest.error(
            f"'{value}' would put clones (cache_dir/NAME) among the knowledge base's own "
            + ("files" if cache == root else "pages"),
            "cache_dir",
            "use a directory of its own, e.g. cache_dir: .cache/upstreams",
        )


_REQUIRED_HINTS = {
    "url": "add 'url:' with the clone URL or a local path to the repository",
    "pin": "add 'pin:' with the full commit SHA the pages were written against",
}


def _directory(value: str) -> str:
    value = value.strip().removeprefix("./")
    return value if value.endswith("/") or not value else value + "/"


def _check_prefixes(manifest: Manifest, display: str) -> None:
    owners: dict[str, str] = {}
    for upstream in manifest.upstreams.values():
        for prefix in upstream.prefixes:
            if prefix in owners:
                raise ConfigError(
                    f"prefix '{prefix}' is claimed by '{owners[prefix]}' and '{upstream.name}'",
                    file=display,
                    line=manifest.lines.get(f"upstreams.{upstream.name}.prefixes"),
                    key=f"upstreams.{upstream.name}.prefixes",
                    hint="each prefix must route to exactly one upstream",
                )
            owners[prefix] = upstream.name


def _mapping(
    node: yaml.Node, where: str, display: str, *, empty_ok: bool = False
) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """The keys of a mapping node; with ``empty_ok``, a key with no value (``upstreams:``) too."""
    if empty_ok and isinstance(node, yaml.ScalarNode) and node.tag.endswith(":null"):
        return {}
    if not isinstance(node, yaml.MappingNode):
        raise ConfigError(
            f"expected a mapping of keys to values, found {_kind(node)}",
            file=display,
            line=node.start_mark.line + 1,
            key=where,
        )
    result: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            raise ConfigError(
                "keys must be plain strings",
                file=display,
                line=key_node.start_mark.line + 1,
                key=where,
            )
        key = key_node.value
        if key in result:
            raise ConfigError(
                f"duplicate key '{key}'", file=display, line=key_node.start_mark.line + 1, key=where
            )
        result[key] = (key_node, value_node)
    return result


def _string(node: yaml.Node, where: str, display: str) -> str:
    if not isinstance(node, yaml.ScalarNode) or (node.value == "" and node.tag.endswith("null")):
        raise ConfigError(
            f"expected a string, found {_kind(node)}",
            file=display,
            line=node.start_mark.line + 1,
            key=where,
        )
    return str(node.value)


def _string_list(node: yaml.Node, where: str, display: str) -> list[str]:
    if isinstance(node, yaml.ScalarNode):
        return [_string(node, where, display)]
    if not isinstance(node, yaml.SequenceNode):
        raise ConfigError(
            f"expected a list of strings, found {_kind(node)}",
            file=display,
            line=node.start_mark.line + 1,
            key=where,
        )
    return [_string(item, where, display) for item in node.value]


def _kind(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    if node.tag.endswith("null"):
        return "nothing"
    return f"'{node.value}'"


def _unknown_key(
    key: str, allowed: tuple[str, ...], display: str, node: yaml.Node, where: str | None = None
) -> ConfigError:
    close = difflib.get_close_matches(key, allowed, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    hint += "allowed keys: " + ", ".join(allowed)
    return ConfigError(
        f"unknown key '{key}'",
        file=display,
        line=node.start_mark.line + 1,
        key=where or key,
        hint=hint,
    )


def _display(path: Path) -> str:
    return _rel(path)


def _rel(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def moved_pin_bytes(manifest: Manifest, name: str, target: str) -> bytes | None:
    """The manifest's bytes with the SHA on ``name``'s ``pin:`` line replaced by ``target``
    (comments stay as they are), or None when the pin is already there."""
    upstream = manifest.upstreams[name]
    if upstream.pin == target:
        return None
    line_number = manifest.lines[f"upstreams.{name}.pin"]
    raw = manifest.path.read_bytes()
    lines = raw.decode("utf-8").splitlines(keepends=True)
    line = lines[line_number - 1]
    if upstream.pin not in line:
        raise ConfigError(
            f"expected the pin {upstream.pin} on this line",
            file=manifest.path,
            line=line_number,
            key=f"upstreams.{name}.pin",
        )
    lines[line_number - 1] = line.replace(upstream.pin, target, 1)
    return "".join(lines).encode("utf-8")


def move_pin(manifest: Manifest, name: str, target: str) -> bool:
    """Rewrite the SHA on the manifest's ``pin:`` line for ``name``; comments stay as they are."""
    data = moved_pin_bytes(manifest, name, target)
    if data is None:
        return False
    atomic_write(manifest.path, data)
    return True
