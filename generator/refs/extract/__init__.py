"""Extraction stage: find code references, links and headings in a page's text."""

from generator.refs.extract.links import extract_headings, extract_links
from generator.refs.extract.markdown import MarkdownLayout, scan
from generator.refs.extract.refs import ExtractOptions, extract_refs

__all__ = [
    "ExtractOptions",
    "MarkdownLayout",
    "extract_headings",
    "extract_links",
    "extract_refs",
    "scan",
]
