"""Generation stage: pages drafted from GitHub pull requests and from upstream sources."""
