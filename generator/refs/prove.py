"""Prove references: check that the cited lines hold what the page says they hold.

`Prover.prove` takes a reference already resolved to a file at a commit (`Resolver`) and its
`Evidence`, and reports:

- ``quote-elsewhere`` (error): the code the page quotes is not in the cited lines but elsewhere
  in the file, or in another file of the upstream; with the range where it is, as a `Fix` when
  that place is unique and the quote strong (``verify --fix`` applies it);
- ``quote-not-found`` (error): the quoted code is nowhere at the commit, or only in part
  elsewhere in the file while the cited lines hold none of it; where the history shows it at
  another commit (the nearest one along the tracked branch), the message names it: then the
  pin is wrong, not the range (``pin suggest`` finds the commit for a whole page);
- ``quote-unchecked`` (warning): a quote that cannot be compared (an unterminated fence, a
  binary file, an over-long quote), with the reason;
- ``names-not-in-range`` (warning): the identifiers and calls the sentence names around the
  reference occur nowhere in the cited lines but elsewhere in the file.

Weak quotes (one or two generic lines) never give an error: see `generator.refs.quote`.
"""

from __future__ import annotations

import difflib
import logging
import re
import subprocess
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from generator.checks import severity_of
from generator.model import CodeRef, Evidence, Finding, Fix, Quote, RefForm, ResolvedRef, Upstream
from generator.patterns import lazy_pattern
from generator.refs.quote import (
    CODE,
    COMMENT,
    ELSEWHERE,
    IN_RANGE,
    MAX_QUOTE_LINES,
    ONE_LINE_LEAST,
    UNDECIDED,
    FileIndex,
    Placement,
    PreparedQuote,
    QuoteLine,
    QuoteVerdict,
    best_partial,
    comment_markers,
    compact,
    could_be_evidence,
    could_be_strong,
    is_strong,
    judge,
    language_of,
    placements,
    prepare,
    strip_comment,
)
from generator.refs.resolve import (
    PageContext,
    Resolver,
    code_definitions,
    definitions,
    first_use,
    last_name,
    names_of_lines,
    symbol_definitions,
)
from generator.upstream.gitstore import BlobText, GitStore, identifier_columns
from generator.upstream.manifest import ConfigError

if TYPE_CHECKING:  # (loaded by the first history search: most runs make none)
    from generator.upstream.history import History

log = logging.getLogger(__name__)

MAX_OTHER_FILE_SEARCHES = 200
"""Searches of a whole upstream for a quote not in its file, per run (each is a ``git grep``)."""
MAX_HISTORY_SEARCHES = 100
"""Searches of a file's history per run for each of three questions: at which commit a quote
found nowhere at the pin is, whether a quote the cited lines hold in part is whole at another
commit, and whether a quote whole at the pin only loosely is there as written (a budget each:
many edited quotes must not leave the others without answers)."""
_SEARCHED = {
    "anywhere": "found nowhere",
    "whole": "found only in part",
    "as written": "found whole only with lines between or changed",
}
"""What the quotes searched for in history, by `Prover._in_history`'s question, were."""
_MAX_CANDIDATE_FILES = 20
_MAX_LISTED = 4
_TOKEN = lazy_pattern(r"[^\s]{8,}")
_BINARY = lazy_pattern(r"[\x00-\x08\x0e-\x1f]")


class SearchDeferred(Exception):
    """Raised, while `Prover.defer_searches` is set, where a search that the run's budgets
    limit (`MAX_OTHER_FILE_SEARCHES`, `MAX_HISTORY_SEARCHES`) would be made: which searches a
    budget allows depends on the order they come in, so a page proven out of its turn (in a
    forked process, or ahead of the pages before it) waits for its turn instead."""


@dataclass(frozen=True, slots=True)
class _Target:
    upstream: Upstream
    commit: str
    path: str
    sha: str
    blob: BlobText
    missing: bool = False
    """The cited file is not at the commit (the resolver reported it): its quote is only
    looked for in other files."""
    synced: bool = False
    """A sync moved the page to the commit (its ``anchored_at``): a quote of another commit's
    code is then most likely older code the sync left, not a sign of a wrong pin."""


