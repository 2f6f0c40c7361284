"""The DAG `dag-escalate` gate: a decision or convergence report that escalates to a person.

No file is mandated by the DAG skills: the reports are YAML an agent emits. The answer is
appended to the report file as a root key beside the report (``humanDecisions:``, a list, one
item per answer) — a text append that keeps every byte before it — and its auto-decisions.md
entry goes next to the report. The readers (scars.core.loops.dag) take the last answer as the
person's word: the loop no longer waits.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from scars.core.errors import PathNotFound, UsageError
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.gatekit.state_io import check_unchanged, display_path, gate_result, record_entry, state_lock
from scars.core.loops.dag.reader import ANSWERS_KEY, read_report, root_key
from scars.core.storage import safe_read
from scars.core.storage.durable import Fingerprint
from scars.core.storage.intent import Plan

_ROOT_LINE = re.compile(r"^[A-Za-z_][\w-]*\s*:", re.MULTILINE)
YAML_SUFFIXES = (".yaml", ".yml")


def locate_report(path: Path) -> Path:
    """The report file, or the one escalated report under a directory."""
    p = Path(path)
    if p.is_file():
        if p.suffix not in YAML_SUFFIXES or root_key(p) is None:
            raise UsageError(
                f"{p} is not a DAG report (a YAML file with iterationDecision: or convergenceReport:, not a "
                "symlink leading out of its folder)"
            )
        return p
    if not p.exists():
        raise PathNotFound.missing(p)
    reports = sorted(q for q in p.rglob("*") if q.suffix in YAML_SUFFIXES and q.is_file() and root_key(q, p))
    waiting = [q for q in reports if read_report(q, p).waiting_for_human]
    candidates = waiting or reports
    if not candidates:
        raise PathNotFound(f"no DAG report under {p}")
    if len(candidates) > 1:
        raise UsageError(f"{p} holds several DAG reports; give the report file as PATH")
    return candidates[0]


def _fingerprint(report: Path, root: Path) -> Fingerprint | None:
    """What the report holds now (its answer's record checks it is unchanged), read by the rule."""
    try:
        return safe_read.fingerprint(report, root=root, what="DAG report")
    except safe_read.Unreadable:
        return None


def gather_dag(gate: Gate, path: Path, **_: Any) -> Evidence:
    report = locate_report(path)
    root = report.parent
    state = read_report(report, root)
    d = state.details
    escalations = list(d.get("escalations") or [])
    why = "; ".join(escalations) or state.reason
    figures = [("task", state.name), ("kind", state.kind), ("budget", state.budget.describe())]
    if state.kind == "dag-iteration":
        fx = d.get("fixability")
        figures.append(("fixability", "unknown" if fx is None else f"{fx:.2f} (escalate under 0.3)"))
        for t in d.get("triggers", []):
            written = "" if t["fixable"] == t["fixable_written"] else f" (written fixable: {t['fixable_written']})"
            figures.append(
                (
                    f"trigger {t['index']}",
                    f"{t['type']} severity {t['severity']}, {'fixable' if t['fixable'] else 'not fixable'}{written}",
                )
            )
        ours = d.get("improvement_assessment")
        if ours:
            figures.append(
                (
                    "assessment",
                    f"{ours['recommendation']} (likelihood {ours['likelihood']:.2f}, expected gain "
                    f"{ours['expectedGain']:.2f}, diminishing returns {ours['diminishingReturns']})",
                )
            )
        if d.get("report_assessment"):
            figures.append(("the report's assessment", json.dumps(d["report_assessment"], ensure_ascii=False)))
    else:
        trend = d.get("trend") or {}
        figures.append(("trend", f"{trend.get('direction')} (slope {trend.get('slope', 0):+.3f})"))
        figures.append(("monitor", str(d.get("recommendation"))))
    warnings = [str(p) for p in state.parse_failures]
    if not state.waiting_for_human:
        warnings.append("the report does not escalate" + (" (already answered)" if d.get("answered") else ""))
    return Evidence(
        gate=gate,
        target=root,
        state_file=report,
        workflow_prompt=gate.prompt.format(task=state.name, why=why),
        figures=figures,
        warnings=warnings,
        files_read=[display_path(report, root)],
        context={
            "root": root,
            "decisions_dir": root,
            "fp": _fingerprint(report, root),
            "loop_state": state,
        },
        advice=f"the detector escalates: {why}" if escalations else state.reason,
        default="take-over",
    )


def _yaml_string(text: str) -> str:
    # A JSON string is a YAML double-quoted scalar: every character escaped or kept as YAML reads it.
    return json.dumps(text, ensure_ascii=False)


def _append_answer(plan: Plan, report: Path, item: dict[str, Any]) -> None:
    """Plan appending one answer to the report's ``humanDecisions:`` list (the list is created at the end of
    the file; a later answer extends it only while it is still the file's last root key)."""
    data = plan.read(report) or b""
    text = data.decode("utf-8", errors="replace")
    keys = _ROOT_LINE.findall(text)
    lines = "".join(
        f"    {k}: {_yaml_string(str(v)) if isinstance(v, str) else json.dumps(v)}\n" for k, v in item.items()
    )
    block = "  -" + lines[3:]
    if keys and keys[-1].split(":")[0].strip() == ANSWERS_KEY:
        add = block
    elif ANSWERS_KEY + ":" in keys or any(k.startswith(ANSWERS_KEY) for k in keys):
        raise UsageError(
            f"{report}: {ANSWERS_KEY}: is not the last root key any more (the report was edited after an "
            "answer); nothing was written"
        )
    else:
        add = f"{ANSWERS_KEY}:\n" + block
    lead = "" if not data or data.endswith(b"\n") else "\n"
    plan.append(report, (lead + add).encode("utf-8"))


def apply_dag(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    source: str,
    now: str,
) -> GateResult:
    report: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    with state_lock(Path(ctx["decisions_dir"]), user, root=evidence.context.get("root")):
        check_unchanged(report, ctx["fp"], ctx.get("root"))
        plan = Plan(Path(ctx["decisions_dir"]), root=evidence.context.get("root"))
        ad_path, number = record_entry(
            plan,
            evidence,
            ans,
            reason,
            user=user,
            now=now,
            extra_consequences=[f"{report.name}: {ANSWERS_KEY} gets the answer (appended)"],
        )
        item = {
            "gate": evidence.gate.id,
            "answer": ans.value,
            "decision": evidence.decision_for(ans),
            "decidedBy": user,
            "decidedAt": now,
            "entry": number,
        }
        if reason:
            item["reason"] = reason
        _append_answer(plan, report, item)
        plan.commit()
    return gate_result(evidence, ans, reason, user, [ad_path, report], number)
