#!/usr/bin/env python3
"""Run the product on hostile pages and count what goes wrong: crashes, hangs, memory.

    python scripts/fuzz.py [--batches 4] [--pages 500] [--seed 1] [--timeout 30]

Builds BATCHES knowledge bases of PAGES hostile pages each (scripts/hostile_corpus.py, seeds
SEED, SEED+1, ...) and runs on each, as a user does (a fresh process each):

* ``python -m generator verify docs --format json`` twice (the second run reads the
  verification cache the first one wrote), and once with ``--format text``;
* ``python -m generator ingest docs --dry-run --format json``;
* ``mkdocs build`` (the site plugin verifies every page first, so the build must fail cleanly).

A crash is a traceback, an exit status other than the documented ones, or (for verify's JSON) no
report; a hang is a run over TIMEOUT seconds (it is killed). Prints one line per run and a
summary: pages tried, crashes, hangs, the slowest run and the peak memory of the largest process.
Exit status 1 when anything crashed or hung. ``make fuzz`` runs it; the tests run a small batch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from hostile_corpus import build  # noqa: E402
from measure import launched, read_figures  # noqa: E402

EXIT_STATUSES = {
    "verify": {0, 1},  # findings, never a usage problem: the corpus' manifest is sound
    "verify-cached": {0, 1},
    "verify-text": {0, 1},
    "ingest": {0, 1, 2},
    "site": {0, 1},
}


@dataclass(frozen=True)
class Run:
    name: str
    returncode: int
    seconds: float
    peak_mib: float
    hung: bool
    crashed: bool
    detail: str


def run(name: str, command: list[str], cwd: Path, timeout: float) -> Run:
    """``command`` in ``cwd``, killed after ``timeout`` seconds, measured."""
    started = time.perf_counter()
    # Through `measure`'s launcher: a process forked from this one, which holds the corpora,
    # would count this one's memory as its own.
    read_end, write_end = os.pipe()
    try:
        process = subprocess.Popen(
            launched(command, write_end),
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"},
            pass_fds=(write_end,),
            start_new_session=True,
        )
    finally:
        os.close(write_end)
    assert process.stdout is not None and process.stderr is not None
    timer = threading.Timer(timeout, lambda: os.killpg(process.pid, 9))
    timer.start()
    output: dict[str, bytes] = {}
    reader = threading.Thread(target=lambda: output.update(stderr=process.stderr.read()))
    reader.start()
    stdout = process.stdout.read()
    reader.join()
    _, status, _ = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    figures = read_figures(read_end)  # (none for a run killed with its launcher)
    peak_mib = figures[1] if figures is not None else 0.0
    hung = not timer.is_alive() and seconds >= timeout
    timer.cancel()
    returncode = os.waitstatus_to_exitcode(status)
    process.returncode = returncode
    stderr = output.get("stderr", b"").decode("utf-8", "replace")
    crashed = False
    detail = ""
    if hung:
        detail = f"killed after {timeout:.0f} s"
    elif "Traceback (most recent call last)" in stderr or returncode not in EXIT_STATUSES[name]:
        crashed = True
        lines = [line for line in stderr.strip().splitlines() if line.strip()]
        detail = f"exit {returncode}: " + (lines[-1][:200] if lines else "(no output)")
    elif name.startswith("verify") and "text" not in name:
        try:
            report = json.loads(stdout)
            detail = f"{report['summary']['errors']} errors"
        except (ValueError, KeyError) as error:
            crashed = True
            detail = f"no JSON report ({error})"
    return Run(name, returncode, seconds, peak_mib, hung, crashed, detail)


def fuzz_batch(root: Path, timeout: float) -> list[Run]:
    """Every run on the knowledge base at ``root``."""
    python = sys.executable
    generator = [python, "-m", "generator"]
    return [
        run("verify", [*generator, "verify", "docs", "--format", "json"], root, timeout),
        run("verify-cached", [*generator, "verify", "docs", "--format", "json"], root, timeout),
        run("verify-text", [*generator, "verify", "docs", "--no-cache"], root, timeout),
        run(
            "ingest",
            [*generator, "ingest", "docs", "--dry-run", "--format", "json"],
            root,
            timeout,
        ),
        run("site", [python, "-m", "mkdocs", "build", "--strict", "-q"], root, timeout),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=30.0)
    args = parser.parse_args()
    runs: list[Run] = []
    pages = 0
    for batch in range(args.batches):
        with tempfile.TemporaryDirectory(prefix="fuzz-") as directory:
            root = Path(directory)
            corpus = build(root, args.pages, args.seed + batch)
            pages += len(corpus["kinds"]) + len(corpus["ordinary"])
            for one in fuzz_batch(root, args.timeout):
                runs.append(one)
                mark = "HANG" if one.hung else "CRASH" if one.crashed else "ok"
                print(
                    f"batch {batch + 1} (seed {args.seed + batch}) {one.name:14} {mark:5} "
                    f"{one.seconds:6.1f} s {one.peak_mib:6.0f} MiB  {one.detail}",
                    flush=True,
                )
    crashes = sum(one.crashed for one in runs)
    hangs = sum(one.hung for one in runs)
    slowest = max(runs, key=lambda one: one.seconds)
    largest = max(runs, key=lambda one: one.peak_mib)
    print(
        f"pages tried: {pages} in {args.batches} batches of {args.pages}; runs: {len(runs)}; "
        f"crashes: {crashes} (target 0); hangs over {args.timeout:.0f} s: {hangs} (target 0); "
        f"slowest: {slowest.name} {slowest.seconds:.1f} s; peak memory: {largest.peak_mib:.0f} MiB "
        f"({largest.name}; target under 500 MiB)"
    )
    return 1 if crashes or hangs else 0


if __name__ == "__main__":
    sys.exit(main())
