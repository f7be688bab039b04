"""Extraction stage: find code references, links and headings in a page's text."""

from generator.extract.links import extract_headings, extract_links
from generator.extract.markdown import MarkdownLayout, scan
from generator.extract.refs import ExtractOptions, extract_refs

__all__ = [
    "ExtractOptions",
    "MarkdownLayout",
    "extract_headings",
    "extract_links",
    "extract_refs",
    "scan",
]
