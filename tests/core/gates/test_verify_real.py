"""`scars log verify` on real logs (issue 14 point 6): the outcome of every upstream and
real-shaped fixture, justified finding by finding, and the rules added for real logs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scars.core.gates.verify import answer_choice, verify_feature
from scars.core.model import AutoDecisionEntry
from tests.core.samsara.test_carry_over import REAL, real_copy


def _findings(v) -> list[tuple[str, str]]:
    return [(f.severity, f.message) for f in v.findings]


def test_search_index_is_a_consistent_hand_written_log():
    v = verify_feature(REAL / "changes" / "2026-08-04_search-index")
    # Every one of the 12 hand-written descriptions names its item confidently (test_matching
    # names the pairs), no auto-decisions.md (human mode), an era-A log (no budget: no Rule 2/3);
    # its 7 accepts carry the legacy expiry_date: a note, never a failure.
    assert v.outcome == "success"
    assert _findings(v) == [
        (
            "note",
            "round 1: 7 legacy accept(s) with expiry_date (2026-11-04, 2027-02-04) instead of re-review signal and owner",
        )
    ]
    assert v.checked["matched_descriptions"] == 12 and v.checked["unmatched_descriptions"] == 0


@pytest.mark.parametrize("name", ["2026-08-11_report-cache", "2026-08-18_audit-trail"])
def test_the_other_real_shaped_logs_succeed(name):
    v = verify_feature(REAL / "changes" / name)
    assert v.outcome == "success"
    assert [s for s, _ in _findings(v)] == ["note"]  # the legacy accepts


def test_upstream_phase4_is_unknown_line_by_line(upstream):
    v = verify_feature(upstream / "samsara/changes/2026-04-17_samsara-phase4-auto-iteration")
    assert v.outcome == "unknown"
    notes = [m for s, m in _findings(v) if s == "note"]
    unknown = [m for s, m in _findings(v) if s == "unknown"]
    assert notes == [
        "round 1: 6 legacy accept(s) with expiry_date (2026-10-19, 2027-01-19) instead of re-review signal and owner"
    ]
    # The fixture holds one of the feature's reports: of round 1's 11 descriptions one is matched
    # ("resolved_items uses free-form description match" -> the task-1 silent failure), one is
    # weak (the plain-string breaking change), nine name items of reports not in the fixture.
    assert unknown[0].startswith("round 1: 10 triaged description(s) name no item confidently (9 none, 1 weak;")
    assert unknown[1].startswith("round 2: 2 triaged description(s) name no item confidently (2 none;")
    assert len(unknown) == 2
    assert not [m for s, m in _findings(v) if s == "failure"]  # era A: no budget, no Rule 3


@pytest.mark.parametrize(
    ("name", "unknown_count"),
    [
        ("2026-05-20_extract-pre-thinking-step", 9),  # no scar-reports/ in the fixture
        ("2026-06-30_placement-consistency-gate", 5),  # the fix matches the resolved_items entry
        ("2026-07-02_workflow-subtraction-optimization", 11),  # no scar-reports/ in the fixture
    ],
)
def test_upstream_budget_logs_are_unknown_never_failure(upstream, name, unknown_count):
    v = verify_feature(upstream / "samsara" / "changes" / name)
    assert v.outcome == "unknown"
    (msg,) = [m for s, m in _findings(v) if s == "unknown"]
    assert msg.startswith(f"round 1: {unknown_count} triaged description(s) name no item confidently")
    # Their rounds carry budget_context and the Rule-3 fields: nothing missing, nothing failed.
    assert not [m for s, m in _findings(v) if s == "failure"]


def test_the_bundled_demo_verifies_as_success():
    from scars.tui.cli.commands.demo import demo_source

    (feature,) = (demo_source() / "changes").iterdir()
    v = verify_feature(feature)
    assert v.outcome == "success", _findings(v)


# ------------------------------------------------------------------ rules for real logs


def _write(feature: Path, log: str, auto: str | None = None) -> None:
    (feature / "iteration-log.yaml").write_text(log, encoding="utf-8")
    if auto is not None:
        (feature / "auto-decisions.md").write_text(auto, encoding="utf-8")


AUDIT_LOG = (REAL / "changes" / "2026-08-18_audit-trail" / "iteration-log.yaml").read_text(encoding="utf-8")


def test_a_placeholder_owner_in_an_era_b_accept_fails(tmp_path):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    bad = AUDIT_LOG.replace(
        '          expiry_date: "2026-10-18"\n',
        '          re_review_signal: "the shipper runs more than one worker"\n          owner: "tbd"\n',
    )
    assert bad != AUDIT_LOG
    _write(f, bad)
    v = verify_feature(f)
    assert v.outcome == "failure"
    assert any("owner 'tbd' is a placeholder" in m for s, m in _findings(v) if s == "failure")


def test_a_weak_description_is_unknown_not_success(tmp_path):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    _write(f, AUDIT_LOG.replace('"Log shipper assumed to keep the written order"', '"shipping is fine"'))
    v = verify_feature(f)
    assert v.outcome == "unknown"
    assert any("cannot be checked: 'shipping is fine'" in m for _s, m in _findings(v))


ROUND_ENTRY = """\
## Decision 001 - iteration.round-continuation
- decision_id: decision-001
- timestamp: 2026-08-18T10:00:00+00:00
- stage: iteration
- prompt_type: question
- workflow_prompt: "Round 1 完成。signal_lost: 5 → 5。修復了 0 個 items，剩餘 5 個。(A) 繼續下一輪 (B) 停止，進入 Validation"
- gatekeeper_answer: "{answer}"
- decision: proceed
- rationale: "every item is accepted with an expiry date or deferred by design"
- principles_used:
  - "the gate decides whether another round is worth it"
