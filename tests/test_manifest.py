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
        ("governance: harsh\nupstreams: {}\n", 1, "governance", "not a governance mode", "strict"),
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
        "governance-mode",
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


def _upstream(spec: str, name: str = "a", top: str = "") -> str:
    return f"{top}upstreams:\n  {name}:\n    url: https://example.org/a.git\n    pin: {SHA}\n{spec}"


@pytest.mark.parametrize(
    ("text", "key", "message"),
    [
        (
            _upstream("    web_url: javascript:alert(1)//\n"),
            "upstreams.a.web_url",
            "is not an http or https address ('javascript:')",
        ),
        (
            _upstream("    web_url: JavaScript:alert(1)\n"),
            "upstreams.a.web_url",
            "is not an http or https address ('javascript:')",
        ),
        (
            _upstream("    web_url: data:text/html,x\n"),
            "upstreams.a.web_url",
            "is not an http or https address ('data:')",
        ),
        (_upstream("    web_url: example.org/a\n"), "upstreams.a.web_url", "(no scheme)"),
        (_upstream("    web_url: https:///a\n"), "upstreams.a.web_url", "has no host"),
        (
            _upstream("    web_url: 'https://example.org/a\"onmouseover=x'\n"),
            "upstreams.a.web_url",
            "contains '\"', which has no place in a link",
        ),
        (
            _upstream('    web_url: "https://example.org/a\\u202e"\n'),
            "upstreams.a.web_url",
            "contains '\\u202e'",
        ),
        (
            f"upstreams:\n  a:\n    url: 'https://github.com/o/r<script>'\n    pin: {SHA}\n",
            "upstreams.a.url",
            "contains '<'",
        ),
        (
            _upstream("    code_url: 'javascript:alert(1)//{commit}/{path}'\n"),
            "upstreams.a.code_url",
            "makes links like 'javascript:alert(1)//",
        ),
        (
            _upstream("    web_url: https://h.org/a\n    code_url: '{path}/{commit}'\n"),
            "upstreams.a.code_url",
            "makes links like 'dir/file.py/0000",
        ),
        (
            _upstream("    code_url: 'https://h.org/{commit}/{path}#L{start:>30000000}'\n"),
            "upstreams.a.code_url",
            "placeholder {start:>30000000} has a format spec or conversion; write {start}",
        ),
        (
            _upstream("    code_url: 'https://h.org/{commit}/{path!r}'\n"),
            "upstreams.a.code_url",
            "placeholder {path!r} has a format spec or conversion; write {path}",
        ),
        (
            _upstream("    code_url: 'https://h.org/{commit}/{path}#{start:{end}}'\n"),
            "upstreams.a.code_url",
            "placeholder {start:{end}} has a format spec",
        ),
        (
            _upstream("    code_url: 'https://h.org/{commit.__class__}/{path}'\n"),
            "upstreams.a.code_url",
            "unknown placeholder {commit.__class__}",
        ),
        (
            _upstream("    code_url: 'https://h.org/{0}/{commit}/{path}'\n"),
            "upstreams.a.code_url",
            "unknown placeholder {0}",
        ),
        (
            _upstream("    code_url: 'https://h.org/{commit}/{path'\n"),
            "upstreams.a.code_url",
            "not a valid pattern",
        ),
        (
            _upstream("    code_url: 'https://h.org/{path}'\n"),
            "upstreams.a.code_url",
            "the pattern needs {commit} and {path}",
        ),
        (_upstream("", name="'../x'"), "upstreams", "'../x' is not a valid upstream name"),
        (_upstream("", name="a/b"), "upstreams", "'a/b' is not a valid upstream name"),
        (_upstream("", name='"ok\\n"'), "upstreams", "is not a valid upstream name"),
        (_upstream("", name="'..'"), "upstreams", "'..' is not a valid upstream name"),
        (_upstream("", top="cache_dir: .\n"), "cache_dir", "among the knowledge base's own files"),
        (
            _upstream("", top="cache_dir: docs/x\n"),
            "cache_dir",
            "among the knowledge base's own pages",
        ),
        (_upstream("", top='cache_dir: "a\\0b"\n'), "cache_dir", "no control characters"),
        (
            f"upstreams:\n  a:\n    url: --upload-pack=touch /tmp/x\n    pin: {SHA}\n",
            "upstreams.a.url",
            "starts with '-', which git would read as an option",
        ),
        (
            f"upstreams:\n  a:\n    url: 'ext::sh -c touch% /tmp/x'\n    pin: {SHA}\n",
            "upstreams.a.url",
            "uses git's ext:: transport",
        ),
    ],
)
def test_values_that_end_up_in_links_or_paths_are_checked(tmp_path, text, key, message):
    error = error_of(tmp_path, text)
    assert error.key == key, error.render()
    assert message in error.message, error.render()
    assert error.line is not None and error.file is not None


def test_safe_web_and_code_urls_load(tmp_path):
    manifest = load(
        tmp_path,
        _upstream(
            "    web_url: https://gitlab.example.org/group/a/\n"
            "    code_url: '{web_url}/-/{kind}/{commit}/{path}#L{start}-{end}'\n",
            top="cache_dir: ../clones\n",
        )
        + f"  b:\n    url: ./local/repo\n    pin: {SHA}\n    code_url: 'http://h.org/{{commit}}/{{path}}'\n",
    )
    a = manifest.upstreams["a"]
    assert a.web_url == "https://gitlab.example.org/group/a"
    assert a.code_url == "{web_url}/-/{kind}/{commit}/{path}#L{start}-{end}"
    assert manifest.cache_dir == tmp_path / "../clones"


@pytest.mark.parametrize("text", ["upstreams:\n", "upstreams: {}\n"])
def test_a_knowledge_base_just_made_declares_no_upstream_yet(tmp_path, text):
    path = tmp_path / "upstreams.yaml"
    path.write_text("# made by kb init\n" + text, "utf-8")
    manifest = load_manifest(path)
    assert manifest.upstreams == {}
    assert manifest.governance == "lenient"
