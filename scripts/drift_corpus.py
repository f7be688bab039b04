#!/usr/bin/env python3
"""A realistic drift corpus: an upstream with a long history, and LLM-style pages about it.

    python scripts/drift_corpus.py DIR [--commits 320] [--pages 20] [--seed 11]

Shared by the evidence tests (tests/test_evidence_corpus.py) and the evidence benchmark
(scripts/bench_evidence.py). It builds, in DIR:

- ``cache/slime``: a git repository of generated Python modules (classes, methods, decorators,
  docstrings, multi-line calls, comments; identifiers from the vocabulary of ML systems code)
  with a first-parent history of COMMITS commits of realistic churn: a few files changed per
  commit (functions added above others, statements edited, comments and imports inserted,
  calls reflowed, functions deleted or moved to another module, the odd module renamed);
- ``docs/``: PAGES pages written, as an LLM drafts them, against the commit WRITTEN (about
  four fifths into the history), each quoting the code it cites in fenced blocks: verbatim,
  reindented, with ``...`` elisions, the docstring left out, comments added (English and
  Chinese), a signature rewritten; a third of the ranges are off by a few lines or point at
  the neighbouring function; the references use every form real corpora use (paths in code
  spans, bare names, full-width brackets, block comments, table rows with a range cell,
  "lines" phrases, lists of lines, box diagrams, ``path:symbol``);
- ``upstreams.yaml``: the upstream pinned a few commits *later* than the pages were written.

`build` returns the ground truth: for every reference, where its quoted code is at the pin
(the lines' identities are followed through the history, not searched), so a test can say
which findings are right. ``nonref_lines`` is a corpus of text that cites nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from generator.upstream.gitbuild import git_environment, run_git  # noqa: E402

# -- the upstream ---------------------------------------------------------------------------------

NOUNS = [
    "tensor",
    "grad",
    "param",
    "shard",
    "bucket",
    "optimizer",
    "weight",
    "bias",
    "rank",
    "world",
    "stream",
    "device",
    "buffer",
    "request",
    "batch",
    "token",
    "sample",
    "rollout",
    "reward",
    "advantage",
    "logits",
    "mask",
    "cache",
    "block",
    "page",
    "kv",
    "checkpoint",
    "state",
    "config",
    "schedule",
    "step",
    "epoch",
    "loss",
    "metric",
    "group",
    "mesh",
    "chunk",
    "offset",
    "queue",
    "engine",
    "worker",
    "actor",
    "critic",
    "policy",
    "router",
    "expert",
    "layer",
    "module",
    "handle",
    "future",
    "event",
]
VERBS = [
    "offload",
    "reload",
    "gather",
    "scatter",
    "reduce",
    "broadcast",
    "split",
    "merge",
    "pack",
    "unpack",
    "flush",
    "sync",
    "load",
    "save",
    "update",
    "build",
    "compute",
    "apply",
    "register",
    "resolve",
    "allocate",
    "release",
    "wait",
    "record",
    "prepare",
    "normalize",
    "clip",
    "shard",
    "restore",
    "convert",
    "dispatch",
    "collect",
    "encode",
    "decode",
]
CLASSES = [
    "Actor",
    "Trainer",
    "Engine",
    "Scheduler",
    "Buffer",
    "Router",
    "Manager",
    "Worker",
    "Planner",
    "Sharder",
    "Loader",
    "Allocator",
    "Collector",
    "Dispatcher",
    "Tracker",
    "Runner",
    "Adapter",
    "Controller",
]
PREFIXES = ("FSDP", "Megatron", "Rollout", "Train", "Async", "Dist", "Paged", "Fused", "")
SENTENCES_EN = (
    "keep the handle until the stream finishes",
    "the last rank carries the remainder",
    "avoid a second copy on the host",
    "this mirrors the reference implementation",
    "overlap communication with the next step",
    "the mask is already on the device",
    "drop references so the allocator can reuse memory",
)
SENTENCES_ZH = (
    "这里先把参数卸载到 CPU",
    "注意：最后一个 rank 处理余数",
    "与下一步的通信重叠",
    "避免在主机上再拷贝一次",
    "释放引用，让显存可以复用",
)


class Ids:
    def __init__(self) -> None:
        self.next = 0

    def __call__(self) -> int:
        self.next += 1
        return self.next


@dataclass
class Line:
    id: int
    text: str


@dataclass
class Function:
    name: str
    lines: list[Line]
    """Decorators, ``def`` line, docstring and body, indented for where it stands."""
    owner: str | None = None


@dataclass
class Module:
    path: str
    header: list[Line]
    items: list[Function] = field(default_factory=list)
    """Functions and methods in order; a method's class line is a header of its own."""
    classes: dict[str, list[Line]] = field(default_factory=dict)

    def render(self) -> tuple[list[Line], dict[str, tuple[int, int]]]:
        """The file's lines and each function's span (1-based), by qualified name."""
        lines: list[Line] = list(self.header)
        spans: dict[str, tuple[int, int]] = {}
        current: str | None = None
        for item in self.items:
            if item.owner is None:
                lines += [Line(0, ""), Line(0, "")]
            elif item.owner != current:
                lines += [Line(0, ""), Line(0, ""), *self.classes[item.owner], Line(0, "")]
            else:
                lines.append(Line(0, ""))
            current = item.owner
            start = len(lines) + 1
            lines.extend(item.lines)
            spans[qualname(item)] = (start, len(lines))
        return lines, spans


