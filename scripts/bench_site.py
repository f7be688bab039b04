#!/usr/bin/env python3
"""Time the site build with the knowledge-base plugin against plain ``mkdocs build``.

    python scripts/bench_site.py [--pages 500] [--runs 3]

Two corpora, each built in the same run with and without the plugin (verification, code links,
nav and learning-path boxes); everything else in mkdocs.yml (Material, search with jieba, tags,
Mermaid fences) stays the same:

* the demo (``docs/``, ``specs/`` and ``upstreams.yaml`` of this repository, after
  ``make demo-upstreams``), so the plugin's build also generates the spec board;
* a generated corpus of PAGES pages with 20 references each into one generated upstream, in
  four learning paths.

Each build is a fresh ``mkdocs build`` process, as users run it, with the verification cache off
(each build verifies every page); the best of RUNS is kept and the ratio printed (target: the
plugin adds under 15%).

The code cards and the trust line are measured in the same run: the plugin's build against the
plugin's build with ``code_cards: false`` and ``trust_line: false``, in time (ratio) and in the
size of the pages' HTML (what a reader downloads: the cards are inline ``<template>`` elements).
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.upstream.gitbuild import RepoBuilder  # noqa: E402

MERMAID = ROOT / ".cache" / "node" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
LEVELS = ("beginner", "intermediate", "advanced", "expert")


def configs(root: Path) -> tuple[Path, Path, Path]:
    """mkdocs.yml with the plugin, the same without it, and with the plugin but without code
    cards and trust line (written next to each other)."""
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    # Without the verification cache, every build verifies every page: the figure is the cost
    # of a first build, not of one after a small edit.
    text = text.replace(
        "  - knowledge-base:\n",
        f"  - knowledge-base:\n      mermaid: {MERMAID}\n      cache: false\n",
    )
    with_plugin = root / "mkdocs.yml"
    with_plugin.write_text(text, "utf-8")
    plain = re.sub(r"  - knowledge-base:\n(?:      .*\n)+", "", text)
    plain = plain.replace("  - generator.site.anchors\n", "")
    assert "- knowledge-base" not in plain
    without = root / "mkdocs-plain.yml"
    without.write_text(plain, "utf-8")
    no_cards = root / "mkdocs-no-cards.yml"
    no_cards.write_text(
        text.replace(
            "      cache: false\n",
            "      cache: false\n      code_cards: false\n      trust_line: false\n",
        ),
        "utf-8",
    )
    return with_plugin, without, no_cards


class PageSize(NamedTuple):
    raw: int
    gzipped: int
    """As a server sends it compressed (gzip -6)."""
    cards: bool
    """Whether the page embeds code cards."""


def html_sizes(site: Path) -> dict[str, PageSize]:
    """The size of each page's HTML in a built site, by path."""
    sizes = {}
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue
        data = page.read_bytes()
        sizes[str(page.relative_to(site))] = PageSize(
            len(data), len(gzip.compress(data, 6)), b'<template id="kb-card-' in data
        )
    return sizes


def build_seconds(config: Path) -> float:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--no-strict", "-q", "-f", str(config)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"mkdocs build -f {config.name} failed:\n{result.stderr}")
    return elapsed


def compare(name: str, root: Path, runs: int) -> float:
    with_plugin, without, no_cards = configs(root)
    build_seconds(with_plugin)  # warm the file cache and jieba's model cache
    times: dict[str, list[float]] = {"plugin": [], "plain": [], "no-cards": []}
    sizes: dict[str, dict[str, int]] = {}
    for _ in range(runs):
        times["plain"].append(build_seconds(without))
        times["no-cards"].append(build_seconds(no_cards))
        sizes["no-cards"] = html_sizes(root / "site")
        times["plugin"].append(build_seconds(with_plugin))
        sizes["plugin"] = html_sizes(root / "site")
    plain, plugin = min(times["plain"]), min(times["plugin"])
    ratio = plugin / plain
    print(
        f"{name:<22} plain {plain:6.2f} s   with plugin {plugin:6.2f} s   "
        f"ratio {ratio:.3f} (+{(ratio - 1) * 100:.1f}%)"
    )
    before, after = min(times["no-cards"]), plugin
    print(
        f"{'  code cards':<22} without {before:6.2f} s   with        {after:6.2f} s   "
        f"ratio {after / before:.3f} ({(after / before - 1) * 100:+.1f}%)"
    )
    carded = [page for page, size in sizes["plugin"].items() if size.cards]
    for label, field in (("HTML", "raw"), ("gzipped", "gzipped")):
        old = {page: getattr(size, field) for page, size in sizes["no-cards"].items()}
        added = [getattr(sizes["plugin"][page], field) - old.get(page, 0) for page in carded]
        print(
            f"{'':<22} {label}: +{sum(added) / max(len(added), 1) / 1024:.1f} KiB a page with "
            f"cards on average, +{max(added, default=0) / 1024:.1f} KiB at most "
            f"({len(carded)} of {len(old)} pages; they weigh "
            f"{sum(old.get(page, 0) for page in carded) / max(len(carded), 1) / 1024:.1f} KiB "
            "on average without)"
        )
    return ratio


