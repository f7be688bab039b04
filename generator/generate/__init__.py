"""Making pages: drafted from pull requests and sources, imported from elsewhere, and the demo.

- `pr`, `review`, `source`: page drafts, and `prompt`: context packs for an LLM;
- `ingest`: analyses written elsewhere, made pages of the knowledge base;
- `demo`: the embedded demo's upstreams, recorded pull request and pages.
"""