class Prover:
    """Checks the evidence of references, sharing file indexes and verdicts across a run."""

    def __init__(self, resolver: Resolver) -> None:
        self.stores = resolver
        self._indexes: dict[tuple[str, str], FileIndex] = {}
        self._prepared: dict[tuple[str, str], PreparedQuote | None] = {}
        self._judged: dict[tuple[int, str, int, int], QuoteVerdict] = {}
        self._histories: dict[str, dict[str, History]] = {}
        self._other_files: dict[tuple[int, str, str], list[tuple[str, Placement]]] = {}
        self._elsewhere_in_time: dict[tuple[int, str, str, str, bool], str | None] = {}
        self._targets: dict[tuple[str | None, str | None, str | None], _Target | None] = {}
        self.other_file_searches = 0
        self.history_searches: Counter[str] = Counter()
        """History searches made, by what they look for (see `_in_history`)."""
        self.defer_searches = False
        """Raise `SearchDeferred` rather than make a search a budget limits."""

    def prove(
        self,
        ref: CodeRef,
        verdict: ResolvedRef,
        evidence: Evidence,
        context: PageContext | None = None,
    ) -> list[Finding]:
        """The findings of ``ref``'s evidence against the lines it cites (none when they hold
        it, or when there is nothing to check). ``context``: the page's, for a bare name the
        resolver found no file for (its quote is then looked for in the page's upstream)."""
        if ref.start is None or ref.end is None:
            return []
        if verdict.path is None and ref.form is RefForm.BARE and context is not None:
            target = self._unknown_file(ref, context)
        elif not verdict.path or not verdict.commit:
            return []
        else:
            target = self._target(verdict)
        if target is None:
            return []
        if (
            context is not None
            and context.anchored
            and context.synced_at(target.upstream.name) == target.commit
        ):
            target = replace(target, synced=True)
        findings: list[Finding] = []
        if target.missing:
            if evidence.quote is not None:
                findings.extend(self._quote_moved(ref, target, evidence.quote))
            return findings
        if evidence.quote is not None:
            findings.extend(self._prove_quote(ref, target, evidence.quote, evidence))
        if (
            evidence.names
            and evidence.names_claim_range
            and not findings
            and not ref.symbol
            and 1 <= ref.start <= ref.end
        ):
            # (A symbol named right next to the reference is the stronger claim, checked by
            # the resolver: the sentence's other names may be its callers or callees.)
            findings.extend(self._prove_names(ref, target, evidence.names))
        if evidence.subject and not findings and not ref.symbol and 1 <= ref.start <= ref.end:
            findings.extend(self._prove_subject(ref, target, evidence.subject, evidence.names))
        return findings

    def holds_line(self, verdict: ResolvedRef, text: str) -> bool:
        """Whether the lines ``verdict`` cites hold ``text`` as a whole line (white space
        aside)."""
        ref = verdict.ref
        if ref.start is None or ref.end is None or not text.strip():
            return False
        target = self._target(verdict)
        if target is None or target.missing or target.blob.is_binary:
            return False
        return self._index(target).holds_text(text, ref.start, ref.end)

    # -- quotes ---------------------------------------------------------------------------

    def _prove_quote(
        self, ref: CodeRef, target: _Target, quote: Quote, evidence: Evidence | None = None
    ) -> list[Finding]:
        names = evidence.names if evidence is not None else ()
        # What the sentence is about: the symbol beside the reference, or the name it opens with.
        about = ref.symbol or (evidence.subject if evidence is not None else None)
        assert ref.start is not None and ref.end is not None
        if quote.unterminated or target.blob.is_binary or quote.text.count("\n") >= MAX_QUOTE_LINES:
            problem = _unchecked_reason(quote, target)
            assert problem is not None
            return [self._finding(ref, target, "quote-unchecked", problem)]
        index = self._index(target)
        if index.holds_text(quote.text, ref.start, ref.end):
            return []  # the common case, seen without reading the quote closely
        if not could_be_strong(quote.text):
            # Weak evidence is never an error; but one long line the cited lines have written
            # otherwise (a constant, a `not`) misstates them.
            return self._one_line(ref, target, quote, index, about, names)
        prepared = self._prepare(quote, target.path)
        if prepared is None or not is_strong(prepared):
            return []  # weak evidence is never reported: no need to look
        key = (id(prepared), target.sha, ref.start, ref.end)
        verdict = self._judged.get(key)
        if verdict is None:
            verdict = self._judged[key] = judge(prepared, index, ref.start, ref.end)
        if verdict.outcome == IN_RANGE:
            return self._in_part(ref, target, quote, prepared, verdict)
        if ref.start < ref.end and _abridged_in(prepared, quote, index, ref.start, ref.end):
            # Every line of it is in the cited lines, in order, but written shorter than the
            # matcher compares (a signature without its annotations, in a two-line quote).
            return []
        astray = verdict.outcome == UNDECIDED
        if astray and (ref.start == ref.end or not _none_in_range(prepared, index, ref)):
            # Like the code only loosely, elsewhere: an edited quote of the cited code. But
            # cited lines holding none of it cite other code than the quote shows.
            return []
        problem = _unchecked_reason(quote, target)  # control characters: not text to compare
        if problem is not None:
            return [self._finding(ref, target, "quote-unchecked", problem)]
        where = _quote_words(quote, prepared)
        cited = _cited(ref.start, ref.end, target)
        if verdict.outcome == ELSEWHERE:
            if not verdict.strong:
                return []
            places = verdict.places
            if all(
                _shows_other_code(about, ref, names, target, target.blob, target.path, place)
                for place in places
            ):
                return []
            if len(places) == 1:
                place = places[0]
                # A quote that another commit holds whole (when it is here only in part) or as
                # written (when it is whole here only with lines between or edited) was
                # written against that commit: moving the range here would hide the wrong pin.
                elsewhere_in_time = None
                if place.matched < prepared.required:
                    found = self._in_history(prepared, target, whole=True)
                    if found is not None:
                        elsewhere_in_time = (
                            f"only {place.matched} of its {prepared.required} lines are at "
                            f"{_span(place)}, and whole {found}"
                        )
                elif not index.holds_text(quote.text, place.first, place.last):
                    found = self._in_history(prepared, target, copied=quote.text)
                    if found is not None:
                        elsewhere_in_time = (
                            f"it is at {_span(place)} only with lines between or changed, "
                            f"and as written {found}"
                        )
                if elsewhere_in_time is not None:
                    return [
                        self._finding(
                            ref,
                            target,
                            "quote-elsewhere",
                            f"{where} is not in {cited}; {elsewhere_in_time}",
                            _pin_advice(ref, target),
                        )
                    ]
                fix = self._settled_fix(ref, target, target.path, place, target.blob)
                named = (ref.symbol if fix is None else None) or _defined_in_range(
                    ref, names, target.blob, target.blob, place
                )
                if named is not None:
                    said = f"{where} is not in {cited}; it is at {_span(place)}"
                    return self._disagreeing(ref, target, said, named)
                return [
                    self._finding(
                        ref,
                        target,
                        "quote-elsewhere",
                        f"{where} is not in {cited}; it is at {_span(place)}",
                        _ref_text(fix, ref),
                        fix,
                    )
                ]
            listed = ", ".join(_span(place) for place in places[:_MAX_LISTED])
            more = f" and {len(places) - _MAX_LISTED} more" if len(places) > _MAX_LISTED else ""
            return [
                self._finding(
                    ref,
                    target,
                    "quote-elsewhere",
                    f"{where} is not in {cited}; it matches {len(places)} places: {listed}{more}",
                    "cite the one meant: "
                    + " or ".join(f"{target.path}:{_span(p)}" for p in places[:_MAX_LISTED]),
                )
            ]
        # Nowhere in the cited file: another file of the upstream, or another commit.
        if not is_strong(prepared):
            return []
        others = self._in_other_files(prepared, target)
        if not others and _a_usage_example(quote.text, target.blob, ref):
            return []
        unique = _unique(others, prepared)
        if unique is not None:
            path, place = unique
            there = self.stores.blob_at(target.upstream, target.commit, path)
            if there is not None and _shows_other_code(
                about, ref, names, target, there, path, place
            ):
                return []
            fix = Fix(path, *_fixed_range(ref, place))
            named = None
            if there is not None:
                python = _both_python(target.path, path)
                settled = self._settled_fix(ref, target, path, place, there)
                named = (
                    (_not_defined_there(ref, there, place) if python else None)
                    or (ref.symbol if settled is None else None)
                    or (
                        _defined_in_range(ref, names, target.blob, there, place) if python else None
                    )
                )
                fix = settled or fix
            if named is not None:
                said = (
                    f"{where} is not in '{target.path}' at {_at(target)}; it is in '{path}' "
                    f"at {_span(place)}"
                )
                return self._disagreeing(ref, target, said, named)
            return [
                self._finding(
                    ref,
                    target,
                    "quote-elsewhere",
                    f"{where} is not in '{target.path}' at {_at(target)}; it is in '{path}' "
                    f"at {_span(place)}",
                    _ref_text(fix, ref),
                    fix,
                )
            ]
        if others:
            listed = ", ".join(
                f"{path}:{_span(place)}" for path, found in others for place in found
            )
            return [
                self._finding(
                    ref,
                    target,
                    "quote-elsewhere",
                    f"{where} is not in '{target.path}' at {_at(target)}; it matches in "
                    f"other files: {listed}",
                    "cite the one meant",
                )
            ]
        message = f"{where} is nowhere in '{target.path}' at {_at(target)}"
        if astray:
            message = f"{where} is not in {cited}: none of its lines is there"
        closest = best_partial(prepared, index)
        if closest is not None and closest.matched >= 2:
            message += (
                f" (closest: {closest.matched} of {prepared.required} lines at {_span(closest)})"
            )
        suggestion = None
        found = self._in_history(prepared, target)
        if found is not None:
            message += f"; {found}"
            suggestion = _pin_advice(ref, target)
        elif _edited_from(prepared, index, ref.start, ref.end):
            # Nowhere as written, but the cited lines line by line with a word changed (a
            # local renamed, a value): the page quotes them edited, not other code.
            return self._differing(ref, target, quote, prepared, ref.start, ref.end)
        return [self._finding(ref, target, "quote-not-found", message, suggestion)]

    def _differing(
        self,
        ref: CodeRef,
        target: _Target,
        quote: Quote,
        prepared: PreparedQuote,
        low: int,
        high: int,
    ) -> list[Finding]:
        """`quote-differs` naming how the quote differs from lines ``low..high``
        (`_differences`); nothing when it only abridges them."""
        differences = _differences(prepared, quote, self._index(target), low, high)
        if not differences:
            return []
        return [
            self._finding(
                ref,
                target,
                "quote-differs",
                f"{_quote_words(quote, prepared)} differs from {_cited(low, high, target)}: "
                f"{differences}",
                "quote the code as it is there (eliding with `...` what it leaves out), "
                "or cite the code it shows",
            )
        ]

    def _copied_elsewhere(
        self,
        ref: CodeRef,
        target: _Target,
        quote: Quote,
        prepared: PreparedQuote,
        verdict: QuoteVerdict,
    ) -> list[Finding]:
        """A quote whole in the cited lines only with lines between (which an author may drop)
        while one other place of the file holds it as written: most often a copy of that
        code (`Config.get`, quoted at `FrozenConfig.get`, whose `raise` it then hides)."""
        assert ref.start is not None and ref.end is not None
        index = self._index(target)
        copies = [
            place
            for place in verdict.places[1:]
            if place.matched >= prepared.required
            and index.holds_text(quote.text, place.first, place.last)
        ]
        if len(copies) != 1:
            return []
        cited = _cited(ref.start, ref.end, target)
        return [
            self._finding(
                ref,
                target,
                "quote-differs",
                f"{_quote_words(quote, prepared)} is in {cited} only with lines between it "
                f"leaves out; as written it is at {_span(copies[0])}",
                f"cite {target.path}:{_span(copies[0])} if the page shows that code, or quote "
                "the cited lines whole",
            )
        ]

    def _one_line(
        self,
        ref: CodeRef,
        target: _Target,
        quote: Quote,
        index: FileIndex,
        about: str | None = None,
        names: tuple[str, ...] = (),
    ) -> list[Finding]:
        """`quote-differs` for a quote of one long line of code that the cited lines do not
        have, when one of them is that line written otherwise (`_ONE_LINE_LIKENESS`), or when
        the file has it at one other place (`_one_line_elsewhere`): nothing for a short or
        generic line, a call of what the cited lines define, or a line found nowhere (an
        example of its use)."""
        assert ref.start is not None and ref.end is not None
        if quote.text.count("\n") > _ONE_LINE_MOST or _unchecked_reason(quote, target):
            return []
        prepared = self._prepare(quote, target.path)
        code = [line for line in prepared.lines if line.kind == CODE] if prepared else []
        if len(code) != 1 or not code[0].distinctive or len(code[0].bare) < ONE_LINE_LEAST:
            return []
        low, high = ref.start, min(ref.end, len(index.lines))
        if high < low or index.occurrences(code[0], low, high):
            return []
        if _a_usage_example(quote.text, target.blob, ref):
            return []  # a call of what the cited lines define, like its `def` line
        window = index.normalised[low - 1 : high]
        # Each cited line, and each run of lines continued with `\` (a command joined).
        runs = {joined: (low + first, low + last) for first, last, joined in _runs(window, 0)}
        like = difflib.get_close_matches(code[0].bare, list(runs), 1, _ONE_LINE_LIKENESS)
        if not like:
            return self._one_line_elsewhere(ref, target, quote, index, code[0], about, names)
        if compact(_requoted(code[0].bare), index.markers) == compact(
            _requoted(like[0]), index.markers
        ):
            return []
        first, last = runs[like[0]]
        lines = f"line {first}" if first == last else f"lines {first}-{last}"
        return [
            self._finding(
                ref,
                target,
                "quote-differs",
                f"the code the page quotes at its line {quote.line + code[0].number} differs "
                f"from {_cited(ref.start, ref.end, target)}: "
                f"`{_shortened(code[0].bare)}` is not there (closest: {lines} "
                f"`{_shortened(like[0])}`)",
                "quote the code as it is there, or cite the code it shows",
            )
        ]

    def _one_line_elsewhere(
        self,
        ref: CodeRef,
        target: _Target,
        quote: Quote,
        index: FileIndex,
        line: QuoteLine,
        about: str | None,
        names: tuple[str, ...],
    ) -> list[Finding]:
        """`quote-differs` for a quoted line of code that the cited lines lack and the file
        has at exactly one other line: the page cites one place and shows another. Nothing
        when that line is other code the sentence names (`_shows_other_code`)."""
        assert ref.start is not None and ref.end is not None
        places = index.occurrences(line, 1, len(index.lines))
        if len(places) != 1:
            return []
        place = Placement(places[0], places[0], 1, 1, 1)
        if _shows_other_code(about, ref, names, target, target.blob, target.path, place):
            return []
        return [
            self._finding(
                ref,
                target,
                "quote-differs",
                f"the code the page quotes at its line {quote.line + line.number} is not in "
                f"{_cited(ref.start, ref.end, target)}: `{_shortened(line.bare)}` is at line "
                f"{places[0]}",
                f"cite {target.path}:{places[0]} if the page shows that line, or quote the "
                "cited code",
            )
        ]

    def _in_part(
        self,
        ref: CodeRef,
        target: _Target,
        quote: Quote,
        prepared: PreparedQuote,
        verdict: QuoteVerdict,
    ) -> list[Finding]:
        """A quote only in part in the cited lines is most often an edited quote of them; but
        when another commit's version of the file holds it whole, the page was written against
        that commit, and the lines it quotes that the pin lacks are not the pin's code."""
        if not verdict.places or not verdict.strong:
            return []
        place = verdict.places[0]
        if _unchecked_reason(quote, target) is not None:
            return []
        if place.matched >= prepared.required:
            return self._copied_elsewhere(ref, target, quote, prepared, verdict)
        found = self._in_history(prepared, target, whole=True)
        cited = _cited(ref.start, ref.end, target)
        if found is None:
            # Edited, then: but a quote that shows a call, a constant or an order the code does
            # not have misstates it, which a reader cannot see. Said, line by line.
            assert ref.start is not None and ref.end is not None
            low, high = min(ref.start, place.first), max(ref.end, place.last)
            return self._differing(ref, target, quote, prepared, low, high)
        return [
            self._finding(
                ref,
                target,
                "quote-elsewhere",
                f"{_quote_words(quote, prepared)} is only in part in {cited} "
                f"({place.matched} of its {prepared.required} lines); whole {found}",
                _pin_advice(ref, target),
            )
        ]

    def _quote_moved(self, ref: CodeRef, target: _Target, quote: Quote) -> list[Finding]:
        """For a file missing at the commit: the one other file holding its quote, as a fix."""
        prepared = self._prepare(quote, target.path)
        if prepared is None or not is_strong(prepared) or _unchecked_reason(quote, target):
            return []
        unique = _unique(self._in_other_files(prepared, target), prepared)
        if unique is None:
            return []
        path, place = unique
        fix = Fix(path, *_fixed_range(ref, place))
        return [
            self._finding(
                ref,
                target,
                "quote-elsewhere",
                f"{_quote_words(quote, prepared)} is in '{path}' at {_span(place)}, and "
                f"'{target.path}' does not exist at {_at(target)}",
                _ref_text(fix, ref),
                fix,
            )
        ]

    def _prepare(self, quote: Quote, path: str) -> PreparedQuote | None:
        language = quote.language or language_of(path)
        key = (quote.text, language)
        if key not in self._prepared:
            lines = quote.lines
            self._prepared[key] = (
                prepare(lines, language) if could_be_evidence(quote.text) else None
            )
        return self._prepared[key]

    def _index(self, target: _Target) -> FileIndex:
        return self._index_of(target.upstream, target.sha, target.blob, target.path)

    def _index_of(self, upstream: Upstream, sha: str, blob: BlobText, path: str) -> FileIndex:
        key = (upstream.name, sha)
        index = self._indexes.get(key)
        if index is None:
            markers = comment_markers(language_of(path))
            index = self._indexes[key] = FileIndex(blob.lines, markers)
        return index

    def _disagreeing(self, ref: CodeRef, target: _Target, said: str, named: str) -> list[Finding]:
        """A quote found at one place that does not hold ``named``, the name the page gives
        the code (``said`` says where it is): which of the two is right, a person knows; a
        rewrite would only trade one error for the other."""
        return [
            self._finding(
                ref,
                target,
                "quote-elsewhere",
                f"{said}, which does not hold `{named}`, the symbol the page names",
                f"cite the lines of `{named}` or those of the quote, and make the other agree",
            )
        ]

    def _settled_fix(
        self, ref: CodeRef, target: _Target, path: str, place: Placement, blob: BlobText
    ) -> Fix | None:
        """The lines of ``path`` (``blob``) to cite where the quote is, when they pass the
        check the resolver makes of the symbol named beside the reference (a use of it in
        code, inside its definition, not another class's method), else None: a rewrite must
        not trade one finding for another. A quote of a body without its header (in a language
        whose definitions are not read) is cited with the header line above it, which names
        the symbol."""
        fix = Fix(path, *_fixed_range(ref, place))
        if not ref.symbol or self._holds(ref, target, fix, blob):
            return fix
        python = path.endswith((".py", ".pyi"))  # (its definitions are read: no header missed)
        if not python and ref.start != ref.end and 1 < place.first <= blob.line_count:
            above = blob.lines[place.first - 2]
            widened = Fix(path, place.first - 1, fix.end)
            if (
                _HEADER_LINE.search(above)
                and identifier_columns(above, last_name(ref.symbol))
                and self._holds(ref, target, widened, blob)
            ):
                return widened
        return None

    def _holds(self, ref: CodeRef, target: _Target, fix: Fix, blob: BlobText) -> bool:
        return self.stores.symbol_holds(ref, target.upstream, target.commit, fix, blob)

    def _in_other_files(
        self, prepared: PreparedQuote, target: _Target
    ) -> list[tuple[str, list[Placement]]]:
        """Files of the upstream at the commit, other than the cited one, where the quote
        matches: found with ``git grep`` for its most distinctive piece of text."""
        key = (id(prepared), target.upstream.name, target.commit)
        if key in self._other_files:
            return self._other_files[key]
        needle = _needle(prepared)
        if needle is not None and self.defer_searches:
            raise SearchDeferred
        found: list[tuple[str, list[Placement]]] = []
        self._other_files[key] = found
        if needle is None or self.other_file_searches >= MAX_OTHER_FILE_SEARCHES:
            return found
        self.other_file_searches += 1
        store = self.stores.store(target.upstream)
        paths = _grep(store, target.commit, needle, target.path)
        for path in paths[:_MAX_CANDIDATE_FILES]:
            entry = store.entry(target.commit, path)
            if entry is None or entry.kind != "blob" or entry.is_symlink:
                continue
            blob = store.blob(entry.sha)
            if blob.is_binary:
                continue
            places = placements(prepared, self._index_of(target.upstream, entry.sha, blob, path))
            if places:
                found.append((path, places))
        return found

    def _in_history(
        self,
        prepared: PreparedQuote,
        target: _Target,
        *,
        whole: bool = False,
        copied: str | None = None,
    ) -> str | None:
        """Words saying the nearest commit whose version of the file holds the quote (with
        ``whole``, every line of it; with ``copied``, the quote's text as it is written, white
        space aside), at the lines that hold it so. Each of the three questions has a budget
        of its own (`MAX_HISTORY_SEARCHES`)."""
        kind = "as written" if copied is not None else "whole" if whole else "anywhere"
        key = (id(prepared), target.upstream.name, target.path, kind, target.synced)
        if key in self._elsewhere_in_time:
            return self._elsewhere_in_time[key]
        if self.defer_searches:
            raise SearchDeferred
        self._elsewhere_in_time[key] = None
        if self.history_searches[kind] >= MAX_HISTORY_SEARCHES:
            if self.history_searches[kind] == MAX_HISTORY_SEARCHES:
                self.history_searches[kind] += 1  # said once
                log.warning(
                    "%d quotes %s were searched for in their files' history: later ones are "
                    "not (a limit of the run, for its time)",
                    MAX_HISTORY_SEARCHES,
                    _SEARCHED[kind],
                )
            return None
        self.history_searches[kind] += 1
        store = self.stores.store(target.upstream)
        histories = self._histories.setdefault(target.upstream.name, {})
        from generator.upstream.history import history_for

        history = history_for(store, target.commit, target.upstream.branch, histories)

        def holds(sha: str) -> bool:
            blob = store.blob(sha)
            if blob.is_binary:
                return False
            index = self._index_of(target.upstream, sha, blob, target.path)
            if copied is not None:
                return index.holds_text(copied, 1, len(index.lines))
            return any(
                is_strong(prepared, p) and (not whole or p.matched >= prepared.required)
                for p in placements(prepared, index)
            )

        found = history.nearest(target.path, target.commit, holds)
        if found is None:
            return None
        index = self._index_of(target.upstream, found.blob, store.blob(found.blob), target.path)
        places = placements(prepared, index)
        if copied is not None:  # the place that holds it as written, not the best loose one
            places = [p for p in places if index.holds_text(copied, p.first, p.last)] or places
        place = places[0]
        count = abs(found.distance)
        direction = "after" if found.distance > 0 else "before"
        # (A held reference is checked at the commit it was held at, not at the pin.)
        checked = "the pin" if target.commit == target.upstream.pin else target.commit[:7]
        when = f"{count} commit{'s' if count != 1 else ''} {direction} {checked}"
        at = f"{target.upstream.name}@{found.commit.sha[:7]}"
        against = (
            "a sync moved the page to the pin since, and left its quote as the code was"
            if target.synced and found.distance < 0
            else f"the page may have been written against {at}"
        )
        if found.changed_by is not None:
            # (The subject of the last commit that had it says nothing of the file: the one
            # that changed the file next says what changed.)
            words = (
                f"it is at {_span(place)} in {at} ({when}), before "
                f"{target.upstream.name}@{found.changed_by.sha[:7]} changed the file "
                f"('{found.changed_by.subject[:60]}'): {against}"
            )
        else:
            words = (
                f"it is at {_span(place)} in {at} ({when}, '{found.commit.subject[:60]}'): "
                f"{against}"
            )
        self._elsewhere_in_time[key] = words
        return words

    # -- names ----------------------------------------------------------------------------

    def _prove_names(self, ref: CodeRef, target: _Target, names: Sequence[str]) -> list[Finding]:
        """At least two names, none used in the cited lines, each used elsewhere in the file."""
        assert ref.start is not None and ref.end is not None
        blob = target.blob
        if blob.is_binary or ref.end > blob.line_count:
            return []
        lasts = list(dict.fromkeys(name.rsplit(".", 1)[-1] for name in names))
        if len(lasts) < 2:
            return []
        python = target.path.endswith((".py", ".pyi"))
        elsewhere: list[tuple[str, int]] = []
        for name in lasts:
            if python and any(
                first <= ref.start and ref.end <= last
                for first, last in definitions(blob.line_tuple, name)
            ):
                return []  # lines of its body: "`sleep()` offloads here (x.py:24-26)"
            if python:
                if blob.occurs_in_code(name, ref.start, ref.end):
                    return []
            elif any(
                identifier_columns(line, name) for line in blob.lines[ref.start - 1 : ref.end]
            ):
                return []
            first = first_use(blob, name, python)
            if first is None:
                return []  # named but not in this file: it may live elsewhere
            elsewhere.append((name, first))
        listed = ", ".join(f"`{name}` at {line}" for name, line in elsewhere)
        return [
            self._finding(
                ref,
                target,
                "names-not-in-range",
                f"{_cited(ref.start, ref.end, target)} uses "
                f"none of the names the text gives it; they are used at: {listed}",
            )
        ]

    def _prove_subject(
        self, ref: CodeRef, target: _Target, subject: str, names: Sequence[str]
    ) -> list[Finding]:
        """The name the sentence opens with, defined in the cited file, neither used in the
        cited lines nor defined across them: `` `all_gather_params` broadcasts every
        parameter (x.py:57-63)`` at the lines of `reduce_scatter_grads`. Unless the cited
        lines define, or belong to, what its definition uses (`` `train()` calls the step
        (x.py:4-9)``, a line of the step, a module constant), or hold another name of the
        sentence (`` `a` and `b` both loop (x.py:10-13)``, at `b`)."""
        assert ref.start is not None and ref.end is not None
        blob = target.blob
        if blob.is_binary or ref.end > blob.line_count or not target.path.endswith((".py", ".pyi")):
            return []
        name = last_name(subject)
        if not definitions(blob.line_tuple, name):
            return []  # not defined here: it may be what the cited lines call from elsewhere
        here = Fix(target.path, ref.start, ref.end)
        if self.stores.symbol_holds(
            replace(ref, symbol=subject), target.upstream, target.commit, here, blob
        ):
            return []  # as the resolver checks a symbol named beside the reference
        qualified = symbol_definitions(blob.line_tuple, subject)
        spans = qualified or definitions(blob.line_tuple, name)
        for other in {last_name(named) for named in names} - {name}:
            if blob.occurs_in_code(other, ref.start, ref.end) or any(
                first <= ref.end and ref.start <= last
                for first, last in definitions(blob.line_tuple, other)
            ):
                return []  # the sentence is about that one too
        cited = names_of_lines(blob.line_tuple, ref.start, ref.end) - {name}
        if any(
            blob.occurs_in_code(callee, first, last) for callee in cited for first, last in spans
        ):
            return []  # what it uses: the sentence says what the subject does with them
        said = (
            f"`{subject}`, which the sentence is about, is not in "
            f"{_cited(ref.start, ref.end, target)}"
        )
        owner = subject.replace("::", ".").rsplit(".", 1)[0] if subject != name else None
        if owner is not None and not qualified:
            # `FSDPActor.sleep` at `MegatronActor.sleep`: the file's `sleep` is another's, and
            # is no place to cite for it.
            if not definitions(blob.line_tuple, last_name(owner)):
                said += f", which defines no `{last_name(owner)}`"
            return [self._finding(ref, target, "names-not-in-range", said)]
        return [
            self._finding(
                ref,
                target,
                "names-not-in-range",
                said,
                "it is defined at "
                + " or ".join(f"{target.path}:{first}-{last}" for first, last in spans),
            )
        ]

    # -- helpers --------------------------------------------------------------------------

    def _unknown_file(self, ref: CodeRef, context: PageContext) -> _Target | None:
        """A bare name that names no file at the commit, as a missing file of the page's
        upstream (or of the only one)."""
        upstreams = self.stores.manifest.upstreams
        name = context.upstream or (next(iter(upstreams)) if len(upstreams) == 1 else None)
        upstream = upstreams.get(name or "")
        if upstream is None:
            return None
        try:
            self.stores.store(upstream)
        except ConfigError:
            return None
        commit = self.stores.commit_for(upstream, context)
        return _Target(upstream, commit, ref.path, "", BlobText(b""), True)

    def _target(self, verdict: ResolvedRef) -> _Target | None:
        key = (verdict.upstream, verdict.commit, verdict.path)
        if key not in self._targets:
            self._targets[key] = self._find_target(verdict)
        return self._targets[key]

    def _find_target(self, verdict: ResolvedRef) -> _Target | None:
        upstream = self.stores.manifest.upstreams.get(verdict.upstream or "")
        if upstream is None or verdict.commit is None or verdict.path is None:
            return None
        try:
            store = self.stores.store(upstream)
        except ConfigError:  # no clone: the resolver said so already
            return None
        entry = store.entry(verdict.commit, verdict.path)
        gone = entry is None and not store.is_directory(verdict.commit, verdict.path)
        if gone:  # renamed, moved: where its quoted code went is worth knowing
            return _Target(upstream, verdict.commit, verdict.path, "", BlobText(b""), True)
        if entry is None or entry.kind != "blob" or entry.is_symlink:
            return None
        return _Target(upstream, verdict.commit, verdict.path, entry.sha, store.blob(entry.sha))

    @staticmethod
    def _finding(
        ref: CodeRef,
        target: _Target,
        check: str,
        message: str,
        suggestion: str | None = None,
        fix: Fix | None = None,
    ) -> Finding:
        return Finding(
            severity_of(check),
            check,
            ref.page,
            ref.line,
            ref.column,
            message,
            suggestion,
            ref.text,
            target.upstream.name,
            target.commit,
            target.path,
            ref.start,
            ref.end,
            fix,
        )