def _statement_start(lines: list[Line], index: int) -> bool:
    """Whether line ``index`` starts a statement of its own (not a docstring, not inside a
    multi-line call), so that replacing it leaves the code whole."""
    text = lines[index].text.strip()
    previous = lines[index - 1].text.rstrip()
    return (
        bool(text)
        and '"""' not in text
        and not text.startswith((")", "#"))
        and not text.endswith((",", "(", ":"))
        and not previous.endswith((",", "("))
    )


def qualname(function: Function) -> str:
    return f"{function.owner}.{function.name}" if function.owner else function.name


class CodeWriter:
    """Statements of a plausible ML-systems code base."""

    def __init__(self, rng: random.Random, ids: Ids) -> None:
        self.rng = rng
        self.ids = ids
        self.names: set[str] = set()

    def line(self, text: str) -> Line:
        return Line(self.ids(), text)

    def word(self) -> str:
        return self.rng.choice(NOUNS)

    def var(self) -> str:
        return f"{self.word()}_{self.rng.choice(NOUNS)}" if self.rng.random() < 0.6 else self.word()

    def fresh_name(self) -> str:
        while True:
            name = f"{self.rng.choice(VERBS)}_{self.rng.choice(NOUNS)}"
            if self.rng.random() < 0.3:
                name += f"_{self.rng.choice(NOUNS)}"
            if name not in self.names:
                self.names.add(name)
                return name

    def statement(self, indent: str) -> list[Line]:
        rng = self.rng
        kind = rng.random()
        a, b, c = self.var(), self.var(), self.var()
        if kind < 0.22:
            return [
                self.line(
                    f"{indent}{a} = self.{b}.{rng.choice(VERBS)}"
                    f"({c}, {self.word()}={rng.randint(0, 64)})"
                )
            ]
        if kind < 0.34:
            return [
                self.line(f"{indent}{a} = {rng.choice(VERBS)}_{self.word()}("),
                self.line(f"{indent}    {b},"),
                self.line(f"{indent}    {self.word()}={c},"),
                self.line(f"{indent}    {self.word()}_{self.word()}=self.{self.word()},"),
                self.line(f"{indent})"),
            ]
        if kind < 0.48:
            return [
                self.line(
                    f"{indent}if {a} is not None and {b}.{self.word()} > {rng.randint(1, 9)}:"
                ),
                self.line(
                    f"{indent}    {c} = "
                    f"torch.{rng.choice(('cat', 'stack', 'zeros_like', 'empty_like'))}([{a}, {b}])"
                ),
                self.line(f"{indent}    self.{self.word()}.{rng.choice(VERBS)}({c})"),
            ]
        if kind < 0.6:
            return [
                self.line(f"{indent}for {self.word()}_index, {a} in enumerate(self.{b}s):"),
                self.line(
                    f"{indent}    {c}[{self.word()}_index] = {a}.to(self.device, non_blocking=True)"
                ),
            ]
        if kind < 0.68:
            sentence = rng.choice(SENTENCES_EN)
            return [self.line(f"{indent}# {sentence[0].upper() + sentence[1:]}.")]
        if kind < 0.78:
            return [
                self.line(
                    f"{indent}dist.all_reduce({a}, group=self.{b}_group, "
                    f"async_op={rng.choice(('True', 'False'))})"
                )
            ]
        if kind < 0.88:
            return [
                self.line(
                    f"{indent}self.{a} = {b}.{rng.choice(VERBS)}(dim={rng.randint(-1, 2)})"
                    f".{rng.choice(('float', 'contiguous', 'detach'))}()"
                )
            ]
        return [
            self.line(
                f"{indent}{a} += {b}.numel() * "
                f"{rng.choice(('self.world_size', 'self.rank', '2', 'len(self.buckets)'))}"
            )
        ]

    def function(self, owner: str | None, name: str | None = None) -> Function:
        rng = self.rng
        indent = "    " if owner else ""
        name = name or self.fresh_name()
        lines: list[Line] = []
        if rng.random() < 0.25:
            lines.append(
                self.line(
                    f"{indent}@"
                    f"{rng.choice(('torch.no_grad()', 'functools.cache', 'staticmethod', 'timer'))}"
                )
            )
        arguments = ", ".join(self.var() for _ in range(rng.randint(0, 3)))
        receiver = "self, " if owner else ""
        if rng.random() < 0.3:
            lines.append(self.line(f"{indent}def {name}("))
            lines.append(self.line(f"{indent}    {receiver}{arguments or self.var()},"))
            lines.append(self.line(f"{indent}    {self.word()}: int = {rng.randint(1, 8)},"))
            lines.append(
                self.line(
                    f"{indent}) -> {rng.choice(('None', 'torch.Tensor', 'int', 'list[int]'))}:"
                )
            )
        else:
            lines.append(self.line(f"{indent}def {name}({(receiver + arguments).rstrip(', ')}):"))
        body = indent + "    "
        summary = f"{name.replace('_', ' ').capitalize()} for the {self.word()} {self.word()}."
        if rng.random() < 0.5:
            lines.append(self.line(f'{body}"""{summary}'))
            lines.append(self.line(""))
            lines.append(self.line(f"{body}{rng.choice(SENTENCES_EN).capitalize()}."))
            lines.append(self.line(f'{body}"""'))
        else:
            lines.append(self.line(f'{body}"""{summary}"""'))
        for _ in range(rng.randint(2, 7)):
            lines.extend(self.statement(body))
        lines.append(self.line(f"{body}return {self.var()}"))
        return Function(name, lines, owner)


