"""Everything the tests build, in one place: samsara feature directories and other loops' state
written into tmp_path (never the project), hand-made model objects (items, rounds, logs,
features, decisions), the durable layer's syscall trace, and the one wait the app's Pilot tests
use (for what the app does, never a fixed time).

Upstream files written by other people's runs are read in place from
``../shared/fixtures/upstream`` (``UPSTREAM``; the ``upstream`` fixture in conftest.py skips
cleanly when it is absent).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scars.core.loops.loopspec.v7 import program_json, repo_id, state_digest, state_home
from scars.core.model import (
    CATEGORIES,
    EvaluationContract,
    Feature,
    IterationLog,
    Problem,
    Registry,
    Round,
    ScarItem,
    odd_normal,
)
from scars.core.records import replace
from scars.core.samsara.feature import find_features, read_feature
from scars.core.samsara.matching import match_log
from scars.core.samsara.session import FeatureSession

ROOT = Path(__file__).resolve().parents[1]
UPSTREAM = ROOT.parent / "shared" / "fixtures" / "upstream"
REAL_SHAPED = ROOT / "tests" / "fixtures" / "real_shaped" / "changes"
DEMO_CHANGES = ROOT / "core" / "demo" / "repo" / "changes"


def samsara_corpus(*, upstream_with_log_only: bool = False) -> list[Path]:
    """Every samsara feature the exactness tests compare a rewritten rule on: the real-shaped
    fixtures, the demo, and the upstream features (only those with an iteration log when
    ``upstream_with_log_only``) when ``../shared`` is there."""
    out = [*sorted(REAL_SHAPED.iterdir()), *sorted(DEMO_CHANGES.iterdir())]
    if UPSTREAM.is_dir():
        if upstream_with_log_only:
            upstream = sorted(p.parent for p in (UPSTREAM / "samsara" / "changes").glob("*/iteration-log.yaml"))
            assert len(upstream) >= 4, "the upstream samsara features with an iteration log"
        else:
            upstream = find_features(UPSTREAM / "samsara")
            assert len(upstream) >= 4, "the upstream samsara features"
        out += upstream
    return out


# ============================================================================ samsara on disk


def write_feature(
    root: Path,
    reports: dict[str, str],
    *,
    name: str = "2026-11-02_demo",
    registry: str | None = None,
    files: dict[str, str] | None = None,
) -> Path:
    """Write ``root/changes/<name>/scar-reports/<file>`` for each report (dedented).

    ``registry``: text of ``root/.samsara/systemic-scars.yaml`` (None: no registry).
    ``files``: other files of the feature directory (relative path -> text).
    """
    feat = root / "changes" / name
    (feat / "scar-reports").mkdir(parents=True, exist_ok=True)
    for fname, text in reports.items():
        (feat / "scar-reports" / fname).write_text(textwrap.dedent(text), encoding="utf-8")
    if registry is not None:
        (root / ".samsara").mkdir(exist_ok=True)
        (root / ".samsara" / "systemic-scars.yaml").write_text(textwrap.dedent(registry), encoding="utf-8")
    for rel, text in (files or {}).items():
        p = feat / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text), encoding="utf-8")
    return feat


REGISTRY = """\
entries:
  - id: doc-only-guard
    description: "A markdown rule has no code-level enforcement."
    first_recorded: "2026-10-01"
    applies_when: "a task adds an instruction"
"""


def report(task_id: str | None = "task-1", *, ks=(), sf=(), am=(), extra: str = "") -> str:
    """A report whose sections are given as already-formatted YAML item blocks."""
    out = []
    if task_id is not None:
        out.append(f"task_id: {task_id}")
    out.append("completion_status: done")
    for key, items in (("known_shortcuts", ks), ("silent_failure_conditions", sf), ("assumptions_made", am)):
        if not items:
            out.append(f"{key}: []")
            continue
        out.append(f"{key}:")
        for it in items:
            block = textwrap.dedent(it).strip("\n").splitlines()
            out.append("  - " + block[0])
            out.extend("    " + ln for ln in block[1:])
    out.append("debt_registered: true")
    out.append('debt_location: "src/x.py:1"')
    if extra:
        out.append(textwrap.dedent(extra).strip("\n"))
    return "\n".join(out) + "\n"


CSV_REPORT = """task_id: task-1
completion_status: done_with_concerns
known_shortcuts:
  - description: "Retry count is hard-coded to 3"
  - description: "Only one writer at a time"
silent_failure_conditions:
  - description: "Timezone-naive timestamps compare as UTC"
assumptions_made:
  - assumption: "Exports are smaller than 1 GB"
    verified: false
    note: "a larger export would be truncated"
debt_registered: true
debt_location: "src/export.py"
"""


CSV_EXTRA = """task_id: task-2
completion_status: done
known_shortcuts:
  - description: "{text}"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