def _none_in_range(prepared: PreparedQuote, index: FileIndex, ref: CodeRef) -> bool:
    """Whether no line of the quote's code is in the cited lines (even as a part of one, so
    that a line the author shortened counts as there)."""
    assert ref.start is not None and ref.end is not None
    cited = index.normalised[ref.start - 1 : ref.end]
    return not any(
        (text := line.bare or line.text) and any(text in held for held in cited)
        for line in prepared.lines
        if line.kind == CODE
    )


def _unique(
    others: list[tuple[str, list[Placement]]], prepared: PreparedQuote
) -> tuple[str, Placement] | None:
    """The one place in other files that strongly holds the quote, if there is exactly one."""
    if len(others) == 1 and len(others[0][1]) == 1 and is_strong(prepared, others[0][1][0]):
        return others[0][0], others[0][1][0]
    return None


def _unchecked_reason(quote: Quote, target: _Target) -> str | None:
    if target.blob.is_binary:
        return f"'{target.path}' is a binary file; the quote at line {quote.line} is not compared"
    if quote.unterminated:
        return (
            f"the code block at line {quote.line - 1} is never closed, so the quote runs to the "
            "end of the page; close it with a fence line to have the quote compared"
        )
    if len(quote.lines) > MAX_QUOTE_LINES:
        return (
            f"the quote at line {quote.line} has {len(quote.lines)} lines; quotes of more than "
            f"{MAX_QUOTE_LINES} lines are not compared"
        )
    if _BINARY.search(quote.text):
        return f"the quote at line {quote.line} holds control characters; it is not compared"
    return None


