"""The habits of a maintained project (issue 32): a CHANGELOG in the Keep a Changelog format with
an Unreleased section, a CONTRIBUTING guide whose commands, make targets, files and names exist,
both linked from the README's Development section."""

from __future__ import annotations

import re

from tests.factories import ROOT

KINDS_OF_CHANGE = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def _read(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def test_the_changelog_keeps_a_changelog_with_unreleased_first():
    text = _read("CHANGELOG.md")
    assert text.startswith("# Changelog\n")
    assert "[Keep a Changelog](https://keepachangelog.com/en/1.1.0/)" in text
    versions = re.findall(r"^## (.+)$", text, re.M)
    assert versions and versions[0] == "[Unreleased]"
    for version in versions[1:]:  # a release: ## [1.2.3] - YYYY-MM-DD
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", version), version
    unreleased = text.split("## [Unreleased]\n", 1)[1].split("\n## ", 1)[0]
    kinds = re.findall(r"^### (.+)$", unreleased, re.M)
    assert kinds and all(kind in KINDS_OF_CHANGE for kind in kinds), kinds
    assert len(kinds) == len(set(kinds))
    for section in unreleased.split("\n### ")[1:]:
        assert re.search(r"^- \S", section, re.M), section[:40]  # no empty kind


def _make_targets() -> set[str]:
    return set(re.findall(r"^([a-z][\w-]*):", _read("Makefile"), re.M))


def test_contributing_names_only_what_exists():
    """Every make target, file and binding-level name CONTRIBUTING.md points a contributor at is
    there: the guide breaks loudly when the code it describes moves."""
    text = _read("CONTRIBUTING.md")
    targets = set(re.findall(r"`?make (\w+)", text))
    assert {"setup", "check", "test", "snapshots", "screenshots"} <= targets
    assert targets <= _make_targets(), targets - _make_targets()
    paths = set(re.findall(r"`((?:core|tui|tests|docs|bench|screenshots|constraints|\.ci)/[\w./-]+)`", text))
    paths |= set(re.findall(r"\]\(((?:docs/)?[\w.-]+\.md)\)", text))
    assert len(paths) > 15
    for path in paths:
        if "<" in path:
            continue
        assert (ROOT / path).exists(), path
    for name in (".pre-commit-config.yaml", "constraints/test.txt", ".ci/check", ".ci/run"):
        assert name in text and (ROOT / name).exists(), name
    # The names it tells a contributor to use.
    sources = {
        "core/loops/base.py": ("LoopState",),
        "core/loops/registry.py": ("REGISTRY",),
        "core/loops/system.py": ("class LoopSystem", "class StateFileSystem"),
        "core/gatekit/evidence.py": ("def build_entry",),
        "tui/app/screens/main.py": ("MAIN_BINDINGS", "WRITE_ACTIONS"),
        "tests/tui/app/test_app_keys.py": ("def covers", "def readme_key_table", "test_every_binding_has_a_key_test"),
        "tests/factories.py": ("def wait_until", "def wait_settled"),
        "Makefile": ("--snapshot-update",),
    }
    for path, names in sources.items():
        source = _read(path)
        for name in names:
            assert name in source, (path, name)
    assert "PIP_CONSTRAINT=constraints/test.txt python -m pip install -e '.[test]'" in _read("Makefile")
    assert "PIP_CONSTRAINT=constraints/test.txt python -m pip install -e '.[test]'" in text


def test_the_readme_development_section_links_both():
    readme = _read("README.md")
    development = readme.split("\n## Development\n", 1)[1].split("\n## ", 1)[0]
    for name in ("CONTRIBUTING.md", "CHANGELOG.md"):
        assert f"]({name})" in development and (ROOT / name).is_file(), name
    assert ".pre-commit-config.yaml" in development
