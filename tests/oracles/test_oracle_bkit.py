"""bkit's own code on what scars wrote (issue 15, points 5 and 8; the max-iterations and sprint gates).

Every state a bkit gate writes is read back by bkit's ``getPdcaStatusFull``; its ``phaseNumber``
is ``getPhaseNumber``'s; every ``state_transition`` step scars recorded is one bkit's state machine
has (``findTransition``) and whose guard holds on the state before it (``canTransition`` with the
context bkit's ``loadContext`` builds: the loop-breaker limit of ``bkit.config.json``).
A paused sprint is made by bkit's own ``checkAutoPauseTriggers`` + ``pauseSprint``; after a
resume answer, bkit's ``resumeSprint`` accepts the sprint scars wrote, and a phase move is one of
``canTransitionSprint``'s. Run with node (CLAUDE_PROJECT_DIR = the project under test).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.loops import discover_loops
from scars.core.loops.bkit import reader
from tests.factories import bkit_project, clean_env
from tests.oracles.conftest import need

USER = "alice"


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


@pytest.fixture
def bkit_lib(oracles) -> Path:
    need("node")
    return oracles / "bkit" / "lib"


def node(lib: Path, project: Path, script: str, *args: str) -> dict:
    """Run ``script`` under node with bkit's lib as ``LIB`` and the project as bkit's PROJECT_DIR;
    the script prints one JSON value."""
    env = {
        **os.environ,
        "CLAUDE_PROJECT_DIR": str(project),
        "CLAUDE_PLUGIN_DATA": str(project / ".plugin-data"),
        "BKIT_LIB": str(lib),
    }
    proc = subprocess.run(
        ["node", "-e", "const LIB = process.env.BKIT_LIB;\n" + script, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        cwd=project,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


CHECK_FEATURE = r"""
const name = process.argv[1];
const before = JSON.parse(process.argv[2]);
const status = require(LIB + '/pdca/status');
const phase = require(LIB + '/pdca/phase');
const sm = require(LIB + '/pdca/state-machine');
const { getConfig } = require(LIB + '/core');
const full = status.getPdcaStatusFull(true);
const f = full && full.features[name];
const steps = (full.history || []).filter(h => h.feature === name && h.action === 'state_transition');
let ctx = {feature: name, iterationCount: before.iterationCount, matchRate: before.matchRate,
           maxIterations: getConfig('guardrails.loopBreaker.maxPdcaIterations', 5)};