class Upstream:
    """The modules and the operations that change them."""

    def __init__(self, rng: random.Random, modules: int) -> None:
        self.rng = rng
        self.ids = Ids()
        self.writer = CodeWriter(rng, self.ids)
        self.modules: list[Module] = []
        packages = ("backends/fsdp", "backends/megatron", "rollout", "utils", "ray", "data")
        for number in range(modules):
            package = packages[number % len(packages)]
            stem = f"{self.rng.choice(NOUNS)}_{self.rng.choice(VERBS)}_{number}"
            module = Module(
                f"slime/{package}/{stem}.py",
                [
                    self.writer.line(f'"""{stem.replace("_", " ").capitalize()}."""'),
                    self.writer.line(""),
                    self.writer.line("import torch"),
                    self.writer.line("import torch.distributed as dist"),
                ],
            )
            owner = None
            if rng.random() < 0.7:
                owner = f"{rng.choice(PREFIXES)}{rng.choice(CLASSES)}{number}"
                module.classes[owner] = [
                    self.writer.line(f"class {owner}:"),
                    self.writer.line(
                        f'    """The {owner} of the {self.rng.choice(NOUNS)} path."""'
                    ),
                ]
            for _ in range(rng.randint(5, 10)):
                module.items.append(self.writer.function(owner if rng.random() < 0.7 else None))
            # Methods of one class stay together.
            module.items.sort(key=lambda f: f.owner is None)
            self.modules.append(module)

    def files(self) -> dict[str, str]:
        return {m.path: "\n".join(line.text for line in m.render()[0]) + "\n" for m in self.modules}

    def change(self) -> str:
        """Apply one commit's worth of churn; returns its subject."""
        rng = self.rng
        subjects = []
        for _ in range(rng.randint(1, 3)):
            module = rng.choice(self.modules)
            kind = rng.random()
            if kind < 0.3 or not module.items:
                owner = rng.choice([None, *module.classes])
                function = self.writer.function(owner)
                place = [i for i, f in enumerate(module.items) if f.owner == owner] or [0]
                module.items.insert(rng.choice(place), function)
                subjects.append(f"Add {function.name}")
            elif kind < 0.42:
                # A refactor: the function keeps its name, its body is written anew.
                function = rng.choice(module.items)
                rewritten = self.writer.function(function.owner, function.name)
                function.lines = rewritten.lines
                subjects.append(f"Refactor {function.name}")
            elif kind < 0.55:
                function = rng.choice(module.items)
                body = [
                    i
                    for i, line in enumerate(function.lines)
                    if i > 1 and _statement_start(function.lines, i)
                ]
                if body:
                    index = rng.choice(body)
                    old = function.lines[index].text
                    indent = old[: len(old) - len(old.lstrip())]
                    function.lines[index : index + 1] = self.writer.statement(indent)[:1]
                subjects.append(f"Fix {function.name}")
            elif kind < 0.7:
                module.header.insert(
                    2, self.writer.line(f"import {rng.choice(NOUNS)}_{rng.choice(NOUNS)}")
                )
                subjects.append(f"Import into {Path(module.path).stem}")
            elif kind < 0.8:
                function = rng.choice(module.items)
                indent = "        " if function.owner else "    "
                at = rng.randint(2, len(function.lines) - 1)
                function.lines.insert(
                    at, self.writer.line(f"{indent}# {rng.choice(SENTENCES_EN + SENTENCES_ZH)}")
                )
                subjects.append(f"Comment {function.name}")
            elif kind < 0.88 and len(module.items) > 4:
                function = rng.choice(module.items)
                module.items.remove(function)
                subjects.append(f"Remove {function.name}")
            elif kind < 0.96:
                function = rng.choice([f for f in module.items if f.owner is None] or module.items)
                target = rng.choice(self.modules)
                if target is not module and function.owner is None:
                    module.items.remove(function)
                    target.items.append(function)
                    subjects.append(f"Move {function.name} to {Path(target.path).stem}")
            else:
                old = module.path
                module.path = old.replace(".py", "_impl.py")
                subjects.append(f"Rename {Path(old).stem}")
        return "; ".join(subjects) or "Tidy"


