"""The trust line: under a page's title, what its code references were verified against.

``42 code references verified at slime@81d8cd6 · 3 commits behind main``: one item per
upstream and commit the page's verified references cite, with how far that commit is behind the
upstream's tracked branch in the clone (counted once per build and commit, `BehindCounter`);
and, on a page a sync left references on for review (``held_refs`` in its frontmatter), how many
wait, each linked to its reference on the page (`anchor_held` gives those links an id); and
the references with a warning, which are neither (a page built without ``strict`` publishes
them: the reader is told which).

Computed in the build's verification, from its own report: the line says what this build
checked, never what a page claims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from html import escape

from generator.model import ResolvedRef
from generator.site.codelinks import CodeLink

HELD_CHECK = "ref-needs-review"
"""The finding a reference a sync left at its old commit carries (`generator.sync`)."""
HELD_ANCHOR = "kb-held-"
MAX_LISTED = 8
"""Held references named on the line; the count says how many more."""


@dataclass(frozen=True)
class Verified:
    """The page's references verified at one commit of one upstream."""

    upstream: str
    commit: str
    count: int
    branch: str
    behind: int | None
    """Commits from ``commit`` to the tip of ``branch`` in the clone; None when unknown."""
    off_branch: bool = False
    """Whether ``commit`` has commits of its own that the branch lacks (a pull request's head,
    not merged): then it is not "behind" the branch, it is not on it."""
    own_pin: bool = False
    """Whether ``commit`` is the page's own pin (``pin``, ``pins``): a commit the page is about
    on purpose, as a pull request's deep dive is, not one it fell behind from."""
    url: str | None = None
    """The commit's page on the upstream's forge, when known."""


@dataclass(frozen=True)
class Held:
    """A reference waiting for review, and where it is on the page (None: not linked there)."""

    text: str
    anchor: str | None


@dataclass(frozen=True)
class Trust:
    verified: list[Verified]
    held: list[Held]
    warned: list[str] = field(default_factory=list)
    """The references with a warning (not held): as written, in the page's order."""


def is_held(resolved: ResolvedRef) -> bool:
    return any(finding.check == HELD_CHECK for finding in resolved.findings)


def anchor_held(
    pairs: Sequence[tuple[CodeLink, ResolvedRef]],
) -> list[tuple[CodeLink, ResolvedRef]]:
    """The page's links, each held reference's with an id for the trust line to point at."""
    anchored = []
    number = 0
    for link, resolved in pairs:
        if is_held(resolved):
            number += 1
            link = replace(link, anchor=f"{HELD_ANCHOR}{number}")
        anchored.append((link, resolved))
    return anchored


@dataclass(frozen=True)
class Tally:
    """What a page's trust line counts, from its references alone (kept with its plan)."""

    verified: tuple[tuple[str, str, int], ...]
    """(upstream, commit, references verified there), sorted."""
    held: tuple[Held, ...]
    warned: tuple[str, ...] = ()
    """References with a warning, not held (their text): neither verified nor waiting for a
    sync's review, and the reader should know the page says so."""


def tally(
    refs: Sequence[ResolvedRef], anchored: Sequence[tuple[CodeLink, ResolvedRef]]
) -> Tally | None:
    """The page's verified references by pin, its held ones and those with a warning; None
    when it has none of them."""
    counts: Counter[tuple[str, str]] = Counter(
        (resolved.upstream, resolved.commit)
        for resolved in refs
        if resolved.status == "ok" and resolved.upstream and resolved.commit
    )
    anchors = {id(resolved): link.anchor for link, resolved in anchored if link.anchor}
    held = tuple(Held(r.ref.text, anchors.get(id(r))) for r in refs if is_held(r))
    warned = tuple(r.ref.text for r in refs if r.status == "warning" and not is_held(r))
    if not counts and not held and not warned:
        return None
    verified = tuple(
        (upstream, commit, count) for (upstream, commit), count in sorted(counts.items())
    )
    return Tally(verified, held, warned)


