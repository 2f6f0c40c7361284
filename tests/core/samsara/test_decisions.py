"""scars.core.samsara.decisions: the accept rule, placeholders, who decided."""

from __future__ import annotations

import subprocess

import pytest

from scars.core import settings
from scars.core.errors import DecisionRefused
from scars.core.samsara.decisions import (
    ACCEPT_REQUIRED,
    FIELD_LABEL,
    Decision,
    make_decision,
    resolve_user,
    validate_decision,
)

GOOD = {"re_review_signal": "a second writer appears", "owner": "export team", "rationale": "single process today"}


def test_accept_with_all_three_fields_is_valid():
    assert validate_decision("accept", **GOOD) == []


@pytest.mark.parametrize("field", ACCEPT_REQUIRED)
@pytest.mark.parametrize(
    "bad", [None, "", "   ", "n/a", "N/A", "na", "TBD", "todo", "none", "-", "?", "…", "...", "tbd.", " None "]
)
def test_accept_refuses_missing_or_placeholder_field(field, bad):
    fields = dict(GOOD, **{field: bad})
    errors = validate_decision("accept", **fields)
    assert [e.field for e in errors] == [field]
    assert FIELD_LABEL[field] in errors[0].message


def test_accept_lists_every_missing_field():
    errors = validate_decision("accept")
    assert [e.field for e in errors] == ["re_review_signal", "owner", "rationale"]


def test_fields_of_the_wrong_action_are_refused():
    assert [e.field for e in validate_decision("fix", owner="bob")] == ["owner"]
    assert [e.field for e in validate_decision("accept", reason="x", **GOOD)] == ["reason"]
    assert validate_decision("defer", reason="waiting on the API", revisit_when="v2 ships") == []
    assert validate_decision("defer") == []
    assert [e.field for e in validate_decision("defer", reason="tbd")] == ["reason"]
    assert [e.field for e in validate_decision("frobnicate")] == ["action"]
    assert [e.field for e in validate_decision("fix", colour="red")] == ["colour"]


def test_self_review_is_refused():
    errors = validate_decision("fix", decided_by="Alice", reviewed_by="alice")
    assert [e.field for e in errors] == ["reviewed_by"]
    assert validate_decision("fix", decided_by="alice", reviewed_by="bob") == []


def test_make_decision_strips_and_stamps():
    d = make_decision("ks-1", "accept", decided_by="me", **{k: f"  {v} " for k, v in GOOD.items()})
    assert d.owner == "export team"
    assert d.decided_at[10] == "T" and (d.decided_at.endswith("Z") or d.decided_at[-6] in "+-")
    with pytest.raises(DecisionRefused) as info:
        make_decision("ks-1", "accept", decided_by="me", owner="n/a")
    assert {e.field for e in info.value.errors} == {"re_review_signal", "owner", "rationale"}
    assert "owner" in str(info.value)


def test_decision_dict_roundtrip():
    d = make_decision("sf-1", "defer", decided_by="me", reason="blocked upstream")
    assert Decision.from_dict(d.to_dict()) == d


def test_resolve_user_order(monkeypatch, tmp_path):
    monkeypatch.setenv("SCARS_USER", "env-user")
    assert resolve_user("cli-user") == "cli-user"
    assert resolve_user("  ") == "env-user"
    monkeypatch.delenv("SCARS_USER")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "gitconfig"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.chdir(tmp_path)
    assert resolve_user() == "env-user"  # the environment is read once: still the first snapshot
    settings.load()  # a new command
    subprocess.run(["git", "config", "--file", str(tmp_path / "gitconfig"), "user.name", "Git Person"], check=True)
    assert resolve_user() == "Git Person"
    (tmp_path / "gitconfig").write_text("")
    monkeypatch.setenv("USER", "login-name")
    monkeypatch.setenv("LOGNAME", "login-name")
    settings.load()
    assert resolve_user() == "login-name"


@pytest.mark.parametrize(
    ("watch", "message"),
    [
        ("path-changed: src/export.py", None),
        ("recurs", None),
        ("pattern: retry in src/*.py", None),
        ({"spec": "path-changed: src/export.py", "base": "abc123"}, None),
        ("", None),  # no watch
        (3, "must be text or a mapping"),
        (["recurs"], "must be text or a mapping"),
        ("tbd", "'tbd' is a placeholder; say something a person can act on"),
        ("frobnicate: x", "unknown watch 'frobnicate: x'; use one of: "),
        ({"x": 1}, "unknown watch mapping; use one of: "),
        ("a\nb", "a watch is one line"),
        ("pattern: retr(y in src/*.py", "invalid regex 'retr(y': "),
    ],
    ids=repr,
)
def test_an_accepts_watch_must_parse(watch, message):
    errors = validate_decision("accept", watch=watch, **GOOD)
    if message is None:
        assert errors == []
    else:
        assert [e.field for e in errors] == ["watch"] and errors[0].message.startswith(message)


def test_a_watch_belongs_to_an_accept_only():
    assert [(e.field, e.message) for e in validate_decision("fix", watch="recurs")] == [
        ("watch", "applies only to accept, not to fix")
    ]


@pytest.mark.parametrize("action", ["fix", "defer"])
@pytest.mark.parametrize(
    ("outcome", "valid"),
    [("retry_with_context", True), ("reclassify_as_defer", True), (None, True), ("retry", False), ("", False)],
)
def test_a_blocked_outcome_is_one_of_the_two(action, outcome, valid):
    errors = validate_decision(action, blocked_outcome=outcome)
    assert errors == ([] if valid else [errors[0]])
    if not valid:
        assert (errors[0].field, errors[0].message) == (
            "blocked_outcome",
            "must be one of retry_with_context, reclassify_as_defer",
        )