const checked = steps.map(h => {
  const t = sm.findTransition(h.from, h.event);
  const ok = !!t && (t.to === h.to) && sm.canTransition(h.from, h.event, ctx);
  return {event: h.event, from: h.from, to: h.to, ok};
});
console.log(JSON.stringify({
  read: !!f, phase: f && f.phase, phaseNumber: f && f.phaseNumber,
  expectedNumber: f && phase.getPhaseNumber(f.phase),
  lastIterationStatus: f && f.lastIterationStatus,
  steps: checked,
  active: full.activeFeatures, primary: full.primaryFeature,
}));
"""

ITERATOR_STATUSES = {"in_progress", "completed", "max_iterations", "improved", "unknown"}


def check(lib: Path, project: Path, name: str, before: dict) -> dict:
    out = node(lib, project, CHECK_FEATURE, name, json.dumps(before))
    assert out["read"], "getPdcaStatusFull could not read the feature scars wrote"
    assert out["phaseNumber"] == out["expectedNumber"], out
    assert out["lastIterationStatus"] in ITERATOR_STATUSES | {None}
    assert all(step["ok"] for step in out["steps"]), out["steps"]
    return out


def project(tmp_path: Path, *, phase="check", rate=82, count=5, limit: int | None = None) -> Path:
    root = tmp_path / "proj"
    sf = bkit_project(root, rate=rate, count=count, history=(rate,))
    data = json.loads(sf.read_text())
    data["features"]["login"].update(phase=phase, phaseNumber=reader.PHASE_NUMBERS[phase])
    sf.write_text(json.dumps(data, indent=2) + "\n")
    if limit is not None:
        (root / "bkit.config.json").write_text(
            json.dumps({"guardrails": {"loopBreaker": {"maxPdcaIterations": limit}}})
        )
    return root


@pytest.mark.parametrize("phase", ["check", "act"])
def test_partial_is_bkits_forced_report(bkit_lib, tmp_path, phase):
    root = project(tmp_path, phase=phase)
    gates.record(gates.gather("pdca-continue", root), "partial", "two UX empty states remain", user=USER)
    out = check(bkit_lib, root, "login", {"iterationCount": 5, "matchRate": 82})
    assert out["phase"] == "report" and out["phaseNumber"] == 7
    expected = ["REPORT_DONE"] if phase == "check" else ["ANALYZE_DONE", "REPORT_DONE"]
    assert [s["event"] for s in out["steps"]] == expected


def test_accept_at_max_iterations_is_the_forced_report(bkit_lib, tmp_path):
    root = project(tmp_path, phase="act", limit=3, count=3)
    ev = gates.gather("pdca-max-iterations", root)
    gates.record(ev, "accept", "generate the report with the two empty states flagged", user=USER)
    out = check(bkit_lib, root, "login", {"iterationCount": 3, "matchRate": 82})
    assert out["phase"] == "report"


def test_stop_below_the_threshold_is_abandon(bkit_lib, tmp_path):
    root = project(tmp_path, count=2)
    gates.record(gates.gather("pdca-continue", root), "stop", "the login redesign replaces this feature", user=USER)
    out = check(bkit_lib, root, "login", {"iterationCount": 2, "matchRate": 82})
    assert (out["phase"], out["phaseNumber"]) == ("archived", 8)
    assert [s["event"] for s in out["steps"]] == ["ABANDON"]
    assert "login" not in out["active"] and out["primary"] is None
    assert not any(s.waiting_for_human for s in discover_loops(root))  # the inbox clears


def test_stop_at_a_passing_rate_is_match_pass(bkit_lib, tmp_path):
    root = project(tmp_path, phase="act", rate=93, count=2)
    gates.record(gates.gather("pdca-continue", root), "stop", "93% passes the threshold", user=USER)
    out = check(bkit_lib, root, "login", {"iterationCount": 2, "matchRate": 93})
    assert out["phase"] == "qa" and [s["event"] for s in out["steps"]] == ["ANALYZE_DONE", "MATCH_PASS"]


@pytest.mark.parametrize("answer", ["manual-fix", "update-design", "iterate"])
def test_answers_that_move_nothing_stay_readable_and_clear_the_inbox(bkit_lib, tmp_path, answer):
    root = project(tmp_path, count=5 if answer != "iterate" else 2)
    gate = "pdca-continue" if answer == "iterate" else "pdca-max-iterations"
    reason = None if answer == "manual-fix" else "the design names a field the API dropped on purpose"
    if answer == "iterate":
        reason = None
    gates.record(gates.gather(gate, root), answer, reason, user=USER)
    out = check(bkit_lib, root, "login", {"iterationCount": 5, "matchRate": 82})
    assert out["phase"] == "check" and out["steps"] == []
    [state] = [s for s in discover_loops(root) if s.kind == "bkit"]
    assert not state.waiting_for_human


# --------------------------------------------------------------------------- sprints

PAUSE = r"""
const { createSprint, cloneSprint } = require(LIB + '/domain/sprint');
const ap = require(LIB + '/application/sprint-lifecycle/auto-pause');
const spec = JSON.parse(process.argv[1]);
let s = createSprint({id: 's1', name: 'Sprint one', features: ['login'], phase: spec.phase});
s = cloneSprint(s, spec.changes);
const hits = ap.checkAutoPauseTriggers(s, {now: Date.parse(spec.now)});
const r = ap.pauseSprint(s, hits, {clock: () => spec.now});
console.log(JSON.stringify(r.sprint));
"""

RESUME = r"""
const ap = require(LIB + '/application/sprint-lifecycle/auto-pause');
const tr = require(LIB + '/application/sprint-lifecycle/transitions');
const before = JSON.parse(process.argv[1]);
const after = JSON.parse(process.argv[2]);
const r = ap.resumeSprint({...after, status: 'paused'}, {env: {now: Date.now()}});
console.log(JSON.stringify({resumed: r.ok, blocked: r.blockedReason || null,
  still: (r.triggersStillFiring || []).map(t => t.triggerId),
  phaseMove: tr.canTransitionSprint(before.phase, after.phase)}));
