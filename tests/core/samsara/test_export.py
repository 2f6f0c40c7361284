"""Export: SARIF 2.1.0 (validated against the OASIS schema), OpenVEX and JSON mappings."""

from __future__ import annotations

import json
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest

from scars.core.model import EntryVerdict, Feature, Problem, ScarItem, ScarReport
from scars.core.samsara import export as ex
from scars.core.samsara.decisions import Decision
from scars.core.samsara.feature import read_feature
from scars.tui.cli.main import main

SCHEMA = json.loads(files("scars.core").joinpath("schemas", "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))


def validate_sarif(doc: dict) -> None:
    jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)


def item(
    n: int, category="known_shortcuts", where=None, line=3, file="scar-reports/task-1-scar.yaml", **kw
) -> ScarItem:
    return ScarItem(
        id=f"ks-{n:010x}",
        category=category,
        text=f"item {n} text",
        task_id="task-1",
        file=file,
        line=line,
        form="gen2",
        where=where,
        **kw,
    )


def feature(tmp_path: Path, items, resolved=(), failures=(), debt_location=None) -> Feature:
    feature_dir = tmp_path / "changes" / "2026-01-01_demo"
    return Feature(
        name="2026-01-01_demo",
        path=str(feature_dir),
        repo_root=str(tmp_path),
        reports=(
            ScarReport(
                file="scar-reports/task-1-scar.yaml",
                task_id="task-1",
                completion_status="done",
                items=tuple(items),
                debt_location=debt_location,
            ),
        ),
        items=tuple(items),
        resolved=tuple(resolved),
        parse_failures=tuple(failures),
        signal_lost=len(items),
        entry=EntryVerdict("gate", "record"),
    )


ACCEPT = Decision(
    "ks-0000000001",
    "accept",
    re_review_signal="when the cache grows past 1 GB",
    owner="alice",
    rationale="cheap enough for now",
    decided_by="bob",
    decided_at="2026-01-02T10:00:00Z",
)
DEFER = Decision(
    "ks-0000000002",
    "defer",
    reason="needs the new API",
    revisit_when="after v2",
    decided_by="bob",
    decided_at="2026-01-02T10:01:00Z",
)
FIX = Decision("ks-0000000003", "fix", decided_by="bob", decided_at="2026-01-02T10:02:00Z")


def sample(tmp_path):
    items = [
        item(1, where="core/cache.py:42"),
        item(2, category="silent_failure_conditions"),
        item(3, category="unverified_assumptions", where="/etc/passwd"),
        item(4, where="../outside.py"),
    ]
    return feature(
        tmp_path,
        items,
        resolved=[item(9, resolved=True, resolution="done in r1")],
        failures=[Problem("scar-reports/bad.yaml", 7, "not YAML")],
    )


def test_sarif_mapping_and_schema(tmp_path):
    decisions = {d.item_id: d for d in (ACCEPT, DEFER, FIX)}
    doc = ex.to_sarif(sample(tmp_path), decisions, round_number=2, tool_version="1.2.3")
    validate_sarif(doc)
    run = doc["runs"][0]
    results = {r["partialFingerprints"]["scarsItemId/v1"]: r for r in run["results"]}
    assert len(results) == 4  # resolved items are not results
    accepted = results["ks-0000000001"]
    assert accepted["ruleId"] == "known_shortcuts" and accepted["message"]["text"] == "item 1 text"
    assert accepted["suppressions"] == [
        {
            "kind": "external",
            "status": "accepted",
            "justification": "cheap enough for now",
            "properties": {
                "owner": "alice",
                "reReviewSignal": "when the cache grows past 1 GB",
                "round": 2,
                "decidedBy": "bob",
                "decidedAt": "2026-01-02T10:00:00Z",
            },
        }
    ]
    assert accepted["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "core/cache.py", "uriBaseId": "SRCROOT"},
        "region": {"startLine": 42},
    }
    deferred = results["ks-0000000002"]
    assert deferred["ruleId"] == "silent_failure_conditions"
    # A deferred item stays an open alert: no suppression (consumers dismiss any suppressed result).
    assert "suppressions" not in deferred
    assert deferred["message"]["text"].endswith(" — deferred: needs the new API")
    assert deferred["properties"]["deferral"]["reason"] == "needs the new API"
    assert deferred["properties"]["deferral"]["revisitWhen"] == "after v2"
    fixed = results["ks-0000000003"]
    assert "suppressions" not in fixed and fixed["properties"]["decision"] == "fix"
    assert fixed["ruleId"] == "unverified_assumptions" and fixed["level"] == "note"
    # An absolute `where` and one escaping the repository fall back to the scar report itself.
    for rid in ("ks-0000000003", "ks-0000000004"):
        loc = results[rid]["locations"][0]["physicalLocation"]
        assert loc["artifactLocation"]["uri"] == "changes/2026-01-01_demo/scar-reports/task-1-scar.yaml"
        assert loc["region"] == {"startLine": 3}
    undecided = results["ks-0000000004"]
    assert "suppressions" not in undecided and "decision" not in undecided["properties"]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[0]["level"] == "error" and "not YAML" in notes[0]["message"]["text"]
    assert run["tool"]["driver"]["version"] == "1.2.3"


def test_sarif_uses_report_debt_location_and_survives_hostile_text(tmp_path):
    hostile = ScarItem(
        id="sf-00000000aa",
        category="silent_failure_conditions",
        text="\x1b]52;c;cHdu\x07 [bold]x[/bold] \u202e",
        task_id=None,
        file="scar-reports/task-1-scar.yaml",
        line=None,
        form="gen1",
    )
    doc = ex.to_sarif(feature(tmp_path, [hostile], debt_location="agents/reviewer.md Step 2 + prose"))
    validate_sarif(doc)
    result = doc["runs"][0]["results"][0]
    assert result["message"]["text"] == hostile.text  # data is kept exactly; JSON escapes it
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "agents/reviewer.md"
    assert "\x1b" not in json.dumps(doc, ensure_ascii=True)


@pytest.mark.parametrize(
    "where, expected",
    [
        ("core/reader.py:120", ("core/reader.py", 120, None)),
        ("src/a.py:3:7, then prose", ("src/a.py", 3, 7)),
        ("src/a.py#L12", ("src/a.py", 12, None)),
        ("docs/x.md line 4", ("docs/x.md", 4, None)),
        ("module X", None),
        ("1.5 seconds", None),
        ("/etc/passwd", None),
        ("../x.py", None),
        ("a/../../x.py", None),
        ("https://example.org/a.py", None),
        ("~/a.py", None),
        ("", None),
    ],
)
def test_repo_relative_location(where, expected):
    assert ex.repo_relative_location(where, None) == expected


def test_location_through_a_symlink_out_of_the_repo_is_refused(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "link").symlink_to(outside)
    assert ex.repo_relative_location("link/secret.py", repo) is None
    assert ex.repo_relative_location("src/ok.py", repo) == ("src/ok.py", None, None)


def test_openvex_statements(tmp_path):
    decisions = {d.item_id: d for d in (ACCEPT, DEFER, FIX)}
    doc = ex.to_openvex(sample(tmp_path), decisions, author="carol", round_number=2, timestamp="2026-01-03T00:00:00Z")
    assert doc["@context"] == "https://openvex.dev/ns/v0.2.0" and doc["author"] == "carol"
    assert doc["@id"].startswith("urn:scars:vex:") and doc["version"] == 1
    by = {s["vulnerability"]["name"]: s for s in doc["statements"]}
    assert len(by) == 5
    assert all(s["status_notes"] for s in by.values())
    assert by["ks-0000000001"]["status"] == "affected"
    assert "re-review when: when the cache grows past 1 GB" in by["ks-0000000001"]["action_statement"]
    assert "owner: alice" in by["ks-0000000001"]["action_statement"]
    assert by["ks-0000000001"]["status_notes"] == "cheap enough for now"
    assert (
        by["ks-0000000002"]["status"] == "under_investigation"
        and "revisit when: after v2" in by["ks-0000000002"]["status_notes"]
    )
    assert (
        by["ks-0000000003"]["status"] == "affected"
        and "Fix decided (round 2)" in by["ks-0000000003"]["action_statement"]
    )
    assert (
        by["ks-0000000004"]["status"] == "under_investigation"
        and by["ks-0000000004"]["status_notes"] == "not triaged yet"
    )
    assert by["ks-0000000009"]["status"] == "fixed" and "done in r1" in by["ks-0000000009"]["status_notes"]
    for s in by.values():
        assert s["status"] in ("not_affected", "affected", "fixed", "under_investigation")
        if s["status"] == "affected":
            assert s["action_statement"]
    # Same content → same document id.
    again = ex.to_openvex(sample(tmp_path), decisions, author="carol", round_number=2, timestamp="2026-01-04T00:00:00Z")
    assert again["@id"] == doc["@id"]


def test_json_export(tmp_path):
    doc = ex.to_json(sample(tmp_path), {ACCEPT.item_id: ACCEPT}, round_number=1)
    assert doc["decided"] == 1 and doc["round"] == 1 and len(doc["items"]) == 4
    assert doc["items"][0]["decision"]["owner"] == "alice" and doc["items"][1]["decision"] is None
    assert doc["parse_failures"] == [{"file": "scar-reports/bad.yaml", "line": 7, "reason": "not YAML"}]
    with pytest.raises(ValueError):
        ex.export(sample(tmp_path), {}, "xml")


# --------------------------------------------------------------------------- the command


def make_repo(root: Path) -> Path:
    f = root / "changes" / "2026-01-02_demo"
    (f / "scar-reports").mkdir(parents=True)
    (f / "scar-reports" / "task-1-scar.yaml").write_text(
        "task_id: task-1\ncompletion_status: done\ndebt_location: src/app.py:10\n"
        'known_shortcuts:\n  - "no retry on timeout"\n  - "cache never evicts"\n'
        "silent_failure_conditions: []\nassumptions_made: []\n"
    )
    return f


def test_export_command_to_file_and_stdout(tmp_path, capsys, monkeypatch):
    f = make_repo(tmp_path)
    out = tmp_path / "scars.sarif"
    assert main(["export", str(f), "--format", "sarif", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate_sarif(doc)
    assert len(doc["runs"][0]["results"]) == 2
    assert doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "src/app.py"
    capsys.readouterr()
    # From the repository root, the only feature is found.
    monkeypatch.chdir(tmp_path)
    assert main(["export", "--format", "json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["items"]) == 2
    assert main(["export", str(f), "--format", "openvex", "--author", "dave"]) == 0
    assert json.loads(capsys.readouterr().out)["author"] == "dave"


def test_export_command_errors(tmp_path, capsys):
    assert main(["export", str(tmp_path / "missing"), "--format", "json"]) == 2
    assert main(["export", str(tmp_path), "--format", "json"]) == 2  # no feature at all
    make_repo(tmp_path)
    g = tmp_path / "changes" / "2026-01-03_other"
    (g / "scar-reports").mkdir(parents=True)
    assert main(["export", str(tmp_path), "--format", "json"]) == 2
    assert "2 features found" in capsys.readouterr().err
    assert main(["export", str(tmp_path), "--format", "xml"]) == 2  # a usage error, as every other


def test_export_upstream_features_validate_and_hold_every_item(upstream):
    counted = 0
    for feature_dir in sorted((upstream / "samsara" / "changes").iterdir()):
        feat = read_feature(feature_dir)
        doc = ex.to_sarif(feat, {})
        validate_sarif(doc)
        (run,) = doc["runs"]
        results = run["results"]
        # one result per remaining item, in order, with its category and its own text; no decision: no suppression
        assert [r["properties"]["scarsItemId"] for r in results] == [it.id for it in feat.items]
        assert [(r["ruleId"], r["message"]["text"]) for r in results] == [(it.category, it.text) for it in feat.items]
        assert not any("suppressions" in r for r in results)
        notes = run["invocations"][0]["toolExecutionNotifications"]
        assert len(notes) == len(feat.parse_failures)
        counted += len(results)
    assert counted == 4  # phase4's 3 items and placement-consistency-gate's 1


def test_the_schema_check_rejects_a_broken_log(tmp_path):
    doc = ex.to_sarif(sample(tmp_path), {ACCEPT.item_id: ACCEPT})
    doc["runs"][0]["results"][0]["suppressions"][0]["status"] = "waived"
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(doc)
    doc = ex.to_sarif(sample(tmp_path), {})
    doc["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(doc)


def test_era_d_report_states_become_in_source_suppressions(tmp_path):
    accepted = item(5, status="accepted", accepted_because="documented limitation")
    deferred = item(6, status="deferred")
    doc = ex.to_sarif(feature(tmp_path, [accepted, deferred, item(7)]), {})
    validate_sarif(doc)
    results = doc["runs"][0]["results"]
    assert results[0]["suppressions"] == [
        {"kind": "inSource", "status": "accepted", "justification": "documented limitation"}
    ]
    assert "suppressions" not in results[1] and results[1]["properties"]["deferral"]  # open, marked deferred
    assert "suppressions" not in results[2]
    # A decision made in scars wins over the report's own state.
    doc = ex.to_sarif(feature(tmp_path, [accepted]), {accepted.id: Decision(accepted.id, "fix")})
    assert "suppressions" not in doc["runs"][0]["results"][0]


def test_export_reads_decisions_recorded_through_the_session(tmp_path, capsys):
    from scars.core.samsara.session import FeatureSession

    f = make_repo(tmp_path)
    feat = read_feature(f)
    first, second = (it.id for it in feat.items)
    with FeatureSession.open(f, user="erin") as session:
        session.decide(
            first,
            "accept",
            re_review_signal="a second timeout report",
            owner="erin",
            rationale="the retry lands next quarter",
        )
        session.decide(second, "defer", reason="needs the cache redesign", revisit_when="after the redesign")
    out = tmp_path / "out.sarif"
    assert main(["export", str(f), "--format", "sarif", "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    validate_sarif(doc)
    results = {r["partialFingerprints"]["scarsItemId/v1"]: r for r in doc["runs"][0]["results"]}
    accepted = results[first]["suppressions"][0]
    assert accepted["status"] == "accepted" and accepted["justification"] == "the retry lands next quarter"
    assert accepted["properties"]["owner"] == "erin" and accepted["properties"]["round"] == 1
    assert accepted["properties"]["reReviewSignal"] == "a second timeout report"
    assert "suppressions" not in results[second]
    assert results[second]["properties"]["deferral"]["reason"] == "needs the cache redesign"
    assert main(["export", str(f), "--format", "json"]) == 0
    items = {i["id"]: i for i in json.loads(capsys.readouterr().out)["items"]}
    assert items[first]["decision"]["action"] == "accept" and items[first]["decision_round"] == 1
    # Exporting takes no lock: a writer may hold it meanwhile.
    with FeatureSession.open(f, user="erin"):
        assert main(["export", str(f), "--format", "openvex"]) == 0
    assert len(json.loads(capsys.readouterr().out)["statements"]) == 2


def test_loops_inbox_counts_session_decisions(tmp_path):
    from scars.core.loops import discover_loops
    from scars.core.samsara.session import FeatureSession

    f = make_repo(tmp_path)
    # Grow the feature past the entry threshold (signal_lost 5) so it is gated.
    (f / "scar-reports" / "task-2-scar.yaml").write_text(
        'task_id: task-2\nknown_shortcuts:\n  - "a"\n  - "b"\n  - "c"\n'
        "silent_failure_conditions: []\nassumptions_made: []\n"
    )
    (state,) = discover_loops(tmp_path)
    assert state.waiting_for_human and state.details["undecided"] == 5
    ids = [it.id for it in read_feature(f).items]
    with FeatureSession.open(f, user="erin") as session:
        session.decide_many(ids[:3], "fix")
    (state,) = discover_loops(tmp_path)
    assert state.details["undecided"] == 2 and state.waiting_for_human


def test_decision_rounds_follow_the_current_decision():
    first = Decision("a", "fix", decided_at="t1")
    again = Decision("a", "accept", decided_at="t2")
    records = [
        {"type": "decision", "round": 1, "decisions": [first.to_dict()]},
        {"type": "round_close", "round": 1},
        {"type": "decision", "round": 2, "decisions": [again.to_dict(), {"item_id": "b", "decided_at": "t3"}]},
    ]
    assert ex.decision_rounds(records, {"a": again}) == {"a": 2}
    assert ex.decision_rounds(records, {"a": first}) == {"a": 1}  # after an undo of round 2's decision
    assert ex.decision_rounds(records, {}) == {}


# --------------------------------------------------------------------------- code scanning consumers


def _consumer_view(doc: dict) -> dict[str, str]:
    """What GitHub code scanning (with dismiss-alerts) and DefectDojo's SARIF parser make of each
    result: any non-empty ``suppressions`` is a dismissed / inactive finding, else an open one."""
    return {
        r["partialFingerprints"]["scarsItemId/v1"]: "dismissed" if r.get("suppressions") else "open"
        for r in doc["runs"][0]["results"]
    }


def test_code_scanning_gets_fingerprints_regions_and_a_declared_srcroot(tmp_path):
    """Before: only scarsItemId/v1 (REST uploads duplicated alerts), three results on a file
    without a region, SRCROOT used but not declared."""
    items = [
        item(1, where="core/cache.py"),  # a path without a line
        item(2, line=None),  # the scar report, no line known
        item(3, where="docs/x.md line 4"),
    ]
    doc = ex.to_sarif(feature(tmp_path, items, failures=[Problem("scar-reports/bad.yaml", None, "not YAML")]), {})
    validate_sarif(doc)
    run = doc["runs"][0]
    declared = set(run["originalUriBaseIds"])
    for r in run["results"]:
        assert re.fullmatch(r"[0-9a-f]{16}:\d+", r["partialFingerprints"]["primaryLocationLineHash"])
        physical = r["locations"][0]["physicalLocation"]
        assert physical["region"]["startLine"] >= 1
        assert physical["artifactLocation"]["uriBaseId"] in declared
    assert [r["locations"][0]["physicalLocation"]["region"] for r in run["results"]] == [
        {"startLine": 1},
        {"startLine": 1},
        {"startLine": 4},
    ]
    note = run["invocations"][0]["toolExecutionNotifications"][0]["locations"][0]["physicalLocation"]
    assert note["region"] == {"startLine": 1} and note["artifactLocation"]["uriBaseId"] in declared


def test_fingerprints_are_stable_across_runs_and_line_moves(tmp_path):
    first = ex.to_sarif(feature(tmp_path, [item(1, where="core/a.py:10")]), {})
    moved = ex.to_sarif(feature(tmp_path, [item(1, where="core/a.py:30")]), {})
    fp = [d["runs"][0]["results"][0]["partialFingerprints"] for d in (first, moved)]
    assert fp[0] == fp[1] and fp[0]["primaryLocationLineHash"] == ex.line_hash("ks-0000000001") + ":1"


def test_accepted_items_are_dismissed_and_deferred_items_stay_open(tmp_path):
    doc = ex.to_sarif(sample(tmp_path), {d.item_id: d for d in (ACCEPT, DEFER, FIX)})
    assert _consumer_view(doc) == {
        "ks-0000000001": "dismissed",  # accept: suppression accepted (external)
        "ks-0000000002": "open",  # defer: before, underReview — dismissed by these consumers
        "ks-0000000003": "open",  # fix decided
        "ks-0000000004": "open",  # undecided
    }