def _shows_other_code(
    about: str | None,
    ref: CodeRef,
    names: tuple[str, ...],
    target: _Target,
    there: BlobText,
    there_path: str,
    place: Placement,
) -> bool:
    """Whether the quote, at ``place`` of ``there`` (the cited file or another), shows other
    code than what the sentence is about (``about``: the symbol beside the reference, or the
    name the sentence opens with) on purpose, while its definition starts in the cited lines
    (the reference is right): a use of it (`` `train_step` (training.py:9-16) is called from
    the main loop:`` and the loop quoted), or the definition of another name of the sentence
    (`` `MLP.forward` (mlp.py:29-38) calls `glu`, which is:`` and `glu` quoted). Nothing to
    report, and nothing to fix."""
    cited = target.blob
    if not about or cited.is_binary or there.is_binary:
        return False
    assert ref.start is not None and ref.end is not None
    name = last_name(about)
    spans = symbol_definitions(cited.line_tuple, about) or code_definitions(
        cited.line_tuple, name, target.path
    )
    if not any(ref.start <= first <= ref.end for first, _ in spans):
        return False
    if _within(code_definitions(there.line_tuple, name, there_path), place):
        return False  # a definition of that name, of any class: not a use of it
    if there.occurs_in_code(name, place.first, place.last):
        return True
    return any(
        _within(code_definitions(there.line_tuple, other, there_path), place)
        for other in {last_name(named) for named in names} - {name}
    )