debt_location: "src/other.py"
"""


def csv_feature(root: Path, *, auto: bool = False, name: str = "2026-07-10_csv-export") -> Path:
    feature = root / "changes" / name
    (feature / "scar-reports").mkdir(parents=True)
    (feature / "scar-reports" / "task-1-scar.yaml").write_text(CSV_REPORT, encoding="utf-8")
    (feature / "index.yaml").write_text("tasks:\n  - id: task-1\n    status: done\n", encoding="utf-8")
    if auto:
        (feature / "pre-thinking.md").write_text(
            "# Pre-thinking\n\n## Evaluation Contract\n\n**Primary evaluator:** tests\n\nExecution mode: auto\n",
            encoding="utf-8",
        )
    return feature


def add_report(feature: Path, text: str, n: int = 2) -> None:
    (feature / "scar-reports" / f"task-{n}-scar.yaml").write_text(CSV_EXTRA.format(text=text), encoding="utf-8")


ACCEPT = {
    "re_review_signal": "a second process starts writing exports",
    "owner": "export team",
    "rationale": "single-process deployment today",
}


APP_REPORTS = {
    "task-1-scar.yaml": """\
task_id: task-1
completion_status: done_with_concerns
known_shortcuts:
  - description: "Retry count is hard-coded to 3"
    deferred_to_feature_iteration: true
  - "CSV export skips empty rows"
silent_failure_conditions:
  - description: "Timezone-naive timestamps compare as UTC"
assumptions_made:
  - assumption: "Only one writer at a time"
    verified: false
    note: "Concurrent writers would interleave lines"
debt_registered: true
debt_location: "src/export.py:4-6"
""",
    "task-2-scar.yaml": """\
task_id: task-2
completion_status: done
known_shortcuts:
  - "Timezone-naive timestamps compare as UTC"
  - description: "Markup [bold]shown[/bold] literally [@click=app.quit]click[/] and \\e[2Jescape"
silent_failure_conditions: []
assumptions_made: []
debt_registered: true
debt_location: "../../outside.txt"
""",
    "task-3-scar.yaml": "- this is a list, not a mapping\n",
}


APP_ITERATION_LOG = """\
feature: "csv-export"
signal_lost_initial: 9
budget:
  max_rounds: 3
  reviewer_retry_limit: 2
rounds:
  - round: 1
    signal_lost_before: 9
    budget_context:
      remaining_rounds_at_start: 2
      stagnation_count_at_start: 0
      net_rot_previous_round: 0
      strategy_hint: explore
    items_triaged: 5
    triage_result:
      fix: ["a", "b", "c"]
      accept:
        - description: "d"
          re_review_signal: "a second writer appears"
          owner: "maintainer of export service"
          rationale: "single-process deployment today"
      defer: ["e"]
    fixes_applied: 3
    fixes_scar_count: 0
    signal_lost_after: 6
    decision: continue
    decision_reason: "fix-class items remain"
"""


APP_PRE_THINKING = """\
# Pre-thinking

Execution mode: human-in-the-loop

## Evaluation Contract

**Primary evaluator:** pytest tests/test_export.py
**Agent can perform it by:** running pytest
**Pass signal:** all tests pass
**Fail signal:** a failing assertion
**Feedback loop:** run pytest tests/test_export.py -x and read the first failing assertion
**Out of scope validation:** none
"""


APP_EXPORT_PY = "".join(f"line_{i} = {i}\n" for i in range(1, 21))


def app_repo(root: Path) -> Path:
    """Create the repository; return the feature directory."""
    feature = root / "changes" / "2026-07-01_csv-export"
    (feature / "scar-reports").mkdir(parents=True)
    for name, text in APP_REPORTS.items():
        (feature / "scar-reports" / name).write_text(text, encoding="utf-8")
    (feature / "iteration-log.yaml").write_text(APP_ITERATION_LOG, encoding="utf-8")
    (feature / "pre-thinking.md").write_text(APP_PRE_THINKING, encoding="utf-8")
    (root / "src").mkdir()
    (root / "src" / "export.py").write_text(APP_EXPORT_PY, encoding="utf-8")
    (root.parent / "outside.txt").write_text("secret outside the repository\n", encoding="utf-8")
    return feature


# Long enough that an item's detail is longer than the detail pane at 80x24 (J / K scroll it).
LONG_TAIL = " The worker logs nothing when it gives up, and the queue depth metric stays flat." * 8


def bench_feature(root: Path, size: str = "small", seed: int = 0) -> Path:
    """bench/generate.py's repository of ``size`` written under ``root``: its (first) feature."""
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import generate
    finally:
        sys.path.remove(str(ROOT / "bench"))
    generate.generate(size, root, seed=seed)
    return next(p for p in (root / "changes").iterdir() if p.is_dir())


