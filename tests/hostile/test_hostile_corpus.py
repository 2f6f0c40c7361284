"""The hostile-input corpus against the samsara reader and `scars status`.

Every case runs in a forked child with a 1 GiB address-space cap and a hang guard (see
isolate.py), so a crash, a blow-up or a blocked read fails the test instead of killing it.
Time is measured (``Outcome.elapsed``) but only bounded by the guard: timing belongs in bench/.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.corpus import (
    FEATURE,
    GOOD_TEXTS,
    OK_REPORT_ITEMS,
    OTHER_CASES,
    REPORT_CASES,
    SECRET,
    Case,
    build_all,
    build_case,
    build_registry_missing,
    report_path,
    restore_permissions,
    target_path,
)
from tests.hostile.isolate import GIB, run_isolated
from tests.hostile.probe import probe

HANG_GUARD = 30.0  # seconds; a hang guard only, not a performance bound


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    yield root
    restore_permissions(tmp_path)


def _probe(feature: Path) -> dict:
    out = run_isolated(lambda: probe(feature), timeout=HANG_GUARD, mem_bytes=GIB)
    assert out.status == "ok", out.explain()
    return out.value


def _assert_status_clean(res: dict, label: str) -> None:
    for key in ("status", "status_json"):
        s = res[key]
        assert s["rc"] == 0, f"{label}: scars {key} exited {s['rc']}: {s['stderr']}"
        assert not s["traceback"], f"{label}: traceback in scars {key} output"
        assert not s["raw_control"], f"{label}: raw control characters {s['raw_control']} in scars {key} output"
        assert not s["secret"], f"{label}: text of a file outside the repository shown by scars {key}"
    # The plain report stays a summary: no line longer than a wide terminal's worth of cells
    # times a generous factor, whatever the input held (a 5 MB scalar, a 200 KB line).
    assert res["status"]["size"] <= 100_000, f"{label}: scars status printed {res['status']['size']} characters"
    assert res["status"]["max_line"] <= 400, f"{label}: a {res['status']['max_line']}-character line in scars status"


def _good_items_counted(res: dict) -> None:
    texts = [it["text"] for it in res["items"] if it["counted"] and it["file"].endswith("good-scar.yaml")]
    for t in GOOD_TEXTS:
        assert any(t in x for x in texts), f"good report's item {t!r} not counted: {res['items'][:5]}"


def _failure_for(res: dict, name: str) -> dict | None:
    for pf in res["failures"]:
        if Path(pf["file"]).name == name:
            return pf
    return None


@pytest.mark.parametrize("case", REPORT_CASES, ids=lambda c: c.name)
def test_hostile_report(case: Case, repo: Path):
    feature = build_case(repo, case)
    res = _probe(feature)
    fname = report_path(repo, case.name).name
    pf = _failure_for(res, fname)
    read_ok = any(Path(r["file"]).name == fname and not r["failed"] for r in res["reports"])
    if case.expect == "failure":
        assert pf is not None, f"{case.name}: not listed as a parse failure; failures={res['failures']}"
        assert pf["reason"].strip(), f"{case.name}: empty reason"
        assert re.search(case.reason, pf["reason"], re.I), (
            f"{case.name}: reason {pf['reason']!r} does not say why ({case.reason})"
        )
        assert fname in res["status_json"].get("json_failures", []) or any(
            Path(x).name == fname for x in res["status_json"].get("json_failures", [])
        ), f"{case.name}: missing from status --json parse_failures"
        # At 80 columns a long name may be cut with "…", but it stays recognisable.
        assert fname[:20] in res["status"]["head"], f"{case.name}: not named in scars status"
    elif case.expect == "ok":
        assert pf is None, f"{case.name}: a well-formed file was refused: {pf}"
        assert read_ok, f"{case.name}: not read: {res['reports']}"
        n = sum(1 for it in res["items"] if Path(it["file"]).name == fname and it["counted"])
        assert n >= 1, f"{case.name}: no counted items"
    else:
        assert pf is not None or read_ok, f"{case.name}: neither read nor listed (dropped silently)"
        if pf is not None:
            assert pf["reason"].strip()
    # The rest of the feature is unaffected.
    _good_items_counted(res)
    _assert_status_clean(res, case.name)
    assert not (repo / "PWNED").exists(), "a YAML tag ran code"
    for it in res["items"]:
        assert SECRET not in it["text"], f"{case.name}: a file outside the repository was read"


def test_crlf_and_bom_read_the_same_items(repo: Path):
    """CRLF and BOM variants give exactly the items of the plain file (no stray \\r)."""
    by_case = {}
    for name in ("crlf", "utf8-bom"):
        case = next(c for c in REPORT_CASES if c.name == name)
        root = repo.parent / name
        res = _probe(build_case(root, case))
        by_case[name] = sorted(it["text"] for it in res["items"] if Path(it["file"]).name == f"{name}-scar.yaml")
    assert by_case["crlf"] == by_case["utf8-bom"]
    assert len(by_case["crlf"]) == OK_REPORT_ITEMS
    assert not any("\r" in t for t in by_case["crlf"])


def _mentions(res: dict, case: Case, root: Path) -> bool:
    base = target_path(root, case).name
    hay = [pf["file"] + " " + pf["reason"] for pf in res["failures"]] + res["warnings"] + res["log_warnings"]
    if res["registry"]:
        hay.append(res["registry"]["reason"] or "")
    return any(base in h for h in hay)


@pytest.mark.parametrize("case", OTHER_CASES, ids=lambda c: c.id.replace(":", "-"))
def test_hostile_other_file(case: Case, repo: Path):
    """The registry, index.yaml, iteration-log.yaml, auto-decisions.md and pre-thinking.md."""
    feature = build_case(repo, case)
    if case.target == "registry":
        _write_ref_report(repo)
    res = _probe(feature)
    if case.target == "registry":
        state = res["registry"]["state"] if res["registry"] else None
        if case.expect == "failure":
            assert state == "unreadable", f"{case.id}: registry state {state}, expected unreadable"
            assert res["registry"]["reason"].strip(), f"{case.id}: no reason"
    elif case.expect == "failure":
        assert _mentions(res, case, repo), (
            f"{case.id}: the file is not named in parse failures or warnings: "
            f"{res['failures']} {res['warnings']} {res['log_warnings']}"
        )
    if case.target == "registry" and case.expect == "failure":
        # An unreadable registry is one parse failure of its own, and every systemic_ref is
        # unknown and still counted, as with a missing registry (formats.md §1.7).
        registry_failures = [pf for pf in res["failures"] if pf["file"] == ".samsara/systemic-scars.yaml"]
        assert len(registry_failures) == 1 and len(res["failures"]) == 1, res["failures"]
        assert res["status_json"]["json_failures"] == [".samsara/systemic-scars.yaml"]
        assert not res["dangling"], res["dangling"]
        refs = [it for it in res["items"] if Path(it["file"]).name == "ref-scar.yaml"]
        assert refs and all(it["counted"] and it["registry_state"] == "unknown" for it in refs), refs
        assert res["signal_lost"] == _missing_registry_signal_lost(repo.parent / "missing")
    elif case.target == "registry":
        # Readable, but lacking the ids (junk entries): every ref dangles and its report is
        # listed, never dropped (the good report's resolved ref is looked up too).
        assert res["registry"]["state"] == "present"
        assert sorted(map(tuple, res["dangling"])) == [
            ("scar-reports/good-scar.yaml", "known-systemic-fact"),
            ("scar-reports/ref-scar.yaml", "some-id"),
        ]
        assert _failure_for(res, "ref-scar.yaml") and _failure_for(res, "good-scar.yaml")
    if case.target != "registry" or case.expect == "failure":
        # Scar reports are read and counted whatever happened to the other file.
        _good_items_counted(res)
    _assert_status_clean(res, case.id)
    assert not (repo / "PWNED").exists(), "a YAML tag ran code"


def _write_ref_report(root: Path) -> None:
    """A report holding one counted systemic_ref to an id no registry of the corpus has."""
    report_path(root, "ref").write_text(
        "task_id: t\ncompletion_status: done\nknown_shortcuts:\n  - systemic_ref: some-id\n    note: n\n"
        "silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: true\ndebt_location: x\n",
        encoding="utf-8",
    )


def _missing_registry_signal_lost(root: Path) -> int:
    from scars.core.samsara.feature import read_feature

    feature = build_registry_missing(root)
    _write_ref_report(root)
    f = read_feature(feature)
    assert f.registry.state == "missing" and not f.parse_failures
    return f.signal_lost


def test_registry_missing_marks_refs_unknown_and_counts_them(repo: Path):
    feature = build_registry_missing(repo)
    _write_ref_report(repo)
    res = _probe(feature)
    assert res["registry"]["state"] == "missing"
    refs = [it for it in res["items"] if Path(it["file"]).name == "ref-scar.yaml"]
    assert refs and all(it["counted"] and it["registry_state"] == "unknown" for it in refs)
    assert _failure_for(res, "ref-scar.yaml") is None


def _limit_as():  # preexec_fn for subprocesses: 1 GiB of address space
    resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))


def test_status_subprocess_on_whole_corpus(repo: Path):
    """`scars status` and `--json` as real processes on one feature holding every report case."""
    feature = build_all(repo)
    env = dict(os.environ, NO_COLOR="1", COLUMNS="80")
    runs = {}
    for args in ([], ["--json"]):
        p = subprocess.run(
            [sys.executable, "-m", "scars.tui.cli.main", "status", *args, str(feature)],
            capture_output=True,
            timeout=120,
            env=env,
            preexec_fn=_limit_as,
        )
        assert p.returncode == 0, p.stderr.decode(errors="replace")[-3000:]
        assert b"Traceback" not in p.stderr + p.stdout
        assert b"\x1b" not in p.stdout + p.stderr
        assert SECRET.encode() not in p.stdout + p.stderr
        runs[bool(args)] = p.stdout
    data = json.loads(runs[True])
    failed = {Path(pf["file"]).name for pf in data["parse_failures"]}
    for case in REPORT_CASES:
        fname = report_path(repo, case.name).name
        if case.expect == "failure":
            assert fname in failed, f"{case.name} not listed by status --json"
            assert fname[:20].encode() in runs[False], f"{case.name} not named by scars status"
        elif case.expect == "ok":
            assert fname not in failed
    # The loop's partner file is listed too, however its loop resolved.
    assert "loop-b-scar.yaml" in failed
    assert data["signal_lost"] >= len(GOOD_TEXTS)
    assert not (repo / "PWNED").exists()
    assert FEATURE in data.get("feature", FEATURE)
