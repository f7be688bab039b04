#!/usr/bin/env python3
"""Benchmark the verifier on a generated corpus and print its figures.

    python scripts/bench_verify.py [--pages 2000] [--refs-per-page 25] [--files 500]

Builds, in a temporary directory, an upstream of FILES Python files (one commit) and PAGES pages
with REFS-PER-PAGE references each (full paths with ranges, symbols next to refs, bare names,
comments in fenced code, pinned permalinks; about 2% broken), then reports:

* the verifier, run as a user runs it (``python -m generator verify``, a fresh process):
  wall time, peak memory (max RSS of its largest process: the process it forks to share the
  work holds mostly the same, copy-on-write, pages), refs/s; in four situations:
  - cold: ``--no-cache``, every page verified afresh (the figure the targets are about);
  - first: no cache yet, so every page is verified and the cache written;
  - warm: nothing changed since the last run;
  - edited: 1% of the pages changed since the last run;
* the naive method, one ``git show PIN:PATH`` per reference, timed on a sample and extrapolated;
* the floor: reading every page and every distinct blob once (one ``git cat-file --batch``).

Each verifier figure and the floor are the best of ``--runs`` runs, so that none gains from
another's noise.

    python scripts/bench_verify.py --shape pin-per-page [--pages 300] [--files 3000]

measures the other shape real knowledge bases have (deep dives of pull requests): an upstream of
FILES files under nested directories with a history of PAGES + 20 commits (a few files changed in
each), and PAGES pages each pinned to a commit of its own (frontmatter ``pin:``), with 20
references each (full paths, bare names, fenced-code comments, permalinks, some followed by the
code they cite; about 2% broken). It reports the cold verifier against the floor (every page and
every cited ``commit:path`` read once, one ``git cat-file --batch``) and against the naive method
(one ``git show COMMIT:PATH`` per reference), in the same run.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measure import run_generator  # noqa: E402  (scripts/measure.py, beside this script)

from generator.upstream.gitbuild import RepoBuilder, run_git  # noqa: E402
from generator.verification.pipeline import (  # noqa: E402
    EVIDENCE_CHECKS,  # (ignored all, proving is skipped: "evidence off")
    available_cores,
)


def make_source(index: int, rng: random.Random) -> tuple[str, list[tuple[str, int, int]]]:
    """A Python file and its functions as (name, first line, last line)."""
    lines = [f'"""Generated module {index}."""', "", "import os", ""]
    functions = []
    for number in range(rng.randint(8, 16)):
        name = f"func_{index}_{number}"
        body = rng.randint(6, 30)
        lines.append("")
        start = len(lines) + 1
        lines.append(f"def {name}(value, scale=1):")
        lines.append(f'    """Compute step {number} of module {index}."""')
        for step in range(body):
            lines.append(f"    value = value * scale + {step}  # step {step}")
        lines.append("    return value")
        functions.append((name, start, len(lines)))
    return "\n".join(lines) + "\n", functions


def citation(style: int, name: str, path: str, start: int, end: int, pin: str) -> str:
    """A reference to ``path:start-end`` in one of five forms pages write (the style by turn):
    a Chinese list item, an English code span, a fence's comment, a table row with the bare
    name, a permalink."""
    if style == 0:
        return f"- `{name}()` 实现（{path}:{start}-{end}）\n"
    if style == 1:
        return f"The loop lives at `{path}:{start + 1}-{end}`, see below.\n"
    if style == 2:
        return f"```python\n# {path}:{start}-{end}\ndef {name}(value):\n    ...\n```\n"
    if style == 3:
        bare = path.rsplit("/", 1)[-1]
        return f"| `{name}()` | `{bare}:{start}` | purpose |\n"
    return f"[{name}](https://github.com/bench/big/blob/{pin}/{path}#L{start}-L{end})\n"


def quotation(source: str, style: int, start: int, end: int) -> str:
    """The cited lines of ``source`` quoted in a block after the reference (style 1 cites from
    the line after ``start``)."""
    first = start + 1 if style == 1 else start
    quoted = source.split("\n")[first - 1 : end]
    return "\n```python\n" + "\n".join(quoted) + "\n```\n\n"


def build_corpus(
    root: Path, pages: int, refs_per_page: int, files: int, seed: int = 7, quotes: bool = False
) -> dict:
    """The corpus; with ``quotes``, a third of the references (not the broken ones) are
    followed by the code they cite, quoted in a fenced block."""
    rng = random.Random(seed)
    repo = RepoBuilder.init(root / "cache" / "big")
    sources: dict[str, str] = {}
    index: list[tuple[str, list[tuple[str, int, int]], int]] = []
    for number in range(files):
        path = f"big/pkg{number % 20}/module_{number}.py"
        text, functions = make_source(number, rng)
        sources[path] = text
        index.append((path, functions, text.count("\n")))
    pin = repo.commit(sources, "Generated upstream", date="2025-01-01T00:00:00+00:00")
    (root / "upstreams.yaml").write_text(
        f"cache_dir: cache\nupstreams:\n  big:\n    url: {repo.path}\n    pin: {pin}\n"
        "    web_url: https://github.com/bench/big\n",
        "utf-8",
    )
    docs = root / "docs"
    broken = 0
    total = 0
    for page_number in range(pages):
        out = [
            f"---\ntitle: Page {page_number}\nupstream: big\n---\n",
            f"# Page {page_number}\n",
            "## Overview\n",
        ]
        for ref_number in range(refs_per_page):
            path, functions, length = rng.choice(index)
            name, start, end = rng.choice(functions)
            style = ref_number % 5
            if rng.random() < 0.02:
                start, end = length + 5, length + 9  # a broken range
                broken += 1
            out.append(citation(style, name, path, start, end, pin))
            if quotes and ref_number % 3 == 0 and style != 2 and end <= length:
                out.append(quotation(sources[path], style, start, end))
            total += 1
        out.append(
            f"\n[next](page_{(page_number + 1) % pages}.md#page-{(page_number + 1) % pages})\n"
        )
        page = docs / f"part{page_number % 10}" / f"page_{page_number}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("".join(out), "utf-8")
    # Links point within the same directory only when the next page is there too; keep all valid
    # by linking to a sibling that exists.
    for page in docs.rglob("*.md"):
        siblings = sorted(page.parent.glob("*.md"))
        target = siblings[0]
        text = page.read_text("utf-8")
        head, _, _ = text.rpartition("\n[next](")
        page.write_text(f"{head}\n[next]({target.name}#{target.stem.replace('_', '-')})\n", "utf-8")
    return {"pin": pin, "refs": total, "broken": broken, "index": index, "repo": repo.path}


def run_verifier(root: Path, *options: str) -> tuple[float, float, float, dict]:
    """Seconds, peak MiB, CPU seconds and JSON report of one verifier run, as a fresh process."""
    result = run_generator(["verify", "docs", "--format", "json", *options], root)
    if result.returncode not in (0, 1):
        raise SystemExit(f"verifier failed: {result.stderr}")
    return result.seconds, result.peak_mib, result.cpu_seconds, json.loads(result.stdout)


def situations(root: Path, runs: int, edited: int) -> dict[str, list[tuple]]:
    """Verifier runs in each situation of the module's documentation, by name."""
    cache = root / "cache" / ".verify-cache"
    pages = sorted((root / "docs").rglob("*.md"))
    rng = random.Random(11)
    measured: dict[str, list[tuple]] = {"cold": [], "first": [], "warm": [], "edited": []}
    for _ in range(runs):
        measured["cold"].append(run_verifier(root, "--no-cache"))
        shutil.rmtree(cache, ignore_errors=True)
        measured["first"].append(run_verifier(root))
        measured["warm"].append(run_verifier(root))
        originals = {page: page.read_text("utf-8") for page in rng.sample(pages, edited)}
        for page, text in originals.items():  # a sentence added, with a reference that holds
            first_ref = text.split("\n")[6]  # "- `func_1_2()` 实现（big/...py:10-20）"
            page.write_text(f"{text}\nOne more word on {first_ref}\n", "utf-8")
        measured["edited"].append(run_verifier(root))
        for page, text in originals.items():
            page.write_text(text, "utf-8")
    return measured


