"""Decisions an earlier round of iteration-log.yaml recorded are carried over (issue 14 point 1):
shown as what they are, counted as decided, replaced by a decision made in the new round."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from scars.core.samsara.decisions import carried_from_log, current_decisions, describe_carried
from scars.core.samsara.feature import read_feature
from scars.core.samsara.session import FeatureSession
from scars.core.samsara.status import feature_to_json
from tests.factories import ROOT

REAL = ROOT / "tests" / "fixtures" / "real_shaped"


def real_copy(tmp_path: Path, name: str) -> Path:
    """A writable copy of one real-shaped feature (its repository: changes/<name>)."""
    dst = tmp_path / "repo"
    shutil.copytree(REAL / "changes" / name, dst / "changes" / name)
    return dst / "changes" / name


@pytest.fixture
def search(tmp_path) -> Path:
    return real_copy(tmp_path, "2026-08-04_search-index")


def _item(feature, start: str):
    return next(it for it in feature.items if it.text.startswith(start))


def test_the_round_1_triage_is_carried_to_its_items(search):
    f = read_feature(search)
    carried = carried_from_log(f)
    assert len(carried) == 12 and len(f.items) == 16  # [12/16] instead of [0/16]
    crawler = carried[_item(f, "The crawler follows every relative link").id]
    assert crawler.action == "accept" and crawler.carried_round == 1 and crawler.expiry_date == "2026-11-04"
    assert describe_carried(crawler) == (
        "accepted in round 1 (iteration-log.yaml) — legacy expiry 2026-11-04, no re-review signal, no owner"
    )
    rule = carried[_item(f, "A normalisation rule written with re.sub").id]
    assert rule.action == "fix" and describe_carried(rule) == "fixed in round 1 (iteration-log.yaml)"
    ci = carried[_item(f, "The CI job rebuilds").id]
    assert ci.action == "defer" and ci.matched.startswith("similar: its text before the commentary")
    # Items no description names stay undecided.
    assert _item(f, "Crawl depth is hard-coded").id not in carried


def test_a_later_round_replaces_an_earlier_one(tmp_path):
    f = read_feature(real_copy(tmp_path, "2026-08-11_report-cache"))
    fallback = _item(f, "Rendering falls back to plain text")
    d = carried_from_log(f)[fallback.id]
    assert (d.action, d.carried_round) == ("defer", 2)
    # The round-2 fix of the version check resolved its item in place: nothing is carried.
    assert all(not it.text.startswith("A cache entry written") for it in f.items)


def test_a_decision_in_the_new_round_replaces_the_carried_one_and_undo_brings_it_back(search):
    f = read_feature(search)
    item = _item(f, "The crawler follows every relative link").id
    with FeatureSession.open(search, user="alice") as s:
        assert s.decisions[item].carried and item not in s.journal_decisions
        assert len(s.decisions) == 12
        s.start_round()
        s.decide(item, "fix")
        assert s.decisions[item].action == "fix" and not s.decisions[item].carried
        assert item in s.round_triage()  # a re-decision belongs to this round's triage
        assert len(s.decisions) == 12
        s.undo()
        assert s.decisions[item].carried and s.decisions[item].action == "accept"
        # A carried decision is not in this round's triage: the round writes only what was decided in it.
        assert item not in s.round_triage()


def test_status_json_says_what_was_carried(search):
    out = feature_to_json(read_feature(search))
    decided = [i for i in out["items"] if i["decision"]]
    assert len(decided) == 12
    accept = next(i for i in decided if i["text"].startswith("The crawler follows"))
    assert accept["decision"]["carried_round"] == 1 and accept["decision"]["expiry_date"] == "2026-11-04"
    assert accept["decision"]["carried"].startswith("accepted in round 1")
    assert len(out["log_matches"]) == 12 and all(m["confidence"] == "similar" for m in out["log_matches"])
    json.dumps(out)  # serialisable


def test_current_decisions_carry_with_the_feature(search):
    f = read_feature(search)
    assert len(current_decisions(search, f)) == 12
    assert current_decisions(search) == {}  # without the read feature: the journal only


def test_a_watch_reopen_keeps_a_carried_accept_reopened(search):
    from scars.core.samsara import watches

    f = read_feature(search)
    item = _item(f, "The crawler follows every relative link").id
    watches._append(search, {"type": "fired", "item_id": item, "watch": "recurs", "cause": "it recurred"})
    with FeatureSession.open(search, read_only=True) as s:
        assert item not in s.decisions  # back to triage until someone decides it again
        assert len(s.decisions) == 11


def test_the_status_summary_shows_carried_decisions(search, capsys):
    from scars.tui.cli.main import main

    assert main(["status", str(search)]) == 0
    out = capsys.readouterr().out
    assert "Decided 12 of 16 (12 carried from earlier rounds of iteration-log.yaml)" in out
    assert "→ accepted in round 1 (iteration-log.yaml) — legacy expiry" in out
