"""What upstream holds: the manifest of upstreams and their pins, clones and their objects.

- `manifest`: ``upstreams.yaml``, validated with the file, line and key of every error;
- `gitstore`: blobs and trees at a commit, read from a clone's object database;
- `clones`: cloning and fetching the upstreams into the cache;
- `gitbuild`: reproducible git repositories (fixed authors and dates), for the demo and tests.
"""