def naive(corpus: dict, sample: int) -> float:
    """Seconds per reference for one `git show` per reference (the naive method)."""
    rng = random.Random(3)
    started = time.perf_counter()
    for _ in range(sample):
        path, functions, _ = rng.choice(corpus["index"])
        _, start, end = rng.choice(functions)
        blob = subprocess.run(
            ["git", "show", f"{corpus['pin']}:{path}"],
            cwd=corpus["repo"],
            capture_output=True,
            check=True,
        ).stdout
        assert blob.count(b"\n") >= end >= start
    return (time.perf_counter() - started) / sample


def floor(root: Path, corpus: dict) -> float:
    """Seconds to read every page and every distinct blob once."""
    started = time.perf_counter()
    for page in (root / "docs").rglob("*.md"):
        page.read_bytes().decode("utf-8")
    process = subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=corpus["repo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin and process.stdout
    for path, _, _ in corpus["index"]:
        process.stdin.write(f"{corpus['pin']}:{path}\n".encode())
        process.stdin.flush()
        header = process.stdout.readline().split()
        process.stdout.read(int(header[2]) + 1)
    process.stdin.close()
    process.wait()
    return time.perf_counter() - started


PINNED_REFS_PER_PAGE = 20
FILES_PER_PAGE = 6
EXTRA_COMMITS = 20
"""Commits older than every page's pin: the pages cite a history that went on before them."""


def build_history(repo: Path, files: int, commits: int, rng: random.Random) -> list[dict]:
    """An upstream of ``files`` Python files in nested directories and ``commits`` commits,
    written with one ``git fast-import``: the first adds every file, each later one rewrites
    two to four of them (and now and then adds one). Returns, for each commit, its SHA and
    each file's (functions, line count) there."""
    stream: list[bytes] = []
    state: dict[str, tuple[list[tuple[str, int, int]], int, str]] = {}

    def generate(index: int) -> tuple[list[tuple[str, int, int]], int, str]:
        text, functions = make_source(index, rng)
        return functions, text.count("\n"), text

    def blob(path: str, text: str) -> None:
        data = text.encode()
        stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")

    def header(number: int) -> None:
        message = f"Change {number}".encode()
        stream.append(
            f"commit refs/heads/main\nmark :{number + 1}\n"
            f"committer Bench <bench@example.invalid> {1735689600 + number * 3600} +0000\n"
            f"data {len(message)}\n".encode()
            + message
            + b"\n"
        )

    header(0)
    for number in range(files):
        path = f"big/pkg{number % 30}/sub{number // 30 % 5}/module_{number}.py"
        state[path] = generate(number)
        blob(path, state[path][2])
    snapshots = [dict(state)]
    paths = list(state)
    for number in range(1, commits):
        header(number)
        for path in rng.sample(paths, rng.randint(2, 4)):
            index = int(path.rsplit("_", 1)[1].removesuffix(".py"))
            state[path] = generate(index)
            blob(path, state[path][2])
        if rng.random() < 0.1:
            index = files + number
            path = f"big/pkg{index % 30}/sub{index // 30 % 5}/module_{index}.py"
            state[path] = generate(index)
            paths.append(path)
            blob(path, state[path][2])
        snapshots.append(dict(state))
    marks = repo / ".git" / "bench-marks"
    run_git(repo, "fast-import", "--quiet", f"--export-marks={marks}", input_bytes=b"".join(stream))
    shas = dict(line.split() for line in marks.read_text().splitlines())
    return [
        {"sha": shas[f":{number + 1}"], "files": snapshot}
        for number, snapshot in enumerate(snapshots)
    ]


def build_pinned_corpus(root: Path, pages: int, files: int, seed: int = 7) -> dict:
    """The pin-per-page corpus: page N is pinned to commit N + `EXTRA_COMMITS` of a generated
    history, and cites files as they are there."""
    rng = random.Random(seed)
    repo = RepoBuilder.init(root / "cache" / "big")
    history = build_history(repo.path, files, pages + EXTRA_COMMITS, rng)
    head = history[-1]["sha"]
    (root / "upstreams.yaml").write_text(
        f"cache_dir: cache\nupstreams:\n  big:\n    url: {repo.path}\n    pin: {head}\n"
        "    web_url: https://github.com/bench/big\n",
        "utf-8",
    )
    docs = root / "docs"
    broken = 0
    cited: list[tuple[str, str, int, int]] = []
    for page_number in range(pages):
        commit = history[page_number + EXTRA_COMMITS]
        pin = commit["sha"]
        # A pull request touches a few files, and its page cites those again and again.
        choices = rng.sample(sorted(commit["files"]), FILES_PER_PAGE)
        out = [
            f"---\ntitle: Pull request {page_number}\nupstream: big\npin: {pin}\n---\n",
            f"# Pull request {page_number}\n",
        ]
        for ref_number in range(PINNED_REFS_PER_PAGE):
            path = rng.choice(choices)
            functions, length, text = commit["files"][path]
            name, start, end = rng.choice(functions)
            style = ref_number % 5
            if rng.random() < 0.02:
                start, end = length + 5, length + 9  # a broken range
                broken += 1
            out.append(citation(style, name, path, start, end, pin))
            if ref_number % 3 == 0 and style != 2 and end <= length:
                out.append(quotation(text, style, start, end))
            cited.append((pin, path, start, end))
        page = docs / f"pr{page_number % 10}" / f"pr_{page_number}.md"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("".join(out), "utf-8")
    return {"refs": len(cited), "broken": broken, "cited": cited, "repo": repo.path}


def pinned_floor(root: Path, corpus: dict) -> float:
    """Seconds to read every page and every cited ``commit:path`` once."""
    started = time.perf_counter()
    for page in (root / "docs").rglob("*.md"):
        page.read_bytes().decode("utf-8")
    wanted = sorted({f"{pin}:{path}\n" for pin, path, _, _ in corpus["cited"]})
    output = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=corpus["repo"],
        input="".join(wanted).encode(),
        capture_output=True,
        check=True,
    ).stdout
    assert output.count(b" blob ") >= len(wanted)
    return time.perf_counter() - started


