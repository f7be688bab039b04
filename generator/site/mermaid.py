"""The pinned Mermaid the site serves, fetched once from the npm registry and kept per user.

No page of a knowledge base may load anything from another host, so the site serves
``mermaid.min.js`` itself, for Material's native Mermaid support (which fetches it from a CDN
only when none is loaded). Mermaid is third-party code that no repository should have to carry
or install with a ``make`` step: the first build that needs it takes the pinned release's
tarball from the npm registry (the one in ``npm config``'s ``NPM_CONFIG_REGISTRY`` when set),
checks it against the integrity the registry published for that release, and keeps
``mermaid.min.js`` in ``$XDG_CACHE_HOME/kb-generator/mermaid/VERSION/``. Every later build,
and every knowledge base of the user, reads it from there, with no network.

Why not a package from PyPI: ``artoo-mermaid``, the one that ships ``mermaid.min.js``, needs
Python 3.12 and its own framework and lags behind the pinned release.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import logging
import os
import re
import tarfile
from dataclasses import dataclass
from pathlib import Path

from generator.files import atomic_write, user_cache_dir

log = logging.getLogger("mkdocs.plugins.knowledge_base")

DEFAULT_REGISTRY = "https://registry.npmjs.org/"
MAX_TARBALL_BYTES = 64 * 1024 * 1024
"""Far above the pinned tarball (17.8 MB), far below what would hurt to hold in memory."""
MAX_SCRIPT_BYTES = 16 * 1024 * 1024
FETCH_TIMEOUT_SECONDS = 60.0

_MERMAID_FENCE = re.compile(r"^[ \t>]*(?:`{3,}|~{3,})[ \t]*\{?[ \t]*\.?mermaid\b", re.MULTILINE)


@dataclass(frozen=True)
class MermaidRelease:
    """One release of the npm package ``mermaid``, with the integrity its registry published."""

    version: str
    integrity: str
    """``sha512-<base64>``, as in ``npm view mermaid@VERSION dist.integrity``."""
    member: str = "package/dist/mermaid.min.js"


PINNED = MermaidRelease(
    "11.17.2",
    "sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg==",
)


class MermaidUnavailable(Exception):
    """The pinned Mermaid is not in the cache and could not be fetched; nothing was written."""


def uses_mermaid(text: str) -> bool:
    """Whether a page has a Mermaid fence (```mermaid, ~~~ mermaid, ```{.mermaid})."""
    return "mermaid" in text and _MERMAID_FENCE.search(text) is not None


def cached_path(release: MermaidRelease = PINNED, cache_dir: Path | None = None) -> Path:
    base = cache_dir if cache_dir is not None else user_cache_dir() / "mermaid"
    return base / release.version / "mermaid.min.js"


def registry_url() -> str:
    """The npm registry: npm's own setting from the environment, else the public one."""
    for name in ("NPM_CONFIG_REGISTRY", "npm_config_registry"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return DEFAULT_REGISTRY


def tarball_url(release: MermaidRelease, registry: str) -> str:
    return f"{registry.rstrip('/')}/mermaid/-/mermaid-{release.version}.tgz"


def pinned_mermaid(
    release: MermaidRelease = PINNED,
    *,
    cache_dir: Path | None = None,
    registry: str | None = None,
) -> Path:
    """The path of the pinned ``mermaid.min.js``, fetched and checked first if it is not cached.

    Raises `MermaidUnavailable` (with what to do) when it cannot be had.
    """
    path = cached_path(release, cache_dir)
    if path.is_file():
        return path
    url = tarball_url(release, registry or registry_url())
    log.info("knowledge-base: fetching Mermaid %s from %s (once per user)", release.version, url)
    tarball = _download(url, release)
    check_integrity(tarball, release, url)
    script = _extract(tarball, release, url)
    try:
        atomic_write(path, script, durable=False)
    except OSError as error:
        raise MermaidUnavailable(
            f"cannot keep Mermaid {release.version} at {path}: {error}"
        ) from None
    return path


def check_integrity(tarball: bytes, release: MermaidRelease, url: str) -> None:
    algorithm, _, expected = release.integrity.partition("-")
    digest = hashlib.new(algorithm, tarball).digest()
    if base64.b64encode(digest).decode("ascii") != expected:
        raise MermaidUnavailable(
            f"the tarball at {url} is not Mermaid {release.version} as the npm registry "
            f"published it (its {algorithm} differs from {release.integrity}); nothing was kept"
        )


def _download(url: str, release: MermaidRelease) -> bytes:
    import httpx  # only the first build that needs Mermaid pays for importing it

    try:
        with httpx.stream(
            "GET", url, timeout=FETCH_TIMEOUT_SECONDS, follow_redirects=True
        ) as response:
            if response.status_code != 200:
                raise MermaidUnavailable(
                    f"cannot fetch Mermaid {release.version}: {url} answered {response.status_code}"
                )
            chunks = []
            size = 0
            for chunk in response.iter_bytes():
                size += len(chunk)
                if size > MAX_TARBALL_BYTES:
                    raise MermaidUnavailable(
                        f"cannot fetch Mermaid {release.version}: {url} sends more than "
                        f"{MAX_TARBALL_BYTES} bytes"
                    )
                chunks.append(chunk)
    except httpx.HTTPError as error:
        raise MermaidUnavailable(
            f"cannot fetch Mermaid {release.version} from {url}: {error or type(error).__name__}"
        ) from None
    return b"".join(chunks)


def _extract(tarball: bytes, release: MermaidRelease, url: str) -> bytes:
    """The one member the site serves, read from the (already verified) tarball in memory."""
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            member = archive.getmember(release.member)
            if not member.isfile() or member.size > MAX_SCRIPT_BYTES:
                raise KeyError(release.member)
            handle = archive.extractfile(member)
            if handle is None:
                raise KeyError(release.member)
            return handle.read()
    except (KeyError, tarfile.TarError, gzip.BadGzipFile, EOFError, OSError):
        raise MermaidUnavailable(f"the tarball at {url} has no {release.member} to serve") from None
