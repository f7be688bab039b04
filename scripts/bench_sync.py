#!/usr/bin/env python3
"""Benchmark `sync` against ground truth on a generated history and print the figures.

    python scripts/bench_sync.py [--commits 200] [--refs 20000] [--files 150]
    python scripts/bench_sync.py --long-jump    # 1,000 commits of 3,000 files (issue 16)

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

The history also has the shapes that once misled it: code copied in one commit and its original
deleted in a later one, lines edited then reverted, functions of the same name in several files,
classes whose methods share their names (and a commit that reorders them while editing one),
``.md`` and ``.patch`` files quoting functions, a reference placed after one whose rewrite gives
it its own text, and references in headings that other text links to. So it also counts:

* wrong held bindings: a ``held_refs`` entry that names, the way the verifier reads it, a
  reference other than the one held, or a held reference no entry names (target: 0);
* candidates not at the new pin: a candidate whose file or lines are not there (target: 0);
  and, of the changed references whose cited lines partly survive in one file, those whose
  first candidate holds none of them (ideally 0), also counted for methods of classes alone;
* links to headings broken by the sync (target: 0);
* the size of the Markdown drift report per 1,000 references.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from measure import run_generator  # noqa: E402  (scripts/measure.py, beside this script)

from generator.refs.extract import extract_headings, scan  # noqa: E402
from generator.refs.extract.links import extract_anchors  # noqa: E402
from generator.upstream.gitbuild import run_git  # noqa: E402

METHOD_NAMES = ("sleep", "wake_up", "train_step")
CLASS_FILE_EVERY = 10
"""Every tenth file holds classes with methods of the same names instead of functions."""


@dataclass
class Line:
    ident: int
    text: str


@dataclass
class Model:
    """The upstream as files of identified lines; functions are runs of lines."""

    files: dict[str, list[Line]] = field(default_factory=dict)
    next_id: int = 0
    quotes: dict[str, str] = field(default_factory=dict)
    """Files that quote code without being code (``.md``, ``.patch``): never cited, never
    counted as another copy by the truth."""
    pending: list[tuple[str, list[int]]] = field(default_factory=list)
    """What the next commit undoes: (path, ids of lines to delete there) or, for a revert,
    ("revert:PATH", [index, ident]) with the original text kept in `reverts`."""
    reverts: dict[int, Line] = field(default_factory=dict)

    def new_line(self, text: str) -> Line:
        self.next_id += 1
        return Line(self.next_id, text)

    def function(self, name: str, rng: random.Random) -> list[Line]:
        lines = [self.new_line(f"def {name}(value, scale=1):")]
        for _ in range(rng.randint(4, 12)):
            lines.append(self.new_line(f"    value = value * scale + {rng.randint(0, 10**6)}"))
        lines.append(self.new_line("    return value"))
        return lines

    def actor_class(self, name: str, rng: random.Random) -> list[Line]:
        """A class whose methods have the names every actor class has (``sleep``, ...): a
        method's name says nothing of which class it is in, only its place does."""
        lines = [self.new_line(f"class {name}:")]
        for method in METHOD_NAMES:
            lines.append(self.new_line(f"    def {method}(self, value, scale=1):"))
            for _ in range(rng.randint(3, 8)):
                lines.append(
                    self.new_line(f"        value = value * scale + {rng.randint(0, 10**6)}")
                )
            lines += [self.new_line("        return value"), self.new_line("")]
        return lines

    def render(self) -> dict[str, str]:
        return {
            **{
                path: "".join(line.text + "\n" for line in lines)
                for path, lines in self.files.items()
            },
            **self.quotes,
        }

    def locate(self) -> dict[int, tuple[str, int]]:
        return {
            line.ident: (path, number)
            for path, lines in self.files.items()
            for number, line in enumerate(lines, 1)
        }


