#!/usr/bin/env python3
"""Benchmark `sync` against ground truth on a generated history and print the figures.

    python scripts/bench_sync.py [--commits 200] [--refs 20000] [--files 150]

The generator writes an upstream whose every line carries an identity it tracks through a history
of realistic edits: insertions above functions, edits inside them, functions moved between files,
file renames and deletions, functions duplicated into other files, whitespace-only changes and
deleted functions. References (whole functions and random ranges) are synced from the first commit
to the last with ``python -m generator sync`` as a user runs it, and the drift report is compared
with the truth computed from the identities, independently of the tool:

* wrong rewrites: a reference rewritten to lines that are not the lines it cited (target: 0);
* precision of rewrites (target: 100%);
* recall: of the references whose cited code still exists unchanged exactly once, the fraction
  rewritten to it (target: at least 98%);
* wall time and peak memory of the sync process (target: under 10 s for 20,000 refs).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measure import run_generator  # noqa: E402  (scripts/measure.py, beside this script)

from generator.upstream.gitbuild import RepoBuilder, run_git  # noqa: E402


@dataclass
class Line:
    ident: int
    text: str


@dataclass
class Model:
    """The upstream as files of identified lines; functions are runs of lines."""

    files: dict[str, list[Line]] = field(default_factory=dict)
    next_id: int = 0
    functions: dict[str, list[int]] = field(default_factory=dict)
    """Function name -> ids of its lines (header first)."""

    def new_line(self, text: str) -> Line:
        self.next_id += 1
        return Line(self.next_id, text)

    def function(self, name: str, rng: random.Random) -> list[Line]:
        lines = [self.new_line(f"def {name}(value, scale=1):")]
        for _ in range(rng.randint(4, 12)):
            lines.append(self.new_line(f"    value = value * scale + {rng.randint(0, 10**6)}"))
        lines.append(self.new_line("    return value"))
        self.functions[name] = [line.ident for line in lines]
        return lines

    def render(self) -> dict[str, str]:
        return {
            path: "".join(line.text + "\n" for line in lines) for path, lines in self.files.items()
        }

    def locate(self) -> dict[int, tuple[str, int]]:
        return {
            line.ident: (path, number)
            for path, lines in self.files.items()
            for number, line in enumerate(lines, 1)
        }

    def function_span(self, path: str, name: str) -> tuple[int, int] | None:
        ids = self.functions.get(name)
        if not ids:
            return None
        numbers = [n for n, line in enumerate(self.files[path], 1) if line.ident in set(ids)]
        return (numbers[0], numbers[-1]) if numbers else None


def build_history(root: Path, files: int, commits: int, rng: random.Random) -> tuple[Model, list]:
    model = Model()
    names = iter(f"fn_{n}" for n in range(10**7))
    for number in range(files):
        path = f"big/mod{number % 12}/file_{number}.py"
        lines = [model.new_line(f'"""Module {number}."""'), model.new_line("")]
        for _ in range(rng.randint(10, 18)):
            lines += model.function(next(names), rng)
            lines.append(model.new_line(""))
        model.files[path] = lines
    repo = RepoBuilder.init(root / "cache" / "up")
    first = repo.commit(model.render(), "base", date="2025-01-01T00:00:00+00:00")
    snapshot = {path: list(lines) for path, lines in model.files.items()}
    kinds = [
        "insert",
        "insert",
        "edit",
        "edit",
        "move",
        "rename",
        "delete-file",
        "duplicate",
        "whitespace",
        "delete-function",
    ]
    for index in range(commits):
        for _ in range(rng.randint(1, 4)):
            apply_edit(model, rng.choice(kinds), rng, names)
        previous = set(repo_paths(repo))
        current = model.render()
        removed = {path: None for path in previous - set(current)}
        repo.commit(
            {**current, **removed},
            f"edit {index}",
            date=f"2025-02-{1 + index // 10:02}T{index % 10:02}:00:00+00:00",
        )
    return model, [first, repo.head(), repo.path, snapshot]


def repo_paths(repo: RepoBuilder) -> list[str]:
    return run_git(repo.path, "ls-files").split()


def function_starts(lines: list[Line]) -> list[int]:
    return [i for i, line in enumerate(lines) if line.text.startswith("def ")]


def function_end(lines: list[Line], start: int) -> int:
    end = start + 1
    while end < len(lines) and lines[end].text.startswith("    "):
        end += 1
    return end  # exclusive


def apply_edit(model: Model, kind: str, rng: random.Random, names: Iterator[str]) -> None:
    paths = sorted(model.files)
    path = rng.choice(paths)
    lines = model.files[path]
    starts = function_starts(lines)
    if not starts:
        return
    start = rng.choice(starts)
    end = function_end(lines, start)
    if kind == "insert":
        new = [model.new_line(f"# note {rng.randint(0, 10**9)}") for _ in range(rng.randint(1, 6))]
        lines[start:start] = new
    elif kind == "edit":
        target = rng.randrange(start + 1, end)
        lines[target] = model.new_line(f"    value = value - {rng.randint(0, 10**6)}")
    elif kind == "move":
        block = [*lines[start:end], model.new_line("")]
        del lines[start:end]
        destination = model.files[rng.choice(paths)]
        destination.extend(block)
    elif kind == "rename" and len(paths) > 5:
        directory, name = path.rsplit("/", 1)
        model.files[f"{directory}/renamed_{rng.randint(0, 10**6)}_{name}"] = model.files.pop(path)
    elif kind == "delete-file" and len(paths) > 20 and rng.random() < 0.3:
        del model.files[path]
    elif kind == "duplicate":
        copy = [model.new_line(line.text) for line in lines[start + 1 : end]]
        header = model.new_line(f"def {next(names)}(value, scale=1):")
        model.files[rng.choice(paths)].extend([header, *copy, model.new_line("")])
    elif kind == "whitespace":
        target = rng.randrange(start + 1, end)
        line = lines[target]
        lines[target] = Line(line.ident, line.text.replace(" = ", " =  ", 1))
    elif kind == "delete-function":
        del lines[start:end]


@dataclass
class Ref:
    page: str
    line: int
    path: str
    start: int
    end: int
    ids: list[int]


def make_refs(snapshot: dict[str, list[Line]], count: int, rng: random.Random) -> list[Ref]:
    refs = []
    spans = []
    for path, lines in snapshot.items():
        for start in function_starts(lines):
            spans.append((path, start, function_end(lines, start)))
    for number in range(count):
        path, start, end = spans[number % len(spans)] if number < len(spans) else rng.choice(spans)
        if number >= len(spans):  # after one reference to every function, random ranges
            first = rng.randrange(start, end)
            last = rng.randrange(first, end)
            start, end = first, last + 1
        ids = [line.ident for line in snapshot[path][start:end]]
        refs.append(Ref("", 0, path, start + 1, end, ids))
    return refs


class Truth:
    """Where every identified line is at the last commit, and where each text occurs."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.where = model.locate()
        self.texts = {
            path: [" ".join(line.text.split()) for line in lines]
            for path, lines in model.files.items()
        }
        self.starts: dict[str, list[tuple[str, int]]] = {}
        for path, texts in self.texts.items():
            for index, text in enumerate(texts):
                self.starts.setdefault(text, []).append((path, index))

    def of(self, ref: Ref) -> tuple[str, tuple[str, int, int] | None]:
        """What really happened to the cited lines: ('unique', location) or why not."""
        if not all(ident in self.where for ident in ref.ids):
            return "gone", None
        places = [self.where[ident] for ident in ref.ids]
        path = places[0][0]
        numbers = [number for _, number in places]
        if any(p != path for p, _ in places) or numbers != list(range(numbers[0], numbers[-1] + 1)):
            return "broken-up", None
        cited = self.texts[path][numbers[0] - 1 : numbers[-1]]
        occurrences = sum(
            1
            for other, index in self.starts.get(cited[0], ())
            if self.texts[other][index : index + len(cited)] == cited
        )
        location = (path, numbers[0], numbers[-1])
        return ("unique" if occurrences == 1 else "duplicated"), location


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--refs", type=int, default=20000)
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument("--refs-per-page", type=int, default=50)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--show-wrong", action="store_true", help="list every wrong rewrite")
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build in DIR and keep it (to profile the sync there)",
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as directory:
        root = args.keep or Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        model, (first, last, repo_path, snapshot) = build_history(
            root, args.files, args.commits, rng
        )
        refs = make_refs(snapshot, args.refs, rng)
        docs = root / "docs"
        docs.mkdir()
        for page_number in range(0, len(refs), args.refs_per_page):
            chunk = refs[page_number : page_number + args.refs_per_page]
            name = f"page_{page_number // args.refs_per_page:04}.md"
            lines = [f"# Page {page_number}", ""]
            for ref in chunk:
                ref.page, ref.line = f"docs/{name}", len(lines) + 1
                span = f"{ref.start}-{ref.end}" if ref.end != ref.start else f"{ref.start}"
                lines.append(f"- `{ref.path}:{span}`")
            (docs / name).write_text("\n".join(lines) + "\n", "utf-8")
        (root / "upstreams.yaml").write_text(
            f"cache_dir: cache\nupstreams:\n  up:\n    url: {repo_path}\n    pin: {first}\n"
            "    prefixes: [big/]\n",
            "utf-8",
        )
        for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "kb"]):
            run_git(root, *command)
        print(
            f"history: {args.files} files, {args.commits} commits, {len(refs)} refs on "
            f"{len(list(docs.iterdir()))} pages, built in {time.perf_counter() - started:.1f} s"
        )

        result = run_generator(["sync", "up", "--no-fetch", "--to", last], root)
        elapsed, peak = result.seconds, result.peak_mib
        if result.returncode != 0:
            raise SystemExit(f"sync failed: {result.stderr}")
        report = json.loads(next((root / ".cache" / "reports").glob("*.json")).read_text())

        by_position = {(r["page"], r["line"]): r for r in report["refs"]}
        classes: dict[str, int] = {}
        wrong = correct = rewritten = unique = unique_found = 0
        truth = Truth(model)
        for ref in refs:
            kind, location = truth.of(ref)
            classes[kind] = classes.get(kind, 0) + 1
            entry = by_position.get((ref.page, ref.line))
            status = entry["status"] if entry else "missing"
            claimed = None
            if status in ("moved", "unchanged"):
                new = entry["new"]
                claimed = (new["path"], new["start"], new["end"])
                rewritten += 1
                if kind in ("unique", "duplicated") and claimed == location:
                    correct += 1
                else:
                    wrong += 1
                    if args.show_wrong:
                        cited = [
                            " ".join(line.text.split())
                            for line in snapshot[ref.path][ref.start - 1 : ref.end]
                        ]
                        print(
                            f"  wrong: {ref.path}:{ref.start}-{ref.end} {cited[:2]} truth "
                            f"{kind} {location}; tool {status} {claimed} ({entry['reason']})"
                        )
            if kind == "unique":
                unique += 1
                unique_found += claimed == location
        precision = correct / rewritten if rewritten else 1.0
        recall = unique_found / unique if unique else 1.0
        print(
            f"truth:     {', '.join(f'{count} {kind}' for kind, count in sorted(classes.items()))}"
        )
        print(f"tool:      {', '.join(f'{v} {k}' for k, v in sorted(report['summary'].items()))}")
        print(
            f"sync:      {elapsed:.2f} s wall (whole process), peak RSS {peak:.0f} MiB, "
            f"{len(refs) / elapsed:,.0f} refs/s"
        )
        print(
            f"rewrites:  {rewritten} ({wrong} wrong); precision {precision:.4%}; "
            f"recall {recall:.2%} of {unique} refs whose code still exists unchanged once"
        )
        verdicts = {"0 wrong": wrong == 0, "recall >= 98%": recall >= 0.98, "< 10 s": elapsed < 10}
        print(
            "targets:   "
            + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in verdicts.items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
