"""What earlier runs found, so that a page nobody changed is not verified again.

A page's verdicts follow from four things: its bytes, the configuration (``upstreams.yaml``, the
docs directory), this program, and what each upstream's clone holds. A pin is a commit, whose files
never change, but a clone does: a fetch may bring a commit that a page cites, a branch a permalink
names may move. So the cache of a docs directory is stamped with a fingerprint of the last three
(the clones by their refs, ``FETCH_HEAD`` and their packs, all of which a fetch changes); when the
stamp differs, every page is verified afresh. Within it, a page is found by its path and the
digest of its bytes.

A page taken from the cache brings back what resolving its references found (its findings, the
number of its references and where each leads), its links and its anchors. Its links are checked
again on every run, as they depend on other pages and files; its references are found again in its
text by whoever lists them (``--list-refs``, the site).

The cache is a folder of pickles (`SHARDS` of them, so that a run rewrites only those holding
pages it verified again), each written atomically (a new file renamed over the old one), in the
upstreams' ``cache_dir`` (``.verify-cache/``, beside the clones, ignored by git). Unpickling runs
whatever code a file names, and anyone who can write to the repository can put a file there, so
each file is signed (HMAC-SHA256) with a key of the user's own (`user_key`), and one that is not
is never unpickled. A file that cannot be read or is not signed is ignored and written anew; one
that cannot be written costs only the next run's speed.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import logging
import os
import pickle
import secrets
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import yaml

from generator.files import atomic_write, user_cache_dir
from generator.kb.pages import Page
from generator.model import Finding, Link
from generator.upstream.gitstore import fetch_state
from generator.upstream.manifest import Manifest

log = logging.getLogger(__name__)

CACHE_FORMAT = 4
"""Part of the fingerprint. The program's sources are too, so a change to this program already
verifies every page again; this number says so for a reader of the file."""
CACHE_DIRECTORY = ".verify-cache"
"""Inside the manifest's ``cache_dir``; upstream names cannot start with a dot."""
_PACKAGE = Path(__file__).resolve().parent.parent


class CachedTarget(NamedTuple):
    """What a listing of references needs of a verdict (a `ResolvedRef`)."""

    upstream: str | None
    commit: str | None
    path: str | None
    unchecked: bool = False


@dataclass
class CachedPage:
    """Everything a run learnt about one page, but its links' findings."""

    digest: bytes
    """blake2b of the page's bytes."""
    page: Page
    """The page, kept without its source, bytes and text (see `bare`)."""
    ref_count: int | None
    """How many references the page holds (None: it is not text). The references themselves
    are found again in the text by whoever lists them: kept, they would be most of the cache."""
    links: list[Link]
    anchors: set[str] | None
    """The page's anchors when the run that cached it had found them (a link into it asked),
    else None: found from the text when a link asks."""
    findings: list[Finding]
    """What resolving the page found beyond its links: frontmatter, pins, references."""
    targets: list[CachedTarget]
    """``targets[i]``: what the page's i-th reference cites."""
    ref_findings: dict[int, list[Finding]]
    """``ref_findings[i]``: the findings of the i-th reference, where it has any."""
    location: str
    """The page's absolute path: ``page.source`` is as given, relative to where a run started."""

    @staticmethod
    def bare(page: Page) -> Page:
        """``page`` without its source, bytes and text, as an entry keeps it: a run that finds
        the entry has just read the file, and a `Path` costs much to unpickle. (``text`` is ""
        rather than None when there is one, so that `restored_page` knows to decode it.)"""
        bare = Page.__new__(Page)
        bare.__dict__.update(
            page.__dict__, source=None, undecoded=b"", text=None if page.text is None else ""
        )
        return bare

    def restored_page(self, source: Path, data: bytes) -> Page:
        """The cached page, read from ``source`` as ``data``, the bytes it was cached for."""
        text = None
        if self.page.text is not None:
            decoded = data.decode("utf-8")
            text = decoded[1:] if self.page.bom else decoded
        # A shallow copy, field by field (`dataclasses.replace` costs several times as much).
        page = Page.__new__(Page)
        page.__dict__.update(
            self.page.__dict__, source=source, undecoded=data if text is None else b"", text=text
        )
        return page