- architecture_considerations:
  - "no fix-class item remains"
- evidence_checked:
  - "iteration-log.yaml round 1"
- uncertainty:
  level: low
  notes: "none beyond the figures"
- consequences:
  - "invoke samsara:validate-and-ship"
"""


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [
        ("(B) 停止，進入 Validation: every item is accepted or deferred", "success"),
        ("(A) 繼續下一輪: the defers may be actionable", "failure"),
        ("Continue: the defers may be actionable next round", "failure"),
        ("Stop here: nothing actionable is left", "success"),
    ],
)
def test_an_entry_that_contradicts_its_round_is_caught_without_the_journal(tmp_path, answer, outcome):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")  # round 1 decided stop; no .scars/ at all
    _write(f, AUDIT_LOG, ROUND_ENTRY.format(answer=answer))
    v = verify_feature(f)
    assert v.outcome == outcome, _findings(v)
    if outcome == "failure":
        assert any("but iteration-log.yaml round 1 decided stop" in m for _s, m in _findings(v))


@pytest.mark.parametrize(
    ("answer", "choice"),
    [
        ("(A) continue despite the warning: x", "continue"),
        ("B) stop", "stop"),
        ("（B）停止", "stop"),
        ("停止，進入 Validation", "stop"),
        ("繼續下一輪", "continue"),
        ("user chose to continue, not stop", "continue"),
        ("the gate records this", None),
    ],
)
def test_answer_choice(answer, choice):
    e = AutoDecisionEntry(1, "iteration", "round-continuation", 1, {"gatekeeper_answer": answer})
    assert answer_choice(e) == choice


def test_a_decision_outside_the_enum_fails(tmp_path):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    _write(f, AUDIT_LOG.replace("    decision: stop\n", "    decision: done\n"))
    v = verify_feature(f)
    assert v.outcome == "failure"
    assert any("decision 'done' is not one of continue, stop, forced_stop, interrupted" in m for _s, m in _findings(v))


def test_a_round_scars_wrote_must_name_items_exactly(tmp_path):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    _write(f, AUDIT_LOG.replace("    decision: stop\n", "    decision: stop\n    counted_by: scars\n"))
    v = verify_feature(f)
    assert v.outcome == "failure"  # scars writes the items' own texts: a summary means no report holds it
    assert any("triaged item(s) scars recorded are in no scar report" in m for _s, m in _findings(v))


def test_rule_3_fields_missing_from_a_budget_era_round_fail(tmp_path):
    f = real_copy(tmp_path, "2026-08-11_report-cache")
    log = (f / "iteration-log.yaml").read_text(encoding="utf-8")
    gone = log.replace("    residual_risk: []\n", "")
    assert gone != log
    _write(f, gone)
    v = verify_feature(f)
    assert v.outcome == "failure"
    assert any(m.startswith("round 2: residual_risk missing (Rule 3") for s, m in _findings(v) if s == "failure")


def test_rule_3_is_not_asked_of_an_era_a_log():
    v = verify_feature(REAL / "changes" / "2026-08-04_search-index")  # no budget block
    assert not any("Rule 3" in m for _s, m in _findings(v))


@pytest.mark.parametrize(
    ("reason", "names_it"),
    [
        ("max rounds (3) reached, the remaining items listed", True),
        ("maximum_rounds hit", True),
        ("stagnation: signal_lost flat for two rounds", True),
        ("net rot increased", True),
        ("net-rot valve", True),
        ("reviewer retry limit reached", True),
        ("re-dispatch limit 2 reached", True),
        ("user chose to stop — every item is accepted or deferred", False),
        ("the rounds ran long", False),  # "rounds" alone is no trigger
        ("", False),
    ],
)
def test_a_forced_stop_must_name_its_safety_valve_trigger(tmp_path, reason, names_it):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    log = AUDIT_LOG.replace("    decision: stop\n", "    decision: forced_stop\n").replace(
        '    decision_reason: "user chose to stop — every item is accepted with an expiry date or deferred by design, '
        'no fix items"\n',
        f'    decision_reason: "{reason}"\n',
    )
    assert log.count("forced_stop") == 1 and f'"{reason}"' in log
    _write(f, log)
    rule6 = [m for s, m in _findings(verify_feature(f)) if s == "failure" and "Rule 6" in m]
    assert rule6 == ([] if names_it else ["round 1: a forced stop must name its safety-valve trigger (Rule 6)"])


def test_a_stop_need_not_name_a_trigger(tmp_path):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")  # round 1: stop, a reason naming no valve
    assert "decision: stop\n" in AUDIT_LOG
    assert not any("Rule 6" in m for _s, m in _findings(verify_feature(f)))


# ------------------------------------------------- legacy accepts: read, never written anew

AUDIT_SHIPPER = '"The shipper runs with one worker; the chain check would flag reordering at verification time"'


def _git(repo: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid", GIT_COMMITTER_NAME="t")
    env.update(GIT_COMMITTER_EMAIL="t@example.invalid")
    subprocess.run(
        ["git", "-C", str(repo), "-c", "commit.gpgsign=false", *args], check=True, capture_output=True, env=env
    )


@pytest.fixture
def committed_audit(tmp_path):
    """The real-shaped audit-trail feature (four era-A accepts), committed in its own repository."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    f = real_copy(tmp_path, "2026-08-18_audit-trail")
    repo = f.parent.parent
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "history")
    return f


