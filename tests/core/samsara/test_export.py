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


def touch(root: Path, *paths: str) -> None:
    """Files of the checkout (a location names only files that exist)."""
    for rel in paths:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n" * 50)


def sample(tmp_path):
    touch(tmp_path, "core/cache.py")
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
    touch(tmp_path, "agents/reviewer.md")
    doc = ex.to_sarif(feature(tmp_path, [hostile], debt_location="agents/reviewer.md Step 2 + prose"))
    validate_sarif(doc)
    result = doc["runs"][0]["results"][0]
    assert result["message"]["text"] == hostile.text  # data is kept exactly; JSON escapes it
    # The report's debt_location is the whole report's: a related location, the item stays at its report.
    assert result["relatedLocations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "agents/reviewer.md"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("task-1-scar.yaml")
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
    # src/app.py is not in the checkout: no link to it; each item at its own line of its report.
    places = [r["locations"][0]["physicalLocation"] for r in doc["runs"][0]["results"]]
    assert [p["artifactLocation"]["uri"] for p in places] == [
        "changes/2026-01-02_demo/scar-reports/task-1-scar.yaml"
    ] * 2
    assert [p["region"] for p in places] == [{"startLine": 5}, {"startLine": 6}]
    assert not any("relatedLocations" in r for r in doc["runs"][0]["results"])
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
    touch(tmp_path, "core/cache.py", "docs/x.md")
    doc = ex.to_sarif(feature(tmp_path, items, failures=[Problem("scar-reports/bad.yaml", None, "not YAML")]), {})
    validate_sarif(doc)
    run = doc["runs"][0]
    declared = set(run["originalUriBaseIds"])
    for r in run["results"]:
        assert re.fullmatch(r"[0-9a-f]{16}:\d+", r["partialFingerprints"]["primaryLocationLineHash"])
        physical = r["locations"][0]["physicalLocation"]
        assert physical["region"]["startLine"] >= 1
        assert physical["artifactLocation"]["uriBaseId"] in declared
    # A file named without a line is a related location (its line 1 would not be true): the item
    # is shown at its report line; an item with no known line, at line 1 of its report.
    assert [r["locations"][0]["physicalLocation"]["region"] for r in run["results"]] == [
        {"startLine": 3},
        {"startLine": 1},
        {"startLine": 4},
    ]
    assert run["results"][0]["relatedLocations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "core/cache.py", "uriBaseId": "SRCROOT"}
    }
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


# --------------------------------------------------------------------------- GitHub code scanning (issue 32)

ABSOLUTE_URI = re.compile(r"^[a-z][a-z0-9+.-]*://[^\s/]+/\S*$")


def github_rule_violations(doc: dict) -> list[str]:
    """The rules the SARIF multitool checks with ``--rule-kind "Gh;Sarif"`` that a scars log can
    break, checked here (the multitool itself runs in the next test when it is installed):
    GH2012 every rule has ``help``; SARIF2005 the tool has an ``informationUri``; GH1001 / GH1003
    / GH1005 every result has a physical location with a relative uri and a ``startLine``;
    and GitHub's own: one category per run, no two results with one dismiss-alerts key."""
    out: list[str] = []
    categories = set()
    keys: dict[tuple, int] = {}
    for n, run in enumerate(doc["runs"]):
        driver = run["tool"]["driver"]
        if not ABSOLUTE_URI.match(driver.get("informationUri") or ""):
            out.append(f"SARIF2005 runs[{n}].tool.driver has no informationUri")
        for rule in driver.get("rules") or []:
            if not (rule.get("help") or {}).get("text", "").strip():
                out.append(f"GH2012 rule {rule['id']} has no help")
        cat = (run.get("automationDetails") or {}).get("id")
        if not cat or cat in categories:
            out.append(f"run {n}: category {cat!r} missing or shared")
        categories.add(cat)
        for r in run["results"]:
            physical = (r.get("locations") or [{}])[0].get("physicalLocation")
            if not physical or "://" in physical["artifactLocation"]["uri"]:
                out.append(f"GH1001/GH1005 {r['ruleId']}: no relative physical location")
            elif not (physical.get("region") or {}).get("startLine"):
                out.append(f"GH1003 {r['ruleId']}: no startLine")
            else:
                key = ex.alert_key(r)
                keys[key] = keys.get(key, 0) + 1
    out += [f"alert key {k} held by {n} results" for k, n in keys.items() if n > 1]
    return out


def test_rules_have_help_and_the_tool_an_information_uri(tmp_path):
    """Before: the multitool's GH2012 failed three times (no rule had ``help``), SARIF2005 once."""
    doc = ex.to_sarif(sample(tmp_path), {})
    validate_sarif(doc)
    driver = doc["runs"][0]["tool"]["driver"]
    assert [r["id"] for r in driver["rules"]] == [
        "known_shortcuts",
        "silent_failure_conditions",
        "unverified_assumptions",
    ]
    for rule in driver["rules"]:
        assert rule["help"]["text"] == rule["help"]["markdown"] and "accept" in rule["help"]["text"]
    assert driver["informationUri"] == "https://pypi.org/project/scars/"
    assert github_rule_violations(doc) == []
    broken = json.loads(json.dumps(doc))
    del broken["runs"][0]["tool"]["driver"]["rules"][1]["help"]
    assert github_rule_violations(broken) == ["GH2012 rule silent_failure_conditions has no help"]


def test_the_sarif_multitool_finds_nothing_in_a_whole_repository_export(upstream, tmp_path):
    """Microsoft's SARIF multitool with GitHub's rules, when it is installed (``SARIF_MULTITOOL``
    names it, or ``Sarif.Multitool`` is on PATH; npm: @microsoft/sarif-multitool-linux)."""
    import os
    import shutil
    import subprocess

    tool = os.environ.get("SARIF_MULTITOOL") or shutil.which("Sarif.Multitool")
    if not tool:
        pytest.skip("the SARIF multitool is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(upstream / "samsara", repo)
    out, report = tmp_path / "all.sarif", tmp_path / "validation.sarif"
    assert main(["export", str(repo), "--format", "sarif", "-o", str(out)]) == 0
    cmd = [tool, "validate", "--rule-kind", "Gh;Sarif", str(out), "-o", str(report)]
    subprocess.run(cmd, check=True, capture_output=True, timeout=300)
    found = json.loads(report.read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["message"].get("arguments")) for r in found] == []


def two_features(root: Path) -> tuple[Path, Path]:
    f = make_repo(root)
    g = root / "changes" / "2026-01-03_other"
    (g / "scar-reports").mkdir(parents=True)
    (g / "scar-reports" / "task-1-scar.yaml").write_text(
        'task_id: task-1\nknown_shortcuts: []\nsilent_failure_conditions:\n  - "a timeout is swallowed"\n'
        "assumptions_made: []\n"
    )
    return f, g


def test_a_whole_repository_exports_one_run_per_feature_each_its_own_category(tmp_path, capsys, upstream):
    """Before: ``scars export REPO`` said "2 features found", exit 2; no run had a category."""
    two_features(tmp_path)
    out = tmp_path / "all.sarif"
    assert main(["export", str(tmp_path), "--format", "sarif", "-o", str(out)]) == 0
    assert "wrote 3 item(s) of 2 features as sarif" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    validate_sarif(doc)
    runs = doc["runs"]
    assert [r["automationDetails"]["id"] for r in runs] == ["scars/2026-01-02_demo/", "scars/2026-01-03_other/"]
    assert [len(r["results"]) for r in runs] == [2, 1]
    assert github_rule_violations(doc) == []
    assert main(["export", str(tmp_path), "--format", "json"]) == 0
    assert [f["feature"] for f in json.loads(capsys.readouterr().out)["features"]] == [
        "2026-01-02_demo",
        "2026-01-03_other",
    ]
    assert main(["export", str(tmp_path), "--format", "openvex", "--author", "dave"]) == 0
    vex = json.loads(capsys.readouterr().out)
    validate_openvex(vex)
    assert sorted({s["products"][0]["@id"] for s in vex["statements"]}) == [
        "pkg:generic/2026-01-02_demo",
        "pkg:generic/2026-01-03_other",
    ]
    # The upstream repository, whole: four runs, GitHub's rules hold.
    entries = [
        ex.FeatureExport(read_feature(d), {}, {}, None) for d in sorted((upstream / "samsara" / "changes").iterdir())
    ]
    whole = ex.export_many(entries, "sarif")
    validate_sarif(whole)
    assert len(whole["runs"]) == 4 and github_rule_violations(whole) == []


def _report(feature_dir: Path, body: str) -> None:
    (feature_dir / "scar-reports").mkdir(parents=True, exist_ok=True)
    (feature_dir / "scar-reports" / "task-1-scar.yaml").write_text(body)


def test_every_result_has_an_alert_key_of_its_own_and_a_true_place(tmp_path):
    """Before: items whose ``where`` named a file without a line, or shared the report's
    ``debt_location``, were all at "file, line 1" (248 of 344 results of a real repository
    shared a dismiss-alerts key)."""
    touch(tmp_path, "src/app.py", "src/db.py")
    f = tmp_path / "changes" / "2026-01-02_demo"
    _report(
        f,
        "task_id: task-1\ndebt_location: src/app.py:10\n"
        "known_shortcuts:\n"
        "  - {what: no retry, bites_when: load, where: src/app.py}\n"  # a file, no line
        "  - {what: no backoff, bites_when: load, where: src/app.py}\n"  # the same file, no line
        "  - {what: cache never evicts, bites_when: load, where: 'src/db.py:7'}\n"  # a true line
        "  - {what: cache is global, bites_when: load, where: 'src/db.py:7'}\n"  # the same line again
        "silent_failure_conditions: [first on a line, second on that line]\n"
        "assumptions_made: []\n",
    )
    feat = read_feature(f)
    doc = ex.to_sarif(feat, {})
    validate_sarif(doc)
    results = doc["runs"][0]["results"]
    assert len(results) == len(feat.items) == 6
    assert github_rule_violations(doc) == []
    report = "changes/2026-01-02_demo/scar-reports/task-1-scar.yaml"
    lines = (f / "scar-reports" / "task-1-scar.yaml").read_text().splitlines()
    for r in results:
        _, uri, line, col = ex.alert_key(r)
        if uri == report:
            # true: the item's text is on that line of its report (at that column, when one is given)
            head = r["message"]["text"].split()[0]
            assert head in lines[line - 1], (r["message"]["text"], line)
            if col is not None:
                assert lines[line - 1][col - 1 :].startswith(r["message"]["text"][:5]), (r["message"]["text"], col)
        else:
            assert (uri, line) == ("src/db.py", 7)
    by_text = {r["message"]["text"]: r for r in results}
    assert ex.alert_key(by_text["cache never evicts"])[1:] == ("src/db.py", 7, None)
    assert ex.alert_key(by_text["cache is global"])[1] == report  # the line is taken: at its report
    related = by_text["no retry"]["relatedLocations"]
    assert [r["physicalLocation"]["artifactLocation"]["uri"] for r in related] == ["src/app.py", "src/app.py"]
    assert "region" not in related[0]["physicalLocation"] and related[1]["physicalLocation"]["region"] == {
        "startLine": 10
    }
    first, second = (by_text[t] for t in ("first on a line", "second on that line"))
    assert ex.alert_key(first)[2] == ex.alert_key(second)[2]  # one line, two columns
    assert (
        ex.alert_key(first)[3] is None
        and ex.alert_key(second)[3] == lines[ex.alert_key(second)[2] - 1].index("second") + 1
    )


def test_alert_keys_stay_distinct_across_the_features_of_one_export(tmp_path):
    touch(tmp_path, "src/db.py")
    for name in ("2026-01-02_a", "2026-01-03_b"):
        _report(
            tmp_path / "changes" / name,
            "known_shortcuts:\n  - {what: shared, bites_when: load, where: 'src/db.py:7'}\n",
        )
    entries = [ex.FeatureExport(read_feature(d), {}, {}, None) for d in sorted((tmp_path / "changes").iterdir())]
    doc = ex.export_many(entries, "sarif")
    validate_sarif(doc)
    keys = [ex.alert_key(r) for run in doc["runs"] for r in run["results"]]
    assert keys[0][1:] == ("src/db.py", 7, None) and keys[1][1] == "changes/2026-01-03_b/scar-reports/task-1-scar.yaml"
    assert github_rule_violations(doc) == []


@pytest.mark.parametrize(
    "where",
    ["src/missing.py:3", "src/missing.py", "link/secret.py:1", "src/:4"],
)
def test_a_path_the_checkout_does_not_have_is_never_a_location(tmp_path, where):
    """Before: 75 of 344 result URIs named files that do not exist in the checkout."""
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("s\n")
    (tmp_path / "repo").mkdir()
    (tmp_path / "repo" / "link").symlink_to(tmp_path / "outside")
    (tmp_path / "repo" / "src").mkdir()  # a directory is no file
    f = tmp_path / "repo" / "changes" / "2026-01-02_demo"
    _report(f, f"known_shortcuts:\n  - {{what: gone, bites_when: load, where: '{where}'}}\n")
    doc = ex.to_sarif(read_feature(f), {})
    validate_sarif(doc)
    (result,) = doc["runs"][0]["results"]
    uris = [
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for loc in result["locations"] + result.get("relatedLocations", [])
    ]
    assert uris == ["changes/2026-01-02_demo/scar-reports/task-1-scar.yaml"]
    assert ex.alert_key(result)[2] == 2
    assert result["properties"]["where"] == where  # the text is kept, as text


def test_an_existing_file_named_with_a_line_is_the_location(tmp_path):
    touch(tmp_path, "src/there.py")
    f = tmp_path / "changes" / "2026-01-02_demo"
    _report(f, "known_shortcuts:\n  - {what: here, bites_when: load, where: 'src/there.py:3:5'}\n")
    (result,) = ex.to_sarif(read_feature(f), {})["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/there.py", "uriBaseId": "SRCROOT"},
        "region": {"startLine": 3, "startColumn": 5},
    }