def build_history(root: Path, files: int, commits: int, rng: random.Random) -> tuple[Model, list]:
    """Write the base commit and ``commits`` edit commits of the model with one ``git
    fast-import``, each commit carrying only the files that changed (as in bench_verify.py's
    pin-per-page history): rendering and committing the whole tree each time took minutes."""
    model = Model()
    names = iter(f"fn_{n}" for n in range(10**7))
    for number in range(files):
        path = f"big/mod{number % 12}/file_{number}.py"
        lines = [model.new_line(f'"""Module {number}."""'), model.new_line("")]
        if number % CLASS_FILE_EVERY == CLASS_FILE_EVERY - 1:
            for kind in range(rng.randint(2, 4)):
                lines += model.actor_class(f"Actor{number}Kind{kind}", rng)
        else:
            for _ in range(rng.randint(10, 18)):
                lines += model.function(next(names), rng)
                lines.append(model.new_line(""))
        model.files[path] = lines
    snapshot = {path: list(lines) for path, lines in model.files.items()}
    stream = [commit_header(0, "base"), *file_changes(model, {}, {})]
    committed_files, committed_quotes = snapshot, {}
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
    # The shapes that misled sync on real histories, rarer than the common edits.
    kinds += ["copy-then-delete", "edit-then-revert", "same-name", "quote", "reorder-classes"]
    for index in range(commits):
        finish_pending(model)
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice(kinds)
            if kind in ("copy-then-delete", "edit-then-revert") and rng.random() < 0.6:
                kind = "insert"  # each pair of commits loses a reference a step: keep them rare
            apply_edit(model, kind, rng, names)
        stream.append(commit_header(index + 1, f"edit {index}"))
        stream += file_changes(model, committed_files, committed_quotes)
        committed_files = {path: list(lines) for path, lines in model.files.items()}
        committed_quotes = dict(model.quotes)
    repo = root / "cache" / "up"
    repo.mkdir(parents=True)
    run_git(repo, "init", "-q", "--initial-branch=main")
    marks = repo / ".git" / "bench-marks"
    run_git(repo, "fast-import", "--quiet", f"--export-marks={marks}", input_bytes=b"".join(stream))
    shas = dict(line.split() for line in marks.read_text().splitlines())
    return model, [shas[":1"], shas[f":{commits + 1}"], repo, snapshot]


HISTORY_START = datetime(2025, 1, 1, tzinfo=UTC)


def commit_header(number: int, message: str) -> bytes:
    """A fast-import commit on main, marked ``number + 1``, an hour after the one before."""
    seconds = int((HISTORY_START + timedelta(hours=number)).timestamp())
    data = message.encode()
    return (
        f"commit refs/heads/main\nmark :{number + 1}\n"
        f"committer Demo Author <author@example.invalid> {seconds} +0000\n"
        f"data {len(data)}\n".encode()
        + data
        + b"\n"
    )


def file_changes(
    model: Model, committed_files: dict[str, list[Line]], committed_quotes: dict[str, str]
) -> list[bytes]:
    """The fast-import commands that turn the committed files into the model's: the files
    whose lines differ (the lists compare their shared lines by identity first, so this
    costs little next to rendering every file) and deletions of the files that are gone."""
    changes = []
    current = {
        **{
            path: lines for path, lines in model.files.items() if committed_files.get(path) != lines
        },
        **{path: text for path, text in model.quotes.items() if committed_quotes.get(path) != text},
    }
    for path, content in current.items():
        text = (
            content if isinstance(content, str) else "".join(line.text + "\n" for line in content)
        )
        data = text.encode()
        changes.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    for path in committed_files.keys() - model.files.keys():
        changes.append(f"D {path}\n".encode())
    return changes


def finish_pending(model: Model) -> None:
    """The second commit of a copy-then-delete (delete the original) or an edit-then-revert."""
    for path, ids in model.pending:
        if path.startswith("revert:"):
            lines = model.files.get(path.removeprefix("revert:"))
            if lines is None:
                continue
            for number, line in enumerate(lines):
                if line.ident in model.reverts:
                    lines[number] = model.reverts.pop(line.ident)
        elif path in model.files:
            gone = set(ids)
            model.files[path] = [line for line in model.files[path] if line.ident not in gone]
    model.pending.clear()
    model.reverts.clear()


def function_starts(lines: list[Line], methods: bool = False) -> list[int]:
    """Where the functions (and, with ``methods``, the methods of classes) start."""
    heads = ("def ", "    def ") if methods else ("def ",)
    return [i for i, line in enumerate(lines) if line.text.startswith(heads)]


def function_end(lines: list[Line], start: int) -> int:
    body = " " * (len(lines[start].text) - len(lines[start].text.lstrip()) + 4)
    end = start + 1
    while end < len(lines) and lines[end].text.startswith(body):
        end += 1
    return end  # exclusive


def indent(line: Line) -> str:
    return line.text[: len(line.text) - len(line.text.lstrip())]


IN_PLACE = ("insert", "edit", "whitespace", "edit-then-revert")
"""The edits that may touch a method; the others take whole functions elsewhere."""


