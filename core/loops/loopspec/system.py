"""loop-spec as a loop system: ``.loop-spec/features/<slug>/feature.json`` (4.x–6.x, each read by
the rules of the line that wrote it: ``versions``), its SPEC and escalate gates, the judge scores
the advisor reads (/10, the converged criterion score its goal); and 7.x's runs in its state home
outside the repository (``v7``) with their ``question`` gate (``questions``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import number
from scars.core.advice.model import Trigger
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.loops.base import LoopState
from scars.core.loops.loopspec import questions, v7, versions
from scars.core.loops.loopspec.gates import apply_loop_spec, gather_loop_spec
from scars.core.loops.loopspec.reader import read_feature
from scars.core.loops.system import LoopKind, LoopSystem, StateFileSystem, WalkedDir
from scars.core.samsara.rounds import norm

SCALE = 10.0
# Ours: loop-spec has no "acceptable" level below its converged criterion score; 7 of 10.
ACCEPTABLE = 0.7


def gap_triggers(verdict: Any) -> tuple[Trigger, ...] | None:
    """A loop-spec verdict -> triggers: its gap and remaining gaps (type gap_<type>, key fix_first)."""
    if not isinstance(verdict, Mapping):
        return None
    gaps = []
    if isinstance(verdict.get("gap"), Mapping):
        gaps.append(verdict["gap"])
    if isinstance(verdict.get("remaining_gaps"), list):
        gaps.extend(g for g in verdict["remaining_gaps"] if isinstance(g, Mapping))
    out = []
    for g in gaps:
        key = norm(g.get("fix_first") or g.get("description") or "gap")
        out.append(
            Trigger(
                f"gap_{g.get('type') or 'execute'}", key, 1.0, g.get("needs_operator") is not True, "loop-spec verdict"
            )
        )
    return tuple(out)


def verdict_facts(raw: Any) -> list[tuple[tuple[Trigger, ...] | None, str | None]] | None:
    """Per judged iteration, its verdict's gaps as triggers and the gap's type as the strategy."""
    if not (isinstance(raw, Mapping) and isinstance(raw.get("iterate"), Mapping)):
        return None
    hist = raw["iterate"].get("history")
    verdicts = [v for v in hist if isinstance(v, Mapping)] if isinstance(hist, list) else []
    out: list[tuple[tuple[Trigger, ...] | None, str | None]] = []
    for v in verdicts:
        gap = v.get("gap")
        out.append((gap_triggers(v), str(gap.get("type")) if isinstance(gap, Mapping) and gap.get("type") else None))
    return out


class LoopSpec(StateFileSystem):
    loop = "loop-spec"
    kinds: tuple[LoopKind, ...] = (LoopKind("loop-spec", "loop-spec", SCALE),)
    root_markers: tuple[str, ...] = (".loop-spec",)
    file_names = "feature.json, loop-spec 7.x's state.json"

    def find(self, root: Path, walk: Sequence[WalkedDir], now: datetime | None) -> list[LoopState]:
        states = [
            read_feature(d.path / "feature.json", root)
            for d in walk
            if "feature.json" in d.files
            and d.path.parent.name == "features"
            and d.path.parent.parent.name == ".loop-spec"
        ]
        # 7.x's runs of a repository: the root holding .git, or a folder holding 7.x's
        # .loop-spec/results/ (where it puts its workers' results); only that repository's own
        # state folder in the state home is read (v7.project_states).
        projects = [root] if (root / ".git").exists() else []
        for d in walk:
            if d.path.name == ".loop-spec" and "results" in d.dirnames and d.path.parent not in projects:
                projects.append(d.path.parent)
        for project in projects:
            states.extend(v7.project_states(project))
        return states

    def read_path(self, path: Path, root: Path, now: datetime | None) -> list[LoopState] | None:
        if path.name == "feature.json":
            return [read_feature(path, root)]
        return [v7.read_state(path)] if v7.is_state_file(path) else None

    def gate_call(self, state: LoopState) -> tuple[str, dict[str, Any]] | None:
        d = state.details or {}
        if (d.get("loop_spec_version") or {}).get("line") == versions.LINE_7:
            if not d.get("question"):
                return None  # 7.x asks through question.json only
            # The repository while it names one waiting run (a request's root), else its state.json.
            return "question", ({"path": d["gate_path"]} if d.get("gate_path") else {})
        return ("escalate" if state.route == "escalate" else "spec"), {}

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
        t = number(details.get("criterion_converged"))
        return None if t is None else (t / SCALE, ACCEPTABLE)

    def point_facts(self, state: LoopState) -> list[tuple[tuple[Trigger, ...] | None, str | None]] | None:
        return verdict_facts(state.raw)

    def human_mode(self, evidence: Evidence) -> bool:
        """A person answers unless the feature runs autonomous (``autonomous: true`` or
        ``execStyle: auto``)."""
        data = evidence.context.get("data")
        return not (isinstance(data, dict) and (data.get("autonomous") is True or data.get("execStyle") == "auto"))

    def _gather(self, gate: Gate, where: Path, **options: Any) -> Evidence:
        if gate.id == "question":
            return questions.gather_question(gate, where, **options)
        return gather_loop_spec(gate, where, **options)

    def _apply(
        self, evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str, now: str
    ) -> GateResult:
        if evidence.gate.id == "question":
            return questions.apply_question(evidence, ans, reason, user=user, source=source, now=now)
        return apply_loop_spec(evidence, ans, reason, user=user, source=source, now=now)


SYSTEM: LoopSystem = LoopSpec()