def long_repo(root: Path, tasks: int = 12, per_task: int = 7) -> Path:
    """A repository whose one feature holds ``tasks * per_task`` undecided items (84 by default:
    longer than an 80x24 or 120x40 screen), task-1 … task-N, each item's text distinct."""
    feature = root / "changes" / "2026-08-01_long"
    (feature / "scar-reports").mkdir(parents=True)
    for t in range(1, tasks + 1):
        items = "\n".join(
            f'  - description: "Item {t}.{k}: the retry loop of worker {t} drops message {k} on timeout.{LONG_TAIL}"'
            for k in range(1, per_task + 1)
        )
        (feature / "scar-reports" / f"task-{t}-scar.yaml").write_text(
            f"task_id: task-{t}\ncompletion_status: done\nknown_shortcuts:\n{items}\n"
            "silent_failure_conditions: []\nassumptions_made: []\ndebt_registered: true\n"
            f'debt_location: "src/worker_{t}.py:3"\n',
            encoding="utf-8",
        )
    (feature / "iteration-log.yaml").write_text(
        f"feature: long\nsignal_lost_initial: {tasks * per_task}\nbudget:\n  max_rounds: 3\n"
        "  reviewer_retry_limit: 2\nrounds: []\n",
        encoding="utf-8",
    )
    return feature


def samsara_feature(
    root: Path,
    *,
    index: str | None = "feature: demo  # keep me\nstatus: in_progress\ntasks:\n  - id: task-1\n    status: done\n",
    auto: bool = False,
) -> Path:
    """A samsara feature: 5 counted items (one cross-task pattern), so the entry verdict is `gate`.
    ``auto``: pre-thinking.md says ``Execution mode: auto`` (gates append their auto-decisions.md
    entries); otherwise no execution mode is given (human: no entry)."""
    files = {"index.yaml": index} if index is not None else {}
    if auto:
        files["pre-thinking.md"] = "# Pre-thinking\n\nExecution mode: auto\n"
    return write_feature(
        root,
        {
            "task-1-scar.yaml": report(
                "task-1",
                ks=['description: "Retry count is hard-coded to 3"', 'description: "Shared cache key"'],
                sf=['"Timezone-naive timestamps compare as UTC"'],
                am=['assumption: "Config is UTF-8"\nverified: false\nnote: "Latin-1 breaks it"'],
            ),
            "task-2-scar.yaml": report("task-2", ks=['description: "Shared cache key"']),
        },
        files=files,
    )


def decision_entry(gate_id: str = "triage", answer: str = "Fix the two hard-coded limits first", **fields: Any):
    """A valid auto-decisions.md entry (``DecisionEntry``) of ``gate_id``; ``fields`` override."""
    from scars.core.formats.auto_decisions import DecisionEntry

    values: dict[str, Any] = dict(
        stage="iteration",
        gate_id=gate_id,
        prompt_type="question",
        workflow_prompt="Round 1 done. (A) continue (B) stop",
        gatekeeper_answer=answer,
        decision="proceed",
        rationale="the figures shown",
        evidence_checked=("scar-reports/task-1-scar.yaml",),
        consequences=("start round 2",),
    )
    values.update(fields)
    return DecisionEntry(**values)


def resolve_in_report(feature_dir: Path, text: str, resolution: str = "fixed in this round") -> None:
    """Mark the Gen 2 item ``description: "<text>"`` resolved in place (seed Rule 11), as the
    implementer's fix does: its id and fingerprint stay, it leaves the remaining set."""
    for report_path in sorted((feature_dir / "scar-reports").glob("*.yaml")):
        lines = report_path.read_text(encoding="utf-8").splitlines(keepends=True)
        for n, line in enumerate(lines):
            if line.strip() == f'- description: "{text}"':
                pad = " " * (len(line) - len(line.lstrip()) + 2)
                lines[n + 1 : n + 1] = [f"{pad}status: resolved\n", f'{pad}resolution: "{resolution}"\n']
                report_path.write_text("".join(lines), encoding="utf-8")
                return
    raise AssertionError(f"no item {text!r} to resolve")


def item_id(feature_dir: Path, text: str, file: str = "task-1") -> str:
    f = read_feature(feature_dir)
    return next(it.id for it in f.items if it.text == text and file in it.file)


# ============================================================================ other loops on disk


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
            "lastVerdict": {
                "iteration": 2,
                "converged": False,
                "deterministic_gate_passed": True,
                "gap": gap,
                "remaining_gaps": [],
                "summary": "goal unmet at the spec level",
            },
            "feedback": gap,
            "history": [],
            "lastRoute": "spec",
        },
        "unknownKey": {"kept": True},
    }
    (fdir / "feature.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return fdir


def mechanist_state(
    root: Path, *, score=7, verdict="Almost ready", consumed=2, fail_lines=0, timestamp: str | None = None
) -> Path:
    """review-stage/REVIEW_STATE.json of Mechanist's auto-iteration-loop, plus verify/VERIFY_REPORT.md.

    The state is written now (``timestamp`` None), so the gate's 24 h staleness rule stays quiet."""
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
        "timestamp": timestamp or time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    }
    (stage / "REVIEW_STATE.json").write_text(json.dumps(state, indent=2) + "\n", encoding="utf-8")
    verify = root / "verify"
    verify.mkdir()
    rows = ["# Verify report", "", "| claim | verdict |", "|---|---|", "| C1 | PASS |", "| C2 | INTEGRITY_ONLY |"]
    rows += [f"| C{3 + i} | FAIL |" for i in range(fail_lines)]
    (verify / "VERIFY_REPORT.md").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return stage


