"""scars.core.formats.iteration_log: byte-exact round trips and appends on real upstream logs."""

from __future__ import annotations

import os

import pytest
import yaml

from scars.core.errors import ChangedOnDisk
from scars.core.formats import iteration_log as L
from scars.core.storage.durable import fingerprint

UPSTREAM_LOGS = (
    "2026-04-17_samsara-phase4-auto-iteration",
    "2026-05-20_extract-pre-thinking-step",
    "2026-06-30_placement-consistency-gate",
    "2026-07-02_workflow-subtraction-optimization",
)

ROUND = {
    "round": 7,
    "signal_lost_before": 5,
    "budget_context": {
        "remaining_rounds_at_start": 0,
        "stagnation_count_at_start": 1,
        "net_rot_previous_round": -1,
        "strategy_hint": "minimal_fix",
    },
    "items_triaged": 3,
    "triage_result": {
        "fix": ['quote " and backslash \\ and\nnewline\n## Decision 999 - x\n- decision: proceed'],
        "accept": [
            {
                "description": "中文 text",
                "re_review_signal": "a second writer",
                "owner": "ops",
                "rationale": "one process",
            }
        ],
        "defer": [],
    },
    "fixes_applied": 1,
    "fixes_scar_count": 0,
    "signal_lost_after": 4,
    "decision": "stop",
    "decision_reason": "user chose to stop: nothing actionable # not a comment",
}


@pytest.mark.parametrize("name", UPSTREAM_LOGS)
def test_upstream_log_roundtrips_byte_for_byte(upstream, name):
    text = (upstream / "samsara" / "changes" / name / "iteration-log.yaml").read_text(encoding="utf-8")
    assert L.roundtrip(text) == text
    assert L.canary(text)


@pytest.mark.parametrize("name", UPSTREAM_LOGS)
def test_adding_a_round_keeps_every_earlier_byte(upstream, name):
    text = (upstream / "samsara" / "changes" / name / "iteration-log.yaml").read_text(encoding="utf-8")
    new = L.add_round(text, ROUND)
    assert new.startswith(text)
    data = yaml.safe_load(new)
    old = yaml.safe_load(text)
    assert data["rounds"][:-1] == old["rounds"]
    assert data["rounds"][-1]["triage_result"]["fix"] == ROUND["triage_result"]["fix"]
    assert data["rounds"][-1]["decision_reason"] == ROUND["decision_reason"]
    assert {k: v for k, v in data.items() if k != "rounds"} == {k: v for k, v in old.items() if k != "rounds"}
    # the new file round-trips too, so the next round can be added the same way
    assert L.canary(new)


def test_spaced_rounds_stay_spaced(upstream):
    text = (upstream / "samsara" / "changes" / UPSTREAM_LOGS[0] / "iteration-log.yaml").read_text(encoding="utf-8")
    new = L.add_round(text, ROUND)
    assert new[len(text) :].startswith("\n  - round: 7\n")


def test_new_round_keys_in_era_b_order():
    text = L.render_round(
        {"decision": "continue", "round": 2, "decision_reason": "x", "signal_lost_before": 3, "extra": 1}
    )
    keys = [ln.strip().lstrip("- ").split(":")[0] for ln in text.splitlines()]
    assert keys == ["round", "signal_lost_before", "decision", "decision_reason", "extra"]


def test_new_log_has_header_and_parses():
    text = L.render_new_log("csv-export", 6, [ROUND])
    assert text.startswith(
        'feature: "csv-export"\nsignal_lost_initial: 6\n\nbudget:\n  max_rounds: 3\n  reviewer_retry_limit: 2\n\nrounds:\n  - round: 7\n'
    )
    data = yaml.safe_load(text)
    assert data["rounds"][0]["budget_context"]["strategy_hint"] == "minimal_fix"
    assert L.canary(text)


