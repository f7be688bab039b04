"""The knowledge base's own structure: pages, their frontmatter, specs and learning paths.

- `pages`: reading and writing pages (frontmatter round trip, atomic writes);
- `paths`: learning paths and prerequisites derived from frontmatter;
- `sections`, `diagrams`: what each page kind must contain (the seed outlines);
- `specs`: LeanSpec governance of pages by specs;
- `scaffold`: new specs and pages from templates (``new``).
"""