_DEFINES = lazy_pattern(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]", re.MULTILINE)
_HEADER_LINE = lazy_pattern(r"\b(?:func|function|fn|def|sub|proc|fun)\b|\{[ \t]*$")
"""A line that opens a definition in a language whose definitions are not read."""


def _a_usage_example(text: str, cited: BlobText, ref: CodeRef) -> bool:
    """Whether a quote found nowhere in the upstream calls what the cited lines define, and
    defines nothing: an example of its use (`` build a trainer like this
    (base.py:19-32):`` and ``trainer = BaseTrainer(model, cfg)``), not a copy of its code; or
    runs the cited file (``bash scripts/run.sh /ckpt``)."""
    assert ref.start is not None and ref.end is not None
    if _RUNS_A_FILE.search(text) and _runs_file(text, ref.path.rsplit("/", 1)[-1]):
        return True  # `bash scripts/run.sh /ckpt`, `torchrun train.py --tp 2`: it is run
    if cited.is_binary or not ref.path.endswith((".py", ".pyi")):
        return False
    around = names_of_lines(cited.line_tuple, ref.start, ref.end)
    defined = [
        name
        for name in around
        if any(ref.start <= first <= ref.end for first, _ in definitions(cited.line_tuple, name))
    ]
    if "__init__" in defined:  # a constructor is called by its class's name
        defined += around - {"__init__"}
    if _DEFINES.search(text):
        return False  # code of definitions: a copy of some, not an example of a call
    return any(re.search(rf"(?<![\w]){re.escape(name)}\(", text) is not None for name in defined)