"""


def paused_sprint(lib: Path, root: Path, phase: str, changes: dict, now: str = "2026-03-01T12:00:00.000Z") -> Path:
    data = node(lib, root, PAUSE, json.dumps({"phase": phase, "changes": changes, "now": now}))
    path = root / ".bkit" / "state" / "sprints" / "s1.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def history(*rates):
    return [{"iteration": i, "matchRate": r, "fixedTaskIds": [], "durationMs": None} for i, r in enumerate(rates, 1)]


def test_bkits_own_pause_is_waiting(bkit_lib, tmp_path):
    """Before: scars looked for a `blocked` key bkit never writes; bkit writes status paused."""
    root = tmp_path / "proj"
    root.mkdir()
    path = paused_sprint(
        bkit_lib, root, "iterate", {"iterateHistory": history(70, 75, 80, 82, 84), "kpi": {"matchRate": 84}}
    )
    data = json.loads(path.read_text())
    assert data["status"] == "paused" and data["autoPause"]["lastTrigger"] == "ITERATION_EXHAUSTED"
    [state] = discover_loops(root)
    assert state.waiting_for_human and "ITERATION_EXHAUSTED" in state.reason
    assert "forward fix / carry to next sprint / abort" in state.reason


def resume_check(lib: Path, root: Path, before: dict, path: Path) -> dict:
    return node(lib, root, RESUME, json.dumps(before), path.read_text())


def test_increase_budget_resumes_as_bkit_would(bkit_lib, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    path = paused_sprint(bkit_lib, root, "do", {"kpi": {"cumulativeTokens": 1_500_000, "matchRate": None}})
    before = json.loads(path.read_text())
    assert before["autoPause"]["lastTrigger"] == "BUDGET_EXCEEDED"
    ev = gates.gather("sprint-pause", root, value="2000000")
    assert "fix-resume" in ev.refused  # not an action of BUDGET_EXCEEDED
    gates.record(ev, "increase-budget", "the migration needs the extra half million tokens", user=USER)
    out = resume_check(bkit_lib, root, before, path)
    assert out["resumed"] and out["phaseMove"]["ok"]
    assert not discover_loops(root)[0].waiting_for_human


def test_a_resume_bkit_would_refuse_is_refused(bkit_lib, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    paused_sprint(bkit_lib, root, "do", {"kpi": {"cumulativeTokens": 1_500_000, "matchRate": None}})
    ev = gates.gather("sprint-pause", root, value="1200000")  # still below the tokens used
    assert "not above the tokens used" in ev.refused["increase-budget"]


def test_force_advance_is_a_legal_sprint_transition(bkit_lib, tmp_path):
    root = tmp_path / "proj"
    root.mkdir()
    changes = {"phaseHistory": [{"phase": "design", "enteredAt": "2026-03-01T00:00:00.000Z", "exitedAt": None}]}
    path = paused_sprint(bkit_lib, root, "design", changes, now="2026-03-01T12:00:00.000Z")
    before = json.loads(path.read_text())
    assert before["autoPause"]["lastTrigger"] == "PHASE_TIMEOUT"
    gates.record(gates.gather("sprint-pause", root), "force-advance", "the design is signed off on paper", user=USER)
    after = json.loads(path.read_text())
    assert (after["phase"], after["status"]) == ("do", "active")
    out = resume_check(bkit_lib, root, before, path)
    assert out["phaseMove"]["ok"] and out["resumed"]


@pytest.mark.parametrize("answer", ["forward-fix", "carry-over", "abort"])
def test_iteration_exhausted_actions(bkit_lib, tmp_path, answer):
    root = tmp_path / "proj"
    root.mkdir()
    path = paused_sprint(
        bkit_lib, root, "iterate", {"iterateHistory": history(70, 75, 80, 82, 84), "kpi": {"matchRate": 84}}
    )
    before = json.loads(path.read_text())
    ev = gates.gather("sprint-pause", root)
    assert "fix-resume" in ev.refused and "increase-budget" in ev.refused
    gates.record(ev, answer, "84% is what this sprint can reach; login moves on", user=USER)
    after = json.loads(path.read_text())
    out = resume_check(bkit_lib, root, before, path)
    assert out["phaseMove"]["ok"]
    if answer == "forward-fix":
        assert out["resumed"] and "ITERATION_EXHAUSTED" not in after["autoPause"]["armed"]
    else:
        assert (after["phase"], after["status"]) == ("archived", "archived")
    assert after["annotations"][-1]["answer"] == answer
    assert not discover_loops(root)[0].waiting_for_human


GUARDS = r"""
const { GUARDS } = require(LIB + '/pdca/state-transitions');
const limit = Number(process.argv[1]);
console.log(JSON.stringify([0, 1, 2, 3, 4].map(count => {
  const ctx = {iterationCount: count, maxIterations: limit};
  return [count, GUARDS.guardCanIterate(ctx), GUARDS.guardMaxIterReached(ctx)];
})));
"""


def test_the_iteration_limit_is_bkits_guard_in_the_reader_and_the_gate(bkit_lib, tmp_path):
    """At, below and above the loop-breaker limit (3), bkit's guardCanIterate and
    guardMaxIterReached are the reader's can_iterate and its complement, and the gate refuses
    ITERATE and offers the forced report exactly where bkit does."""
    for count, can, reached in node(bkit_lib, tmp_path, GUARDS, "3"):
        assert reader.can_iterate(count, 3) is can and reached is not can
        root = project(tmp_path / str(count), count=count, limit=3)
        ev = gates.gather("pdca-continue", root)
        assert ("iterate" in ev.refused) is not can
        assert ("partial" in ev.refused) is not reached
        assert reader.pdca_transition("check", "ITERATE", count, 3)[0] == ("act" if can else None)
