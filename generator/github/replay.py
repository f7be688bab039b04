"""GitHub's REST answers, recorded from git and replayed by a small HTTP server on 127.0.0.1.

:func:`pull_files_from_git` computes what ``/pulls/{n}/files`` and the diff media type answer for
a pull request from ``base`` to ``head`` of a real repository (statuses, counts, patches, renames),
so recordings and test fixtures agree with git exactly. :class:`ReplayServer` serves such answers
to the real :class:`generator.github.client.GitHubClient` (point ``GITHUB_API_URL`` or
``api_url`` at :attr:`ReplayServer.url`); :func:`serve_recording` loads a directory of recorded
answers laid out like the API's paths::

    repos/OWNER/REPO/pulls/N.json            GET /repos/OWNER/REPO/pulls/N
    repos/OWNER/REPO/pulls/N.diff            the same, Accept: application/vnd.github.diff
    repos/OWNER/REPO/pulls/N/files.json      GET .../files?per_page=100 (a list: paginated)
    repos/OWNER/REPO/pulls/N/comments.json   GET .../comments?per_page=100

>>> with ReplayServer() as server:
...     serve_recording(server, Path("demo/github"))
...     client = GitHubClient(api_url=server.url)
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from generator.github.client import DIFF_MEDIA_TYPE, PER_PAGE, diff_hunks
from generator.upstream.gitbuild import run_git

__all__ = [
    "ReplayServer",
    "Reply",
    "Seen",
    "pull_files_from_git",
    "serve_recording",
]

logger = logging.getLogger(__name__)


@dataclass
class Reply:
    """One answer: status, body (JSON-serialisable, str or bytes), headers, an optional delay
    and an ETag (a request whose ``If-None-Match`` matches it gets 304).

    For hostile servers: ``trickle`` sends the answer one byte every ``trickle`` seconds (the
    body only, or the status line and headers too with ``trickle_head``); ``size`` sends a body
    of that many bytes of ``filler`` instead of ``body``, made as it is sent (so 400 MB cost no
    memory here); ``length=False`` leaves out Content-Length (the body ends when the connection
    closes)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    etag: str | None = None
    trickle: float = 0.0
    trickle_head: bool = False
    size: int = 0
    filler: bytes = b"+x = 1\n"
    length: bool = True

    def payload(self) -> bytes:
        if self.body is None:
            return b""
        if isinstance(self.body, bytes):
            return self.body
        if isinstance(self.body, str):
            return self.body.encode("utf-8")
        return json.dumps(self.body).encode("utf-8")


@dataclass
class Seen:
    """A request the server received: its path (with the query) and its headers, lower-cased."""

    path: str
    headers: dict[str, str]


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that gives up (a deadline test) resets its connection: not worth a traceback.
        logger.debug("replay: connection from %s ended abruptly", client_address, exc_info=True)