def demo_corpus(directory: Path) -> Path:
    root = directory / "demo"
    shutil.copytree(ROOT / "docs", root / "docs")
    # The specs too, so the build with the plugin also generates the spec board.
    shutil.copytree(ROOT / "specs", root / "specs")
    shutil.copytree(ROOT / ".lean-spec", root / ".lean-spec")
    manifest = (ROOT / "upstreams.yaml").read_text("utf-8")
    cache = ROOT / ".cache" / "upstreams"
    if not cache.is_dir():
        raise SystemExit("the demo upstreams are missing: run `make demo-upstreams` first")
    (root / "upstreams.yaml").write_text(
        manifest.replace("cache_dir: .cache/upstreams", f"cache_dir: {cache}"), "utf-8"
    )
    return root


def generated_corpus(directory: Path, pages: int, rng: random.Random) -> Path:
    root = directory / "generated"
    files: dict[str, str] = {}
    for index in range(40):
        body = [f'"""Module {index}."""', ""]
        for number in range(20):
            body += [f"def func_{index}_{number}(x):", f"    return x + {number}", ""]
        files[f"gen/mod_{index}.py"] = "\n".join(body) + "\n"
    repo = RepoBuilder.init(root / "cache" / "gen")
    pin = repo.commit(files, "Generated upstream", date="2025-01-01T00:00:00+00:00")
    (root / "upstreams.yaml").write_text(
        f"cache_dir: cache\nupstreams:\n  gen:\n    url: {repo.path}\n    pin: {pin}\n"
        "    web_url: https://github.com/example-org/gen\n",
        "utf-8",
    )
    docs = root / "docs"
    (docs / "paths").mkdir(parents=True)
    (docs / "index.md").write_text(
        "---\ntitle: Home\nkind: index\n---\n# Home\n\n<!-- kb:learning-paths -->\n", "utf-8"
    )
    for level in LEVELS:
        (docs / "paths" / f"{level}.md").write_text(
            f"---\ntitle: {level.capitalize()} path\nkind: learning-path\npath: {level}\n"
            f"level: {level}\n---\n# {level.capitalize()} path\n\n<!-- kb:path-pages -->\n",
            "utf-8",
        )
    for number in range(pages):
        level = LEVELS[number % len(LEVELS)]
        depends = f"depends_on: [pages/p{number - 4:04d}.md]\n" if number >= 4 else ""
        lines = [
            "---",
            f"title: Page {number}",
            f"level: {level}",
            f"paths: [{level}]",
            f"order: {number}",
            f"tags: [t{number % 10}, {level}]",
            "upstream: gen",
            depends.rstrip("\n"),
            "---",
            f"# Page {number}",
            "",
        ]
        for section in range(4):
            lines += [f"## Section {section}", ""]
            for _ in range(5):
                index, function = rng.randrange(40), rng.randrange(20)
                first = 3 + function * 3
                lines.append(
                    f"`func_{index}_{function}()` is at `gen/mod_{index}.py:{first}-{first + 1}`;"
                    " it adds its argument to a constant, as every generated function does."
                )
                lines.append("")
            lines += ["```mermaid", "graph LR", "  A --> B", "```", ""]
        text = "\n".join(line for line in lines if line is not None)
        (docs / "pages").mkdir(exist_ok=True)
        (docs / "pages" / f"p{number:04d}.md").write_text(text.replace("\n\n---", "\n---"), "utf-8")
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not MERMAID.is_file():
        raise SystemExit("Mermaid is missing: run `make mermaid` first")
    rng = random.Random(6)
    with tempfile.TemporaryDirectory(prefix="bench-site-") as temporary:
        directory = Path(temporary)
        ratios = [
            compare(
                f"demo ({sum(1 for _ in (ROOT / 'docs').rglob('*.md'))} pages)",
                demo_corpus(directory),
                args.runs,
            ),
            compare(
                f"generated ({args.pages} pages)",
                generated_corpus(directory, args.pages, rng),
                args.runs,
            ),
        ]
    verdict = "met" if max(ratios) < 1.15 else "not met"
    print(f"target: the plugin adds under 15% -> {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
