"""The manifest: every configuration mistake is a clear error naming the file, line and key."""

from __future__ import annotations

import pytest

from generator.upstream.manifest import ConfigError, load_manifest

SHA = "0123456789abcdef0123456789abcdef01234567"


def load(tmp_path, text: str):
    path = tmp_path / "upstreams.yaml"
    path.write_text(text, "utf-8")
    return load_manifest(path)


def error_of(tmp_path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        load(tmp_path, text)
    return caught.value


def test_valid_manifest_with_defaults(tmp_path):
    manifest = load(
        tmp_path,
        f"upstreams:\n  slime:\n    url: https://github.com/THUDM/slime.git\n    pin: {SHA}\n"
        f"  pytorch:\n    url: git@github.com:pytorch/pytorch.git\n    pin: {SHA}\n"
        "    prefixes: [torch/, ./caffe2]\n    branch: viable/strict\n",
    )
    slime, pytorch = manifest.upstreams["slime"], manifest.upstreams["pytorch"]
    assert slime.prefixes == ("slime/",)
    assert slime.branch == "main"
    assert slime.web_url == "https://github.com/THUDM/slime"
    assert slime.github_slug == "thudm/slime"
    assert pytorch.prefixes == ("torch/", "caffe2/")
    assert pytorch.github_slug == "pytorch/pytorch"
    assert slime.clone_dir == tmp_path / ".cache/upstreams/slime"


@pytest.mark.parametrize(
    ("text", "line", "key", "message", "hint"),
    [
        ("upstreams:\n  a:\n    url: x\n    pin: [\n", 5, None, "not valid YAML", None),
        (
            f"upstreams:\n  a:\n    url: x\n    pin: {SHA}\n    pins: y\n",
            5,
            "upstreams.a",
            "unknown key 'pins'",
            "did you mean 'pin'?",
        ),
        (
            "upstreams:\n  a:\n    url: x\n    pin: 12ab\n",
            4,
            "upstreams.a.pin",
            "not a full 40-character",
            "rev-parse",
        ),
        (
            "upstreams:\n  a:\n    url: x\n",
            3,
            "upstreams.a",
            "missing required key 'pin'",
            "full commit SHA",
        ),
        (
            "upstream:\n  a: {}\n",
            1,
            "upstream",
            "unknown key 'upstream'",
            "did you mean 'upstreams'?",
        ),
        ("cache_dir: c\n", 1, None, "missing key 'upstreams'", None),
        ("upstreams: []\n", 1, "upstreams", "expected a mapping", None),
        (
            f"upstreams:\n  a:\n    url: x\n    pin: {SHA}\n  a:\n    url: y\n    pin: {SHA}\n",
            5,
            "upstreams",
            "duplicate key 'a'",
            None,
        ),
        (
            f"upstreams:\n  a:\n    url: x\n    pin: {SHA}\n  b:\n    url: y\n    pin: {SHA}\n"
            "    prefixes: [a/]\n",
            8,
            "upstreams.b.prefixes",
            "claimed by 'a' and 'b'",
            None,
        ),
        ("", None, None, "the manifest is empty", None),
        (
            f"upstreams:\n  a:\n    url:\n    pin: {SHA}\n",
            3,
            "upstreams.a.url",
            "expected a string, found nothing",
            None,
        ),
    ],
    ids=[
        "yaml",
        "unknown-key",
        "short-pin",
        "missing-pin",
        "top-typo",
        "no-upstreams",
        "not-mapping",
        "duplicate",
        "prefix-clash",
        "empty",
        "null-url",
    ],
)
def test_manifest_errors(tmp_path, text, line, key, message, hint):
    error = error_of(tmp_path, text)
    assert error.file == str(tmp_path / "upstreams.yaml") or error.file == "upstreams.yaml"
    assert error.line == line
    assert error.key == key
    assert message in error.message
    if hint:
        assert hint in (error.hint or "")
    rendered = error.render()
    assert rendered.startswith(f"{error.file}:{line}: " if line else f"{error.file}: ")


def test_missing_manifest_file(tmp_path):
    with pytest.raises(ConfigError, match="no such file"):
        load_manifest(tmp_path / "upstreams.yaml")