class ReplayServer:
    """Routes ``path?query`` (and Accept) to replies, used in order; the last one repeats.

    An unknown path answers 404 the way GitHub does. Use as a context manager (or call
    :meth:`start` and :meth:`stop`); :attr:`requests` records what was asked.
    """

    def __init__(self) -> None:
        self.routes: dict[tuple[str, str | None], list[Reply]] = {}
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        replay = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                headers = {k.lower(): v for k, v in self.headers.items()}
                with replay.lock:
                    replay.requests.append(Seen(self.path, headers))
                    reply = replay.next_reply(self.path, headers.get("accept"))
                if reply.delay:
                    time.sleep(reply.delay)
                status, payload = reply.status, reply.payload()
                if reply.etag and headers.get("if-none-match") == reply.etag:
                    status, payload = 304, b""
                size = reply.size if reply.size and status != 304 else len(payload)
                head = [f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}"]
                head += [f"{key}: {value}" for key, value in reply.headers.items()]
                if reply.etag:
                    head.append(f"ETag: {reply.etag}")
                if status != 304:
                    ctype = "text/plain" if isinstance(reply.body, str) else "application/json"
                    head.append(f"Content-Type: {ctype}; charset=utf-8")
                if reply.length:
                    head.append(f"Content-Length: {size}")
                else:
                    head.append("Connection: close")
                    self.close_connection = True
                raw_head = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
                try:
                    if not reply.trickle and not reply.size:
                        # One write: a head and a body sent apart wait on delayed ACKs (40 ms).
                        self.wfile.write(raw_head + payload)
                        return
                    self._send(raw_head, reply.trickle if reply.trickle_head else 0.0)
                    if reply.size and status != 304:
                        self._send_generated(reply.size, reply.filler, reply.trickle)
                    else:
                        self._send(payload, reply.trickle)
                except (BrokenPipeError, ConnectionResetError, OSError):
                    self.close_connection = True  # the client gave up: nothing to answer

            def _send(self, data: bytes, trickle: float) -> None:
                if not trickle:
                    self.wfile.write(data)
                    return
                for index in range(len(data)):
                    self.wfile.write(data[index : index + 1])
                    self.wfile.flush()
                    time.sleep(trickle)

            def _send_generated(self, size: int, filler: bytes, trickle: float) -> None:
                block = filler * max(1, 65536 // len(filler))
                sent = 0
                while sent < size:
                    chunk = block[: size - sent]
                    self._send(chunk, trickle)
                    sent += len(chunk)

            def log_message(self, format: str, *args: Any) -> None:
                logger.debug("replay: " + format, *args)

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def start(self) -> ReplayServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.thread.is_alive():
            self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> ReplayServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def next_reply(self, path: str, accept: str | None) -> Reply:
        replies = self.routes.get((path, accept)) or self.routes.get((path, None))
        if not replies:
            return Reply(404, {"message": "Not Found", "documentation_url": "https://docs"})
        return replies.pop(0) if len(replies) > 1 else replies[0]

    def add(self, path: str, *replies: Reply, accept: str | None = None) -> None:
        """Answer ``path`` (with its query) with ``replies`` in turn; ``accept`` narrows it."""
        self.routes[(path, accept)] = list(replies)

    def add_list(
        self, path: str, items: Sequence[Any], *, per_page: int = PER_PAGE, etag: str = ""
    ) -> None:
        """Serve ``items`` at ``path`` as GitHub paginates a list: ``per_page=100`` pages linked
        by ``Link: rel="next"``; ``etag`` (when given) prefixes each page's ETag."""
        pages = [items[i : i + per_page] for i in range(0, len(items), per_page)] or [[]]
        first = f"{path}?per_page={PER_PAGE}"
        for number, page in enumerate(pages, start=1):
            links = []
            if number < len(pages):
                links.append(f'<{self.url}{first}&page={number + 1}>; rel="next"')
                links.append(f'<{self.url}{first}&page={len(pages)}>; rel="last"')
            headers = {"Link": ", ".join(links)} if links else {}
            tag = f'"{etag}-{number}"' if etag else None
            self.add(
                first if number == 1 else f"{first}&page={number}",
                Reply(body=list(page), headers=headers, etag=tag),
            )

    def paths(self) -> list[str]:
        return [seen.path for seen in self.requests]


def serve_recording(server: ReplayServer, root: Path) -> list[str]:
    """Serve every recorded answer under ``root`` (laid out like the API's paths); returns the
    API paths served, sorted."""
    served = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".diff"):
            continue
        relative = path.relative_to(root).with_suffix("").as_posix()
        if not relative.startswith("repos/"):
            continue  # the recording's own description files, not answers
        api_path = f"/{relative}"
        text = path.read_text("utf-8")
        if path.suffix == ".diff":
            server.add(api_path, Reply(body=text), accept=DIFF_MEDIA_TYPE)
        else:
            body = json.loads(text)
            if isinstance(body, list):
                server.add_list(api_path, body)
            else:
                server.add(api_path, Reply(body=body))
        served.append(api_path)
    return sorted(served)


# --------------------------------------------------------------------------------------------
# Recording from git


def _split_z(output: str) -> list[str]:
    return output.split("\0")


def pull_files_from_git(
    repo: Path, base: str, head: str, *, blob_url: str = ""
) -> tuple[list[dict[str, Any]], str]:
    """GitHub's ``/pulls/{n}/files`` entries and unified diff for ``base..head`` of ``repo``.

    Renames are detected as GitHub does (``-M``); a binary file or a pure rename has no ``patch``.
    ``blob_url`` (``https://github.com/OWNER/REPO``) fills each entry's ``blob_url``.
    """
    fields = _split_z(run_git(repo, "diff", "-M", "--numstat", "-z", base, head))
    counts: dict[str, tuple[int, int]] = {}
    index = 0
    while index < len(fields) - 1:
        adds, dels, path = fields[index].split("\t")
        if path == "":  # a rename: the old and the new name follow
            path = fields[index + 2]
            index += 3
        else:
            index += 1
        counts[path] = (0 if adds == "-" else int(adds), 0 if dels == "-" else int(dels))

    statuses = _split_z(run_git(repo, "diff", "-M", "--name-status", "-z", base, head))
    kinds = {"A": "added", "D": "removed", "M": "modified", "R": "renamed", "T": "changed"}
    entries: list[tuple[str, str, str | None]] = []
    index = 0
    while index < len(statuses) - 1:
        code = statuses[index]
        if code.startswith("R"):
            entries.append(("renamed", statuses[index + 2], statuses[index + 1]))
            index += 3
        else:
            entries.append((kinds[code[0]], statuses[index + 1], None))
            index += 2

    diff = run_git(repo, "diff", "-M", base, head)
    patches = {name: hunks.rstrip("\n") for name, hunks in diff_hunks(diff).items()}

    blobs = {}
    for line in _split_z(run_git(repo, "ls-tree", "-r", "-z", head)):
        if line:
            meta, name = line.split("\t", 1)
            blobs[name] = meta.split()[2]
    files = []
    for status, name, previous in entries:
        adds, dels = counts[name]
        entry: dict[str, Any] = {
            "sha": blobs.get(name),
            "filename": name,
            "status": status,
            "additions": adds,
            "deletions": dels,
            "changes": adds + dels,
        }
        if blob_url:
            entry["blob_url"] = f"{blob_url.rstrip('/')}/blob/{head}/{name}"
        if patches.get(name) is not None:
            entry["patch"] = patches[name]
        if previous:
            entry["previous_filename"] = previous
        files.append(entry)
    return files, diff