_RUNS_A_FILE = lazy_pattern(
    r"^[ \t]*(?:\$[ \t]+)?(?:[A-Z_][A-Z0-9_]*=\S*[ \t]+)*"
    r"(?:python3?|bash|sh|zsh|source|torchrun|deepspeed|accelerate[ \t]+launch|srun|sbatch|"
    r"mpirun|uv[ \t]+run|\./)",
    re.MULTILINE,
)
"""A command line that runs a program (``bash x.sh``, ``CUDA_VISIBLE_DEVICES=0 torchrun``)."""


def _runs_file(text: str, name: str) -> bool:
    """Whether a line of ``text`` that runs a program (`_RUNS_A_FILE`) names the file
    ``name``."""
    file = re.compile(rf"(?:^|[\s/]){re.escape(name)}(?=\s|$)")
    return any(
        _RUNS_A_FILE.match(line) and file.search(line) for line in text.split("\n") if name in line
    )


def _not_defined_there(ref: CodeRef, there: BlobText, place: Placement) -> str | None:
    """The symbol named beside the reference, when the quote's place in another file lies in
    no definition of that name (of any class: a method may be inherited from there), else
    None. A mere use does not count there: ``torch.save(...)`` is no ``Actor.save``."""
    if not ref.symbol or there.is_binary:
        return None
    name = last_name(ref.symbol)
    spans = definitions(there.line_tuple, name)
    return None if _within(spans, place) else name


def _defined_in_range(
    ref: CodeRef, names: tuple[str, ...], cited: BlobText, there: BlobText, place: Placement
) -> str | None:
    """With no symbol beside the reference, a name of its sentence (``names``) defined in
    the cited lines (they overlap its definition), when the quote's place neither lies in a
    definition of it nor uses it: ``offload_optimizer()`` ... (actor.py:108-114) with a quote
    of ``reload_optimizer``. The cited lines then hold what the sentence is about; a name they
    only use (a callee, a caller) says nothing of which lines are meant."""
    if ref.symbol or not names or cited.is_binary or there.is_binary:
        return None
    assert ref.start is not None and ref.end is not None
    for name in map(last_name, names):
        defined = definitions(cited.line_tuple, name)
        if not any(first <= ref.end and ref.start <= last for first, last in defined):
            continue
        elsewhere = definitions(there.line_tuple, name)
        if there.occurs_in_code(name, place.first, place.last) or _within(elsewhere, place):
            continue
        return name
    return None


def _within(spans: list[tuple[int, int]], place: Placement) -> bool:
    """Whether ``place`` lies inside one of the line ``spans`` (definitions)."""
    return any(first <= place.first and place.last <= last for first, last in spans)


def _both_python(cited: str, other: str) -> bool:
    """Whether both files are Python, whose definitions `definitions` reads."""
    return cited.endswith((".py", ".pyi")) and other.endswith((".py", ".pyi"))


def _fixed_range(ref: CodeRef, place: Placement) -> tuple[int, int]:
    """The proven range in the reference's own shape: one line stays one line."""
    if ref.start == ref.end:
        return place.first, place.first
    return place.first, place.last


def _ref_text(fix: Fix, ref: CodeRef) -> str:
    return (
        f"{fix.path}:{fix.start}" if ref.start == ref.end else f"{fix.path}:{fix.start}-{fix.end}"
    )


def _needle(prepared: PreparedQuote) -> str | None:
    """The longest piece of the quote without white space: what to search other files for."""
    pieces = [
        piece
        for line in prepared.lines
        if line.kind == 0 and line.pattern is None
        for piece in _TOKEN.findall(line.bare)
    ]
    return max(pieces, key=len, default=None)


def _grep(store: GitStore, commit: str, needle: str, exclude: str) -> list[str]:
    """Files of ``commit`` that contain ``needle`` (a fixed string), the cited one excluded."""
    extension = exclude.rsplit(".", 1)[-1] if "." in exclude.rsplit("/", 1)[-1] else None
    arguments = ["git", "grep", "-I", "-l", "-F", "-e", needle, commit, "--"]
    if extension:
        arguments.append(f"*.{extension}")
    try:
        result = subprocess.run(
            arguments, cwd=store.path, capture_output=True, check=False, timeout=60
        )
    except subprocess.TimeoutExpired:
        log.warning("searching %s for a quote took too long; other files not searched", store.path)
        return []
    paths = []
    for line in result.stdout.decode("utf-8", "surrogateescape").splitlines():
        path = line.partition(":")[2]
        if path and path != exclude:
            paths.append(path)
    return paths