def apply_edit(model: Model, kind: str, rng: random.Random, names: Iterator[str]) -> None:
    paths = sorted(model.files)
    if kind == "reorder-classes":
        reorder_classes(model, rng, paths)
        return
    path = rng.choice(paths)
    lines = model.files[path]
    starts = function_starts(lines, methods=kind in IN_PLACE)
    if not starts:
        return
    start = rng.choice(starts)
    end = function_end(lines, start)
    if kind == "insert":
        new = [model.new_line(f"# note {rng.randint(0, 10**9)}") for _ in range(rng.randint(1, 6))]
        lines[start:start] = new
    elif kind == "edit":
        target = rng.randrange(start + 1, end)
        lines[target] = model.new_line(
            f"{indent(lines[target])}value = value - {rng.randint(0, 10**6)}"
        )
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
    elif kind == "copy-then-delete":
        # The same lines (same identities) in a second file; the next commit deletes the first.
        destination = rng.choice([p for p in paths if p != path])
        model.files[destination].extend([*lines[start:end], model.new_line("")])
        model.pending.append((path, [line.ident for line in lines[start:end]]))
    elif kind == "edit-then-revert":
        target = rng.randrange(start + 1, end)
        edited = model.new_line(f"{indent(lines[target])}value = value - {rng.randint(0, 10**6)}")
        model.reverts[edited.ident] = lines[target]
        lines[target] = edited
        model.pending.append((f"revert:{path}", []))
    elif kind == "same-name":
        # Another function with the name of this one, elsewhere in this file or in another.
        name = lines[start].text.removeprefix("def ").split("(")[0]
        other = model.function(f"{name}_twin", rng)
        other[0] = Line(other[0].ident, lines[start].text)
        model.files[rng.choice([path, rng.choice(paths)])].extend([*other, model.new_line("")])
    elif kind == "quote":
        quoted = [line.text for line in lines[start:end]]
        number = len(model.quotes)
        if rng.random() < 0.5:
            text = "# Notes\n\n```python\n" + "\n".join(quoted) + "\n```\n"
            model.quotes[f"docs/notes_{number}.md"] = text
        else:
            body = "".join(f" {line}\n" for line in quoted)
            model.quotes[f"docker/patch/fix_{number}.patch"] = (
                f"--- a/{path}\n+++ b/{path}\n@@ -1,{len(quoted)} +1,{len(quoted)} @@\n{body}"
            )


def reorder_classes(model: Model, rng: random.Random, paths: list[str]) -> None:
    """Move a file's first class below the others and edit one of its methods, in one commit:
    where the diff says the cited lines of that method went, another class's method of the
    same name now is."""
    with_classes = [
        p for p in paths if any(line.text.startswith("class ") for line in model.files[p])
    ]
    if not with_classes:
        return
    lines = model.files[rng.choice(with_classes)]
    heads = [i for i, line in enumerate(lines) if line.text.startswith("class ")]
    if len(heads) < 2:
        return
    moved = lines[heads[0] : heads[1]]
    del lines[heads[0] : heads[1]]
    lines.extend(moved)
    body = [i for i, line in enumerate(moved) if line.text.startswith("        value")]
    target = len(lines) - len(moved) + rng.choice(body)
    lines[target] = model.new_line(
        f"{indent(lines[target])}value = value - {rng.randint(0, 10**6)}"
    )


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
        for start in function_starts(lines, methods=True):
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


HELD = ("changed", "deleted", "ambiguous", "relocated")
_CODE_SPAN = re.compile(r"`([^`]+)`")
_LINK = re.compile(r"\]\(#([^)]+)\)")


def ref_text(ref: Ref) -> str:
    return (
        f"{ref.path}:{ref.start}-{ref.end}" if ref.end != ref.start else f"{ref.path}:{ref.start}"
    )


def with_twins(refs: list[Ref], snapshot: dict[str, list[Line]], truth: Truth) -> list[Ref]:
    """After every 25th reference whose code is still there once, another whose text is what
    that one will be rewritten to, read at the old commit: when its own code changed, the
    rewrite gives a held reference's text to the reference before it."""
    result = []
    for number, ref in enumerate(refs):
        result.append(ref)
        kind, location = truth.of(ref)
        if number % 25 or kind != "unique" or location is None:
            continue
        path, start, end = location
        cited = snapshot.get(path, [])[start - 1 : end]
        # Within one function, as references are written: sync follows the code and lets a
        # blank edge line go when code is inserted between them, which the identities call
        # broken up; and the end of a function with the header of the next is text that a copy
        # of that header after another function's end matches as well as the original does.
        inside = not any(line.text.lstrip().startswith("def ") for line in cited[1:])
        if len(cited) == end - start + 1 and cited[0].text and cited[-1].text and inside:
            result.append(Ref("", 0, path, start, end, [line.ident for line in cited]))
    return result