def pinned_naive(corpus: dict, sample: int) -> float:
    """Seconds per reference for one ``git show COMMIT:PATH`` per reference."""
    rng = random.Random(3)
    started = time.perf_counter()
    for pin, path, start, end in rng.sample(corpus["cited"], sample):
        blob = subprocess.run(
            ["git", "show", f"{pin}:{path}"], cwd=corpus["repo"], capture_output=True, check=True
        ).stdout
        blob.split(b"\n")[start - 1 : end]  # the cited lines, as the naive method reads them
    return (time.perf_counter() - started) / sample


def pin_per_page(args: argparse.Namespace) -> int:
    """The cold verifier on pages that each pin their own commit, against the floor and the
    naive method, in the same run."""
    pages = args.pages or 300
    files = args.files or 3000
    with tempfile.TemporaryDirectory(prefix="bench-pins-") as directory:
        root = Path(directory)
        started = time.perf_counter()
        corpus = build_pinned_corpus(root, pages, files)
        distinct = len({(pin, path) for pin, path, _, _ in corpus["cited"]})
        print(
            f"corpus:    {pages} pages, each pinned to its own commit of a {pages + EXTRA_COMMITS}"
            f"-commit history of {files}+ files; {corpus['refs']} refs ({corpus['broken']} "
            f"broken) citing {distinct} commit:path pairs; built in "
            f"{time.perf_counter() - started:.1f} s; {available_cores()} cores available"
        )
        runs = [run_verifier(root, "--no-cache") for _ in range(args.runs)]
        elapsed, _, cpu, report = min(runs, key=lambda run: run[0])
        peak_mib = max(run[1] for run in runs)
        floor_seconds = min(pinned_floor(root, corpus) for _ in range(args.runs))
        # What any run costs before it reads a page: the interpreter and the imports.
        one_page = ["verify", "docs/pr0/pr_0.md", "--no-cache", "--format", "json"]
        start_up = min(run_generator(one_page, root).seconds for _ in range(args.runs))
        per_ref = pinned_naive(corpus, min(args.naive_sample, corpus["refs"]))
        naive_total = per_ref * corpus["refs"]
        found, errors = report["summary"]["refs"], report["summary"]["errors"]
        print(
            f"floor:     {floor_seconds:.2f} s to read every page and cited commit:path once "
            f"(best of {args.runs})"
        )
        print(
            f"verifier:  cold, --no-cache: {elapsed:.2f} s wall ({elapsed / floor_seconds:.1f}x "
            f"the floor; {cpu:.2f} s CPU in all its processes), peak RSS {peak_mib:.0f} MiB "
            f"(best of {args.runs})"
        )
        print(
            f"start-up:  {start_up:.2f} s for the verifier on one page "
            f"({start_up / floor_seconds:.1f}x the floor)"
        )
        print(
            f"naive:     {per_ref * 1000:.2f} ms per ref (git show, {args.naive_sample} sampled) "
            f"-> {naive_total:.1f} s extrapolated; the cold verifier is "
            f"{naive_total / elapsed:.1f}x faster"
        )
        met = {
            "<= 3x floor": elapsed / floor_seconds <= 3,
            ">= 30x naive": naive_total / elapsed >= 30,
            "< 300 MiB": peak_mib < 300,
        }
        print(
            "targets:   "
            + ", ".join(f"{target} {'met' if ok else 'NOT met'}" for target, ok in met.items())
        )
        ok = found == corpus["refs"] and errors == corpus["broken"]
        print(
            f"findings:  {found} refs found, {errors} errors (expected {corpus['refs']} and "
            f"{corpus['broken']}): {'match' if ok else 'DO NOT match'}"
        )
        if not ok:
            for finding in report["findings"][:10]:
                print(f"           {finding['check']}: {finding['message']}")
    return 0


