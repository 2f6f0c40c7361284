"""A read-only session asks git for no user it does not use (issue 31: bare `scars` opens every
feature of a repository to list it, and git was asked for the same user.name once per feature)."""

from __future__ import annotations

from scars.core import settings
from scars.core.samsara.session import FeatureSession
from tests.factories import app_repo


def test_a_read_only_session_asks_git_for_no_user_it_does_not_use(tmp_path, monkeypatch):
    asked: list = []
    monkeypatch.delenv("SCARS_USER", raising=False)
    settings.load()
    monkeypatch.setattr("scars.core.samsara.decisions.user_name", lambda: asked.append(1) or "git-name")
    feature = app_repo(tmp_path / "repo")
    with FeatureSession.open(feature, read_only=True) as s:
        assert asked == []  # opened and read without asking
        assert s.user == "git-name" and s.user == "git-name"
        assert asked == [1]  # asked when first used, once
    with FeatureSession.open(feature, read_only=True, user="  alice ") as s:
        assert s.user == "alice"
    with FeatureSession.open(feature) as s:  # a session that records: resolved at its open (its lock)
        assert asked == [1, 1]
        assert s.user == "git-name"
