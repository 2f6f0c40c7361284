"""The README's Quick start is a promise: CI runs exactly its test command; the Security section
(now in docs/) names the tests of every guarantee."""

from __future__ import annotations

import re

from tests.factories import ROOT


def _quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section)


def test_quick_start_has_exactly_two_commands():
    commands = _quick_start_commands()
    assert len(commands) == 2
    assert "scars demo" in commands[0]
    assert "[test]" in commands[1] and "pytest" in commands[1]


def test_ci_runs_the_readme_test_command():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _quick_start_commands()[1] in ci.splitlines()


def _security_section() -> str:
    """The Security section, moved from the README to docs/ (issue 32)."""
    text = (ROOT / "docs" / "reliability-and-security.md").read_text(encoding="utf-8")
    return text.split("\n## Security\n", 1)[1].split("\n## ", 1)[0]


def test_every_guarantee_of_the_security_section_names_its_tests_and_they_exist():
    """The Security section (docs/reliability-and-security.md) lists what scars guarantees and how each is tested: every
    guarantee (a bold paragraph) names a test file, and every test file it names exists."""
    section = _security_section()
    guarantees = [p for p in section.split("\n\n") if p.startswith("**")]
    assert [p.split("**")[1].split(".")[0] for p in guarantees] == [
        "Writes stay inside the repository",
        "Reads stay inside too",
        "Every command and every gate",
        "Read-only is read-only",
        "An answer lands on what was asked, in the checkout that asked",
        "Who answered is kept; an agent does not answer for a person",
        "Other users of the machine",
        "Text from a repository is shown inert",
    ]
    for paragraph in guarantees:
        assert "`tests/" in paragraph, paragraph[:80]
    named = set(re.findall(r"`(tests/[\w/]+\.py)`", section))
    bare = set(re.findall(r"`(test_\w+\.py)`", section))
    assert named and bare
    for path in named:
        assert (ROOT / path).is_file(), path
    for name in bare:  # named after a path of the same folder: tests/hostile/
        assert (ROOT / "tests" / "hostile" / name).is_file(), name