def quote_cost(args: argparse.Namespace) -> int:
    """What evidence costs: the cold verifier on the corpus, on the same corpus with the code a
    third of its references cite quoted after them, and on that one again with every evidence
    check ignored (so not done): best of ``--runs`` each, interleaved so that all see the same
    machine."""
    with tempfile.TemporaryDirectory(prefix="bench-quotes-") as directory:
        plain, quoted = Path(directory) / "plain", Path(directory) / "quoted"
        corpus = build_corpus(plain, args.pages, args.refs_per_page, args.files)
        build_corpus(quoted, args.pages, args.refs_per_page, args.files, quotes=True)
        ignore = [option for check in sorted(EVIDENCE_CHECKS) for option in ("--ignore", check)]
        runs = {
            "plain": (plain, ["--no-cache"]),
            "quoted": (quoted, ["--no-cache"]),
            "quoted, evidence off": (quoted, ["--no-cache", *ignore]),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        cpu: dict[str, list[float]] = {name: [] for name in runs}
        reports: dict[str, dict] = {}
        for _ in range(args.runs):
            for name, (root, options) in runs.items():
                elapsed, _, cpu_seconds, report = run_verifier(root, *options)
                times[name].append(elapsed)
                cpu[name].append(cpu_seconds)
                reports[name] = report
        best = {name: min(values) for name, values in times.items()}
        least_cpu = {name: min(values) for name, values in cpu.items()}
        quotes = sum(
            page.read_text("utf-8").count("```python\n") for page in (quoted / "docs").rglob("*.md")
        )
        print(
            f"corpus: {args.pages} pages, {corpus['refs']} refs; with quotes: {quotes} code "
            f"blocks after or around them (the pages are {_size(quoted) / _size(plain):.1f}x "
            "longer)"
        )
        for name in runs:
            print(
                f"cold, {name}: {best[name]:.2f} s, {least_cpu[name]:.2f} s of CPU "
                f"(best of {args.runs})"
            )
        evidence = best["quoted"] / best["quoted, evidence off"]
        evidence_cpu = least_cpu["quoted"] / least_cpu["quoted, evidence off"]
        pages = best["quoted, evidence off"] / best["plain"]
        print(
            f"evidence checking costs {evidence:.2f}x on the quoted pages (target <= 1.20x: "
            f"{'met' if evidence <= 1.2 else 'NOT met'}), {evidence_cpu:.2f}x in CPU time; the "
            "longer pages alone cost "
            f"{pages:.2f}x; together {best['quoted'] / best['plain']:.2f}x the plain corpus"
        )

        def found(report: dict) -> list[tuple]:
            return sorted((f["check"], f["text"], f["start"]) for f in report["findings"])

        same = found(reports["plain"]) == found(reports["quoted"])
        errors = reports["quoted"]["summary"]["errors"]
        print(
            f"findings: {errors} errors with quotes (expected {corpus['broken']}); the same "
            f"as without: {'yes' if same else 'NO'}"
        )
    return 0


def _size(root: Path) -> int:
    return sum(page.stat().st_size for page in (root / "docs").rglob("*.md"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--shape",
        choices=("single-pin", "pin-per-page"),
        default="single-pin",
        help="single-pin: every page shares the manifest's pin (the default); pin-per-page: "
        "every page pins its own commit of a long history",
    )
    parser.add_argument("--pages", type=int, help="default: 2000, or 300 with a pin per page")
    parser.add_argument("--refs-per-page", type=int, default=25, help="single-pin only")
    parser.add_argument("--files", type=int, help="default: 500, or 3000 with a pin per page")
    parser.add_argument("--naive-sample", type=int, default=300)
    parser.add_argument(
        "--runs", type=int, default=3, help="verifier and floor runs; the best is reported"
    )
    parser.add_argument(
        "--quotes",
        action="store_true",
        help="only measure what evidence costs: the cold run on the corpus with the code a third "
        "of the references cite quoted after them, against the same corpus without quotes",
    )
    args = parser.parse_args()
    if args.shape == "pin-per-page":
        return pin_per_page(args)
    args.pages = args.pages or 2000
    args.files = args.files or 500
    if args.quotes:
        return quote_cost(args)
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as directory:
        root = Path(directory)
        started = time.perf_counter()
        corpus = build_corpus(root, args.pages, args.refs_per_page, args.files)
        print(
            f"corpus: {args.pages} pages, {corpus['refs']} refs ({corpus['broken']} broken) over "
            f"{args.files} files, built in {time.perf_counter() - started:.1f} s; "
            f"{available_cores()} cores available"
        )
        edited = max(1, args.pages // 100)
        measured = situations(root, args.runs, edited)
        labels = {
            "cold": "cold, --no-cache",
            "first": "first run, writes the cache",
            "warm": "warm, nothing changed",
            "edited": f"warm, {edited} pages edited",
        }
        best = {name: min(runs, key=lambda run: run[0]) for name, runs in measured.items()}
        peak_mib = max(run[1] for runs in measured.values() for run in runs)
        floor_seconds = min(floor(root, corpus) for _ in range(args.runs))
        print(
            f"floor:     {floor_seconds:.2f} s to read every page and distinct blob once (best "
            f"of {args.runs})"
        )
        cold_report = best["cold"][3]
        for name, (elapsed, peak, cpu, report) in best.items():
            found = report["summary"]["refs"]
            print(
                f"verifier:  {labels[name]}: {elapsed:.2f} s wall ({elapsed / floor_seconds:.1f}x "
                f"the floor; {cpu:.2f} s CPU in all its processes), peak RSS {peak:.0f} MiB, "
                f"{found / elapsed:,.0f} refs/s"
            )
        elapsed = best["cold"][0]
        found = cold_report["summary"]["refs"]
        errors = cold_report["summary"]["errors"]
        print(f"findings:  {found} refs found, {errors} errors (expected {corpus['broken']})")
        per_ref = naive(corpus, args.naive_sample)
        naive_total = per_ref * corpus["refs"]
        print(
            f"naive:     {per_ref * 1000:.2f} ms per ref (git show, {args.naive_sample} sampled) "
            f"-> {naive_total:.0f} s extrapolated; the cold verifier is "
            f"{naive_total / elapsed:.0f}x faster"
        )
        # The same pages give the same report whichever way they are verified.
        same = all(
            run[3]["findings"] == cold_report["findings"]
            for name in ("first", "warm")
            for run in measured[name]
        )
        ok = found == corpus["refs"] and errors == corpus["broken"] and same
        met = {
            "< 2 s (cold)": elapsed < 2,
            "< 2 s (first)": best["first"][0] < 2,
            "< 300 MiB": peak_mib < 300,
            ">= 50x naive (cold)": naive_total / elapsed >= 50,
            "<= 3x floor (cold)": elapsed / floor_seconds <= 3,
            "<= 3x floor (warm)": best["warm"][0] / floor_seconds <= 3,
            "<= 3x floor (edited)": best["edited"][0] / floor_seconds <= 3,
        }
        verdicts = ", ".join(
            f"{target} {'met' if ok_ else 'NOT met'}" for target, ok_ in met.items()
        )
        print(f"targets:   {verdicts}")
        print(
            f"findings:  {'match' if ok else 'DO NOT match'} the generated corpus, and cached "
            "runs report what the cold one does"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
