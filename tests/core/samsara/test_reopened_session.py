"""A session's reopened items are the disk's (one rule: ``decisions.reopened_from``), from its own
replay: computed once per replay, nothing read to give them (issue 31)."""

from __future__ import annotations

from scars.core.samsara import decisions
from scars.core.samsara.session import FeatureSession
from tests.factories import app_repo


def test_the_session_gives_what_the_disk_gives(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    root.mkdir()
    fdir = app_repo(root)
    with FeatureSession.open(fdir, user="alice") as s:
        a, b = s.feature.items[0].id, s.feature.items[1].id
        assert s.reopened_now() == {} == decisions.reopened_now(fdir)
        for it in (a, b):
            s.decide(it, "accept", re_review_signal="retries start", owner="bob", rationale="one path today")
            s.reopen(it, cause=f"{it}'s file changed", watch="path-changed: src/*.py")
        assert set(s.reopened_now()) == {a, b}
        assert s.reopened_now() == decisions.reopened_now(fdir)
        memo = s.reopened_now()
        monkeypatch.setattr(decisions, "feature_state", lambda *a, **k: (_ for _ in ()).throw(AssertionError))
        assert s.reopened_now() is memo  # the same replay: not computed again, nothing read
        monkeypatch.undo()
        s.decide(a, "fix")  # decided again: no longer reopened, in the session as on disk
        assert set(s.reopened_now()) == {b} and s.reopened_now() == decisions.reopened_now(fdir)
