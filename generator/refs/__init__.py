"""What a page claims and whether it holds: references and links, found and resolved.

- `extract/`: code references, links, headings and the page's Markdown layout, from its text;
- `resolve`: each reference to an upstream, commit and path, and its file, range and symbol checks;
- `linkcheck`: relative links between pages and their ``#anchors``;
- `slugs`: GitHub's heading anchors, shared by the verifier and the site.
"""
