"""loop-spec's own code on what scars wrote (issue 15, points 2 and 3; the backlog).

* ``lib/graph/run.sh --step --resume`` over ``graph/cycle.graph.json``: paused at the SPEC gate
  (``human.iterate-spec-approval``), the engine resumes where the gate's answer says — DELIVER
  after Ship as-is, DISCUSS after Re-open, the gate again after Stop - hand back.
* ``lib/cycle-result.sh write``: a shipped gap is published ``converged: false``.
* ``lib/backlog.sh add``: answers ``exists`` for the gap scars added.

The engine validates that every node body exists in its tree, and the oracle extract holds
``lib/`` and ``graph/`` only: the tests run it from a tree in tmp_path whose ``lib`` and ``graph``
are symlinks to the oracle (read in place, never copied) beside empty ``skills/*/SKILL.md``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from scars.core import gates
from scars.core.loops.loopspec.reader import gap_id, read_feature
from tests.factories import clean_env
from tests.oracles.conftest import need

USER = "alice"
GAP = {"type": "spec", "description": "the spec never says what offline means", "fix_first": "define offline mode"}
PHASE_SKILLS = ("spec", "discuss", "plan", "execute", "verify", "iterate", "deliver")


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    clean_env(monkeypatch)


@pytest.fixture
def engine(oracles, tmp_path) -> Path:
    """A loop-spec tree for lib/graph/run.sh: the oracle's lib/ and graph/ by symlink."""
    need("bash", "jq", "python3")
    tree = tmp_path / "loop-spec"
    tree.mkdir()
    (tree / "lib").symlink_to(oracles / "loop-spec" / "lib")
    (tree / "graph").symlink_to(oracles / "loop-spec" / "graph")
    for skill in PHASE_SKILLS:
        (tree / "skills" / skill).mkdir(parents=True)
        (tree / "skills" / skill / "SKILL.md").write_text(f"# {skill}\n")
    return tree


def feature(root: Path, **changes) -> Path:
    """A feature.json after ITERATE routed a SPEC-level gap in step style (every key a node of
    the cycle graph reads is present, as feature-init writes them)."""
    fdir = root / ".loop-spec" / "features" / "sync"
    fdir.mkdir(parents=True)
    data = {
        "schemaVersion": 7,
        "slug": "sync",
        "feature_title": "Sync notes between devices",
        "execStyle": "step",
        "phaseHandoff": False,
        "currentPhase": "iterate",
        "completedPhases": ["spec", "discuss", "plan", "execute", "verify"],
        "artifacts": {"spec": None, "plan": None, "verification": None, "iteration": None},
        "bootstrapPendingDomains": [],
        "currentGate": {"round": 0, "phase": None},
        "mergeQueue": [],
        "pendingRemediationTasks": [],
        "commands": {"test": "true"},
        "branch": "feat/sync",
        "baseBranch": "main",
        "delivery": {"status": "ready-for-review"},
        "warnings": [],
        "specApproval": {"approvedAt": "2026-08-08T15:00:00Z", "goal": "sync", "boundary": "two devices"},
        "iterate": {
            "maxIterations": 10,
            "used": 2,
            "confirmationUsed": False,
            "lastVerdict": {
                "iteration": 2,
                "converged": False,
                "deterministic_gate_passed": True,
                "gap": GAP,
                "remaining_gaps": [],
                "summary": "goal unmet at the spec level",
            },
            "feedback": GAP,
            "history": [],
            "lastRoute": "spec",
        },
    }
    data.update(changes)
    (fdir / "feature.json").write_text(json.dumps(data, indent=2) + "\n")
    # ITERATE was the last node the engine processed.
    record = {"node": "iterate", "stateHash": "0-0", "gitSha": "unknown", "ts": "2026-08-08T16:00:00Z"}
    record |= {"effort": "system2", "edge": "route:verify.code-review->iterate"}
    (fdir / "graph-checkpoints.jsonl").write_text(json.dumps(record) + "\n")
    return fdir


def step(engine: Path, fdir: Path) -> tuple[int, dict]:
    """One ``run.sh --step --resume``: (exit code, the node descriptor it printed)."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        ["bash", str(engine / "lib/graph/run.sh"), "--step", "--resume", "--feature-dir", str(fdir)]
        + [str(engine / "graph/cycle.graph.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    assert lines, f"run.sh printed no descriptor (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return proc.returncode, json.loads(lines[-1])


def paused_at_the_spec_gate(engine: Path, tmp_path: Path) -> Path:
    fdir = feature(tmp_path / "proj")
    code, node = step(engine, fdir)
    assert (code, node["node"], node["paused"]) == (4, "human.iterate-spec-approval", True)
    assert json.loads((fdir / "graph-pause.json").read_text())["node"] == "human.iterate-spec-approval"
    assert read_feature(fdir / "feature.json").waiting_for_human
    return fdir


def test_unanswered_the_engine_resumes_at_discuss(engine, tmp_path):
    """The engine's own rule, and why "Ship as-is" used to be overridden: a pause resumes at the
    paused node's successor, DISCUSS."""
    fdir = paused_at_the_spec_gate(engine, tmp_path)
    code, node = step(engine, fdir)
    assert (code, node["node"]) == (0, "discuss")