def mechanist_stage(root: Path, verify: str | None, **state: Any) -> Path:
    """review-stage/REVIEW_STATE.json of a Mechanist loop — 2 iterations, score 8, ready, written
    now; ``state`` overrides its keys — and, when given, ``verify`` as verify/VERIFY_REPORT.md."""
    stage = root / "review-stage"
    stage.mkdir(parents=True, exist_ok=True)
    data = {
        "iterations_consumed": 2,
        "claim_reentries_consumed": 0,
        "status": "in_progress",
        "last_score": 8,
        "last_verdict": "ready",
        "consecutive_noop_count": 0,
        "iteration_breakdown": [],
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()),
    }
    data.update(state)
    (stage / "REVIEW_STATE.json").write_text(json.dumps(data, indent=2) + "\n")
    if verify is not None:
        (root / "verify").mkdir(exist_ok=True)
        (root / "verify" / "VERIFY_REPORT.md").write_text(verify)
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
        "features": {
            "login": {
                "phase": "check",
                "phaseNumber": 4,
                "matchRate": rate,
                "iterationCount": count,
                "timestamps": {"started": "2026-02-28T12:00:00.000Z", "lastUpdated": "2026-02-28T13:00:00.000Z"},
                "lastIterationStatus": "completed",
            }
        },
        "history": [],
    }
    (state / "pdca-status.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    sprint = {
        "id": "s1",
        "features": ["login"],
        "iterateHistory": [
            {"iteration": i + 1, "matchRate": r, "fixedTaskIds": [], "durationMs": None} for i, r in enumerate(history)
        ],
    }
    (state / "sprints" / "s1.json").write_text(json.dumps(sprint), encoding="utf-8")
    return state / "pdca-status.json"


def copy_upstream(upstream: Path, name: str, tmp: Path) -> Path:
    dst = tmp / name
    shutil.copytree(upstream / name, dst)
    for p in [dst, *dst.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    return dst


# ============================================================================ model objects


_PREFIX = {"known_shortcuts": "ks", "silent_failure_conditions": "sf", "unverified_assumptions": "ua"}


def item(
    n: int,
    category: str = "known_shortcuts",
    *,
    text: str | None = None,
    task: str = "task-1",
    file: str | None = None,
    line: int | None = None,
    **kw: Any,
) -> ScarItem:
    """A remaining item ``<ks|sf|ua>-<n as 10 hex>`` of ``scar-reports/<task>-scar.yaml``;
    ``kw`` sets any other ScarItem field (deferred, where, counted, verified …)."""
    t = text if text is not None else f"item {n} of {category}"
    return ScarItem(
        id=f"{_PREFIX[category]}-{n:010x}",
        category=category,
        text=t,
        task_id=task,  # type: ignore[arg-type]
        file=file or f"scar-reports/{task}-scar.yaml",
        line=n if line is None else line,
        form="gen2",
        odd_normal=odd_normal(t, " ".join(t.split()).casefold()),
        **kw,
    )


def rnd(
    n: int,
    before: int | None,
    after: int | None,
    *,
    decision: str | None = "continue",
    new: int | None = 0,
    retries: int | None = None,
    fix=(),
    accept=(),
    defer=(),
    fixed: int | None = None,
    raw: dict | None = None,
) -> Round:
    spent = None if retries is None else {"reviewer_retries": retries}
    return Round(
        round=n,
        signal_lost_before=before,
        signal_lost_after=after,
        decision=decision,
        fixes_scar_count=new,
        fixes_applied=fixed,
        raw=raw,
        budget_spent=spent,
        fix=tuple(fix),
        accept=tuple(accept),
        defer=tuple(defer),
    )


def log(*rounds: Round, max_rounds: int = 3, retry_limit: int = 2, initial: int | None = None) -> IterationLog:
    first = rounds[0].signal_lost_before if rounds else None
    return IterationLog(
        file="iteration-log.yaml",
        feature="demo",
        signal_lost_initial=initial if initial is not None else first,
        max_rounds=max_rounds,
        reviewer_retry_limit=retry_limit,
        budget_present=True,
        rounds=tuple(rounds),
    )


def feature(
    items=(),
    iteration_log: IterationLog | None = None,
    signal: int | None = None,
    path: str = "/nonexistent/changes/2026-01-01_demo",
) -> Feature:
    items = tuple(items)
    counts = {c: sum(1 for i in items if i.counted and i.category == c) for c in CATEGORIES}
    sl = signal if signal is not None else sum(counts.values())
    f = Feature(
        name="demo", path=path, repo_root=None, items=items, iteration_log=iteration_log, signal_lost=sl, counts=counts
    )
    # As the read path does: the log's triaged descriptions matched to the items (one matcher).
    return replace(f, log_matches=match_log(f))


@dataclass(frozen=True)
class D:
    """A stand-in with the attributes of scars.core.samsara.decisions.Decision that the rules read."""

    item_id: str
    action: str
    watch: str | None = None
    decided_at: str = ""
    re_review_signal: str | None = None


def decisions(**by_action: Any) -> dict[str, D]:
    out: dict[str, D] = {}
    for action, items in by_action.items():
        for it in items:
            out[it.id] = D(it.id, action)
    return out


def triage_feature(
    path: Path,
    items: list[ScarItem],
    *,
    failures=(),
    rounds=(),
    repo_root: Path | None = None,
    contract: str | None = None,
) -> Feature:
    groups = {"cross_task_patterns": (), "deferred_from_level_1": (), "unaddressed": ()}
    cross = [i.id for i in items if i.counted and i.text.startswith("Shared")]
    deferred = [i.id for i in items if i.counted and i.deferred and i.id not in cross]
    rest = [i.id for i in items if i.counted and i.id not in cross and i.id not in deferred]
    groups = {"cross_task_patterns": tuple(cross), "deferred_from_level_1": tuple(deferred), "unaddressed": tuple(rest)}
    counts = {c: sum(1 for i in items if i.counted and i.category == c) for c in CATEGORIES}
    log = (
        IterationLog(file="iteration-log.yaml", feature="demo", signal_lost_initial=9, rounds=tuple(rounds))
        if rounds
        else None
    )
    return Feature(
        name=path.name,
        path=str(path),
        repo_root=str(repo_root) if repo_root else None,
        items=tuple(items),
        parse_failures=tuple(failures),
        registry=Registry(state="missing"),
        contract=EvaluationContract(file="pre-thinking.md", feedback_loop=contract) if contract else None,
        iteration_log=log,
        signal_lost=sum(counts.values()),
        counts=counts,
        groups=groups,
        execution_mode="human-in-the-loop",
    )


def sample_feature(tmp_path: Path) -> Feature:
    repo = tmp_path / "repo"
    fdir = repo / "changes" / "2026-07-01_csv-export"
    fdir.mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "export.py").write_text("".join(f"line {i} = {i}\n" for i in range(1, 60)))
    items = [
        item(1, text="Shared retry count is hard-coded to 3", task="task-1", where="src/export.py:40-42"),
        item(2, text="Shared retry count is hard-coded to 3", task="task-2"),
        item(
            3,
            "silent_failure_conditions",
            text="Timezone-naive timestamps compare as UTC",
            task="task-2",
            deferred=True,
        ),
        item(4, "unverified_assumptions", text="Only one writer at a time", task="task-3", verified=False),
        item(
            5,
            text="CSV export skips [bold]empty[/bold] rows [@click=app.quit]x[/] \x1b[2Jend",
            task="task-3",
            where="../../etc/passwd",
        ),
        item(6, text="Orphan item of a broken report", task="task-4", counted=False),
    ]
    failures = [Problem(file="scar-reports/task-4-scar.yaml", line=3, message="not a mapping")]
    rounds = [
        Round(
            round=1,
            signal_lost_before=9,
            signal_lost_after=5,
            decision="continue",
            fix=("a", "b", "c"),
            accept=({"description": "x", "owner": "alice"},),
            defer=("d",),
        )
    ]
    return triage_feature(
        fdir,
        items,
        failures=failures,
        rounds=rounds,
        repo_root=repo,
        contract="run pytest tests/test_export.py and read the failing assertion",
    )


