#!/usr/bin/env python3
"""Measure evidence checking on a realistic drift corpus, and its cost on the big benchmark.

    python scripts/bench_evidence.py [--commits 320] [--pages 20] [--seed 11] [--long 2000]

On the drift corpus of ``scripts/drift_corpus.py`` (LLM-style pages quoting the code they
cite, a third of the ranges off, pinned a few commits after they were written), it reports:

- detection: of the strong quotes not in their cited lines at the pin, the share the verifier
  reports (quote-elsewhere or quote-not-found); false errors on quotes that are in range;
- ``--fix``: rewrites made, wrong rewrites, and the share of fixable references fixed;
- ``pin suggest``: the rank of the commit the pages were written against, and the time, on
  this corpus and on one with a LONG-commit history;
- extraction: the share of the references the corpus wrote that the verifier reads, and the
  references found in a page of non-references (must be none).

The cost of evidence on ``make bench``'s corpus is measured by ``scripts/bench_verify.py
--quotes`` (the same corpus with quotes added to a third of its references).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import drift_corpus  # noqa: E402


def run(root: Path, *arguments: str) -> tuple[dict, float]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "generator", *arguments],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if result.returncode not in (0, 1):
        raise SystemExit(f"generator {' '.join(arguments)} failed:\n{result.stderr}")
    return json.loads(result.stdout), elapsed


def pin_rank(corpus: drift_corpus.Corpus) -> tuple[int | None, float, dict]:
    data, elapsed = run(corpus.root, "pin", "suggest", "docs", "--format", "json", "--limit", "50")
    order = {sha: position for position, sha in enumerate(reversed(corpus.shas))}
    written = order[corpus.written]
    for rank, candidate in enumerate(data["candidates"], 1):
        # A candidate stands for its run of commits: from `commit` (oldest) to `last`.
        if order[candidate["last"]] <= written <= order[candidate["commit"]]:
            return rank, elapsed, data
    return None, elapsed, data


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=320)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--long", type=int, default=2000, help="commits of the long history")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-evidence-") as temporary:
        base = Path(temporary)
        corpus = drift_corpus.build(base / "kb", args.commits, args.pages, seed=args.seed)
        (corpus.root / "docs" / "not_references.md").write_text(drift_corpus.nonref_page(), "utf-8")
        report, verify_time = run(
            corpus.root, "verify", "docs", "--no-cache", "--format", "json", "--list-refs"
        )
        copy = base / "fixed"
        shutil.copytree(corpus.root, copy, symlinks=True)
        fixed, fix_time = run(copy, "verify", "docs", "--no-cache", "--fix", "--format", "json")
        scores = drift_corpus.evaluate(corpus.citations, report, fixed["fixes"])
        rank, pin_time, _ = pin_rank(corpus)
        print(
            f"drift corpus: {len(corpus.citations)} references on {args.pages} pages, "
            f"{args.commits} commits, written at commit {corpus.written_index}, pinned "
            f"{corpus.shas.index(corpus.pin) - corpus.written_index} commits later"
        )
        print(f"  verify: {verify_time:.2f} s; --fix: {fix_time:.2f} s")
        print(
            f"  detection: {scores.reported}/{scores.wrong_quotes} quotes not in their lines "
            f"reported ({scores.detection:.1%}); false errors on {scores.right_quotes} quotes "
            f"in range: {scores.false_errors}"
        )
        print(
            f"  --fix: {scores.rewrites} rewrites, {scores.wrong_rewrites} wrong; fixed "
            f"{scores.fixed}/{scores.fixable} fixable ({scores.fixed_share:.1%})"
        )
        print(
            f"  extraction: {scores.extracted}/{scores.citations} references read "
            f"({scores.extraction:.1%}); findings on the non-reference page: "
            f"{scores.nonref_findings}"
        )
        print(f"  pin suggest: the written commit ranks {rank} ({pin_time:.2f} s)")
        for miss in scores.misses[:20]:
            print(f"    {miss}")
        if args.long:
            started = time.perf_counter()
            long_corpus = drift_corpus.build(base / "long", args.long, args.pages, seed=args.seed)
            built = time.perf_counter() - started
            rank, pin_time, data = pin_rank(long_corpus)
            print(
                f"long history: {args.long} commits (built in {built:.0f} s), "
                f"{data['refs']} references on {args.pages} pages: the written commit ranks "
                f"{rank}; pin suggest took {pin_time:.2f} s"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
