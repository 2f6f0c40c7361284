"""Small fixtures for the gate tests: loop state written into tmp_path (never the project)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

SPEC_GAP = {
    "type": "spec",
    "description": "the spec never says what 'offline' means for sync",
    "fix_first": "define offline mode in SPEC.md Goal",
}


def loop_spec_feature(root: Path, *, gap: dict | None = SPEC_GAP, exec_style: str = "step") -> Path:
    """A `.loop-spec/features/sync/feature.json` whose last judge pass routed to `spec`."""
    fdir = root / ".loop-spec" / "features" / "sync"
    fdir.mkdir(parents=True)
    data = {
        "schemaVersion": 7,
        "slug": "sync",
        "feature_title": "Sync notes between devices",
        "updatedAt": "2026-08-08T14:41:53Z",
        "execStyle": exec_style,
        "currentPhase": "iterate",
        "currentPhaseStartedAt": "2026-08-08T15:00:00Z",
        "completedPhases": ["spec", "discuss", "plan", "execute", "verify"],
        "warnings": ["verify-deferred: flaky test quarantined"],
        "iterate": {
            "maxIterations": 10,
            "used": 2,
            "confirmationUsed": False,
            "lastVerdict": {"iteration": 2, "converged": False, "deterministic_gate_passed": True,
                            "gap": gap, "remaining_gaps": [], "summary": "goal unmet at the spec level"},
            "feedback": gap,
            "history": [],
            "lastRoute": "spec",
        },
        "unknownKey": {"kept": True},
    }
    (fdir / "feature.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return fdir


def mechanist_state(root: Path, *, score=7, verdict="Almost ready", consumed=2, fail_lines=0) -> Path:
    """review-stage/REVIEW_STATE.json of Mechanist's auto-iteration-loop, plus verify/VERIFY_REPORT.md."""
    stage = root / "review-stage"
    stage.mkdir(parents=True)
    state = {
        "iterations_consumed": consumed,
        "claim_reentries_consumed": 1,
        "status": "in_progress",
        "last_score": score,
        "last_verdict": verdict,
        "consecutive_noop_count": 0,
        "iteration_breakdown": [{"i": 1, "type": "variant_fix", "target_claims": ["C1"], "produced_claims": []}],
        "claim_stage_reentries": [],
        "pending_upstream_calls": [],
        "runs_total": 5,
        "gpu_hours_total": 12.4,
        "thread_id": None,
        "timestamp": "2026-03-15T10:00:00",
    }
    (stage / "REVIEW_STATE.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    verify = root / "verify"
    verify.mkdir()
    rows = ["# Verify report", "", "| claim | verdict |", "|---|---|", "| C1 | PASS |", "| C2 | INTEGRITY_ONLY |"]
    rows += [f"| C{3 + i} | FAIL |" for i in range(fail_lines)]
    (verify / "VERIFY_REPORT.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return stage


def bkit_project(root: Path, *, rate=82, count=2, history=(70, 78, 82)) -> Path:
    """.bkit/state/pdca-status.json with one feature in `check`, and a sprint iterateHistory."""
    state = root / ".bkit" / "state"
    (state / "sprints").mkdir(parents=True)
    data = {
        "version": "2.0",
        "lastUpdated": "2026-02-28T15:00:00.000Z",
        "activeFeatures": ["login"],
        "primaryFeature": "login",
        "features": {"login": {"phase": "check", "phaseNumber": 4, "matchRate": rate, "iterationCount": count,
                               "timestamps": {"started": "2026-02-28T12:00:00.000Z",
                                              "lastUpdated": "2026-02-28T13:00:00.000Z"},
                               "lastIterationStatus": "completed"}},
        "history": [],
    }
    (state / "pdca-status.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    sprint = {"id": "s1", "features": ["login"],
              "iterateHistory": [{"iteration": i + 1, "matchRate": r, "fixedTaskIds": [], "durationMs": None}
                                 for i, r in enumerate(history)]}
    (state / "sprints" / "s1.json").write_text(json.dumps(sprint), encoding="utf-8")
    return state / "pdca-status.json"


def copy_upstream(upstream: Path, name: str, tmp: Path) -> Path:
    dst = tmp / name
    shutil.copytree(upstream / name, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file under root (path -> sha256), to prove a refused answer changed nothing."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def samsara_feature(root: Path, *, index: str | None = "feature: demo  # keep me\nstatus: in_progress\ntasks:\n  - id: task-1\n    status: done\n") -> Path:
    """A samsara feature: 5 counted items (one cross-task pattern), so the entry verdict is `gate`."""
    from featurekit import make_feature, report

    files = {"index.yaml": index} if index is not None else {}
    return make_feature(root, {
        "task-1-scar.yaml": report("task-1", ks=['description: "Retry count is hard-coded to 3"',
                                                 'description: "Shared cache key"'],
                                   sf=['"Timezone-naive timestamps compare as UTC"'],
                                   am=['assumption: "Config is UTF-8"\nverified: false\nnote: "Latin-1 breaks it"']),
        "task-2-scar.yaml": report("task-2", ks=['description: "Shared cache key"']),
    }, files=files)


def item_id(feature_dir: Path, text: str, file: str = "task-1") -> str:
    from scars.core.samsara.feature import read_feature

    f = read_feature(feature_dir)
    return next(it.id for it in f.items if it.text == text and file in it.file)


def clean_env(monkeypatch, user: str = "alice") -> None:
    """No answer variables inherited from the environment; a fixed deciding user."""
    import os

    for name in list(os.environ):
        if name.startswith(("SCARS_ANSWER_", "SCARS_REASON_", "LOOP_SPEC_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("SCARS_USER", user)