# ============================================================================ environment and checks


# ============================================================================ every gate's question


def _gate_samsara(tmp_path, *, round_open=True, flat_rounds=0, fix=False):
    f = samsara_feature(tmp_path, auto=True)  # auto mode: samsara gates append their entries
    retry = item_id(f, "Retry count is hard-coded to 3")
    with FeatureSession.open(f, user="setup") as s:
        for _ in range(flat_rounds):
            s.start_round()
            s.close_round("continue", "still looking for the root cause")
        if round_open:
            s.start_round()
        if fix:
            s.decide(retry, "fix")
    return f, f, {"item": retry}


def gate_state(gate: str, tmp_path: Path) -> tuple[Path, Path, dict]:
    """The state in which ``gate`` asks its question, built under ``tmp_path``: (the PATH `scars gate`
    takes, the directory its auto-decisions.md entry goes to, extra selectors such as the item)."""
    if gate == "entry":
        return _gate_samsara(tmp_path, round_open=False)
    if gate == "round-continue":
        return _gate_samsara(tmp_path)
    if gate == "safety-valve":
        return _gate_samsara(tmp_path, flat_rounds=1)
    if gate == "blocked-fix":
        return _gate_samsara(tmp_path, fix=True)
    if gate == "spec":
        d = loop_spec_feature(tmp_path)
        return d, d, {}
    if gate == "escalate":
        gap = {"type": "execute", "description": "the cloud credential is locked", "fix_first": "unlock it"}
        d = loop_spec_feature(tmp_path, gap={**gap, "needs_operator": True})
        data = json.loads((d / "feature.json").read_text())
        data["iterate"]["lastRoute"] = "escalate"
        (d / "feature.json").write_text(json.dumps(data))
        return d, d, {}
    if gate == "question":  # loop-spec 7.x: the run of tmp_path (no git: keyed by its path)
        tmp_path.mkdir(parents=True, exist_ok=True)
        fj = loop_spec_7_run(tmp_path, question=BLOCKED_QUESTION)
        return tmp_path, fj.parent, {}  # the project names its one waiting run
    if gate == "review-continue":
        stage = mechanist_state(tmp_path, score=5, verdict="not ready")
        return stage, stage, {}
    if gate == "sprint-pause":
        sprint = tmp_path / ".bkit" / "state" / "sprints" / "s1.json"
        sprint.parent.mkdir(parents=True)
        pause = {"trigger": "ITERATION_EXHAUSTED", "userActions": ["forward fix", "carry to next sprint", "abort"]}
        sprint.write_text(
            json.dumps({"id": "s1", "phase": "iterate", "status": "paused", "autoPause": {"pauseHistory": [pause]}})
        )
        return tmp_path, sprint.parent.parent, {}
    if gate == "dag-escalate":
        report = tmp_path / "dag" / "decision.yaml"
        report.parent.mkdir(parents=True)
        trigger = {"type": "validation_failure", "severity": 0.7, "code": "TYPE_MISMATCH", "fixable": True}
        report.write_text(
            yaml.safe_dump(
                {"iterationDecision": {"taskId": "t", "decision": {"needsIteration": True}, "triggers": [trigger]}}
            )
        )
        return tmp_path, report.parent, {}
    d = bkit_project(tmp_path, count=5)  # at bkit's limit: the forced report (PARTIAL) is a transition it has
    return tmp_path, d.parent, {}


