"""The published site: a MkDocs plugin and a Markdown extension around the verification core.

- `generator.site.plugin.KnowledgeBasePlugin` (entry point ``knowledge-base``): verifies the pages
  before they are built, links every code reference to the upstream at its pin, computes the
  navigation and the learning-path boxes from frontmatter, serves Mermaid from the site, and
  adds the spec board as a page.
- `generator.site.anchors`: GitHub-compatible heading ids, de-duplicated as GitHub does.
"""
