"""Verification: the pipeline that checks a set of pages, its cache, and what it reports.

- `pipeline`: `Verifier` and `verify`, from pages on disk to a `Report`;
- `cache`: what earlier runs found per page, and when it still holds;
- `report`: the text, JSON and GitHub-annotation formats;
- `board`: the spec board, each spec's pages and criteria computed from a report.
"""