_ONE_LINE_MOST = 3
"""Lines (blank and comment lines counted) a quote of one line of code may have."""
_ONE_LINE_LIKENESS = 0.8
"""How like a cited line a one-line quote must be to be that line misquoted (`difflib`)."""
_LISTED_DIFFERENCES = 2
"""Lines of a quote that differs from the code named in its finding; the count says the rest."""


def _differences(
    prepared: PreparedQuote, quote: Quote, index: FileIndex, low: int, high: int
) -> str:
    """How the quote's code differs from lines ``low..high``: its lines those lines do not have
    (each with the closest line there), or, when all are there, the first out of order. A line
    those lines have reflowed (one quoted line for several, white space aside), a signature
    without its annotations or defaults (its words all in the definition's header there) and
    the lines of a docstring (an author's summary of it) are the author's abridging, not a
    difference; a call, an operator, a value or a word changed or dropped anywhere else is."""
    high = min(high, len(index.normalised))  # (a range past the file's end)
    window = [(n, index.normalised[n - 1]) for n in range(low, high + 1)]
    outside = [line for line in _outside_docstrings(prepared.lines) if line.kind != COMMENT]
    code = [line for line in outside if line.kind == CODE]
    places = [index.occurrences(line, low, high) for line in code]
    unfound = [line for line, found in zip(code, places, strict=True) if not found]
    reflowed = _reflowed(outside, index, low, high) if unfound else set()
    headers = _abridged_headers(outside, window) if unfound else set()
    requoted = {_requoted(strip_comment(text, index.markers)) for _, text in window}
    missing = [
        line
        for line in unfound
        if line.number not in reflowed | headers and _requoted(line.bare) not in requoted
    ]
    if missing:
        said = []
        for line in missing[:_LISTED_DIFFERENCES]:
            closest = difflib.get_close_matches(line.bare, [t for _, t in window], 1, 0.6)
            text = f"its line {quote.line + line.number} `{_shortened(line.bare)}` is not there"
            if closest:
                number = next(n for n, t in window if t == closest[0])
                text += f" (closest: line {number} `{_shortened(closest[0])}`)"
            said.append(text)
        more = len(missing) - _LISTED_DIFFERENCES
        if more > 0:
            said.append(f"{more} more of its lines {'is' if more == 1 else 'are'} not there either")
        return "; ".join(said)
    # Every line is there: the quote puts one before a line the code has after it.
    latest, before = 0, None
    for line, found in zip(code, places, strict=True):
        if not found:
            continue
        after = [n for n in found if n > latest]
        if not after and before is not None:
            return (
                f"its line {quote.line + line.number} `{_shortened(line.bare)}` is there "
                f"(line {found[0]}), but not after its line {quote.line + before.number} "
                f"`{_shortened(before.bare)}` (line {latest}), as the quote has it"
            )
        latest, before = (after or found)[0], line
    return ""


def _requoted(text: str) -> str:
    """``text`` with its single quote marks written double: which marks a string has is a
    matter of style (black writes double ones), not of what the code does."""
    return text.replace("'", '"')


_EDITED_LIKENESS = 0.8
"""How like a cited line each line of a quote must be for the quote to be those lines edited
(`difflib`), where the quote is nowhere as written; `_EDITED_LEAST` when half its lines are
cited lines as written."""
_EDITED_LEAST = 0.6


def _edited_from(prepared: PreparedQuote, index: FileIndex, start: int, end: int) -> bool:
    """Whether the quote is lines ``start..end`` edited: each of its code lines (docstrings
    aside, two at least) one of them or like one (`_EDITED_LIKENESS`, or `_EDITED_LEAST` when
    half are there as written), in the order of the file."""
    high = min(end, len(index.normalised))
    code = [line for line in _outside_docstrings(prepared.lines) if line.kind == CODE]
    if len(code) < 2 or high < start:
        return False
    window = index.normalised[start - 1 : high]
    matcher = difflib.SequenceMatcher(autojunk=False)
    at = exact = 0
    loose = False
    for line in code:
        found = index.occurrences(line, start + at, high)
        if found:
            at, exact = found[0] - start + 1, exact + 1
            continue
        matcher.set_seq2(line.bare)
        for _, last, joined in _runs(window, at):
            matcher.set_seq1(joined)
            if (
                matcher.real_quick_ratio() >= _EDITED_LEAST
                and matcher.quick_ratio() >= _EDITED_LEAST
                and (ratio := matcher.ratio()) >= _EDITED_LEAST
            ):
                at, loose = last + 1, loose or ratio < _EDITED_LIKENESS
                break
        else:
            return False
    return not loose or 2 * exact >= len(code)


_JOINED_LINES = 4
"""The most cited lines one quoted line may join (a command whose `\\` continuations it
dropped), when the quote is nowhere as written."""


def _runs(window: Sequence[str], at: int) -> Iterator[tuple[int, int, str]]:
    """What of ``window`` from ``at`` a quoted line may be, as (first, last, text): each line,
    then runs of up to `_JOINED_LINES` lines, the first ending with a continuation, joined
    without their backslashes."""
    for offset in range(at, len(window)):
        yield offset, offset, window[offset]
    for offset in range(at, len(window)):
        if window[offset].endswith("\\"):
            for last in range(offset + 1, min(len(window), offset + _JOINED_LINES)):
                yield offset, last, " ".join(window[offset : last + 1]).replace("\\ ", "")


_TOKEN = lazy_pattern(r"""[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|"[^"]*"|'[^']*'""")
"""What a line of code names: identifiers, numbers and string literals."""
_HEADER = lazy_pattern(r"(?:async\s+)?(?:def|class)\s+[A-Za-z_][A-Za-z0-9_]*")
_REFLOWED_LINES = 12
"""The most file lines one quoted line may stand for, reflowed."""


def _reflowed(lines: Sequence[QuoteLine], index: FileIndex, low: int, high: int) -> set[int]:
    """The numbers of the quote's lines that are lines of ``low..high`` reflowed: a run of
    them, joined, is a run of whole lines there, joined (white space, comments and trailing
    commas aside), as a call written on one line that the code spreads over several, or the
    other way round."""
    text, starts = index.compact
    begin, stop = starts[low - 1], starts[high]
    boundaries = set(starts[low - 1 : high + 1])
    reflowed: set[int] = set()
    for first in range(len(lines)):
        if lines[first].number in reflowed:
            continue
        for last in range(min(len(lines), first + _REFLOWED_LINES) - 1, first - 1, -1):
            group = lines[first : last + 1]
            piece = compact(" ".join(line.bare for line in group), index.markers)
            if not piece:
                continue
            if any(
                _whole_lines_at(text, form, begin, stop, boundaries)
                for form in dict.fromkeys((piece, _unwrapped(piece)))
            ):
                reflowed.update(line.number for line in group)
                break
    return reflowed