def _edit(f: Path, old: str, new: str) -> None:
    log = f / "iteration-log.yaml"
    text = log.read_text(encoding="utf-8")
    assert old in text
    log.write_text(text.replace(old, new), encoding="utf-8")


def _failures(v) -> list[str]:
    return [m for s, m in _findings(v) if s == "failure"]


def test_committed_legacy_accepts_are_notes(committed_audit):
    v = verify_feature(committed_audit)
    assert v.outcome == "success" and [s for s, _ in _findings(v)] == ["note"]


def test_a_legacy_accept_new_since_the_commit_is_a_failure(committed_audit):
    # both its description and its rationale are new (its expiry date is an old one): another entry
    _edit(
        committed_audit,
        '"Log shipper assumed to keep the written order"',
        '"Redaction rules are read once at start"',
    )
    _edit(committed_audit, AUDIT_SHIPPER, '"Reload needs a config watcher the service does not have yet"')
    (msg,) = _failures(verify_feature(committed_audit))
    assert msg.startswith(
        "round 1: legacy accept 'Redaction rules are read once at start' is new since the last commit"
    )


@pytest.mark.parametrize(
    "old, new",
    [
        ('"Log shipper assumed to keep the written order"', '"The log shipper is assumed to keep write order"'),
        (AUDIT_SHIPPER, '"One worker ships in order; the chain check flags any reorder"'),
    ],
)
def test_a_legacy_accept_with_one_of_its_texts_reworded_is_the_same_entry(committed_audit, old, new):
    _edit(committed_audit, old, new)
    v = verify_feature(committed_audit)
    assert not _failures(v), _findings(v)
    assert any("4 legacy accept(s) with expiry_date" in m for _, m in _findings(v))


@pytest.mark.parametrize("blank", ['""', '"tbd"', '"ok"'])
def test_a_legacy_rationale_must_say_something_with_or_without_git(tmp_path, blank):
    f = real_copy(tmp_path, "2026-08-18_audit-trail")  # no git: judged by the rationale alone
    _edit(f, AUDIT_SHIPPER, blank)
    (msg,) = _failures(verify_feature(f))
    assert msg.startswith("round 1: legacy accept 'Log shipper assumed to keep the written order': rationale ")


def test_an_uncommitted_log_holds_only_new_entries(committed_audit):
    repo = committed_audit.parent.parent
    _git(repo, "rm", "-q", "--cached", str(committed_audit / "iteration-log.yaml"))
    _git(repo, "commit", "-q", "-m", "untrack the log")
    assert len(_failures(verify_feature(committed_audit))) == 4