def test_a_line_past_the_files_end_is_not_a_location(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "short.py").write_text("a\nb\nc\n")  # three lines
    f = tmp_path / "changes" / "2026-01-02_demo"
    _report(
        f,
        "known_shortcuts:\n"
        "  - {what: last, bites_when: load, where: 'src/short.py:3'}\n"
        "  - {what: past, bites_when: load, where: 'src/short.py:4'}\n",
    )
    last, past = ex.to_sarif(read_feature(f), {})["runs"][0]["results"]
    assert ex.alert_key(last)[1:] == ("src/short.py", 3, None)
    assert ex.alert_key(past)[1:] == ("changes/2026-01-02_demo/scar-reports/task-1-scar.yaml", 3, None)
    assert past["relatedLocations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "src/short.py", "uriBaseId": "SRCROOT"}
    }


def _runs(*sizes: int) -> dict:
    return {"runs": [{"properties": {"feature": f"f{n}"}, "results": [{}] * size} for n, size in enumerate(sizes)]}


def test_github_limits_at_the_boundary():
    assert ex.GITHUB_RESULTS_PER_RUN == 25_000 and ex.GITHUB_RUNS_PER_FILE == 20
    # the real limits, both sides
    assert ex.github_limit_warnings(_runs(25_000)) == []
    (warning,) = ex.github_limit_warnings(_runs(25_001))
    assert warning == (
        "feature f0: 25,001 results exceed GitHub code scanning's limit of 25,000 results per run: "
        "GitHub will not keep 1 of them (the file holds them all)"
    )
    assert ex.github_limit_warnings(_runs(*[1] * 20)) == []
    (warning,) = ex.github_limit_warnings(_runs(*[1] * 21))
    assert warning.startswith("21 runs (features) in one file exceed GitHub code scanning's limit of 20 runs")
    # an injected limit
    assert ex.github_limit_warnings(_runs(3, 4), results_per_run=3) == [
        "feature f1: 4 results exceed GitHub code scanning's limit of 3 results per run: "
        "GitHub will not keep 1 of them (the file holds them all)"
    ]