def page_digest(data: bytes) -> bytes:
    return hashlib.blake2b(data, digest_size=20).digest()


def page_key(display: str, rel: str, source: Path) -> str:
    """Findings name a page by its display path and links resolve from its source: a page
    verified under another name is another entry."""
    return f"{display}\0{rel}\0{source}"


SHARDS = 64
"""Files the entries of one docs directory are spread over, by their key: a run that verified a
few pages again rewrites the few files that hold them, not every entry."""


class VerifyCache:
    """The cache of one docs directory (a folder of `SHARDS` files): entries by `page_key`,
    kept while the fingerprint holds. `load` before a run, `store` each page verified afresh,
    `save` after it."""

    def __init__(self, directory: Path, fingerprint: bytes, key: bytes) -> None:
        self.directory = directory
        self.fingerprint = fingerprint
        self._key = key
        self._shards: list[dict[str, CachedPage]] = [{} for _ in range(SHARDS)]
        self._dirty: set[int] = set()
        self.loaded = 0
        """Entries read (none for files missing, stale or unreadable)."""

    @classmethod
    def for_docs(cls, manifest: Manifest, docs_root: Path) -> VerifyCache | None:
        """The cache of ``docs_root``, stamped with the current configuration, program and
        clones (see the module's documentation); None when this user has no key for it."""
        key = user_key()
        if key is None:
            return None
        docs_root = docs_root.resolve()
        name = hashlib.blake2b(str(docs_root).encode(), digest_size=8).hexdigest()
        fingerprint = run_fingerprint(manifest, docs_root)
        return cls(manifest.cache_dir / CACHE_DIRECTORY / name, fingerprint, key)

    def _file(self, shard: int) -> Path:
        return self.directory / f"{shard:02x}.pickle"

    def load(self) -> None:
        collecting = gc.isenabled()
        gc.disable()  # loading makes many objects and no garbage: nothing to collect
        try:
            for shard in range(SHARDS):
                self._load(shard)
        finally:
            if collecting:
                gc.enable()

    def _load(self, shard: int) -> None:
        path = self._file(shard)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return
        except OSError as error:
            log.warning("ignoring the verification cache %s: %s", path, error)
            self._dirty.add(shard)
            return
        payload = self._verified(data)
        if payload is None:  # never unpickled: unpickling runs code the file names
            log.warning(
                "ignoring the verification cache %s: it was not written by this user's runs", path
            )
            self._dirty.add(shard)
            return
        try:
            fingerprint, entries = pickle.loads(payload)
        except Exception as error:  # written by us, yet unreadable (another Python?): start afresh
            log.warning("ignoring the verification cache %s: %s", path, error)
            self._dirty.add(shard)
            return
        if fingerprint != self.fingerprint or not isinstance(entries, dict):
            log.debug("verification cache %s is stale: its pages are verified again", path)
            self._dirty.add(shard)
            return
        self._shards[shard] = entries
        self.loaded += len(entries)

    @staticmethod
    def _shard(key: str) -> int:
        # Not hash(): it differs from one process to the next.
        return zlib.crc32(key.encode()) % SHARDS

    @property
    def holds_pages(self) -> bool:
        return any(self._shards)

    def get(self, key: str, digest: bytes) -> CachedPage | None:
        entry = self._shards[self._shard(key)].get(key)
        return entry if entry is not None and entry.digest == digest else None

    def store(self, key: str, entry: CachedPage) -> None:
        shard = self._shard(key)
        self._shards[shard][key] = entry
        self._dirty.add(shard)

    def save(self) -> None:
        """Write the files whose entries changed, if any did; entries of pages no longer there
        are dropped then too."""
        if not self._dirty:
            return
        exists = os.path.exists  # not Path: thousands of entries, and a Path costs much more
        for shard, entries in enumerate(self._shards):
            gone = [key for key, entry in entries.items() if not exists(entry.location)]
            for key in gone:
                del entries[key]
            if gone:
                self._dirty.add(shard)
        for shard in sorted(self._dirty):
            try:
                self._write(self._file(shard), self._shards[shard])
            except OSError as error:
                log.warning("could not write the verification cache %s: %s", self.directory, error)
                return
        self._dirty.clear()

    def _verified(self, data: bytes) -> bytes | None:
        """The pickle in a cache file, if the file is signed with this user's key."""
        header = len(_MAGIC) + _MAC_SIZE
        if len(data) < header or not data.startswith(_MAGIC):
            return None
        mac, payload = data[len(_MAGIC) : header], data[header:]
        expected = hmac.new(self._key, payload, hashlib.sha256).digest()
        return payload if hmac.compare_digest(mac, expected) else None

    def _write(self, path: Path, entries: dict[str, CachedPage]) -> None:
        payload = pickle.dumps((self.fingerprint, entries), protocol=pickle.HIGHEST_PROTOCOL)
        mac = hmac.new(self._key, payload, hashlib.sha256).digest()
        atomic_write(path, _MAGIC + mac + payload, durable=False)


