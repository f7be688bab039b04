"""Generate and verify code-analysis knowledge bases pinned to upstream commits.

The library API the CLI, the scripts, the site build and the tests share::

    from generator import verify
    report = verify(["docs"])            # a Report: pages, refs, links, findings
    report.exit_code(strict=False)
"""

from generator.kb.pages import Page, read_page, render_page, write_page
from generator.model import CodeRef, Finding, Link, RefForm, ResolvedRef, Severity, Upstream
from generator.upstream.manifest import ConfigError, Manifest, load_manifest
from generator.verification.pipeline import Report, Verifier, collect, verify

__version__ = "0.1.0"

__all__ = [
    "CodeRef",
    "ConfigError",
    "Finding",
    "Link",
    "Manifest",
    "Page",
    "RefForm",
    "Report",
    "ResolvedRef",
    "Severity",
    "Upstream",
    "Verifier",
    "collect",
    "load_manifest",
    "read_page",
    "render_page",
    "verify",
    "write_page",
]