# An answer and a reason for every gate but triage (answered item by item).
GATE_ANSWERS = {
    "entry": ("skip", "the cache feature next week fixes the shared key"),
    "round-continue": ("stop", "nothing actionable is left this round"),
    "safety-valve": ("stop", "flat twice: stop as the valve suggests"),
    "blocked-fix": ("defer", "the vendor sandbox is down until March"),
    "spec": ("ship", "offline sync is v2 scope and on the backlog"),
    "review-continue": ("stop", "the reviewer keeps asking for a new dataset"),
    "pdca-continue": ("partial", "two UX empty states are left; tracked in the report"),
    "escalate": ("ship", "the credential stays locked; delivered without cloud sync"),
    "pdca-max-iterations": ("accept", "generate the report with the two empty states flagged"),
    "sprint-pause": ("carry-over", "84% is what this sprint reaches; login moves on"),
    "dag-escalate": ("retry", "emit the field as a string, as the schema says"),
    "question": ("fix-and-re-enter", "the judge's result schema is fixed in this branch now"),
}


def tree_hashes(root: Path) -> dict[str, str]:
    """Every file under root (path -> sha256), to prove a refused answer changed nothing."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def run_cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """``scars ARGV`` in this process: (exit code, stdout, stderr)."""
    from scars.tui.cli import main as cli

    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


# A probe script's line that sets ``children_left``: whether a child it forked is still unreaped
# (a fork a read or a pool did not wait for). The script imports os.
CHILDREN_LEFT = (
    "try:\n    os.waitpid(-1, os.WNOHANG)\n    children_left = True\nexcept ChildProcessError:\n"
    "    children_left = False\n"
)


def scars_process(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    """``python -m scars.tui ARGS`` in a child process without a terminal (stdin /dev/null)."""
    return subprocess.run(
        [sys.executable, "-m", "scars.tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def scars_in_pty(*args: str, env: dict | None = None, cwd: Path | None = None) -> tuple[int, str]:
    """``python -m scars.tui ARGS`` on a real pseudo-terminal (stdin, stdout, stderr): exit code, output."""
    import pty

    leader, follower = pty.openpty()
    try:
        p = subprocess.run(
            [sys.executable, "-m", "scars.tui", *args],
            stdin=follower,
            stdout=follower,
            stderr=follower,
            cwd=cwd,
            timeout=60,
            env={**os.environ, **(env or {})},
        )
        os.close(follower)
        follower = -1
        out = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the other side is closed: everything was read
                break
            if not chunk:
                break
            out += chunk
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    return p.returncode, out.decode("utf-8", "replace")


def clean_env(monkeypatch, user: str = "alice") -> None:
    """No answer variables inherited from the environment; a fixed deciding user."""
    for name in list(os.environ):
        if name.startswith(("SCARS_ANSWER_", "SCARS_REASON_", "LOOP_SPEC_")) and name != "LOOP_SPEC_HOME":
            monkeypatch.delenv(name)  # LOOP_SPEC_HOME stays the tests' own (tests/conftest.py)
    monkeypatch.setenv("SCARS_USER", user)


# ============================================================================ the durable layer's syscalls


class SyscallTrace:
    """The durable layer's file-system calls, in order, with the paths they act on.

    Installed over ``scars.core.storage.durable.os`` (a proxy: every other attribute is the real
    ``os``). It records ``open`` (and whether the call created the file), ``fsync`` (of a
    file or of a directory, by path), ``replace`` and ``close``; :meth:`missing_dir_fsyncs`
    then names every rename or file creation that no later fsync of its directory made
    durable. ``hook(name, args)`` sees every ``open``, ``fsync``, ``replace``, ``write``,
    ``ftruncate`` and ``mkdir`` before the real call and may raise to inject a fault
    (tests/hostile/test_hostile_faults.py's ``Injector``).
    """

    def __init__(self, monkeypatch, hook=None):
        import os as real_os

        from scars.core.storage import durable

        self.events: list[tuple] = []
        self._fds: dict[int, str] = {}
        self._hook = hook
        trace = self

        class Proxy:
            def __getattr__(_self, name):
                return getattr(real_os, name)

            def open(_self, path, flags, *a, **k):
                full = trace._at(path, k.get("dir_fd"))
                existed = real_os.path.lexists(full)
                trace._call("open", (path, flags) + a)
                fd = real_os.open(path, flags, *a, **k)
                trace._fds[fd] = full
                trace.events.append(("open", full, bool(flags & real_os.O_CREAT) and not existed))
                return fd

            def fsync(_self, fd):
                trace._call("fsync", (fd,))
                real_os.fsync(fd)
                path = trace._fds.get(fd) or _fd_path(fd)
                trace.events.append(("fsync", path, _is_dir(fd)))

            def replace(_self, src, dst, *a, **k):
                trace._call("replace", (src, dst) + a)
                real_os.replace(src, dst, *a, **k)
                trace.events.append(("replace", trace._at(dst, k.get("dst_dir_fd")), None))

            def close(_self, fd):
                trace._fds.pop(fd, None)
                real_os.close(fd)

            def write(_self, fd, data):
                trace._call("write", (fd, data))
                return real_os.write(fd, data)

            def ftruncate(_self, fd, length):
                trace._call("ftruncate", (fd, length))
                return real_os.ftruncate(fd, length)

            def mkdir(_self, path, *a, **k):
                trace._call("mkdir", (path,) + a)
                return real_os.mkdir(path, *a, **k)

        self.proxy = Proxy()
        monkeypatch.setattr(durable, "os", self.proxy)

    def _at(self, path, dir_fd) -> str:
        """The real path of ``path`` (relative to the open directory ``dir_fd`` when given)."""
        import os as real_os

        if dir_fd is not None and not real_os.path.isabs(path):
            base = self._fds.get(dir_fd) or _fd_path(dir_fd)
            return real_os.path.join(real_os.path.realpath(base), path)
        return real_os.path.realpath(path)

    def _call(self, name: str, args: tuple) -> None:
        if self._hook is not None:
            self._hook(name, args)

    def missing_dir_fsyncs(self) -> list[str]:
        """Renames and creations not followed by an fsync of their directory (empty: durable). An
        atomic write's temporary file is no creation to keep: its rename is."""
        import os as real_os

        from scars.core.storage.durable import is_temp_name

        missing = []
        for i, (kind, path, flag) in enumerate(self.events):
            if kind == "replace" or (kind == "open" and flag and not is_temp_name(real_os.path.basename(path))):
                directory = real_os.path.dirname(path)
                if not any(k == "fsync" and p == directory and is_dir for k, p, is_dir in self.events[i + 1 :]):
                    missing.append(
                        f"{'rename to' if kind == 'replace' else 'creation of'} {path}: "
                        f"no fsync of {directory} after it"
                    )
        return missing

    def dir_fsyncs(self) -> list[str]:
        return [p for k, p, is_dir in self.events if k == "fsync" and is_dir]


def _is_dir(fd: int) -> bool:
    import os as real_os
    import stat as real_stat

    return real_stat.S_ISDIR(real_os.fstat(fd).st_mode)


def _fd_path(fd: int) -> str:
    import os as real_os

    try:
        return real_os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return f"<fd {fd}>"


# ============================================================================ waiting for the app (Pilot)


async def wait_until(pilot, condition: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Let the app work until ``condition()`` holds: a state the app reaches, never a fixed time.

    Each round lets the app process its pending messages (``pilot.pause()``); ``timeout`` only
    bounds a hang, so a state that never comes fails with ``what`` instead of blocking the suite.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"the app never reached: {what}")
        await pilot.pause()


def laid_out(app) -> bool:
    """Nothing the app's widgets asked for is still to be done: no message queued at the app, the
    screen or any widget (scrollbars too: they are outside the DOM), no layout, scroll, repaint,
    style refresh or recompose asked and not done, no widget waiting for the screen's update and
    no callback waiting for the next refresh. A widget asks 0.3-2 ms after the message that makes
    it (a Static's, a Horizontal's, a ScrollBar's layout): the screen's own flags miss those.
    (Textual 8.2's private flags, the ones its idle handlers read: textual is pinned exactly.)"""
    screen = app.screen
    nodes = [screen, *screen.walk_children()]
    nodes += [bar for node in list(nodes) for bar in node._get_virtual_dom()]
    if not app._message_queue.empty() or app._next_callbacks:
        return False
    for node in nodes:
        if not node._message_queue.empty() or node._next_callbacks:
            return False
        if (
            node._layout_required
            or node._scroll_required
            or node._repaint_required
            or node._refresh_styles_required
            or node._recompose_required
        ):
            return False
    return not (screen._dirty_widgets or screen._callbacks or screen._compositor._dirty_regions)


def settled(app) -> bool:
    """What a start, a reload or a step of the app set off is done: the load shown and its
    filter prepared (or the load failed), every worker finished and the screen laid out."""
    ready = app.load_error is not None or app.filter_ready
    return ready and all(w.is_finished for w in app.workers) and laid_out(app)


async def wait_settled(pilot, what: str = "the app settled") -> None:
    """Wait until :func:`settled` holds."""
    await wait_until(pilot, lambda: settled(pilot.app), what)


async def filter_shown(pilot, text: str) -> None:
    """Wait until the filter ``text`` ("" for none) is applied and its rows are shown.

    The rows are built in a thread worker started when the filter is applied; once the app's
    filter is ``text`` that worker exists, and once it has finished its rows are on screen.
    """
    app = pilot.app

    def shown() -> bool:
        flt = app.filter
        return (flt.source if flt is not None else "") == text.strip() and all(w.is_finished for w in app.workers)

    await wait_until(pilot, shown, f"the rows of the filter {text!r}")


# ============================================================================ loop-spec 7.x runs


def git_repo(path: Path, message: str | None = None) -> Path:
    """A git repository at ``path`` with one commit (its root commit keys 7.x's state: the message
    is the path by default, so two repositories made in the same second are two ids)."""
    message = message or str(path)
    path.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t"}
    env["GIT_COMMITTER_EMAIL"] = "t@e"
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", message]):
        subprocess.run(["git", "-C", str(path), *args], check=True, env=env, capture_output=True)
    return path


def loop_spec_7_state(**changes) -> dict:
    """A 7.x ``state.json`` as ``StateStore.create`` writes it (aztechead/loop-spec
    ``skills/loop-spec/program/loop_spec/state.py`` @06a9ffa, ``loopSpecVersion`` and
    ``stateFormat`` 2), in ITERATE after an unmet judgment (``iterate.py``: ``state.iterate``)."""
    gap = {"target": "execute", "text": "the export ignores --json"}
    state = {
        "schema": 1,
        "loopSpecVersion": "7.8.2",
        "stateFormat": 2,
        "run": {"id": "run-0a1b2c3d4e5f", "entry": "cycle"},
        "request": {"text": "add a --json flag", "digest": "sha256:" + "0" * 64},
        "phase": {"current": "iterate", "attemptId": "attempt-aa11bb22cc33", "entry": "fresh", "entryPayload": None},
        "products": {k: None for k in ("spec", "plan", "execute", "verify", "iterate", "deliver", "debug")},
        "revisions": {"requirements": "r1", "plan": "p1"},
        "approval": None,
        "baseline": None,
        "ledger": {"findings": [], "reviewedRanges": [], "reviews": []},
        "budget": {"limit": 2, "spent": 1, "transitions": []},
        "repos": None,
        "questions": {"open": None, "answered": {}, "retired": [], "policy": None, "policyAnswered": []},
        "steps": {"open": [], "retired": [], "quarantined": [], "submissions": {}},
        "implementations": {"phases": {}, "roles": {}},
        "attempts": [],
        "result": None,
        "iterate": {
            "priorGaps": [gap],
            "judgeStep": "step-ddeeff001122",
            "judge": {"verdict": "unmet", "gaps": [gap], "caveats": []},
            "boundShas": {"app": "c0ffee"},
            "inputs": None,
        },
    }
    state.update(changes)
    return state


BLOCKED_QUESTION = {
    "questionId": "question-112233445566",
    "attempt": "attempt-aa11bb22cc33",
    "phase": "iterate",
    "text": "The judge step was rejected 3 times. Stop, or fix and re-enter?",
    "options": [{"value": "stop", "label": "Stop"}, {"value": "fix-and-re-enter", "label": "Fix and re-enter"}],
    "defaultValue": "stop",
    "kind": "blocked",
    "payload": None,
    "askedAt": "2026-10-01T12:00:00+00:00",
}


def loop_spec_7_run(project: Path, slug: str = "add-a-json-flag", *, question: dict | None = None, **changes) -> Path:
    """A 7.x run of ``project`` where 7.x puts it: ``$LOOP_SPEC_HOME/<repo id>/<slug>/state.json``
    (with its ``state.digest``), and ``question``'s ``question.json`` opened as ``questions.ask``
    records it. Returns the state.json."""
    rid, _ = repo_id(project)
    folder = state_home() / str(rid) / slug
    folder.mkdir(parents=True, exist_ok=True)
    state = loop_spec_7_state(**changes)
    if question is not None:
        qpath = folder / "attempts" / question["attempt"] / "question.json"
        qpath.parent.mkdir(parents=True, exist_ok=True)
        qpath.write_bytes(program_json(question))
        state["questions"]["open"] = {
            "questionId": question["questionId"],
            "attempt": question["attempt"],
            "phase": question["phase"],
            "kind": question["kind"],
            "askedAt": question["askedAt"],
            "path": str(qpath),
            "defaultValue": question["defaultValue"],
        }
    (folder / "state.json").write_bytes(program_json(state))
    (folder / "state.digest").write_text(state_digest(state) + "\n")
    return folder / "state.json"
