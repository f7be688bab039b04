#!/usr/bin/env python3
"""A seeded corpus of hostile pages: what a careless or malicious knowledge base may hold.

    python scripts/hostile_corpus.py DIR [--pages 500] [--seed 1]

Shared by the fuzz tests (tests/test_fuzz.py) and the fuzz run (scripts/fuzz.py). It builds, in
DIR, a small upstream (``cache/lib``, a real git repository), ``upstreams.yaml``, ``mkdocs.yml``
and ``docs/`` holding PAGES pages (plus the odd special file), each of one hostile kind (see
`KINDS`) drawn with the seed, with random sizes and placements, and a few ordinary pages between
them so that a run must still check those. `build` returns which kind each page is.

Every kind is something a run must turn into findings or skip with a finding, never a
traceback, a hang or a blown memory budget.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from generator.upstream.gitbuild import RepoBuilder  # noqa: E402

LIB_PY = '''"""A small library the pages cite."""

import os


def alpha(value):
    """Add one."""
    total = value + 1
    return total


class Beta:
    def gamma(self):
        return alpha(2)

    def delta(self):
        return os.sep
'''

FRONT = "---\ntitle: Hostile\nupstream: lib\n---\n\n"
GOOD_REF = "`lib/core.py:6-9`"


def _ordinary(rng: random.Random) -> str:
    return (
        f"{FRONT}# Ordinary {rng.randint(0, 10**6)}\n\nSee {GOOD_REF} and "
        '`lib/core.py:12-13`.\n\n```python\ndef alpha(value):\n    """Add one."""\n'
        "    total = value + 1\n    return total\n```\n"
    )


# -- page kinds: each returns the page's bytes -----------------------------------------------------


def long_link_name(rng: random.Random) -> bytes:
    name = "a" * rng.randint(256, 5000)
    return f"{FRONT}# Long\n\n[x]({name}.md) and [y](dir/{name}/z.md#{name})\n".encode()


def deep_frontmatter(rng: random.Random) -> bytes:
    depth = rng.randint(200, 3000)
    style = rng.choice(["flow-list", "flow-map", "block"])
    if style == "flow-list":
        value = "[" * depth + "]" * depth
    elif style == "flow-map":
        value = "{a: " * depth + "1" + "}" * depth
    else:
        value = "".join(f"\n{'  ' * (level + 1)}k{level}:" for level in range(depth)) + " 1"
    return f"---\ntitle: Deep\nnested: {value}\n---\n\n# Deep\n\n{GOOD_REF}\n".encode()


def reflog_permalink(rng: random.Random) -> bytes:
    revision = rng.choice(["main@{1}", "HEAD@{yesterday}", "main^{tree}", "-n", "@", "main~1:x"])
    return (
        f"{FRONT}# Reflog\n\n"
        f"[code](https://github.com/test/lib/blob/{revision}/lib/core.py#L1-L3) and "
        f"https://github.com/test/lib/blob/{revision}/lib/core.py#L6\n\n{GOOD_REF}\n"
    ).encode()


def yaml_tags(rng: random.Random) -> bytes:
    tag = rng.choice(
        [
            "!!timestamp x",
            "!!map [1]",
            "!!seq {a: 1}",
            "!!int abc",
            "!!float x",
            "!!binary '%%%'",
            "!!python/object/apply:os.system ['true']",
            "!custom 1",
            "!!set [1]",
            "&a [*a]",
        ]
    )
    key = rng.choice(["title", "upstream", "pin", "held_refs", "order", "status", "extra"])
    return f"---\n{key}: {tag}\n---\n\n# Tags\n\n{GOOD_REF}\n".encode()


def nul_bytes(rng: random.Random) -> bytes:
    where = rng.choice(["link", "ref", "frontmatter", "text"])
    if where == "link":
        body = "[x](pa\x00th.md) [y](other.md#a\x00b)"
    elif where == "ref":
        body = "`lib/co\x00re.py:1-3` and lib/core.py:1\x00-3"
    elif where == "frontmatter":
        return b"---\ntitle: a\x00b\nupstream: li\x00b\n---\n\n# Nul\n"
    else:
        body = "text \x00\x00 with nul"
    return f"{FRONT}# Nul\n\n{body}\n".encode()


def bad_held_refs(rng: random.Random) -> bytes:
    entry = rng.choice(
        [
            "held_refs: [{text: 'lib/core.py:6-9', upstream: [a]}]",
            "held_refs: [{text: 'lib/core.py:6-9', occurrence: abc}]",
            "held_refs: [{text: 'lib/core.py:6-9', pin: {a: 1}}]",
            "held_refs: {a: 1}",
            "held_refs: 5",
            "held_refs: [[1, 2]]",
            "held_refs: [{text: [x]}]",
            "held_refs: [{text: 'lib/core.py:6-9', occurrence: -3, pin: 123}]",
            "held_refs: [{text: 'lib/core.py:6-9', occurrence: 1e400}]",
            "held_refs: [null]",
        ]
    )
    return f"---\ntitle: Held\nupstream: lib\n{entry}\n---\n\n# Held\n\n{GOOD_REF}\n".encode()


def deep_list(rng: random.Random) -> bytes:
    depth = rng.randint(300, 1500)
    lines = [f"{'  ' * level}- level {level} `lib/core.py:6`" for level in range(depth)]
    return (FRONT + "# Deep list\n\n" + "\n".join(lines) + "\n").encode()


def deep_quote(rng: random.Random) -> bytes:
    depth = rng.randint(300, 3000)
    return (FRONT + "# Deep quote\n\n" + ">" * depth + " `lib/core.py:6`\n").encode()


def non_utf8(rng: random.Random) -> bytes:
    raw = rng.choice([b"\xff\xfe\xfa", b"caf\xe9", b"\x80\x81", b"\xed\xa0\x80"])
    return FRONT.encode() + b"# Latin\n\n" + raw + b" " + GOOD_REF.encode() + b"\n"


def utf16(rng: random.Random) -> bytes:
    return (FRONT + "# UTF-16\n\n" + GOOD_REF + "\n").encode("utf-16")


def billion_laughs(rng: random.Random) -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, rng.randint(8, 10)):
        previous = chr(ord("a") + level - 1)
        name = chr(ord("a") + level)
        lines.append(f"{name}: &{name} [{','.join(['*' + previous] * 9)}]")
    return ("---\n" + "\n".join(lines) + "\ntitle: Laughs\n---\n\n# Laughs\n").encode()


def long_fence_line(rng: random.Random) -> bytes:
    size = rng.randint(200_000, 1_000_000)
    filler = rng.choice(["a", "a:", "x.py:", "# ", "`", "|", "/", "-", "1"])
    line = (filler * (size // len(filler) + 1))[:size]
    inside = rng.random() < 0.7
    body = f"```python\n{line}\n```\n" if inside else f"{line}\n"
    return (FRONT + "# Long line\n\n" + body + GOOD_REF + "\n").encode()


def many_missing_files(rng: random.Random) -> bytes:
    count = rng.randint(500, 2000)
    refs = "\n".join(f"- `lib/missing_{n}.py:{n + 1}-{n + 5}`" for n in range(count))
    return (FRONT + "# Missing\n\n" + refs + "\n").encode()


def newline_in_value(rng: random.Random) -> bytes:
    value = rng.choice(
        [
            "x\\n::error file=README.md::forged",
            "x\\n\\u001b[31mred\\u001b[0m",
            "x\\r\\n##[error]forged",
            "\\u001b]0;title\\u0007",
        ]
    )
    key = rng.choice(["upstream", "pin", "title"])
    return f'---\ntitle: Forge\n{key}: "{value}"\n---\n\n# Forge\n\n{GOOD_REF}\n'.encode()


def escapes_in_text(rng: random.Random) -> bytes:
    payload = rng.choice(
        ["\x1b[2J\x1b[H", "\x1b]8;;http://evil\x07link\x1b]8;;\x07", "\r::error::forged", "\x07"]
    )
    return (
        f"{FRONT}# Escapes\n\n`lib/{payload}core.py:1-3` and [x]({payload}.md) and "
        f"`lib/core.py:{payload}9`\n\n::warning file=x::forged\n"
    ).encode()


def huge_numbers(rng: random.Random) -> bytes:
    big = "9" * rng.randint(20, 5000)
    return (
        f"{FRONT}# Numbers\n\n`lib/core.py:{big}` and `lib/core.py:3-{big}` and "
        f"https://github.com/test/lib/blob/main/lib/core.py#L{big}-L{big}\n"
        f"| path | lines |\n|---|---|\n| `lib/core.py` | {big[:9]} |\n"
    ).encode()


def unterminated(rng: random.Random) -> bytes:
    choice = rng.choice(["fence", "frontmatter", "comment", "code-span", "table"])
    if choice == "fence":
        return (FRONT + "# Open\n\n" + GOOD_REF + "\n\n```python\ndef alpha(value):\n").encode()
    if choice == "frontmatter":
        return b"---\ntitle: open\nupstream: lib\n\n# Never closed\n\n`lib/core.py:1`\n"
    if choice == "comment":
        return (FRONT + "# Comment\n\n<!-- never closed " + GOOD_REF + "\n").encode()
    if choice == "code-span":
        return (FRONT + "# Span\n\n`" * 500 + GOOD_REF + "\n").encode()
    return (FRONT + "# Table\n\n" + "|" * 20000 + "\n" + "| a " * 5000 + "|\n").encode()


def odd_frontmatter(rng: random.Random) -> bytes:
    return rng.choice(
        [
            b"---\n- a list\n- not a map\n---\n\n# List\n",
            b"---\njust a string\n---\n\n# String\n",
            b"---\n---\n\n# Empty\n",
            b"---\n: : :\n---\n",
            b"---\ntitle: [unclosed\n---\n\n# Bad\n",
            b"---\nupstream: 5\npin: [1, 2]\ntitle: {a: b}\n---\n\n`lib/core.py:1`\n",
            b"\xef\xbb\xbf---\ntitle: bom\nupstream: lib\n---\n\n`lib/core.py:1`\n",
            b"---\r\ntitle: crlf\r\nupstream: lib\r\n---\r\n\r\n`lib/core.py:6-9`\r\n",
            b"---\nupstream: nonexistent\n---\n\n`lib/core.py:1`\n",
            b"---\nupstream: ../../etc\npin: '; rm -rf /'\n---\n\n`lib/core.py:1`\n",
        ]
    )


def empty_or_binary(rng: random.Random) -> bytes:
    return rng.choice(
        [
            b"",
            b"\n",
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 20,
            bytes(rng.getrandbits(8) for _ in range(4000)),
            b"\x00" * 10000,
        ]
    )


def many_things(rng: random.Random) -> bytes:
    count = rng.randint(2000, 20000)
    choice = rng.choice(["headings", "links", "refdefs", "footnotes", "fences", "spans"])
    if choice == "headings":
        body = "".join("## Same heading\n\n" for _ in range(count))
    elif choice == "links":
        body = "".join(f"[l{n}](#nowhere-{n}) " for n in range(count))
    elif choice == "refdefs":
        body = "".join(f"[r{n}]: missing-{n}.md\n" for n in range(count))
    elif choice == "footnotes":
        body = "".join(f"x[^{n}]\n\n[^{n}]: `lib/core.py:{n % 15 + 1}`\n" for n in range(count))
    elif choice == "fences":
        body = "".join("`lib/core.py:6-9`\n\n```python\ndef alpha(value):\n```\n" * (count // 10))
    else:
        body = "`" * count
    return (FRONT + "# Many\n\n" + body + "\n").encode()


def odd_unicode(rng: random.Random) -> bytes:
    payload = rng.choice(
        [
            "lib/core.py\u202e:1-3",  # right-to-left override
            "lib/core\u200b.py:1-3",  # zero-width space
            "ｌｉｂ/core.py：１-３",  # full-width letters and digits
            "lib/core.py:١-٣",  # Arabic-Indic digits
            "lib/core.py:1\u20133",
            "\ud800".encode("utf-8", "surrogatepass").decode("utf-8", "replace"),
            "lib/" + "é" * 300 + ".py:1",
        ]
    )
    return f"{FRONT}# Unicode\n\n`{payload}` and {payload}\n".encode("utf-8", "surrogatepass")


def dangerous_links(rng: random.Random) -> bytes:
    target = rng.choice(
        [
            "javascript:alert(1)",
            "file:///etc/passwd",
            "../../../../etc/passwd",
            "/etc/passwd",
            "data:text/html,<script>alert(1)</script>",
            "\\\\server\\share\\x.md",
            "C:\\Windows\\x.md",
            "%2e%2e/%2e%2e/etc/passwd",
            "a.md#" + "x" * 10000,
        ]
    )
    return f"{FRONT}# Links\n\n[x]({target}) <{target}> [y][r]\n\n[r]: {target}\n".encode()


def html_and_mermaid(rng: random.Random) -> bytes:
    return (
        FRONT
        + "# Mermaid\n\n```mermaid\ngraph TD\n"
        + "".join(
            f"  n{n}[lib/core.py:{n % 15 + 1}] --> n{n + 1}\n" for n in range(rng.randint(10, 3000))
        )
        + "```\n\n<script>alert(1)</script>\n<div markdown>\n`lib/core.py:6`\n"
    ).encode()


PageKind = Callable[[random.Random], bytes]
KINDS: dict[str, PageKind] = {
    kind.__name__.replace("_", "-"): kind
    for kind in [
        long_link_name,
        deep_frontmatter,
        reflog_permalink,
        yaml_tags,
        nul_bytes,
        bad_held_refs,
        deep_list,
        deep_quote,
        non_utf8,
        utf16,
        billion_laughs,
        long_fence_line,
        many_missing_files,
        newline_in_value,
        escapes_in_text,
        huge_numbers,
        unterminated,
        odd_frontmatter,
        empty_or_binary,
        many_things,
        odd_unicode,
        dangerous_links,
        html_and_mermaid,
    ]
}
"""Page kinds by name."""

# -- special files: each creates something at ``path`` (a page name in docs/) ---------------


def _symlink(target: str) -> Callable[[Path], None]:
    def make(path: Path) -> None:
        path.symlink_to(target)

    return make


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _looping(path: Path) -> None:
    partner = path.with_name(path.stem + "-partner.md")
    path.symlink_to(partner.name)
    partner.symlink_to(path.name)


def _outside(path: Path) -> None:
    secret = path.parent.parent.parent / "outside-secret.md"
    secret.write_text("# Secret\n\nThis page lives outside docs/.\n", "utf-8")
    path.symlink_to(os.path.relpath(secret, path.parent))


def _directory(path: Path) -> None:
    path.mkdir()
    (path / "inner.md").write_text(_ordinary(random.Random(0)), "utf-8")


def _unreadable(path: Path) -> None:
    path.write_text(_ordinary(random.Random(0)), "utf-8")
    path.chmod(0)


SPECIAL: dict[str, Callable[[Path], None]] = {
    "symlink-dangling": _symlink("does-not-exist.md"),
    "symlink-loop": _looping,
    "symlink-dev-zero": _symlink("/dev/zero"),
    "symlink-dev-urandom": _symlink("/dev/urandom"),
    "symlink-outside-docs": _outside,
    "fifo": _fifo,
    "directory-named-md": _directory,
    "unreadable": _unreadable,
}
"""Special files by name: created once each in every corpus (they are few in real life)."""


def build(root: Path, pages: int = 500, seed: int = 1, kinds: list[str] | None = None) -> dict:
    """The corpus in ``root``; returns ``{"kinds": {page rel: kind}, "ordinary": [rel...]}``."""
    rng = random.Random(seed)
    repo = RepoBuilder.init(root / "cache" / "lib")
    pin = repo.commit({"lib/core.py": LIB_PY}, "Add the library")
    (root / "upstreams.yaml").write_text(
        f"cache_dir: cache\nupstreams:\n  lib:\n    url: {repo.path}\n    pin: {pin}\n"
        "    web_url: https://github.com/test/lib\n",
        "utf-8",
    )
    (root / "mkdocs.yml").write_text(
        "site_name: Hostile\ndocs_dir: docs\nplugins:\n  - knowledge-base:\n"
        '      manifest: upstreams.yaml\n      mermaid: ""\n',
        "utf-8",
    )
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "index.md").write_text("# Home\n\nThe hostile corpus.\n", "utf-8")
    names = kinds or sorted(KINDS)
    made: dict[str, str] = {}
    ordinary: list[str] = ["index.md"]
    for number in range(pages):
        folder = docs / f"part{number // 100}"
        folder.mkdir(exist_ok=True)
        rel = f"part{number // 100}/page_{number}.md"
        if number % 10 == 9:
            (docs / rel).write_text(_ordinary(rng), "utf-8")
            ordinary.append(rel)
            continue
        kind = names[rng.randrange(len(names))]
        (docs / rel).write_bytes(KINDS[kind](rng))
        made[rel] = kind
    if kinds is None:
        special = docs / "special"
        special.mkdir(exist_ok=True)
        for name, make in SPECIAL.items():
            make(special / f"{name}.md")
            made[f"special/{name}.md"] = name
    return {"kinds": made, "ordinary": ordinary, "pin": pin}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    corpus = build(args.directory, args.pages, args.seed)
    print(
        f"{len(corpus['kinds'])} hostile pages, {len(corpus['ordinary'])} ordinary, "
        f"in {args.directory}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