def test_ship_as_is_resumes_at_deliver(engine, tmp_path):
    fdir = paused_at_the_spec_gate(engine, tmp_path)
    gates.record(gates.gather("spec", fdir), "ship", "offline mode is v2 scope; the backlog keeps it", user=USER)
    assert not (fdir / "graph-pause.json").exists()
    assert not read_feature(fdir / "feature.json").waiting_for_human  # the inbox clears
    code, node = step(engine, fdir)
    assert (code, node["node"]) == (0, "deliver")


def test_reopen_resumes_at_discuss_and_retires_the_freeze(engine, tmp_path):
    fdir = paused_at_the_spec_gate(engine, tmp_path)
    gates.record(gates.gather("spec", fdir), "reopen", None, user=USER)
    data = json.loads((fdir / "feature.json").read_text())
    assert data["specApproval"] is None and data["specApprovalHistory"][-1]["boundary"] == "two devices"
    assert data["completedPhases"] == ["spec"]
    assert not read_feature(fdir / "feature.json").waiting_for_human
    code, node = step(engine, fdir)
    assert (code, node["node"]) == (0, "discuss")


def test_stop_hands_back_and_a_resume_asks_again(engine, tmp_path):
    fdir = paused_at_the_spec_gate(engine, tmp_path)
    gates.record(gates.gather("spec", fdir), "stop", None, user=USER)
    state = read_feature(fdir / "feature.json")
    assert not state.waiting_for_human and state.status == "handed back"
    code, node = step(engine, fdir)
    assert (code, node["node"], node["paused"]) == (4, "human.iterate-spec-approval", True)


def cycle_result(engine: Path, fdir: Path) -> dict:
    subprocess.run(
        ["bash", str(engine / "lib/cycle-result.sh"), "write", str(fdir), "--status", "completed", "--summary", "s"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return json.loads((fdir / "result.json").read_text())


def test_cycle_result_publishes_a_shipped_gap_as_not_converged(engine, tmp_path):
    fdir = feature(tmp_path / "proj")
    gates.record(gates.gather("spec", fdir), "ship", "offline mode is v2 scope; the backlog keeps it", user=USER)
    result = cycle_result(engine, fdir)
    assert (result["outcome"], result["converged"]) == ("completed-with-gaps", False)
    # The same feature without the gap is delivered converged: the warning is what decides.
    clean = feature(tmp_path / "clean")
    data = json.loads((clean / "feature.json").read_text())
    data["iterate"]["feedback"] = None
    (clean / "feature.json").write_text(json.dumps(data))
    assert cycle_result(engine, clean)["converged"] is True
    state = read_feature(fdir / "feature.json")
    assert state.stop_rule.outcome == "delivered_with_gaps" and not state.details["converged"]


def test_backlog_sh_finds_the_gap_scars_added(engine, tmp_path):
    fdir = feature(tmp_path / "proj")
    gates.record(gates.gather("spec", fdir), "ship", "offline mode is v2 scope; the backlog keeps it", user=USER)
    backlog = tmp_path / "proj" / ".loop-spec" / "BACKLOG.md"
    text = f"{GAP['description']} — fix first: {GAP['fix_first']}"
    env = {**os.environ, "LOOP_SPEC_BACKLOG_FILE": str(backlog)}
    run = [str(engine / "lib/backlog.sh")]
    gid = subprocess.run(
        ["bash", *run, "gap-id", GAP["fix_first"]], capture_output=True, text=True, env=env, check=True
    )
    assert gid.stdout.strip() == gap_id(GAP["fix_first"])
    added = subprocess.run(
        ["bash", *run, "add", "sync", "iterate-gap", text, "--id", gid.stdout.strip()],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert added.stdout.strip() == "exists"
    listed = subprocess.run(["bash", *run, "list", "--json"], capture_output=True, text=True, env=env, check=True)
    [entry] = json.loads(listed.stdout)
    assert (entry["id"], entry["slug"], entry["type"], entry["text"]) == (
        gap_id(GAP["fix_first"]),
        "sync",
        "iterate-gap",
        text,
    )
