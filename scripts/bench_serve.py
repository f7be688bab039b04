#!/usr/bin/env python3
"""Time ``mkdocs serve``'s rebuild after an edit of one page, with the plugin and without it.

    python scripts/bench_serve.py [--pages 500] [--edits 5]

The generated corpus of ``bench_site.py`` (PAGES pages, 20 references each), served twice in the
same run: with mkdocs.yml as users have it (the knowledge-base plugin, its verification cache
on) and without the plugin. Once the first build is served, one page is edited EDITS times; each
time the figure is the wall time from the file's change to the moment the server answers with
the rebuilt page (polled every 100 ms). The plugin's share of the rebuild is (with - without) /
with, from the medians (target: under 5%).
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from bench_site import MERMAID, configs, generated_corpus  # noqa: E402

POLL = 0.1
"""Seconds between two requests for the edited page."""
START_TIMEOUT = 300
REBUILD_TIMEOUT = 120


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.read().decode("utf-8", "replace")
    except (urllib.error.URLError, ConnectionError, TimeoutError):
        return None


def wait_for(url: str, marker: str, timeout: float) -> float:
    """Seconds until ``url`` answers with ``marker`` in it."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        body = fetch(url)
        if body is not None and marker in body:
            return time.perf_counter() - started
        time.sleep(POLL)
    raise SystemExit(f"{url} did not show {marker!r} within {timeout:.0f} s")


def rebuild_seconds(config: Path, edited: str, edits: int) -> list[float]:
    """Serve with ``config``; edit one page ``edits`` times; each edit's time to the page."""
    docs = config.parent / "docs"
    page = docs / edited
    original = page.read_text("utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}/{edited.removesuffix('.md')}/"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "serve",
            "-q",
            "-f",
            str(config),
            "-a",
            f"127.0.0.1:{port}",
        ],
        cwd=config.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        wait_for(url, "</html>", START_TIMEOUT)
        times = []
        for number in range(edits):
            marker = f"Edited {number} {random.randrange(10**9)}."
            time.sleep(1)  # let the watcher settle after the previous build
            page.write_text(original + f"\n{marker}\n", "utf-8")
            times.append(wait_for(url, marker, REBUILD_TIMEOUT))
        return times
    finally:
        server.terminate()
        server.wait(timeout=30)
        page.write_text(original, "utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--edits", type=int, default=5)
    args = parser.parse_args()
    if not MERMAID.is_file():
        raise SystemExit("Mermaid is missing: run `make mermaid` first")
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as temporary:
        root = generated_corpus(Path(temporary), args.pages, random.Random(6))
        with_plugin, without, _ = configs(root)
        # As users serve: the verification cache on, so an edit re-verifies the edited page.
        text = with_plugin.read_text("utf-8").replace("      cache: false\n", "")
        with_plugin.write_text(text, "utf-8")
        edited = f"pages/p{args.pages // 2:04d}.md"  # a page in the middle of the nav
        plain = rebuild_seconds(without, edited, args.edits)
        plugin = rebuild_seconds(with_plugin, edited, args.edits)
    plain_median, plugin_median = statistics.median(plain), statistics.median(plugin)
    share = (plugin_median - plain_median) / plugin_median
    print(
        f"serve, {args.pages} pages, one page edited {args.edits} times: rebuilt page after "
        f"{plain_median:.2f} s without the plugin (runs {', '.join(f'{t:.2f}' for t in plain)}), "
        f"{plugin_median:.2f} s with it ({', '.join(f'{t:.2f}' for t in plugin)})"
    )
    print(
        f"the plugin's share of the rebuild: {share:.1%} -> "
        f"{'met' if share < 0.05 else 'not met'} (target under 5%)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