def page_trust(
    counted: Tally,
    branches: dict[str, str],
    place: Callable[[str, str], tuple[int | None, bool]],
    pins: Mapping[str, str] | None = None,
    commit_url: Callable[[str, str], str | None] | None = None,
) -> Trust:
    """What the page's trust line says.

    ``branches``: each upstream's tracked branch; ``place(upstream, commit)``: commits from
    ``commit`` to that branch's tip (which a fetch moves, so it is asked on every build), and
    whether ``commit`` is off the branch (`BehindCounter.place`); ``pins``: the commits the page
    pins itself, by upstream; ``commit_url(upstream, commit)``: the commit's page on the forge.
    """
    pins = pins or {}
    verified = [
        Verified(
            upstream,
            commit,
            count,
            branches.get(upstream, ""),
            *place(upstream, commit),
            own_pin=pins.get(upstream) == commit,
            url=commit_url(upstream, commit) if commit_url is not None else None,
        )
        for upstream, commit, count in counted.verified
    ]
    return Trust(verified, list(counted.held), list(counted.warned))


_WORDS = {
    "en": {
        "verified": "{count} code references verified at {pin}",
        "verified-1": "1 code reference verified at {pin}",
        "own-pin": "the page's own pin",
        "behind": "{count} commits behind {branch}",
        "behind-1": "1 commit behind {branch}",
        "tip": "at the tip of {branch}",
        "off": "not on {branch}",
        "held": "{count} references wait for review after a sync:",
        "held-1": "1 reference waits for review after a sync:",
        "more": "and {count} more",
        "warned": "{count} references with a warning:",
        "warned-1": "1 reference with a warning:",
    },
    "zh": {
        "verified": "{count} 处代码引用已在 {pin} 验证",
        "verified-1": "1 处代码引用已在 {pin} 验证",
        "own-pin": "本页固定的提交",
        "behind": "落后 {branch} {count} 个提交",
        "behind-1": "落后 {branch} 1 个提交",
        "tip": "即 {branch} 的最新提交",
        "off": "不在 {branch} 上",
        "held": "同步后有 {count} 处引用待复核：",
        "held-1": "同步后有 1 处引用待复核：",
        "more": "另有 {count} 处",
        "warned": "{count} 处引用有警告：",
        "warned-1": "1 处引用有警告：",
    },
}


def trust_html(trust: Trust, lang: str | None) -> str:
    """The trust line as HTML, in the page's language."""
    words = _WORDS.get((lang or "en").split("-", 1)[0].lower(), _WORDS["en"])

    def counted(key: str, count: int, **names: str) -> str:
        return words[f"{key}-1" if count == 1 else key].format(count=count, **names)

    items = []
    for item in trust.verified:
        pin = f"<code>{escape(item.upstream)}@{escape(item.commit[:7])}</code>"
        if item.url:
            pin = f'<a href="{escape(item.url)}">{pin}</a>'
        if item.own_pin:
            pin += f" ({escape(words['own-pin'], quote=False)})"
        text = counted("verified", item.count, pin=pin)
        branch = escape(item.branch)
        if item.off_branch:  # (a pull request's head: neither older nor newer than the branch)
            text += f" · {words['off'].format(branch=branch)}"
        elif item.behind == 0:
            text += f" · {words['tip'].format(branch=branch)}"
        elif item.behind is not None:
            text += f" · {counted('behind', item.behind, branch=branch)}"
        items.append(f'<span class="kb-trust__item kb-trust__item--verified">{text}</span>')
    if trust.warned:
        listed = [f"<code>{escape(text)}</code>" for text in trust.warned[:MAX_LISTED]]
        if len(trust.warned) > MAX_LISTED:
            listed.append(escape(words["more"].format(count=len(trust.warned) - MAX_LISTED)))
        items.append(
            f'<span class="kb-trust__item kb-trust__item--warned">'
            f"{counted('warned', len(trust.warned))} {', '.join(listed)}</span>"
        )
    if trust.held:
        listed = []
        for held in trust.held[:MAX_LISTED]:
            label = f"<code>{escape(held.text)}</code>"
            listed.append(f'<a href="#{held.anchor}">{label}</a>' if held.anchor else label)
        if len(trust.held) > MAX_LISTED:
            listed.append(escape(words["more"].format(count=len(trust.held) - MAX_LISTED)))
        items.append(
            f'<span class="kb-trust__item kb-trust__item--held">'
            f"{counted('held', len(trust.held))} {', '.join(listed)}</span>"
        )
    return f'<p class="kb-trust">{"".join(items)}</p>'
