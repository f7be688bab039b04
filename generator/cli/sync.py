"""``sync``: move upstream pins and re-anchor every reference (``make sync-upstream``)."""

from __future__ import annotations

import argparse
import errno
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from generator.cli.common import EXIT_FAILED, EXIT_OK, ProgressLine, load_manifest, shown
from generator.upstream.manifest import ConfigError
from generator.verification.report import plural

if TYPE_CHECKING:
    from generator.sync.journal import Journal
    from generator.upstream.manifest import Manifest

log = logging.getLogger(__name__)


def _revision(text: str) -> str:
    """REV as given: an empty one (an unset variable in ``--to "$REV"``) is refused rather
    than taken for the branch's head, which is what no --to means."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty; give a commit SHA, tag or branch")
    return text.strip()


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    sync = commands.add_parser(
        "sync",
        help="move upstream pins and re-anchor every reference (make sync-upstream)",
        description="Fetch each upstream, move its pin to the tracked branch head (or --to REV), "
        "rewrite every reference whose code moved unchanged, and hold the others at the old "
        "commit for review. Writes a drift report (Markdown and JSON).",
    )
    sync.add_argument(
        "names", nargs="*", metavar="UPSTREAM", help="upstreams to sync (default: all)"
    )
    sync.add_argument(
        "--to",
        metavar="REV",
        type=_revision,
        help="target revision: a commit SHA, tag or branch, or an ancestor of one (main~1); "
        "one upstream only; default: the tracked branch's head",
    )
    sync.add_argument(
        "--dry-run", action="store_true", help="write nothing; print what would change"
    )
    sync.add_argument(
        "--force",
        action="store_true",
        help="run even if docs/ or the manifest have uncommitted changes",
    )
    sync.add_argument(
        "--include-pinned-pages",
        action="store_true",
        help="also move pages that carry their own pin (e.g. PR deep dives)",
    )
    sync.add_argument(
        "--no-fetch", action="store_true", help="do not fetch; use the clone as it is"
    )
    sync.add_argument(
        "--report-dir",
        type=Path,
        default=Path(".cache/reports"),
        metavar="DIR",
        help="where drift reports go (default: .cache/reports)",
    )
    sync.add_argument("--manifest", type=Path, metavar="FILE")


def run_sync(args: argparse.Namespace) -> int:
    from generator.sync import run
    from generator.sync.journal import Journal, journal_path

    manifest = load_manifest(args.manifest)
    names = args.names or list(manifest.upstreams)
    manifest.check_known(names)
    if args.to and len(names) != 1:
        raise ConfigError("--to needs exactly one upstream name")
    journal = None
    if not args.dry_run:
        # A run killed half-way left its journal: clean up after it, and accept exactly the
        # files it wrote, so that running again finishes its job without --force.
        journal = Journal.load(journal_path(manifest.root))
        try:
            journal.resume()
        except OSError as error:
            return _write_failed(Path(error.filename or journal.path), error)
    # (A dry run reads an interrupted sync's journal without resuming it: the files it wrote
    # are no uncommitted changes to the real run, which accepts them.)
    refusal = (
        None
        if args.force
        else _refusal(manifest, journal or Journal.load(journal_path(manifest.root)))
    )
    if refusal is not None and not args.dry_run:
        raise refusal
    if journal is not None and journal.files:
        print(f"finishing an interrupted sync ({len(journal.files)} files already written)")
    try:
        _sync_all(args, manifest, names, journal, ProgressLine())
        if refusal is not None:  # what the dry run shows, the real run would not do yet
            print(f"note: without --dry-run, sync would stop: {refusal.render()}", file=sys.stderr)
    except run.WriteFailed as failure:
        return _write_failed(failure.path, failure.error, failure)
    except BrokenPipeError:
        # The reader of the output went away (`kb sync | head`): no file failed. The journal
        # stays, and the next run finishes what this one had started writing.
        raise
    except OSError as error:
        return _write_failed(Path(error.filename or manifest.root), error)
    if journal is not None:
        try:
            journal.finish()
        except OSError as error:  # the work is done; only the next run's check is stricter
            log.warning("could not remove the sync journal %s: %s", journal.path, error)
    return EXIT_OK


def _refusal(manifest: Manifest, journal: Journal | None) -> ConfigError | None:
    """Why sync will not rewrite the pages yet: uncommitted changes to them or to the
    manifest, or a knowledge base that git does not track (so none can be ruled out)."""
    from generator.sync import run

    try:
        dirty = run.dirty_paths(manifest.root, [manifest.root / "docs", manifest.path], journal)
    except ConfigError as error:
        return error
    if not dirty:
        return None
    return ConfigError(
        "uncommitted changes in " + ", ".join(dirty[:5]) + (" ..." if len(dirty) > 5 else ""),
        hint="commit or stash them first (sync rewrites pages), or pass --force",
    )


def _sync_all(args, manifest, names, journal, progress) -> None:  # type: ignore[no-untyped-def]
    from generator.refs.resolve import Resolver
    from generator.sync import report, run
    from generator.upstream.clones import fetch_upstream
    from generator.upstream.manifest import load_manifest as reload_manifest

    # A reference that resolves to no single file may be any upstream's: each plan lists it,
    # and it is said once, under the first.
    listed: dict[tuple[str, int, int], str] = {}
    try:
        for name in names:
            upstream = manifest.upstreams[name]
            if not args.no_fetch:
                fetch_upstream(manifest, upstream, notify=progress.show)
            resolver = Resolver(manifest)
            try:
                store = resolver.store(upstream)
                revision = args.to or upstream.branch
                target = store.resolve_given(revision)
            finally:
                resolver.close()
            if target is None:
                raise ConfigError(
                    f"'{revision}' is not a commit of '{name}'",
                    hint=f"check the name, or fetch: kb upstreams fetch {name}",
                )
            plan = run.plan_sync(
                manifest,
                name,
                target,
                include_pinned_pages=args.include_pinned_pages,
                notify=progress.show,
            )
            progress.done()
            if plan.unreadable and not args.dry_run:
                # Left as they are, their line numbers would be checked at the new pin once
                # someone mends them, and could pass there while pointing at other code.
                raise ConfigError(
                    f"{plural(len(plan.unreadable), 'page')} cannot be read, so sync cannot "
                    "re-anchor their references (nothing was written):\n  "
                    + "\n  ".join(plan.unreadable[:10])
                    + ("\n  ..." if len(plan.unreadable) > 10 else ""),
                    hint="fix them (kb verify says what is wrong) or move them out of the docs, "
                    "then run the same sync again",
                )
            unresolved = [r for r in plan.unresolved if (r.page, r.line, r.column) not in listed]
            _print_sync_summary(plan, args.dry_run, unresolved, listed)
            listed.update({(r.page, r.line, r.column): name for r in unresolved})
            if args.dry_run:
                for drift in plan.drifts:
                    if drift.new_text:
                        # A table's range cell says nothing of the file its path cell names.
                        new_path = drift.drift.new_path
                        elsewhere = new_path and new_path != drift.drift.old_path
                        file = (
                            f" (in {new_path})"
                            if elsewhere and new_path not in drift.new_text
                            else ""
                        )
                        print(
                            f"  {drift.page}:{drift.line}:{drift.column}: {drift.text} -> "
                            f"{drift.new_text}{file}"
                        )
                    elif drift.drift.status.value not in ("unchanged", "moved"):
                        print(
                            f"  {drift.page}:{drift.line}:{drift.column}: {drift.text}: "
                            f"{drift.drift.status} ({drift.drift.reason})"
                        )
                for ref in unresolved:
                    print(
                        f"  {ref.page}:{ref.line}:{ref.column}: {ref.text}: not resolved "
                        f"({ref.reason})"
                    )
                for unreadable in plan.unreadable:
                    print(f"  {unreadable}: cannot be read; sync would refuse to run")
                continue
            writes = run.page_writes(plan)
            left = report.reports_left_by(journal, plan, args.report_dir) if journal else []
            reports = [] if left else report.report_files(plan, args.report_dir)
            result = run.apply_sync(
                plan, manifest, writes, reports, notify=progress.show, journal=journal
            )
            progress.done()
            if not plan.pages and not result.pin_moved:
                print(f"  already at {target[:12]}: nothing to do")
            else:
                print(
                    f"  wrote {plural(len(result.pages_written), 'page')}; pin "
                    + ("moved to " if result.pin_moved else "already at ")
                    + target[:12]
                )
            if result.report_paths or left:
                markdown, data = result.report_paths or left
                finished = " (written by the interrupted run: it covers every page)" if left else ""
                print(f"  drift report: {markdown}{finished} (JSON: {data})")
            manifest = reload_manifest(manifest.path)
    finally:
        progress.done()


_READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)


def _write_failed(path: Path, error: OSError, failure: object | None = None) -> int:
    """Say which file could not be written, why, what state everything is in and what to do."""
    from generator.sync.run import WriteFailed

    reason = error.strerror or str(error)
    if isinstance(failure, WriteFailed):
        print(f"error: could not write {shown(path)}: {reason}", file=sys.stderr)
        print(
            f"  {failure.upstream}: {failure.written} of {plural(failure.total, 'page')} written "
            "(every page is either fully old or fully new); the pin "
            + ("moved" if failure.pin_moved else "has not moved"),
            file=sys.stderr,
        )
    else:
        print(f"error: {shown(path)}: {reason}", file=sys.stderr)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        hint = "free some disk space, then run the same sync again to finish (no --force needed)"
    elif error.errno in _READ_ONLY:
        hint = (
            f"make {shown(path if path.is_dir() else path.parent)} writable (it is read-only), "
            "then run the same sync again to finish (no --force needed)"
        )
    else:
        hint = "fix the cause, then run the same sync again to finish (no --force needed)"
    print(f"  hint: {hint}", file=sys.stderr)
    return EXIT_FAILED


def _print_sync_summary(plan, dry_run: bool, unresolved, listed) -> None:  # type: ignore[no-untyped-def]
    counts = plan.counts()
    parts = ", ".join(
        f"{counts[key]} {key}"
        for key in (
            "unchanged",
            "moved",
            "changed",
            "deleted",
            "ambiguous",
            "was-broken",
            "relocated",
        )
        if counts[key]
    )
    verb = "would re-anchor" if dry_run else "re-anchored"
    # Pages with pins of their own (--include-pinned-pages) move from those, not the manifest's.
    olds = list(dict.fromkeys(page.old for page in plan.pages)) or [plan.old]
    if len(olds) > 3:
        source = f"{len(olds)} commits"
    else:
        source = ", ".join(old[:7] for old in olds)
    print(
        f"{plan.upstream.name}: {source} -> {plan.target[:7]}: {verb} "
        f"{plural(len(plan.drifts), 'reference')} on {plural(len(plan.pages), 'page')}"
        + (f" ({parts})" if parts else "")
    )
    if unresolved:
        print(
            f"  {plural(len(unresolved), 'reference')} resolved to no single file at "
            f"{plan.old[:7]} and were left as written ({plan.unresolved_summary(unresolved)}; "
            "listed in the drift report)"
        )
    said = sorted(
        {listed[key] for r in plan.unresolved if (key := (r.page, r.line, r.column)) in listed}
    )
    if said:
        again = len(plan.unresolved) - len(unresolved)
        print(
            f"  {plural(again, 'reference')} that resolved to no single file, listed under "
            f"{', '.join(said)} above, may be this upstream's too: left as written"
        )
    if plan.skipped_pinned:
        print(
            f"  left {plural(len(plan.skipped_pinned), 'page')} with their own pin alone "
            "(--include-pinned-pages moves them)"
        )


HANDLERS = {"sync": run_sync}
