"""What one loop system is to scars: the :class:`LoopSystem` protocol, one implementation per
loop folder (``core/loops/<name>/system.py``), registered in ``loops.registry.REGISTRY``.

A system names the loop its gates belong to (``loop``: a gate's ``Gate.loop`` in the catalog),
the kinds of state it reads (:class:`LoopKind`: the kind, its label, the advisor's scale), the
directories that mark the root its gate requests go to (``root_markers``), how its files are
found in a walk of a tree (``find``) or read when given directly (``read_path``), which gate
answers a state it read (``gate_call``), the goal and advice of its history (``goal``,
``advise``) and its gates (``gather`` / ``apply`` / ``record`` / ``replay``). Everything that
used to switch on a loop's name asks the registry for the system instead.

:class:`StateFileSystem` is the record path every loop shares whose gates write the loop's own
JSON (or YAML) state and an auto-decisions.md entry beside it (all but samsara, whose gates
write through its FeatureSession): an interrupted record completed before the evidence is read,
the human-mode rule, the answers file replayed as all-or-nothing.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from scars.core.advice.advisor import advise_scored, scored_history
from scars.core.advice.model import Trigger
from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError, UsageError
from scars.core.gatekit.answers import AnswersFile
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult, validate_answer
from scars.core.gatekit.state_io import complete_interrupted
from scars.core.loops.base import LoopState
from scars.core.provenance import Provenance, as_provenance, decided_by
from scars.core.records import record


@record(slots=True)
class LoopKind:
    """One kind of loop state a system reads: its ``kind`` (``LoopState.kind``), the label
    ``scars loops`` shows, and the divisor mapping its scores to 0..1 for the advisor (None:
    the advisor reads no quality history of it)."""

    kind: str
    label: str
    scale: float | None = None


@record(slots=True)
class WalkedDir:
    """One directory of the one walk ``discover_loops`` makes: the directory, its
    sub-directories (the skipped ones left out) and its file names, and its path under the root."""

    path: Path
    dirnames: tuple[str, ...]
    files: frozenset[str]
    relative: Path


class LoopSystem(Protocol):
    """One loop system (see the module's docstring)."""

    loop: str
    kinds: tuple[LoopKind, ...]
    root_markers: tuple[str, ...]
    lineage: tuple[str, ...]  # other loop names a gate's evidence may carry (a review gate serves two)
    file_names: str  # what a state file given directly may be called (an error says it)
    item_decisions: bool  # an answers file may hold item decisions for it (samsara's scar items)

    def find(self, root: Path, walk: Sequence[WalkedDir], now: datetime | None) -> list[LoopState]: ...

    def read_path(self, path: Path, root: Path, now: datetime | None) -> list[LoopState] | None: ...

    def record_dir(self, state: LoopState, root: Path) -> Path | None: ...

    def gate_call(self, state: LoopState) -> tuple[str, dict[str, Any]] | None: ...

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None: ...

    def advise(self, state: LoopState, *, token_budget: float | None, tokens_used: float | None) -> Any: ...

    def gather(self, gate: Gate, where: Path, *, read_only: str | bool | None = None, **options: Any) -> Evidence: ...

    def human_mode(self, evidence: Evidence) -> bool: ...

    def entry_option(self, auto_entry: bool | None) -> None: ...

    def apply(
        self,
        evidence: Evidence,
        ans: Answer,
        reason: str | None,
        *,
        user: str,
        session: Any,
        source: Provenance | str,
        now: str | None,
        auto_entry: bool | None,
    ) -> GateResult: ...

    def record(
        self,
        evidence: Evidence,
        answer_text: str,
        reason: str | None,
        *,
        user: str,
        source: Provenance | str,
        session: Any,
        auto_entry: bool | None,
        round_fields: dict[str, Any] | None,
    ) -> GateResult: ...

    def replay(
        self,
        path: str | os.PathLike,
        af: AnswersFile,
        *,
        user: str,
        options: dict[str, Any],
        source: Provenance,
        auto_entry: bool | None,
    ) -> list[GateResult]: ...

    def proof_file(self, evidence: Evidence) -> Path | None: ...

    def loop_files(self, evidence: Evidence, root: Path) -> set[Path]: ...


def refused(source: str, errors: list[str]) -> DecisionRefused:
    """An answers file of which nothing was recorded, every reason listed."""
    return DecisionRefused(
        f"{source}: nothing was recorded:\n  " + "\n  ".join(errors), [FieldError("answers", e) for e in errors]
    )


class StateFileSystem:
    """The shared record path of a loop whose gates write its own state file and an entry
    beside it. A system gives ``_gather`` and ``_apply`` (its gates module's gather and apply)
    and the reading side; ``human_mode`` is True unless it says otherwise."""

    loop: str = ""
    kinds: tuple[LoopKind, ...] = ()
    root_markers: tuple[str, ...] = ()
    lineage: tuple[str, ...] = ()
    file_names: str = ""
    item_decisions: bool = False

    def _gather(self, gate: Gate, where: Path, **options: Any) -> Evidence:
        raise NotImplementedError

    def _apply(
        self, evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str, now: str
    ) -> GateResult:
        raise NotImplementedError

    def record_dir(self, state: LoopState, root: Path) -> Path | None:
        """The directory a gate of this loop records in (its lock and its intent file): the
        state's own directory, or the directory of its state file."""
        p = root / state.path
        return p if p.is_dir() else p.parent

    def goal(self, kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
        return None

    def point_facts(self, state: LoopState) -> list[tuple[tuple[Trigger, ...] | None, str | None]] | None:
        """Per measured point, the triggers and strategy the loop recorded (None: none)."""
        return None

    def advise(self, state: LoopState, *, token_budget: float | None, tokens_used: float | None) -> Any:
        """The advisor's rules over the state's measured scores, each divided by its kind's scale,
        against the goal its reader evaluated; None without a goal or a score."""
        scale = next((k.scale for k in self.kinds if k.kind == state.kind), None)
        goal = self.goal(state.kind, state.details or {})
        points = scored_history(state, scale, self.point_facts(state)) if scale else []
        if goal is None or not points:
            return None
        return advise_scored(state, points, *goal, token_budget=token_budget, tokens_used=tokens_used)

    def gather(self, gate: Gate, where: Path, *, read_only: str | bool | None = None, **options: Any) -> Evidence:
        """The evidence; a record of this loop that a kill interrupted (its intent file) is
        completed first and the files read again, unless ``read_only``."""
        evidence = self._gather(gate, where, **options)
        if not read_only:
            settled = complete_interrupted(Path(evidence.context["decisions_dir"]), evidence.context.get("root"))
            if settled is not None:
                completed, note = settled
                if completed:
                    evidence = self._gather(gate, where, **options)
                evidence.warnings.append(note)
        return evidence

    def human_mode(self, evidence: Evidence) -> bool:
        return True

    def entry_option(self, auto_entry: bool | None) -> None:
        if auto_entry is not None:
            raise UsageError(
                "--auto-entry / --no-auto-entry apply to samsara gates (the other loops' gates always write their entry)"
            )

    def apply(
        self,
        evidence: Evidence,
        ans: Answer,
        reason: str | None,
        *,
        user: str,
        session: Any = None,
        source: Provenance | str = "terminal",
        now: str | None = None,
        auto_entry: bool | None = None,
    ) -> GateResult:
        prov = as_provenance(source)
        user = decided_by(user, prov, human_mode=self.human_mode(evidence))  # refused before anything is written
        evidence.context["provenance"] = prov  # build_entry says it in the entry
        label = prov.via or prov.channel
        result = self._apply(evidence, ans, reason, user=user, source=label, now=now or now_iso())
        result.source = label
        result.extra["provenance"] = prov.to_record()
        return result

    def record(
        self,
        evidence: Evidence,
        answer_text: str,
        reason: str | None,
        *,
        user: str,
        source: Provenance | str = "terminal",
        session: Any = None,
        auto_entry: bool | None = None,
        round_fields: dict[str, Any] | None = None,
    ) -> GateResult:
        if round_fields:
            raise UsageError("budget_spent / evidence_gained / residual_risk belong to a samsara round gate")
        ans, reason = validate_answer(evidence, answer_text, reason)
        return self.apply(evidence, ans, reason, user=user, source=source)

    def replay(
        self,
        path: str | os.PathLike,
        af: AnswersFile,
        *,
        user: str,
        options: dict[str, Any],
        source: Provenance,
        auto_entry: bool | None = None,
    ) -> list[GateResult]:
        """Every gate of the answers file gathered and checked, then all recorded (or none)."""
        errors: list[str] = []
        evidences = []
        for gid, entries in af.gates.items():
            if len(entries) != 1:
                errors.append(f"{gid}: one answer expected, {len(entries)} given")
                continue
            e = entries[0]
            # An entry's own `value` (sprint-pause: the new budget or timeout) is a gather option too.
            extra = {"value": str(e["value"])} if e.get("value") is not None else {}
            ev = self.gather(af.catalog[gid], Path(path), **(options | extra))
            try:
                validate_answer(ev, e.get("answer"), e.get("reason"))
            except DecisionRefused as exc:
                errors.append(str(exc))
            evidences.append((ev, e))
        if errors:
            raise refused(af.source, errors)
        results = []
        for ev, e in evidences:
            ans, reason = validate_answer(ev, e["answer"], e.get("reason"))
            results.append(self.apply(ev, ans, reason, user=user, source=source))
        return results

    def proof_file(self, evidence: Evidence) -> Path | None:
        return Path(evidence.context["decisions_dir"]) / "auto-decisions.md"

    def loop_files(self, evidence: Evidence, root: Path) -> set[Path]:
        return set()