@pytest.mark.parametrize(
    "text",
    [
        "feature: x\nsignal_lost_initial: 1\nrounds: []\n",
        "feature: x\nsignal_lost_initial: 1\nrounds:  # none yet\n",
        "feature: x\nsignal_lost_initial: 1\n",
        "feature: x\nrounds:\n  - round: 1\n    decision: stop\n# trailing note\nnotes: kept after rounds\n",
        "feature: x\nrounds:\n- round: 1\n  decision: stop\n",  # sequence not indented
        "feature: x\nrounds:\n    - round: 1\n      decision: stop\n",  # 4-space offset
    ],
)
def test_append_to_odd_but_valid_logs(text):
    new = L.add_round(text, {"round": 2, "decision": "stop", "decision_reason": "done"})
    data = yaml.safe_load(new)
    assert data["rounds"][-1] == {"round": 2, "decision": "stop", "decision_reason": "done"}
    if "notes" in text:
        assert data["notes"] == "kept after rounds"
        assert new.endswith("# trailing note\nnotes: kept after rounds\n")


def test_refuses_a_log_it_cannot_keep():
    with pytest.raises(L.LogNotWritable):
        L.add_round("rounds: {a: 1}\n", {"round": 1})
    with pytest.raises(L.LogNotWritable):
        L.add_round("rounds: [\n", {"round": 1})


def test_file_append_is_idempotent_and_keeps_mode(tmp_path):
    f = L.IterationLogFile(tmp_path)
    assert f.append_rounds([ROUND], feature="x", signal_lost_initial=5) == [7]
    os.chmod(f.path, 0o640)
    before = f.path.read_bytes()
    assert f.append_rounds([ROUND], feature="x", signal_lost_initial=5) == []
    assert f.path.read_bytes() == before
    r8 = dict(ROUND, round=8)
    assert f.append_rounds([ROUND, r8], feature="x", signal_lost_initial=5) == [8]
    assert f.path.read_bytes().startswith(before)
    assert oct(os.stat(f.path).st_mode & 0o777) == oct(0o640)


def test_disjoint_change_on_disk_is_merged(tmp_path):
    f = L.IterationLogFile(tmp_path)
    f.append_rounds([ROUND], feature="x", signal_lost_initial=5)
    f2 = L.IterationLogFile(tmp_path)  # reads now
    text = f.path.read_text()
    f.path.write_text("# a comment someone added\n" + text)  # a human edit elsewhere
    f2.append_rounds([dict(ROUND, round=8)], feature="x", signal_lost_initial=5)
    out = f.path.read_text()
    assert out.startswith("# a comment someone added\n")
    assert [r["round"] for r in yaml.safe_load(out)["rounds"]] == [7, 8]


def test_conflicting_change_on_disk_is_refused(tmp_path):
    f = L.IterationLogFile(tmp_path)
    f.append_rounds([ROUND], feature="x", signal_lost_initial=5)
    f2 = L.IterationLogFile(tmp_path)
    f.path.write_text(f.path.read_text().replace("decision: stop", "decision: continue"))
    fp = fingerprint(f.path)
    with pytest.raises(ChangedOnDisk, match="round 7 was edited .*decision"):
        f2.append_rounds([dict(ROUND, round=8)], feature="x", signal_lost_initial=5)
    assert fingerprint(f.path) == fp  # untouched


def test_round_on_disk_differing_from_journal_is_refused(tmp_path):
    f = L.IterationLogFile(tmp_path)
    f.append_rounds([ROUND], feature="x", signal_lost_initial=5)
    with pytest.raises(ChangedOnDisk, match="round 7 on disk differs"):
        f.append_rounds([dict(ROUND, decision_reason="other")], feature="x", signal_lost_initial=5)


FLOW_ROUNDS = (
    'feature: "demo"\nsignal_lost_initial: 4\n\n'
    'rounds: [ {round: 1,  signal_lost_before: 4, decision: continue,   decision_reason: "x y"} ]\n'
)


def test_canary_fails_on_flow_rounds_with_odd_spacing_and_add_round_refuses():
    assert not L.canary(FLOW_ROUNDS)
    with pytest.raises(L.LogNotWritable, match="load \\+ dump is not byte-identical"):
        L.append_round_rt(FLOW_ROUNDS, ROUND)
    with pytest.raises(L.LogNotWritable, match="kept in the journal"):
        L.add_round(FLOW_ROUNDS, ROUND)
    # The same document in canonical flow spacing passes the canary and takes the round.
    canonical = L.roundtrip(FLOW_ROUNDS)
    assert L.canary(canonical)
    new = L.add_round(canonical, ROUND)
    assert [r["round"] for r in yaml.safe_load(new)["rounds"]] == [1, 7]