def write_page(path: Path, page_number: int, chunk: list[Ref]) -> str:
    """The page: its first two references in headings, the others in a list, and links to
    the headings at the end. Returns its text."""
    lines = [f"# Page {page_number}", ""]
    for index, ref in enumerate(chunk):
        if index < 2:
            lines.append(f"## {index + 1}. `{ref_text(ref)}`")
            ref.page, ref.line = f"docs/{path.name}", len(lines)
            lines.append("")
        else:
            lines.append(f"- `{ref_text(ref)}`")
            ref.page, ref.line = f"docs/{path.name}", len(lines)
    text = "\n".join(lines) + "\n"
    anchors = [h.anchor for h in extract_headings(scan(text))][1:]
    text += "\nSee " + " and ".join(f"[{n + 1}](#{a})" for n, a in enumerate(anchors)) + ".\n"
    path.write_text(text, "utf-8")
    return text


def heading_links(text: str) -> list[str]:
    return _LINK.findall(text)


def _body(path: Path) -> tuple[dict, str]:
    """A page's frontmatter and body."""
    text = path.read_text("utf-8")
    if not text.startswith("---\n"):
        return {}, text
    end = text.index("\n---\n", 3)
    return yaml.safe_load(text[4:end]) or {}, text[end + 5 :]


def wrong_bindings(
    root: Path, pages: dict[str, list[Ref]], by_position: dict[tuple[str, int], dict]
) -> int:
    """Held entries that, read as the verifier reads them (the n-th reference with that text
    on the page), name a reference that was not held, plus held references no entry names."""
    wrong = 0
    for page, chunk in pages.items():
        meta, body = _body(root / page)
        texts = [m.group(1) for line in body.splitlines() if (m := _CODE_SPAN.search(line))]
        assert len(texts) == len(chunk), page
        bound = set()
        for entry in meta.get("held_refs") or []:
            matches = [i for i, text in enumerate(texts) if text == entry["ref"]]
            occurrence = int(entry.get("occurrence", 1))
            if occurrence > len(matches):
                wrong += 1
                continue
            index = matches[occurrence - 1]
            verdict = by_position.get((page, chunk[index].line))
            if verdict is None or verdict["status"] not in HELD or verdict["text"] != entry["ref"]:
                wrong += 1
            bound.add(index)
        for index, ref in enumerate(chunk):
            verdict = by_position.get((page, ref.line))
            if verdict and verdict["status"] in HELD and index not in bound:
                wrong += 1
    return wrong


def candidate_misses(
    report: dict, by_position: dict, refs: list[Ref], model: Model, truth: Truth
) -> tuple[int, int, int, int, int]:
    """Candidates whose file or lines are not at the new pin; of the changed references whose
    cited lines partly survive in one file, those whose first candidate holds none, and how
    many; and the same two figures for the references to methods of a class."""
    files = {path: text.count("\n") for path, text in model.render().items()}
    absent = sum(
        1
        for entry in report["refs"]
        for candidate in entry["candidates"]
        if files.get(candidate["path"], 0) < candidate["end"] or candidate["start"] < 1
    )
    missed = checked = methods_missed = methods_checked = 0
    for ref in refs:
        entry = by_position.get((ref.page, ref.line))
        if entry is None or entry["status"] != "changed" or not entry["candidates"]:
            continue
        surviving = [truth.where[i] for i in ref.ids if i in truth.where]
        if not surviving or len({path for path, _ in surviving}) != 1:
            continue
        first = entry["candidates"][0]
        held_none = not any(
            path == first["path"] and first["start"] <= number <= first["end"]
            for path, number in surviving
        )
        checked += 1
        missed += held_none
        if int(ref.path.rsplit("_", 1)[1].removesuffix(".py")) % CLASS_FILE_EVERY == (
            CLASS_FILE_EVERY - 1
        ):
            methods_checked += 1
            methods_missed += held_none
    return absent, missed, checked, methods_missed, methods_checked


