"""An answer lands on what was asked (issue 27 §3): a gate's selector (the item of blocked-fix, the
feature of the bkit gates, the sprint of sprint-pause) is part of which request an answer given in
place answers, and the record refuses a request whose evidence now selects something else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scars.core.errors import DecisionRefused
from scars.core.gatekit.evidence import selector
from scars.core.gates import gather
from scars.core.gates import requests as rq
from scars.core.loops.registry import GATES
from scars.core.samsara.session import FeatureSession
from scars.tui.cli import main as cli
from tests.factories import bkit_project, clean_env, item_id, samsara_feature

REASON = "the vendor sandbox is down until March"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


def _two_blocked(tmp_path: Path) -> tuple[Path, str, str]:
    (tmp_path / ".git").mkdir()
    f = samsara_feature(tmp_path)
    a = item_id(f, "Retry count is hard-coded to 3")
    b = item_id(f, "Timezone-naive timestamps compare as UTC")
    with FeatureSession.open(f, user="setup") as s:
        s.start_round()
        s.decide(a, "fix")
        s.decide(b, "fix")
    return f, a, b


def _asked_first(root: Path, req: rq.Request) -> None:
    f = root / ".scars" / "requests" / f"{req.id}.json"
    data = json.loads(f.read_text())
    data["asked_at"] = "2000-01-01T00:00:00Z"
    f.write_text(json.dumps(data))


def test_the_answer_for_item_b_answers_bs_request_not_as(tmp_path):
    f, a, b = _two_blocked(tmp_path)
    req_a = rq.post_request(gather("blocked-fix", f, item=a), f, user="loop-a", options={"item": a})
    req_b = rq.post_request(gather("blocked-fix", f, item=b), f, user="loop-b", options={"item": b})
    _asked_first(tmp_path, req_a)  # the inbox lists A first: an answer matched by gate alone lands on A
    code = cli.main(["gate", "blocked-fix", str(f), "--item", b, "--answer", "defer", "--reason", REASON])
    assert code == 0
    assert rq.load_request(tmp_path, req_a.id).status == "pending"  # A's waiter does not wake with B's answer
    assert rq.load_request(tmp_path, req_b.id).status == "applied"
    with FeatureSession.open(f, read_only=True) as s:
        assert s.decisions[a].action == "fix" and s.decisions[b].action == "defer"


def _two_features(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    sf = bkit_project(tmp_path)
    data = json.loads(sf.read_text())
    data["features"]["billing"] = {**data["features"]["login"]}
    data["activeFeatures"].append("billing")
    sf.write_text(json.dumps(data, indent=2) + "\n")
    return sf


def test_the_answer_for_feature_billing_does_not_archive_login(tmp_path):
    sf = _two_features(tmp_path)
    asked = rq.post_request(gather("pdca-continue", tmp_path, feature="login"), tmp_path, user="loop", options={})
    code = cli.main(
        [
            "gate",
            "pdca-continue",
            str(tmp_path),
            "--bkit-feature",
            "billing",
            "--answer",
            "stop",
            "--reason",
            "billing moves to the next release",
        ]
    )
    assert code == 0
    features = json.loads(sf.read_text())["features"]
    assert features["login"]["phase"] == "check"  # the waiting feature is untouched
    assert features["billing"]["phase"] == "archived"
    assert rq.load_request(tmp_path, asked.id).status == "pending"


def test_the_record_refuses_a_request_whose_evidence_selects_another_feature_now(tmp_path):
    """Posted without --bkit-feature (the primary feature, login, chosen); the primary feature moves
    to billing before the answer is applied: the record refuses rather than archive billing."""
    sf = _two_features(tmp_path)
    asked = rq.post_request(gather("pdca-continue", tmp_path), tmp_path, user="loop", options={})
    assert asked.evidence["selector"] == {"feature": "login"}
    rq.answer_request(tmp_path, asked.id, "stop", "login moves to the next release", user="bob", source="test")
    data = json.loads(sf.read_text())
    data["primaryFeature"] = "billing"
    sf.write_text(json.dumps(data, indent=2) + "\n")
    with pytest.raises(DecisionRefused, match="feature billing, not login"):
        rq.apply_request(tmp_path, asked.id)
    features = json.loads(sf.read_text())["features"]
    assert features["login"]["phase"] == "check" and features["billing"]["phase"] == "check"
    assert rq.load_request(tmp_path, asked.id).status == "refused"


@pytest.mark.parametrize("gate", sorted(g for g in GATES if GATES[g].selects))
def test_every_selecting_gate_names_its_selection_in_its_evidence(gate, tmp_path):
    from tests.factories import gate_state

    path, _, options = gate_state(gate, tmp_path)
    ev = gather(gate, path, **options)
    sel = selector(ev)
    assert set(sel) == set(GATES[gate].selects) and all(v and v != "None" for v in sel.values())
    assert ev.as_json()["selector"] == sel