_MAGIC = b"kb-verify-cache 1\n"
_MAC_SIZE = 32  # HMAC-SHA256
KEY_NAME = "verify-cache.key"


def user_key() -> bytes | None:
    """This user's key for signing cache files, made on first use in the user's cache directory
    (``$XDG_CACHE_HOME/kb-generator/``, by default ``~/.cache/kb-generator/``), readable by the
    user alone. A cache file sits in the knowledge base's tree, where anyone who can write to the
    repository can put one; only files signed with this key are unpickled. None (no cache) when
    no key can be read or made there."""
    path = user_cache_dir() / KEY_NAME
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        key = _new_key(path)
    except OSError as error:
        log.info("no verification cache: cannot read its key %s: %s", path, error)
        return None
    if key is not None and len(key) != _MAC_SIZE:
        log.info("no verification cache: its key %s is not %d bytes", path, _MAC_SIZE)
        return None
    return key


def _new_key(path: Path) -> bytes | None:
    key = secrets.token_bytes(_MAC_SIZE)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another run made it first: use theirs
        try:
            return path.read_bytes()
        except OSError:
            return None
    except OSError as error:
        log.info("no verification cache: cannot make its key %s: %s", path, error)
        return None
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(key)
    return key


def run_fingerprint(manifest: Manifest, docs_root: Path) -> bytes:
    """A digest of everything but the pages that a page's verdicts depend on."""
    digest = hashlib.blake2b(digest_size=20)
    # Frontmatter is read by PyYAML: another version may read a page otherwise.
    digest.update(f"{CACHE_FORMAT}\0{sys.version}\0{yaml.__version__}\0{docs_root}\0".encode())
    digest.update(program_fingerprint(_PACKAGE))
    digest.update(f"{manifest.path.resolve()}\0".encode())
    digest.update(_read(manifest.path) or b"")
    for name in sorted(manifest.upstreams):
        clone = manifest.upstreams[name].clone_dir
        digest.update(f"\0{name}\0{clone}\0".encode())
        if clone is not None:
            digest.update(fetch_state(clone))
    return digest.digest()


def program_fingerprint(package: Path) -> bytes:
    """A digest of the package's Python sources: a changed check invalidates the cache."""
    digest = hashlib.blake2b(digest_size=20)
    for source in sorted(package.rglob("*.py")):
        digest.update(f"{source.relative_to(package).as_posix()}\0".encode())
        digest.update(source.read_bytes())
    return digest.digest()


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None
