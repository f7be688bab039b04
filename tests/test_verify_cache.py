"""The verification cache: a warm run reports exactly what a fresh one does, and anything a page's
verdicts depend on makes its pages verified again."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import pickle
import shutil
import stat
import subprocess
from pathlib import Path

from generator.upstream.gitbuild import RepoBuilder, run_git
from generator.upstream.manifest import load_manifest
from generator.verification.cache import (
    CACHE_DIRECTORY,
    KEY_NAME,
    VerifyCache,
    program_fingerprint,
    user_key,
)
from generator.verification.pipeline import PARALLEL_MINIMUM_PAGES, Report, verify
from generator.verification.report import report_json
from tests.conftest import KB
from tests.test_verify import build_pages


def cache_files(kb: KB) -> list[Path]:
    return sorted((kb.root / "cache" / CACHE_DIRECTORY).glob("*/*.pickle"))


def listing(report: Report) -> dict:
    """The report as `--format json --list-refs` prints it, with every reference's findings."""
    data = report_json(report, list_refs=True)
    data["ref_findings"] = [[f.message for f in resolved.findings] for resolved in report.refs]
    return data


def fresh(kb: KB) -> dict:
    return listing(kb.verify(workers=1))


def test_warm_run_reports_what_a_fresh_run_does_without_reading_a_blob(lib_kb):
    build_pages(lib_kb, 40)  # every kind of reference, link, frontmatter and an undecodable page
    expected = fresh(lib_kb)
    assert not cache_files(lib_kb), "a run without the cache writes none"

    first = lib_kb.verify(cache=True)
    assert listing(first) == expected
    assert first.blob_reads > 0
    assert cache_files(lib_kb)

    warm = lib_kb.verify(cache=True)
    assert listing(warm) == expected
    assert warm.blob_reads == 0, "every page comes from the cache"
    assert {
        "page-encoding",
        "range-outside-file",
        "anchor-missing",
        "ref-needs-review",
        "footnote-undefined",
    } <= {finding.check for finding in warm.findings}


def test_an_edited_page_is_verified_again_and_the_others_are_not(lib_kb):
    lib_kb.page("a.md", "# A\n\n`alpha()` (lib/core.py:6-7)\n")
    lib_kb.page("b.md", "# B\n\nlib/util.py:1-40\n")
    lib_kb.verify(cache=True)

    lib_kb.page("a.md", "# A\n\n`alpha()` (lib/core.py:6-7) and lib/core.py:99\n")
    warm = lib_kb.verify(cache=True)
    assert listing(warm) == fresh(lib_kb)
    assert [(f.page, f.check) for f in warm.findings] == [("docs/a.md", "range-outside-file")]
    assert warm.blob_reads == 1, "only a.md's file is read: b.md comes from the cache"


def test_links_of_an_unchanged_page_are_checked_again(lib_kb):
    lib_kb.page("a.md", "# A\n\n[setup](b.md#setup) and [c](c.md)\n")
    lib_kb.page("b.md", "# B\n\n## Setup\n")
    lib_kb.page("c.md", "# C\n")
    assert lib_kb.verify(cache=True).findings == []

    lib_kb.page("b.md", "# B\n\n## Installation\n")  # a.md is unchanged, its link is broken now
    (lib_kb.docs / "c.md").unlink()
    warm = lib_kb.verify(cache=True)
    assert listing(warm) == fresh(lib_kb)
    assert [(f.page, f.check) for f in warm.findings] == [
        ("docs/a.md", "anchor-missing"),
        ("docs/a.md", "link-missing"),
    ]


def test_a_new_link_into_a_cached_page_is_checked_against_its_headings(lib_kb):
    """The first run caches b.md while no link asks for its anchors; the next finds them from
    b.md's text, which it does not verify again."""
    lib_kb.page("a.md", "# A\n\nNo links yet.\n")
    lib_kb.page("b.md", "# B\n\n## Setup {#install}\n\n## 配置说明\n")
    assert lib_kb.verify(cache=True).findings == []

    lib_kb.page("a.md", "# A\n\n[i](b.md#install), [c](b.md#配置说明), [gone](b.md#setup)\n")
    warm = lib_kb.verify(cache=True)
    assert listing(warm) == fresh(lib_kb)
    assert [(f.page, f.check, f.text) for f in warm.findings] == [
        ("docs/a.md", "anchor-missing", "b.md#setup")
    ]


