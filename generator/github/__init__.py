"""GitHub as a source: the API client, a replay server for recordings, and the sanitiser.

- `client`: pull requests, their files, diffs and review comments, cached and paginated;
- `replay`: recordings made from git and served on 127.0.0.1 in place of the API;
- `sanitize`: everything fetched is untrusted text, made safe before it reaches a page.
"""