# -- history through fast-import ----------------------------------------------------------------


def commit_history(
    repo: Path, upstream: Upstream, commits: int, start_time: int
) -> list[tuple[str, dict]]:
    """Write COMMITS commits with one ``git fast-import``; returns (sha, snapshot) per commit,
    where a snapshot maps path -> (lines, spans)."""
    repo.mkdir(parents=True, exist_ok=True)
    run_git(repo, "init", "-q", "--initial-branch=main")
    stream: list[bytes] = []
    snapshots: list[dict] = []
    previous: dict[str, str] = {}
    for number in range(commits):
        subject = "Initial import" if number == 0 else upstream.change()
        files = upstream.files()
        snapshots.append({m.path: m.render() for m in upstream.modules})
        when = start_time + number * 3600
        stream.append(b"commit refs/heads/main\n")
        stream.append(f"mark :{number + 1}\n".encode())
        stream.append(f"author Dev <dev@example.invalid> {when} +0000\n".encode())
        stream.append(f"committer Dev <dev@example.invalid> {when} +0000\n".encode())
        message = subject.encode()
        stream.append(f"data {len(message)}\n".encode() + message + b"\n")
        if number:
            stream.append(f"from :{number}\n".encode())
        for path in previous:
            if path not in files:
                stream.append(f"D {path}\n".encode())
        for path, text in files.items():
            if previous.get(path) != text:
                data = text.encode()
                stream.append(f"M 100644 inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
        previous = files
    stream.append(b"done\n")
    subprocess.run(
        ["git", "fast-import", "--quiet", "--done"],
        cwd=repo,
        input=b"".join(stream),
        env=git_environment(),
        check=True,
        capture_output=True,
    )
    shas = run_git(repo, "rev-list", "--reverse", "--first-parent", "main").split()
    run_git(repo, "reset", "-q", "--hard", "main")
    return list(zip(shas, snapshots, strict=True))


# -- pages ----------------------------------------------------------------------------------------


@dataclass
class Citation:
    """One reference the corpus wrote, and what is true of it at the pin."""

    page: str
    line: int
    """Page line of the reference (1-based)."""
    form: str
    """How it is written (``span``, ``bare``, ``fullwidth``, ``comment``, ``table``, ``phrase``,
    ``phrase-zh``, ``list``, ``diagram``, ``symbol``)."""
    path: str
    start: int | None
    end: int | None
    quoted: bool
    offset: str
    """``none``, ``shift`` (a few lines off) or ``neighbour`` (the next function's range)."""
    truth: str
    """At the pin: ``in-range`` (the quote is in the cited lines), ``elsewhere`` (whole at
    other lines: ``true_path``, ``true_start``..``true_end``), ``nowhere`` (its code changed
    or went), ``unclear`` (partly changed: not scored), or ``unquoted``."""
    true_path: str | None = None
    true_start: int | None = None
    true_end: int | None = None
    function_span: tuple[int, int] | None = None
    """The quoted function's span at the pin, when it is still in ``true_path``."""
    strong: bool = True


@dataclass
class Corpus:
    root: Path
    repo: Path
    written: str
    """The commit the pages were written against."""
    written_index: int
    pin: str
    """The commit the manifest pins (a few commits later)."""
    shas: list[str]
    citations: list[Citation]


def quote_lines(function: Function, rng: random.Random) -> tuple[list[str], list[int], str]:
    """How an LLM quotes a function: (lines written, ids of the file lines they reproduce,
    the variant)."""
    lines = [(line.id, line.text) for line in function.lines]
    indent = len(lines[0][1]) - len(lines[0][1].lstrip())
    variant = rng.choices(
        ["verbatim", "dedent", "elide", "no-docstring", "comments", "signature", "excerpt"],
        weights=[30, 15, 15, 15, 10, 5, 10],
    )[0]
    kept = [(i, t[indent:] if variant != "verbatim" else t) for i, t in lines]
    if variant == "elide" and len(kept) > 8:
        cut = rng.randint(4, len(kept) - 3)
        kept = [*kept[:cut], (-1, " " * 4 + "..."), *kept[cut + 2 :]]
    elif variant == "no-docstring":
        out, inside = [], False
        for i, text in kept:
            if '"""' in text:
                inside = inside != (text.count('"""') == 1)
                continue
            if not inside:
                out.append((i, text))
        kept = out
    elif variant == "comments":
        out = []
        for i, t in kept:
            out.append(
                (
                    i,
                    t
                    + (
                        "  # " + rng.choice(SENTENCES_ZH)
                        if rng.random() < 0.3
                        and t.strip()
                        and not t.rstrip().endswith((",", "(", ":"))
                        else ""
                    ),
                )
            )
            if rng.random() < 0.15:
                out.append((-1, t[: len(t) - len(t.lstrip())] + "# " + rng.choice(SENTENCES_ZH)))
        kept = out
    elif variant == "signature":
        first = next(n for n, (i, t) in enumerate(kept) if t.lstrip().startswith("def "))
        name = kept[first][1].split("def ", 1)[1].split("(", 1)[0]
        ends = [n for n in range(first, len(kept)) if kept[n][1].rstrip().endswith(":")]
        if ends:
            signature = (-1, kept[first][1].split("def ")[0] + f"def {name}(...):")
            kept = [*kept[:first], signature, *kept[ends[0] + 1 :]]
    elif variant == "excerpt":
        body = [n for n, (i, t) in enumerate(kept) if n > 2]
        if len(body) > 4:
            a = rng.randint(body[0], body[-3])
            kept = [(-1, "# ..."), *kept[a : a + rng.randint(3, 5)], (-1, "# ...")]
    written = [t for _, t in kept]
    ids = [i for i, t in kept if i > 0 and t.strip()]
    return written, ids, variant


def build(
    root: Path,
    commits: int = 320,
    pages: int = 20,
    refs_per_page: int = 14,
    seed: int = 11,
    modules: int = 40,
    later: int = 8,
) -> Corpus:
    rng = random.Random(seed)
    upstream = Upstream(rng, modules)
    repo = root / "cache" / "slime"
    history = commit_history(repo, upstream, commits, 1_700_000_000)
    shas = [sha for sha, _ in history]
    written_index = int(commits * 0.8)
    pin_index = min(written_index + later, commits - 1)
    written, snapshot_w = history[written_index]
    pin, snapshot_p = history[pin_index]
    (root / "upstreams.yaml").write_text(
        f"cache_dir: cache\nupstreams:\n  slime:\n    url: {repo}\n    branch: main\n"
        f"    pin: {pin}\n    prefixes: [slime/]\n    web_url: https://github.com/example/slime\n",
        "utf-8",
    )
    positions_p: dict[int, tuple[str, int]] = {}
    for path, (lines, _) in snapshot_p.items():
        for number, line in enumerate(lines, 1):
            if line.id:
                positions_p[line.id] = (path, number)
    # Functions at W, by module, with their Function objects (rebuilt from ids).
    functions_w = []
    for path, (lines, spans) in snapshot_w.items():
        for name, (first, last) in spans.items():
            functions_w.append((path, name, first, last, lines))
    touched = [
        item
        for item in functions_w
        if any(
            line.id and positions_p.get(line.id, ("", 0))[0] != item[0]
            for line in item[4][item[2] - 1 : item[3]]
        )
    ]
    basenames: dict[str, int] = {}
    for path in snapshot_w:
        basenames[path.rsplit("/", 1)[-1]] = basenames.get(path.rsplit("/", 1)[-1], 0) + 1
    citations: list[Citation] = []
    docs = root / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    forms = [
        "span",
        "span",
        "bare",
        "fullwidth",
        "comment",
        "comment",
        "table",
        "phrase",
        "phrase-zh",
        "phrase-github",
        "list",
        "diagram",
        "symbol",
    ]
    for page_number in range(pages):
        name = f"analysis_{page_number:02d}.md"
        out: list[str] = [
            "---",
            f"title: Source analysis {page_number}",
            "upstream: slime",
            "---",
            "",
            f"# 源码分析 {page_number}: slime internals",
            "",
        ]
        # A fifth of what a page cites is code that changed, went or moved file between the
        # commit it was written against and the pin.
        touched_count = min(len(touched), refs_per_page // 5)
        chosen = rng.sample(touched, touched_count) + rng.sample(
            functions_w, min(refs_per_page - touched_count, len(functions_w))
        )
        rng.shuffle(chosen)
        for number, (path, qual, first, last, lines) in enumerate(chosen):
            form = forms[(page_number + number) % len(forms)]
            function_lines = lines[first - 1 : last]
            function = Function(
                qual.rsplit(".", 1)[-1], [Line(line.id, line.text) for line in function_lines]
            )
            written_lines, ids, variant = quote_lines(function, rng)
            # Where the page says the code is (an LLM is often a little off).
            offset = rng.choices(["none", "shift", "neighbour"], weights=[62, 28, 10])[0]
            start, end = first, last
            if variant == "excerpt":
                numbers = [n for n, line in enumerate(lines, 1) if line.id in set(ids)]
                start, end = min(numbers), max(numbers)
            if offset == "shift":
                delta = rng.choice([-9, -6, -4, -3, -2, 2, 3, 4, 6, 9, 12])
                start, end = max(1, start + delta), max(1, end + delta)
            elif offset == "neighbour":
                later_ones = [f for f in functions_w if f[0] == path and f[2] > last]
                if later_ones:
                    nxt = min(later_ones, key=lambda f: f[2])
                    start, end = nxt[2], nxt[3]
                else:
                    offset = "none"
            bare = path.rsplit("/", 1)[-1]
            shown = (
                bare
                if form in ("bare", "fullwidth", "list", "diagram") and basenames[bare] == 1
                else path
            )
            if form in ("bare", "fullwidth", "list", "diagram") and shown == path:
                form = "span"
            symbol = qual.rsplit(".", 1)[-1]
            heading = f"## {number + 1}. `{symbol}()`"
            out += [heading, ""]
            quoted = form not in ("table", "list", "diagram", "symbol")
            ref_line = None
            if form == "span":
                out.append(f"`{symbol}()` 的实现见 `{shown}:{start}-{end}`：")
            elif form == "bare":
                out.append(f"The method `{symbol}` ({shown}:{start}-{end}) does this:")
            elif form == "fullwidth":
                out.append(f"`{symbol}()` 实现（{shown}：{start}-{end}）")
            elif form == "phrase":
                out.append(f"See `{shown}` (lines {start}-{end}):")
            elif form == "phrase-zh":
                out.append(f"代码位于 `{shown}`（第 {start}-{end} 行）：")
            elif form == "phrase-github":
                out.append(f"The code, `{shown}` (L{start}-L{end}):")
            ref_line = len(out)
            if form == "comment":
                out += ["```python", f"# {shown}:{start}-{end}", *written_lines, "```", ""]
                ref_line = len(out) - len(written_lines) - 2
            elif form == "table":
                out += [
                    "| 文件 | 行号 | 函数 |",
                    "|---|---|---|",
                    f"| `/home/alice/slime/{path}` | {start}-{end} | {symbol} |",
                    "",
                ]
                ref_line = len(out) - 1
            elif form == "list":
                out.append(f"`{symbol}` is called at {shown}:{start}, {end} in turn.")
                ref_line = len(out)
                out.append("")
            elif form == "diagram":
                out += [
                    "```",
                    f"┌─ {shown}:{start}-{end} ─────────┐",
                    f"│  {symbol}()              │",
                    "└────────────────────────────┘",
                    "```",
                    "",
                ]
                ref_line = len(out) - 4
            elif form == "symbol":
                out.append(f"Entry point: `{path}:{symbol}()`.")
                ref_line = len(out)
                out.append("")
            else:
                out += ["", "```python", *written_lines, "```", ""]
            citation = Citation(
                name,
                ref_line + 0,
                form,
                path,
                start if form != "symbol" else None,
                end if form != "symbol" else None,
                quoted,
                offset,
                "unquoted",
            )
            if form == "list":
                citation.end = start
            if quoted:
                _truth(citation, ids, positions_p, snapshot_p, qual, path, written_lines)
            citations.append(citation)
            out += [f"这段代码{rng.choice(SENTENCES_ZH)}。 It runs once per step.", ""]
        (docs / name).write_text("\n".join(out) + "\n", "utf-8")
    return Corpus(root, repo, written, written_index, pin, shas, citations)


def _truth(
    citation: Citation,
    ids: list[int],
    positions: dict[int, tuple[str, int]],
    snapshot: dict,
    qual: str,
    path: str,
    written: list[str],
) -> None:
    """Where the quoted lines are at the pin, followed by identity."""
    from generator.refs.quote import is_strong, prepare

    prepared = prepare(written, "python")
    citation.strong = prepared is not None and is_strong(prepared)
    found = [positions[i] for i in ids if i in positions]
    if len(found) < 0.5 * len(ids):
        citation.truth = "nowhere"
        return
    paths = {p for p, _ in found}
    if len(paths) != 1:
        citation.truth = "unclear"
        return
    # Partly edited since it was quoted: where what is left of it is, but not scored as a
    # detection (whether it still "is" the quoted code is a matter of degree).
    edited = len(found) < len(ids)
    true_path = paths.pop()
    numbers = [n for _, n in found]
    citation.true_path, citation.true_start, citation.true_end = (
        true_path,
        min(numbers),
        max(numbers),
    )
    _, spans = snapshot[true_path]
    for span in spans.values():
        if span[0] <= min(numbers) and max(numbers) <= span[1]:
            citation.function_span = span
    inside = (
        true_path == path
        and citation.start is not None
        and citation.start <= min(numbers)
        and max(numbers) <= (citation.end or citation.start)
    )
    citation.truth = "unclear" if edited else "in-range" if inside else "elsewhere"


@dataclass
class Scores:
    """How a verifier's report stands against the corpus's ground truth."""

    wrong_quotes: int = 0
    """Strong quotes that are not in their cited lines at the pin (elsewhere or nowhere)."""
    reported: int = 0
    """... of which the report flags (quote-elsewhere or quote-not-found)."""
    right_quotes: int = 0
    """Quotes in their cited lines at the pin."""
    false_errors: int = 0
    """... of which the report gives an error anyway."""
    fixable: int = 0
    """Strong quotes at exactly one other place in the same or another file."""
    rewrites: int = 0
    wrong_rewrites: int = 0
    fixed: int = 0
    """Fixable references that --fix rewrote, to the right lines."""
    citations: int = 0
    extracted: int = 0
    """References the corpus wrote that the report lists where they were written."""
    nonref_findings: int = 0
    misses: list[str] = field(default_factory=list)

    @property
    def detection(self) -> float:
        return self.reported / self.wrong_quotes if self.wrong_quotes else 1.0

    @property
    def fixed_share(self) -> float:
        return self.fixed / self.fixable if self.fixable else 1.0

    @property
    def extraction(self) -> float:
        return self.extracted / self.citations if self.citations else 1.0


def evaluate(citations: list[Citation], report: dict, fixes: dict | None = None) -> Scores:
    """Score a ``verify --format json --list-refs`` report (and the ``fixes`` object of a
    ``--fix`` run) against the ground truth."""
    import re

    refs: dict[tuple[str, int], list[dict]] = {}
    for ref in report.get("refs", []):
        refs.setdefault((ref["page"].rsplit("/", 1)[-1], ref["line"]), []).append(ref)
    scores = Scores()
    scores.nonref_findings = sum(
        1 for f in report["findings"] if f["page"].endswith("not_references.md")
    ) + sum(1 for r in report.get("refs", []) if r["page"].endswith("not_references.md"))
    rewrites = {}
    for rewrite in (fixes or {}).get("rewrites", []):
        rewrites[(rewrite["page"].rsplit("/", 1)[-1], rewrite["line"])] = rewrite
    for citation in citations:
        scores.citations += 1
        found = [
            r
            for r in refs.get((citation.page, citation.line), [])
            if r["start"] == citation.start or citation.start is None
        ]
        if found:
            scores.extracted += 1
        else:
            scores.misses.append(f"{citation.page}:{citation.line} ({citation.form}) not read")
        if not citation.quoted:
            continue
        checks = {check for r in found for check in r["checks"]}
        errors = any(r["status"] == "error" for r in found)
        # Reported: the reference is an error (quote-elsewhere, quote-not-found, or the file
        # it names is gone).
        flagged = errors
        if citation.truth == "in-range":
            scores.right_quotes += 1
            if errors:
                scores.false_errors += 1
                scores.misses.append(f"{citation.page}:{citation.line} false error {checks}")
        elif citation.truth in ("elsewhere", "nowhere") and citation.strong:
            scores.wrong_quotes += 1
            if flagged:
                scores.reported += 1
            else:
                scores.misses.append(f"{citation.page}:{citation.line} {citation.truth} missed")
        if citation.truth == "elsewhere" and citation.strong:
            scores.fixable += 1
        rewrite = rewrites.get((citation.page, citation.line))
        if rewrite is None:
            continue
        scores.rewrites += 1
        numbers = [int(n) for n in re.findall(r"\d+", rewrite["after"])]
        start, end = numbers[-2:] if len(numbers) >= 2 else (numbers[-1], numbers[-1])
        span = citation.function_span
        right = (
            citation.true_path is not None
            and citation.true_start is not None
            and citation.true_end is not None
            and span is not None
            and start <= citation.true_start
            and citation.true_end <= end
            and span[0] <= start
            and end <= span[1]
            and (
                citation.true_path.rsplit("/", 1)[-1]
                in rewrite["after"] + rewrite.get("path_after", "")
                or citation.true_path == citation.path
            )
        )
        if right and citation.truth == "elsewhere" and citation.strong:
            scores.fixed += 1
        if not right:
            scores.wrong_rewrites += 1
            scores.misses.append(
                f"{citation.page}:{citation.line} rewrote {rewrite['before']} -> "
                f"{rewrite['after']}; the code is at {citation.true_path}:"
                f"{citation.true_start}-{citation.true_end}"
            )
    return scores


NONREF_LINES = [
    "connect to host:8080 now",
    "at 10:30 we met; the meeting ran to 11:45",
    "release v1.2:3 notes and python 3.11",
    "compiler says a.py:10:5: error and b.cpp:3:1: warning",
    "docker.io/library/python:3.11 is the base image",
    "It took 3 lines of code and 12 lines of config.",
    "第 3 章讲了 12 行代码，第 4 节更短。",
    "Ratio 3:1, scale 16:9, time 1:30:00.",
    "An L2 loss, an L1-L2 norm, layers L12-L16; `loss.py` adds L2 regularization.",
    "See https://example.com/src/main.py#L10 for details.",
    "| step | 12-14 | fast |",
    "| epoch | time | loss |",
    "| 1 | 10:30 | 0.5 |",
    "The range 10-20 is fine; lines 5 to 9 are not.",
    'File "/usr/lib/python3/site.py", line 12, in main',
    "2024-01-02 10:30:00 INFO trainer step=12 loss=0.5",
    "Use `x[1:3]` and `d['a:1']` in the loop.",
    "torch 2.3.1:cu121 is the wheel we use",
    "The list 1, 2, 3 and 4, 5 are numbers.",
    "模型有 7B 参数，训练了 1,000 步。",
    "Set `world_size: 8` and `rank: 0` in config.",
    "Call `foo:bar()` on the object.",
]


def nonref_page() -> str:
    """A page of text that cites nothing, the guards' corpus: every line must stay silent."""
    lines = ["# Not references", ""]
    for text in NONREF_LINES:
        lines += [text, ""]
    lines += ["```", *NONREF_LINES[:6], "```", "", "```text", *NONREF_LINES[6:12], "```", ""]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("directory", type=Path)
    parser.add_argument("--commits", type=int, default=320)
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    corpus = build(args.directory, args.commits, args.pages, seed=args.seed)
    (args.directory / "docs" / "not_references.md").write_text(nonref_page(), "utf-8")
    truth = [citation.__dict__ for citation in corpus.citations]
    (args.directory / "truth.json").write_text(json.dumps(truth, indent=1), "utf-8")
    print(
        f"{len(corpus.citations)} references on {args.pages} pages, written at "
        f"{corpus.written[:7]} (commit {corpus.written_index}), pinned at {corpus.pin[:7]}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
