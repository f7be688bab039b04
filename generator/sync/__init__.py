"""Moving pins: following cited code through upstream history and rewriting references.

- `reanchor`: where the cited lines went between two commits (moved, changed, deleted, ...);
- `run`: one sync of an upstream: plan, atomic page writes, held references, the pin's move;
- `report`: the drift report, Markdown and JSON.
"""