def test_a_new_pin_verifies_every_page_again(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:6-7 and lib/renamed.py:1\n")
    assert lib_kb.verify(cache=True).findings == []

    first = run_git(lib_kb.root / "cache" / "lib", "rev-parse", f"{lib_kb.pin}~1").strip()  # type: ignore[attr-defined]
    lib_kb.upstreams["lib"]["pin"] = first
    lib_kb.write_manifest()
    warm = lib_kb.verify(cache=True)
    assert listing(warm) == fresh(lib_kb)
    assert [f.check for f in warm.findings] == ["file-missing", "file-missing"]
    assert "'lib/core.py' does not exist" in warm.findings[0].message


def test_a_fetch_into_a_clone_verifies_every_page_again(kb, tmp_path):
    """A permalink to a commit the clone lacks is an error until a fetch brings the commit."""
    remote = RepoBuilder.init(tmp_path / "remote")
    pin = remote.commit({"lib/core.py": "def alpha():\n    return 1\n"}, "Add core")
    later = remote.commit({"lib/core.py": "def alpha():\n    return 2\n"}, "Change core")
    run_git(remote.path, "branch", "-f", "next", later)
    run_git(remote.path, "reset", "-q", "--hard", pin)
    clone = kb.root / "cache" / "lib"
    subprocess.run(
        # --no-local: objects travel as a fetch sends them, so the clone lacks `later`.
        ["git", "clone", "-q", "--no-local", "--single-branch", str(remote.path), str(clone)],
        check=True,
    )
    kb.upstreams["lib"] = {
        "url": str(remote.path),
        "branch": "main",
        "pin": pin,
        "prefixes": ["lib/"],
        "web_url": "https://github.com/acme/lib",
    }
    kb.write_manifest()
    kb.page("a.md", f"# A\n\nhttps://github.com/acme/lib/blob/{later}/lib/core.py#L1-L2\n")
    assert [f.check for f in kb.verify(cache=True).findings] == ["commit-missing"]

    run_git(clone, "fetch", "-q", "origin", "next")
    warm = kb.verify(cache=True)
    assert warm.findings == []
    assert listing(warm) == fresh(kb)


def test_a_changed_program_is_a_new_fingerprint(tmp_path):
    package = tmp_path / "package"
    (package / "sub").mkdir(parents=True)
    (package / "checks.py").write_text("LIMIT = 1\n", "utf-8")
    (package / "sub" / "refs.py").write_text("FORMS = ()\n", "utf-8")
    before = program_fingerprint(package)
    assert program_fingerprint(package) == before
    (package / "sub" / "refs.py").write_text("FORMS = ('path',)\n", "utf-8")
    assert program_fingerprint(package) != before


def test_pages_shared_with_a_forked_process_mix_with_pages_from_the_cache(lib_kb):
    count = PARALLEL_MINIMUM_PAGES * 2 + 20
    build_pages(lib_kb, count)
    lib_kb.verify(cache=True, workers=2)
    # Edit every other page: more than enough for a second process, between cached pages.
    for number in range(0, count, 2):
        page = lib_kb.docs / f"part{number % 3}" / f"page_{number}.md"
        page.write_bytes(page.read_bytes() + b"\nlib/core.py:99 and [a](#intro)\n")
    warm = lib_kb.verify(cache=True, workers=2)
    assert listing(warm) == fresh(lib_kb)
    assert listing(lib_kb.verify(cache=True, workers=2)) == fresh(lib_kb)


def test_a_damaged_cache_is_ignored_and_written_anew(lib_kb, caplog):
    lib_kb.page("a.md", "# A\n\nlib/core.py:99\n")
    expected = fresh(lib_kb)
    lib_kb.verify(cache=True)
    (cache,) = cache_files(lib_kb)  # one page: one file of the folder
    cache.write_bytes(b"not a pickle at all")
    with caplog.at_level(logging.WARNING):
        report = lib_kb.verify(cache=True)
    assert listing(report) == expected
    assert "ignoring the verification cache" in caplog.text
    again = lib_kb.verify(cache=True)
    assert listing(again) == expected
    assert again.blob_reads == 0, "the cache was written anew"


def test_a_cache_that_cannot_be_written_costs_nothing_but_speed(lib_kb, caplog):
    lib_kb.page("a.md", "# A\n\nlib/core.py:99\n")
    expected = fresh(lib_kb)
    (lib_kb.root / "cache" / CACHE_DIRECTORY).write_text("a file where the folder goes", "utf-8")
    with caplog.at_level(logging.WARNING):
        report = lib_kb.verify(cache=True)
    assert listing(report) == expected
    assert "could not write the verification cache" in caplog.text
    assert (lib_kb.root / "cache" / CACHE_DIRECTORY).read_text("utf-8") == (
        "a file where the folder goes"
    )


def test_a_run_from_another_folder_keeps_the_entries_of_this_one(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:6\n")
    lib_kb.verify(cache=True)  # from the knowledge base's root: docs/a.md
    cwd = Path.cwd()
    os.chdir(lib_kb.docs)
    try:
        elsewhere = verify(["a.md"], cache=True)  # the same page, as a.md
    finally:
        os.chdir(cwd)
    assert elsewhere.blob_reads == 1, "another name is another entry"
    assert lib_kb.verify(cache=True).blob_reads == 0, "and the first one is still there"


def test_deleted_pages_leave_the_cache(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:6\n")
    lib_kb.page("b.md", "# B\n\nlib/core.py:7\n")
    lib_kb.verify(cache=True)
    (lib_kb.docs / "b.md").unlink()
    lib_kb.page("a.md", "# A\n\nlib/core.py:8\n")  # a change, so the cache is written again
    lib_kb.verify(cache=True)
    manifest = load_manifest(lib_kb.root / "upstreams.yaml")
    cache = VerifyCache.for_docs(manifest, lib_kb.docs)
    assert cache is not None
    cache.load()
    assert cache.loaded == 1


def test_cli_uses_the_cache_unless_told_not_to(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:99\n")
    plain = lib_kb.cli("verify", "docs", "--no-cache", "--format", "json")
    assert plain.returncode == 1
    assert not (lib_kb.root / "cache" / CACHE_DIRECTORY).exists()
    cached = lib_kb.cli("verify", "docs", "--format", "json")
    assert cached.returncode == 1
    assert cached.stdout == plain.stdout
    assert len(cache_files(lib_kb)) == 1  # one page: one file of the folder
    again = lib_kb.cli("-v", "verify", "docs", "--format", "json")
    assert again.stdout == plain.stdout
    assert "1 of 1 pages unchanged since they were verified" in again.stderr
    help_text = lib_kb.cli("verify", "--help").stdout
    assert "--no-cache" in help_text


def test_a_missing_clone_is_reported_not_hidden_by_the_cache(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:6\n")
    assert lib_kb.verify(cache=True).findings == []
    shutil.rmtree(lib_kb.root / "cache" / "lib")
    result = lib_kb.cli("verify", "docs", "--format", "json", "--list-refs")
    data = json.loads(result.stdout)
    assert [r["status"] for r in data["refs"]] == ["unchecked"]
    assert [f["check"] for f in data["findings"]] == ["upstream-not-cloned"]


def test_ignored_checks_are_left_out_of_the_report_not_out_of_the_cache(lib_kb):
    lib_kb.page("a.md", "# A\n\nlib/core.py:99 and torch/x.py:1\n")
    quiet = lib_kb.verify(cache=True, ignore=["range-outside-file"])
    assert [f.check for f in quiet.findings] == ["unattributed"]
    assert [f.check for r in quiet.refs for f in r.findings] == ["unattributed"]
    full = lib_kb.verify(cache=True)
    assert full.blob_reads == 0, "the page came from the cache"
    assert [f.check for f in full.findings] == ["range-outside-file", "unattributed"]
    assert listing(full) == fresh(lib_kb)


def test_a_cache_file_this_user_did_not_sign_is_never_unpickled(lib_kb, tmp_path, caplog):
    """Anyone who can write to the repository can put a file where the cache goes."""
    lib_kb.page("a.md", "# A\n\nlib/core.py:99\n")
    expected = fresh(lib_kb)
    lib_kb.verify(cache=True)
    (cache,) = cache_files(lib_kb)
    marker = tmp_path / "unpickled"

    class Planted:
        def __reduce__(self):
            return (Path.touch, (marker,))

    payload = pickle.dumps(Planted())
    signed_with_another_key = hmac.new(b"k" * 32, payload, hashlib.sha256).digest()
    for forged in (payload, cache.read_bytes()[:18] + signed_with_another_key + payload):
        cache.write_bytes(forged)
        with caplog.at_level(logging.WARNING):
            report = lib_kb.verify(cache=True)
        assert not marker.exists()
        assert listing(report) == expected
        assert "it was not written by this user's runs" in caplog.text
    assert lib_kb.verify(cache=True).blob_reads == 0, "the file was written anew, signed"


def test_without_a_key_there_is_no_cache_and_no_error(lib_kb, tmp_path, monkeypatch):
    lib_kb.page("a.md", "# A\n\nlib/core.py:99\n")
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("", "utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(not_a_folder))
    result = lib_kb.cli("verify", "docs")
    assert result.returncode == 1
    assert "error[range-outside-file]" in result.stdout
    assert result.stderr == ""
    assert not (lib_kb.root / "cache" / CACHE_DIRECTORY).exists()


def test_the_key_is_made_once_and_readable_by_its_user_alone(lib_kb, user_cache_home):
    lib_kb.page("a.md", "# A\n\nlib/core.py:6\n")
    lib_kb.verify(cache=True)
    key = user_cache_home / "kb-generator" / KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    made = key.read_bytes()
    assert len(made) == 32
    assert user_key() == made