def broken_heading_links(root: Path, links: dict[str, list[str]]) -> int:
    broken = 0
    for page, fragments in links.items():
        _, body = _body(root / page)
        anchors = extract_anchors(scan(body))
        broken += sum(1 for fragment in fragments if fragment not in anchors)
    return broken


LONG_JUMP = {"commits": 1000, "files": 3000, "refs": 20000}
"""The long jump of issue 16: a big upstream whose pin moves far, as when a knowledge base of
an upstream's release is brought to the next one."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commits", type=int, default=200)
    parser.add_argument("--refs", type=int, default=20000)
    parser.add_argument("--files", type=int, default=150)
    parser.add_argument(
        "--long-jump",
        action="store_true",
        help=f"a pin moved across {LONG_JUMP['commits']:,} commits of a "
        f"{LONG_JUMP['files']:,}-file upstream, {LONG_JUMP['refs']:,} refs "
        "(overrides --commits, --files and --refs)",
    )
    parser.add_argument("--refs-per-page", type=int, default=50)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--show-wrong", action="store_true", help="list every wrong rewrite")
    parser.add_argument(
        "--show-missed",
        action="store_true",
        help="list every reference whose code still exists once but was not rewritten to it",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        metavar="DIR",
        help="build in DIR and keep it (to profile the sync there)",
    )
    args = parser.parse_args()
    if args.long_jump:
        vars(args).update(LONG_JUMP)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-sync-") as directory:
        root = args.keep or Path(directory)
        root.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        model, (first, last, repo_path, snapshot) = build_history(
            root, args.files, args.commits, rng
        )
        refs = make_refs(snapshot, args.refs, rng)
        truth = Truth(model)
        refs = with_twins(refs, snapshot, truth)
        docs = root / "docs"
        docs.mkdir()
        pages: dict[str, list[Ref]] = {}
        links: dict[str, list[str]] = {}
        for page_number in range(0, len(refs), args.refs_per_page):
            chunk = refs[page_number : page_number + args.refs_per_page]
            name = f"page_{page_number // args.refs_per_page:04}.md"
            pages[f"docs/{name}"] = chunk
            text = write_page(docs / name, page_number, chunk)
            links[f"docs/{name}"] = heading_links(text)
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

        by_position = {(r["page"], r["line_before"]): r for r in report["refs"]}
        classes: dict[str, int] = {}
        wrong = correct = rewritten = unique = unique_found = 0
        missed: dict[str, int] = {}
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
                if claimed != location:
                    missed[status] = missed.get(status, 0) + 1
                    if args.show_missed:
                        print(
                            f"  missed: {ref.path}:{ref.start}-{ref.end} truth {location}; "
                            f"tool {status} ({entry['reason'] if entry else ''})"
                        )
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
            + (
                f" (the others: {', '.join(f'{v} {k}' for k, v in sorted(missed.items()))})"
                if missed
                else ""
            )
        )
        bindings = wrong_bindings(root, pages, by_position)
        absent, missed, checked, methods_missed, methods_checked = candidate_misses(
            report, by_position, refs, model, truth
        )
        broken = broken_heading_links(root, links)
        markdown = next((root / ".cache" / "reports").glob("*.md")).read_text("utf-8")
        per_thousand = 1000 / len(refs)
        print(
            f"held:      {bindings} wrong held bindings of "
            f"{sum(1 for r in report['refs'] if r['status'] in HELD)} held references"
        )
        print(
            f"candidates: {absent} not at the new pin; {missed} of {checked} changed references "
            "whose cited lines partly survive have a first candidate holding none of them "
            f"({methods_missed} of {methods_checked} among the methods of classes whose "
            "methods share their names)"
        )
        print(f"headings:  {broken} links to headings broken by the sync")
        print(
            f"report:    Markdown {len(markdown.encode()) * per_thousand / 1024:,.0f} KiB and "
            f"{len(markdown.splitlines()) * per_thousand:,.0f} lines per 1,000 references "
            f"({len(report.get('unresolved', []))} unresolved listed)"
        )
        verdicts = {
            "0 wrong": wrong == 0,
            "recall >= 98%": recall >= 0.98,
            "0 wrong held bindings": bindings == 0,
            "0 candidates not at the new pin": absent == 0,
            "0 broken heading links": broken == 0,
            "< 10 s": elapsed < 10,
            "< 300 MiB": peak < 300,
        }
        print(
            "targets:   "
            + ", ".join(f"{k} {'met' if v else 'NOT met'}" for k, v in verdicts.items())
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
