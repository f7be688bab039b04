#!/usr/bin/env python3
"""Time ``mkdocs serve``'s rebuild after an edit of one page, with the plugin and without it.

    python scripts/bench_serve.py [--pages 500] [--edits 6] [--convert-every-page]

The generated corpus of ``bench_site.py`` (PAGES pages, 20 references each), served by two
servers side by side: with mkdocs.yml as users have it (the knowledge-base plugin, its
verification cache on) and without the plugin. Once both have served their first build, one page
of each is edited in turn, EDITS times each (one server rebuilds while the other waits; the
order is swapped every round, so a drift of the machine's speed over the run weighs on both
alike). Each figure is the wall time from the file's change to the moment the server answers
with the rebuilt page (polled every 100 ms). The plugin's share of the rebuild is (with -
without) / with, from the medians (target: under 5%).
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


class Server:
    """``mkdocs serve -f config`` on a free port, with one page to edit and time."""

    def __init__(self, config: Path, edited: str) -> None:
        self.page = config.parent / "docs" / edited
        self.original = self.page.read_text("utf-8")
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/{edited.removesuffix('.md')}/"
        self.times: list[float] = []
        self.process = subprocess.Popen(
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
            env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        )

    def started(self) -> None:
        wait_for(self.url, "</html>", START_TIMEOUT)

    def edit(self) -> None:
        """Edit the page and add the time from the change to the rebuilt page to `times`."""
        marker = f"Edited {len(self.times)} {random.randrange(10**9)}."
        time.sleep(1)  # let both watchers settle after the last build
        self.page.write_text(self.original + f"\n{marker}\n", "utf-8")
        self.times.append(wait_for(self.url, marker, REBUILD_TIMEOUT))

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
        self.page.write_text(self.original, "utf-8")


def rebuild_seconds(with_plugin: Path, without: Path, edited: str, edits: int) -> list[Server]:
    """Serve both sites at once; edit the page of each in turn, ``edits`` times, the order
    swapped every round, so that the machine's drift over the run falls on both alike.
    Returns the two servers (stopped) with their times: without the plugin, then with it."""
    servers = [Server(without, edited), Server(with_plugin, edited)]
    try:
        for server in servers:
            server.started()
        for number in range(edits):
            for server in servers if number % 2 == 0 else reversed(servers):
                server.edit()
        return servers
    finally:
        for server in servers:
            server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--edits", type=int, default=6)
    parser.add_argument(
        "--convert-every-page",
        action="store_true",
        help="serve with reuse_rendered_pages: false (every page converted in every rebuild)",
    )
    args = parser.parse_args()
    if not MERMAID.is_file():
        raise SystemExit("Mermaid is missing: run `make mermaid` first")
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as temporary:
        # The same corpus twice: each server watches its own copy, so that an edit for one
        # does not rebuild the other.
        with_plugin, _, _ = configs(
            generated_corpus(Path(temporary, "with"), args.pages, random.Random(6))
        )
        _, without, _ = configs(
            generated_corpus(Path(temporary, "without"), args.pages, random.Random(6))
        )
        # As users serve: the verification cache on, so an edit re-verifies the edited page.
        text = with_plugin.read_text("utf-8").replace("      cache: false\n", "")
        if args.convert_every_page:
            text = text.replace(
                "  - knowledge-base:\n", "  - knowledge-base:\n      reuse_rendered_pages: false\n"
            )
        with_plugin.write_text(text, "utf-8")
        edited = f"pages/p{args.pages // 2:04d}.md"  # a page in the middle of the nav
        plain, plugin = (
            server.times for server in rebuild_seconds(with_plugin, without, edited, args.edits)
        )
    plain_median, plugin_median = statistics.median(plain), statistics.median(plugin)
    share = (plugin_median - plain_median) / plugin_median
    print(
        f"serve, {args.pages} pages, one page edited {args.edits} times"
        f"{', every page converted in every rebuild' if args.convert_every_page else ''}: "
        "rebuilt page after "
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