def test_the_command_warns_when_an_export_exceeds_githubs_limit(tmp_path, capsys, monkeypatch):
    """Before: a 27,000-item export went out without a word. The log is still written whole."""
    f = make_repo(tmp_path)  # two items
    out = tmp_path / "x.sarif"
    monkeypatch.setattr(ex.github_limit_warnings, "__kwdefaults__", {"results_per_run": 2, "runs_per_file": 20})
    assert main(["export", str(f), "--format", "sarif", "-o", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
    monkeypatch.setattr(ex.github_limit_warnings, "__kwdefaults__", {"results_per_run": 1, "runs_per_file": 20})
    assert main(["export", str(f), "--format", "sarif", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "scars: warning: feature 2026-01-02_demo: 2 results exceed GitHub code scanning's limit of 1 results" in err
    assert len(json.loads(out.read_text())["runs"][0]["results"]) == 2


def test_warnings_reach_the_terminal_inert(tmp_path, capsys, monkeypatch):
    f = tmp_path / "changes" / "2026-01-02_demo\x1b]0;pwned\x07"
    _report(f, "known_shortcuts: [a, b]\n")
    monkeypatch.setattr(ex.github_limit_warnings, "__kwdefaults__", {"results_per_run": 1, "runs_per_file": 20})
    assert main(["export", str(f), "--format", "sarif", "-o", str(tmp_path / "o.sarif")]) == 0
    err = capsys.readouterr().err
    assert "scars: warning: feature 2026-01-02_demo\u241b]0;pwned\u2407: 2 results exceed" in err
    assert "\x1b" not in err and "\x07" not in err


# OpenVEX 0.2.0's rules (openvex/spec, openvex_json_schema.json) that a scars document can break,
# written out here: required fields, statements non-empty and unique, the status enum, an
# affected statement's action_statement, no field the spec does not define.
OPENVEX_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["@context", "@id", "author", "timestamp", "version", "statements"],
    "additionalProperties": False,
    "properties": {
        "@context": {"type": "string", "format": "uri"},
        "@id": {"type": "string", "format": "uri"},
        "author": {"type": "string"},
        "role": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
        "last_updated": {"type": "string", "format": "date-time"},
        "version": {"type": "integer", "minimum": 1},
        "tooling": {"type": "string"},
        "statements": {
            "type": "array",
            "uniqueItems": True,
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["vulnerability", "status"],
                "additionalProperties": False,
                "properties": {
                    "@id": {"type": "string"},
                    "version": {"type": "integer", "minimum": 1},
                    "vulnerability": {
                        "type": "object",
                        "required": ["name"],
                        "additionalProperties": False,
                        "properties": {
                            "@id": {"type": "string"},
                            "name": {"type": "string"},
                            "description": {"type": "string"},
                            "aliases": {"type": "array", "uniqueItems": True, "items": {"type": "string"}},
                        },
                    },
                    "timestamp": {"type": "string", "format": "date-time"},
                    "last_updated": {"type": "string", "format": "date-time"},
                    "products": {
                        "type": "array",
                        "uniqueItems": True,
                        "items": {"type": "object", "properties": {"@id": {"type": "string"}}},
                    },
                    "status": {"enum": ["not_affected", "affected", "fixed", "under_investigation"]},
                    "supplier": {"type": "string"},
                    "status_notes": {"type": "string"},
                    "justification": {"type": "string"},
                    "impact_statement": {"type": "string"},
                    "action_statement": {"type": "string"},
                    "action_statement_timestamp": {"type": "string", "format": "date-time"},
                },
                "allOf": [
                    {
                        "if": {"properties": {"status": {"const": "affected"}}},
                        "then": {"required": ["action_statement"]},
                    }
                ],
            },
        },
    },
}


def validate_openvex(doc: dict) -> None:
    jsonschema.Draft202012Validator(OPENVEX_SCHEMA, format_checker=jsonschema.FormatChecker()).validate(doc)


def test_openvex_documents_validate_and_an_empty_feature_is_refused(tmp_path, capsys):
    """Before: a feature with no items gave ``statements: []``, which the schema rejects."""
    decisions = {d.item_id: d for d in (ACCEPT, DEFER, FIX)}
    validate_openvex(ex.to_openvex(sample(tmp_path), decisions, timestamp="2026-01-03T00:00:00Z"))
    with pytest.raises(jsonschema.ValidationError):
        validate_openvex({**ex.to_openvex(sample(tmp_path), decisions), "statements": []})
    with pytest.raises(ex.NothingToState, match="needs at least one statement"):
        ex.to_openvex(feature(tmp_path, []), {})
    # one resolved item is one statement: enough
    validate_openvex(ex.to_openvex(feature(tmp_path, [], resolved=[item(9, resolved=True)]), {}))
    empty = tmp_path / "changes" / "2026-01-02_empty"
    _report(empty, "task_id: task-1\nknown_shortcuts: []\nsilent_failure_conditions: []\nassumptions_made: []\n")
    out = tmp_path / "x.vex.json"
    assert main(["export", str(empty), "--format", "openvex", "-o", str(out)]) == 1
    assert "needs at least one statement" in capsys.readouterr().err and not out.exists()
    # SARIF and JSON of it are fine (no result is a valid run)
    assert main(["export", str(empty), "--format", "sarif"]) == 0
    validate_sarif(json.loads(capsys.readouterr().out))


def test_the_documented_upload_workflow_uploads_what_it_exports_and_dismisses_from_it():
    """The README's (or, once moved, docs/'s) GitHub workflow: the file scars writes is the one
    uploaded and the one dismiss-alerts reads, by the upload step's sarif-id, on the default branch."""
    import shlex

    import yaml

    root = Path(__file__).resolve().parents[3]
    pages = [root / "README.md", *sorted((root / "docs").rglob("*.md"))]
    blocks = [b for page in pages if page.is_file() for b in re.findall(r"```yaml\n(.*?)```", page.read_text(), re.S)]
    (snippet,) = [yaml.safe_load(b) for b in blocks if "advanced-security/dismiss-alerts" in b]
    assert snippet["permissions"]["security-events"] == "write"
    assert snippet[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as True
    steps = snippet["jobs"]["scars"]["steps"]
    (export,) = [shlex.split(s["run"]) for s in steps if "scars export" in s.get("run", "")]
    assert export[:2] == ["scars", "export"] and export[export.index("--format") + 1] == "sarif"
    written = export[export.index("-o") + 1]
    (upload,) = [s for s in steps if s.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    (dismiss,) = [s for s in steps if s.get("uses", "").startswith("advanced-security/dismiss-alerts@")]
    assert upload["with"]["sarif_file"] == dismiss["with"]["sarif-file"] == written
    assert dismiss["with"]["sarif-id"] == "${{ steps." + upload["id"] + ".outputs.sarif-id }}"
    assert upload["with"]["wait-for-processing"] is True