def _whole_lines_at(text: str, piece: str, begin: int, stop: int, boundaries: set[int]) -> bool:
    """Whether ``piece`` is in ``text[begin:stop]`` from a line's start to a line's end."""
    at = text.find(piece, begin, stop)
    while at != -1 and not (at in boundaries and at + len(piece) in boundaries):
        at = text.find(piece, at + 1, stop)
    return at != -1


_WRAPPED = lazy_pattern(r"(.*?(?:[^=!<>]=|\breturn|\byield))\((.*)\)")
"""An expression a formatter put in brackets to spread it over lines (``result = (``, ``return
(``), in the compact form."""


def _unwrapped(piece: str) -> str:
    """``piece`` (compact) without the brackets around an assigned or returned expression, when
    they are its own (black writes ``x = (\n    a\n    * b\n)`` for ``x = a * b``)."""
    match = _WRAPPED.fullmatch(piece)
    if match is None:
        return piece
    depth = 0
    for char in match[2]:
        depth += (char in "([{") - (char in ")]}")
        if depth < 0:
            return piece  # (`x = (a) * (b)`: the last bracket closes another)
    return match[1] + match[2] if depth == 0 else piece


def _abridged_in(
    prepared: PreparedQuote, quote: Quote, index: FileIndex, start: int, end: int
) -> bool:
    """Whether the quote is in lines ``start..end`` as an author abridges: some of its code
    lines found there as written, and none that differs (`_differences`)."""
    if start > len(index.lines):
        return False
    code = [line for line in _outside_docstrings(prepared.lines) if line.kind == CODE]
    if not any(index.occurrences(line, start, end) for line in code):
        return False
    return not _differences(prepared, quote, index, start, end)


def _abridged_headers(lines: Sequence[QuoteLine], window: Sequence[tuple[int, str]]) -> set[int]:
    """The numbers of the quote's lines that are the header of a definition in ``window``
    written with less (annotations, defaults, a line break): the same name, the same parameter
    names in the same order, and the same return annotation when it gives one."""
    abridged: set[int] = set()
    for position, line in enumerate(lines):
        if not _HEADER.match(line.bare):
            continue
        group = _header_lines([quoted.bare for quoted in lines[position:]])
        written = _header_parts(" ".join(group))
        if written is None:
            continue
        for at, (_, text) in enumerate(window):
            if not _HEADER.match(text):
                continue
            there = _header_parts(" ".join(_header_lines([t for _, t in window[at:]])))
            if there is not None and _abridges(written, there):
                abridged.update(quoted.number for quoted in lines[position : position + len(group)])
                break
    return abridged


_HEADER_PARTS = lazy_pattern(
    r"(?:async\s+)?(?:def|class)\s+(?P<name>[A-Za-z_]\w*)\s*(?:\((?P<params>.*)\))?"
    r"\s*(?:->\s*(?P<returns>.+?))?\s*:"
)


def _header_lines(texts: Sequence[str]) -> list[str]:
    """The first of ``texts`` and those that follow it up to the one that ends the header (a
    colon, the brackets closed), at most 12."""
    depth = 0
    for count, text in enumerate(texts[:12], 1):
        depth += sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")
        if depth <= 0 and text.rstrip().endswith(":"):
            return list(texts[:count])
    return [texts[0]]


_Parameter = tuple[str, str | None, str | None]
"""A parameter's name, annotation and default (white space removed; None when not given)."""
_Header = tuple[str, tuple[_Parameter, ...], str | None]


def _header_parts(text: str) -> _Header | None:
    """A definition header's name, parameters (or bases) and return annotation."""
    match = _HEADER_PARTS.match(text)
    if match is None:
        return None
    parameters: list[_Parameter] = []
    depth, piece = 0, ""
    for char in (match["params"] or "") + ",":
        if char == "," and depth == 0:
            name = re.match(r"\s*(\*{0,2}\s*[A-Za-z_]\w*|\*|/)\s*", piece)
            if name:
                rest = piece[name.end() :]
                annotation, _, default = rest.partition("=")
                parameters.append(
                    (
                        "".join(name.group(1).split()),
                        "".join(annotation.removeprefix(":").split()) or None
                        if annotation.startswith(":")
                        else None,
                        "".join(default.split()) or None,
                    )
                )
            piece = ""
            continue
        depth += (char in "([{") - (char in ")]}")
        piece += char
    returns = "".join(match["returns"].split()) if match["returns"] else None
    return match["name"], tuple(parameters), returns


def _abridges(written: _Header, there: _Header) -> bool:
    """Whether ``written`` says what ``there`` does, with less: the same name and parameters,
    each annotation, default and the return annotation either left out or the same."""
    if written[0] != there[0] or len(written[1]) != len(there[1]):
        return False
    for (name, annotation, default), (name_there, annotation_there, default_there) in zip(
        written[1], there[1], strict=True
    ):
        if name != name_there or annotation not in (None, annotation_there):
            return False
        if default not in (None, default_there):
            return False
    return written[2] in (None, there[2])


def _outside_docstrings(lines: Sequence[QuoteLine]) -> list[QuoteLine]:
    """The quote's lines but those of its docstrings (from a line opening a triple-quoted
    string to the one closing it)."""
    kept = []
    inside: str | None = None
    for line in lines:
        text = line.text
        if inside is not None:
            if text.count(inside) % 2 == 1:
                inside = None
            continue
        opening = next((q for q in ('"""', "'''") if text.lstrip("rbuRBU").startswith(q)), None)
        if opening is not None:
            if text.count(opening) % 2 == 1:
                inside = opening
            continue
        kept.append(line)
    return kept


def _pin_advice(ref: CodeRef, target: _Target) -> str:
    """What to do about a quote another commit holds: find the commit the page was written
    against; or, on a page a sync moved to the commit, quote the code as it is now."""
    if target.synced:
        return (
            f"quote the code as it is at {_at(target)} (a sync moved the page there), or run "
            f"`kb pin suggest {ref.page}` if the page was written against another commit"
        )
    return _PIN_SEARCH.format(page=ref.page)


_PIN_SEARCH = "kb pin suggest {page}"


def doubts_the_pin(finding: Finding) -> bool:
    """Whether a quote's finding says the page's pin is wrong (another commit holds the quote,
    and the page was not moved to its pin by a sync): it suggests finding the right one."""
    return finding.suggestion == _PIN_SEARCH.format(page=finding.page)


def _shortened(text: str, most: int = 72) -> str:
    return text if len(text) <= most else text[: most - 1] + "…"


def _quote_words(quote: Quote, prepared: PreparedQuote) -> str:
    # (sync renumbers the line in these words when it moves the page's lines: `_QUOTED_AT`)
    count = prepared.required
    lines = f"{count} line{'s' if count != 1 else ''}"
    return f"the code the page quotes at its line {quote.line} ({lines})"


def _span(place: Placement) -> str:
    return f"{place.first}-{place.last}" if place.last > place.first else str(place.first)


def _range_words(start: int, end: int) -> str:
    return f"line {start}" if start == end else f"range {start}-{end}"


def _cited(start: int, end: int, target: _Target) -> str:
    """``range 22-26 of 'x.py' at up@1a2b3c4``: the lines a finding is about."""
    return f"{_range_words(start, end)} of '{target.path}' at {_at(target)}"


def _at(target: _Target) -> str:
    return f"{target.upstream.name}@{target.commit[:7]}"
