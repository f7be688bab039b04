"""Formatters: a `Report` as text for people, JSON for machines, annotations for GitHub.

JSON schema (version 1, stable; fields are only ever added)::

    {
      "version": 1,
      "summary": {"pages": int, "refs": int, "links": int, "errors": int, "warnings": int},
      "findings": [{"severity": "error"|"warning", "check": str, "page": str, "line": int,
                    "column": int, "text": str|null, "upstream": str|null, "commit": str|null,
                    "path": str|null, "start": int|null, "end": int|null,
                    "message": str, "suggestion": str|null,
                    "fix": {"path": str, "start": int, "end": int}}, ...],   # fix: when proven
      "refs": [{"page": str, "line": int, "column": int, "text": str, "upstream": str|null,
                "commit": str|null, "path": str|null, "start": int|null, "end": int|null,
                "status": "ok"|"warning"|"error"|"unchecked", "checks": [str, ...],
                "style": "inline"|"table"|"phrase"|"list"|"symbol"}, ...]   # --list-refs
    }
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TextIO

from generator.model import Finding, Severity, printable
from generator.verification.pipeline import Report

if TYPE_CHECKING:  # (--fix loads it when it runs: a plain run does without)
    from generator.verification.fix import FixResult

JSON_SCHEMA_VERSION = 1

_COLOURS = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m"}
_BOLD, _DIM, _RESET = "\x1b[1m", "\x1b[2m", "\x1b[0m"


def format_text(report: Report, colour: bool = False) -> str:
    lines = []
    for finding in report.findings:
        severity = str(finding.severity)
        location = f"{printable(finding.page)}:{finding.line}:{finding.column}:"
        if colour:
            severity = f"{_COLOURS[finding.severity]}{severity}{_RESET}"
            location = f"{_BOLD}{location}{_RESET}"
        lines.append(f"{location} {severity}[{finding.check}] {printable(finding.message)}")
        if finding.suggestion:
            help_text = f"  = help: {printable(finding.suggestion)}"
            lines.append(f"{_DIM}{help_text}{_RESET}" if colour else help_text)
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"


def plural(count: int, word: str) -> str:
    """``1 page``, ``2 pages``."""
    return f"{count} {word}{'' if count == 1 else 's'}"


def summary_line(report: Report) -> str:
    checked = (
        f"checked {plural(report.pages, 'page')}, {plural(len(report.refs), 'code reference')}"
        f" and {plural(report.links, 'link')}"
    )
    if not report.findings:
        return f"{checked}: all good"
    return f"{checked}: {plural(report.errors, 'error')}, {plural(report.warnings, 'warning')}"


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "severity": str(finding.severity),
        "check": finding.check,
        "page": finding.page,
        "line": finding.line,
        "column": finding.column,
        "text": finding.text,
        "upstream": finding.upstream,
        "commit": finding.commit,
        "path": finding.path,
        "start": finding.start,
        "end": finding.end,
        "message": finding.message,
        "suggestion": finding.suggestion,
        **({"fix": finding.fix._asdict()} if finding.fix is not None else {}),
    }


def report_json(report: Report, list_refs: bool = False, lazy: bool = False) -> dict[str, Any]:
    """The report as JSON data (see the schema above). With ``lazy``, the findings and
    references are iterators, made as `write_json_document` writes them."""
    data: dict[str, Any] = {
        "version": JSON_SCHEMA_VERSION,
        "summary": {
            "pages": report.pages,
            "refs": len(report.refs),
            "links": report.links,
            "errors": report.errors,
            "warnings": report.warnings,
        },
        "findings": map(_finding_json, report.findings),
    }
    if list_refs:
        data["refs"] = (
            {
                "page": resolved.ref.page,
                "line": resolved.ref.line,
                "column": resolved.ref.column,
                "text": resolved.ref.text,
                "upstream": resolved.upstream,
                "commit": resolved.commit,
                "path": resolved.path if resolved.path is not None else resolved.ref.path,
                "start": resolved.ref.start,
                "end": resolved.ref.end,
                "status": resolved.status,
                "checks": [finding.check for finding in resolved.findings],
                "style": resolved.ref.style,
            }
            for resolved in report.refs
        )
    if not lazy:
        for key in ("findings", "refs"):
            if key in data:
                data[key] = list(data[key])
    return data


def format_refs(report: Report) -> str:
    """Every reference found, one a line, for people: where it is, as written, where it
    leads and what was found of it (``--list-refs`` in text)."""
    lines = []
    for resolved in report.refs:
        ref = resolved.ref
        path = resolved.path if resolved.path is not None else ref.path
        lines_cited = "" if ref.start is None else f":{ref.start}"
        if ref.end is not None and ref.end != ref.start:
            lines_cited += f"-{ref.end}"
        where = f"{resolved.upstream}@{resolved.commit[:7]} " if resolved.commit else ""
        named = f" {printable(ref.symbol)}" if ref.symbol else ""
        checks = ", ".join(finding.check for finding in resolved.findings)
        lines.append(
            f"{printable(ref.page)}:{ref.line}:{ref.column}: {printable(ref.text)} -> "
            f"{where}{printable(path)}{lines_cited}{named} ({ref.style}): {resolved.status}"
            + (f" ({checks})" if checks else "")
        )
    return "\n".join(lines) + ("\n" if lines else "")


def format_fixes(fixes: FixResult) -> str:
    """One line per rewrite (and per proven fix left alone, with why), then a summary."""
    verb = "would rewrite" if fixes.dry_run else "rewrote"
    lines = [
        f"{r.page}:{r.line}:{r.column}: {verb} {r.before} -> {r.after}"
        + (f" (and its path {r.path_before} -> {r.path_after})" if r.path_after else "")
        for r in fixes.rewrites
    ]
    lines += [
        f"{s.page}:{s.line}:{s.column}: left {s.text} as it is: {s.reason}" for s in fixes.skipped
    ]
    pages = len({r.page for r in fixes.rewrites})
    count = len(fixes.rewrites)
    lines.append(
        f"--fix: {verb} {count} reference{'' if count == 1 else 's'} on "
        f"{pages} page{'' if pages == 1 else 's'}"
        + (f", left {len(fixes.skipped)} for a person" if fixes.skipped else "")
    )
    return "\n".join(lines) + "\n"


def fixes_json(fixes: FixResult) -> dict[str, Any]:
    return {
        "dry_run": fixes.dry_run,
        "rewrites": [
            {
                "page": r.page,
                "line": r.line,
                "column": r.column,
                "before": r.before,
                "after": r.after,
            }
            | ({"path_before": r.path_before, "path_after": r.path_after} if r.path_after else {})
            for r in fixes.rewrites
        ],
        "skipped": [
            {"page": s.page, "line": s.line, "column": s.column, "text": s.text, "reason": s.reason}
            for s in fixes.skipped
        ],
    }


def format_json(report: Report, list_refs: bool = False, fixes: FixResult | None = None) -> str:
    """`report_json` as text: indented down to the lists, and one finding (or reference) per
    line, easy to grep; written by the json module's C encoder, which ``indent`` would turn off
    (a report lists tens of thousands of references). With ``fixes`` (``--fix``), a ``fixes``
    object says what was rewritten."""
    text = io.StringIO()
    write_json(report, text, list_refs, fixes)
    return text.getvalue()


def write_json(
    report: Report, stream: TextIO, list_refs: bool = False, fixes: FixResult | None = None
) -> None:
    """`format_json`, written to ``stream`` a finding at a time: a report of a hundred thousand
    findings is never held as JSON data or text."""
    data = report_json(report, list_refs, lazy=True)
    if fixes is not None:
        data["fixes"] = fixes_json(fixes)
    write_json_document(data, stream)


def json_document(data: dict[str, Any]) -> str:
    """`write_json_document` as text."""
    text = io.StringIO()
    write_json_document(data, text)
    return text.getvalue()


def write_json_document(data: dict[str, Any], stream: TextIO) -> None:
    """``data`` as JSON: each item of a top-level list (or iterator) on a line of its own,
    written by the C encoder (``indent`` would turn it off: seconds and hundreds of megabytes
    for a report of a hundred thousand findings)."""
    stream.write("{\n")
    last = len(data) - 1
    for index, (key, value) in enumerate(data.items()):
        comma = "," if index < last else ""
        if isinstance(value, (list, Iterator)):
            first = True
            for item in value:
                if first:
                    stream.write(f"  {_json_value(key)}: [\n    {_json_value(item)}")
                    first = False
                else:
                    stream.write(f",\n    {_json_value(item)}")
            stream.write(f"  {_json_value(key)}: []{comma}\n" if first else f"\n  ]{comma}\n")
        else:
            stream.write(f"  {_json_value(key)}: {_json_value(value)}{comma}\n")
    stream.write("}\n")


def _json_value(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _escape_data(value: str) -> str:
    """A workflow command's message: its lines joined by GitHub's escaped line break, each line
    `printable` (a line break written as such would end the command, and what follows would be
    read as another)."""
    lines = value.replace("\r\n", "\n").split("\n")
    return "%0A".join(printable(line.replace("%", "%25")) for line in lines)


def _escape_property(value: str) -> str:
    return printable(value.replace("%", "%25")).replace(":", "%3A").replace(",", "%2C")


def format_github(report: Report) -> str:
    """GitHub Actions workflow commands: one ``::error``/``::warning`` annotation per finding."""
    lines = []
    for finding in report.findings:
        message = finding.message
        if finding.suggestion:
            message += f"\nhelp: {finding.suggestion}"
        properties = ",".join(
            [
                f"file={_escape_property(finding.page)}",
                f"line={finding.line}",
                f"col={finding.column}",
                f"title={_escape_property(finding.check)}",
            ]
        )
        lines.append(f"::{finding.severity} {properties}::{_escape_data(message)}")
    lines.append(summary_line(report))
    return "\n".join(lines) + "\n"
