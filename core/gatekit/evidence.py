"""What a gate shows before it asks (:class:`Evidence`), what it recorded (:class:`GateResult`),
the check of an answer against its gate, and :func:`build_entry`: the one place an
auto-decisions.md entry (a :class:`~scars.core.formats.auto_decisions.DecisionEntry`) is built,
from a catalog gate, the evidence it showed and the answer given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError
from scars.core.formats.auto_decisions import DecisionEntry
from scars.core.gatekit.catalog import Answer, Gate, hint_tail
from scars.core.provenance import Provenance
from scars.core.records import field, record
from scars.core.sanitize import shell_join
from scars.core.text import text_problem

# How every front end introduces a gate's ``workflow_prompt``: the loop's own words, kept verbatim
# (auto-decisions.md records them as asked), so they may say what scars' headline does not — a
# round gate's "Round R 完成" ("done") for a round where nothing was decided yet.
PROMPT_LABEL = "The loop's own prompt (verbatim, recorded with your answer):"
# The same where no answer can be recorded (a read-only session looks at the gate).
LOOK_ONLY_PROMPT_LABEL = "The loop's own prompt (verbatim):"


@record(frozen=False)
class Evidence:
    """What a gate shows before it asks: read from the loop's files."""

    gate: Gate
    target: Path  # the samsara feature directory, or the loop's state directory
    state_file: Path | None  # feature.json / REVIEW_STATE.json / pdca-status.json (None for samsara)
    workflow_prompt: str  # the prompt as the loop words it, figures filled in
    figures: list[tuple[str, str]] = field(default_factory=list)  # (label, value) as every front end shows them
    facts: dict[str, Any] = field(default_factory=dict)  # the same figures as numbers and ids (JSON)
    warnings: list[str] = field(default_factory=list)
    files_read: list[str] = field(default_factory=list)  # display paths (relative)
    context: dict[str, Any] = field(default_factory=dict)  # loop-specific values for apply
    reason_required: set[str] = field(default_factory=set)  # answers needing a reason here
    reason_optional: set[str] = field(default_factory=set)  # answers that need none here (the loop's default)
    decision_overrides: dict[str, str] = field(default_factory=dict)  # answer -> decision here
    refused: dict[str, str] = field(default_factory=dict)  # answer -> why it cannot be given here
    advice: str | None = None  # what the loop's own rule suggests (advice, never the answer)
    default: str | None = None  # the answer pre-selected at the terminal
    uncertainty: tuple[str, str] = ("low", "")
    headline: str | None = None  # scars' one-line summary every front end shows first (round gates)

    def needs_reason(self, answer: Answer) -> bool:
        if answer.value in self.reason_required:
            return True
        return answer.needs_reason and answer.value not in self.reason_optional

    def decision_for(self, answer: Answer) -> str:
        return self.decision_overrides.get(answer.value, answer.decision)

    def loop_name(self) -> str:
        """The loop this evidence is about, as every front end names it: the gate's loop, unless
        the gate serves several lineages (the review gate: ``mechanist`` or ``aris``)."""
        return self.gate.loop

    def as_json(self) -> dict[str, Any]:
        """What the gate shows, for scripts (`scars gate … --json`)."""
        gate = self.gate
        return {
            "gate": gate.id,
            "entry_id": gate.entry_id,
            "loop": self.loop_name(),
            "workflow_prompt": self.workflow_prompt,
            **({"headline": self.headline} if self.headline is not None else {}),
            "figures": [[label, value] for label, value in self.figures],
            "facts": dict(self.facts),
            "warnings": list(self.warnings),
            "advice": self.advice,
            "default": self.default,
            "answers": [
                {
                    "value": a.value,
                    "key": a.key,
                    "label": a.label,
                    "decision": self.decision_for(a),
                    "needs_reason": self.needs_reason(a),
                    **({"refused": self.refused[a.value]} if a.value in self.refused else {}),
                }
                for a in gate.answers
            ],
            "files_read": list(self.files_read),
            **({"selector": selector(self)} if gate.selects else {}),
        }


# The `scars gate` flag of each selector key (``Gate.selects``); a sprint is its file, the path.
SELECTOR_FLAGS = {"item": "--item", "feature": "--bkit-feature"}


def answer_hint(evidence: Evidence, path: str | None) -> str:
    """The exact `scars gate` command that answers this gate without a terminal, as its evidence
    stands (for exit 3): on what the evidence selected (the item, the bkit feature, the sprint's
    file), with an answer the gate takes here (its default unless refused, else the first not
    refused) and ``--reason "WHY"`` exactly when that answer needs one here. Run as printed, it
    fails only for the reason it names (WHY is a placeholder, refused as a reason)."""
    gate = evidence.gate
    chosen = selector(evidence)
    where = path
    if "sprint" in chosen and evidence.state_file is not None:
        where = str(evidence.state_file)
    words = ["scars", "gate", gate.id] + ([where] if where else [])
    for key, flag in SELECTOR_FLAGS.items():
        if key in chosen:
            words += [flag, chosen[key]]
    allowed = [a for a in gate.answers if a.value not in evidence.refused]
    by_value = {a.value: a for a in allowed}
    ans = by_value.get(evidence.default or "") or (allowed[0] if allowed else gate.answers[0])
    words += ["--answer", ans.value]
    cmd = shell_join(words) + (' --reason "WHY"' if evidence.needs_reason(ans) else "")
    need = [a.value for a in allowed if evidence.needs_reason(a)]
    return cmd + hint_tail(gate, [a.value for a in allowed], need, [a.value for a in gate.answers if a not in allowed])


def selector(evidence: Evidence) -> dict[str, str]:
    """What the gate is about beyond its loop's files, as its evidence selected it: ``{"item": …}``
    (blocked-fix), ``{"feature": …}`` (bkit's feature gates), ``{"sprint": …}`` (sprint-pause) —
    the gate's ``selects`` keys read from the evidence's context; {} for a gate about its whole
    state file. The one rule of which request an answer given in place answers
    (``requests.pending_for``) and of what a request's answer may be recorded on
    (``requests.apply_request``)."""
    return {k: str(evidence.context.get(k)) for k in evidence.gate.selects}


@record(frozen=False)
class GateResult:
    gate: str
    answer: str
    decision: str
    reason: str | None
    decided_by: str
    recorded: list[str]
    entry_number: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    source: str = ""  # how the answer came: terminal, flag, environment, answers file, app

    def as_json(self) -> dict[str, Any]:
        out = {
            "gate": self.gate,
            "answer": self.answer,
            "decision": self.decision,
            "reason": self.reason,
            "decided_by": self.decided_by,
            "source": self.source,
            "recorded": list(self.recorded),
        }
        out.update(self.extra)
        return out


def validate_answer(evidence: Evidence, answer_text: str | None, reason: str | None) -> tuple[Answer, str | None]:
    """Check an answer (and its reason) against the gate; raise DecisionRefused (exit 4)."""
    gate = evidence.gate
    if answer_text is None or not str(answer_text).strip():
        raise DecisionRefused(
            f"gate {gate.id}: no answer given; valid answers: {gate.valid_answers_text()}",
            [FieldError("answer", "missing")],
        )
    ans = gate.answer(answer_text)
    if ans is None:
        raise DecisionRefused(
            f"gate {gate.id}: {str(answer_text)!r} is not a valid answer; valid answers: {gate.valid_answers_text()}",
            [FieldError("answer", "invalid")],
        )
    if ans.value in evidence.refused:
        raise DecisionRefused(
            f"gate {gate.id}: answer {ans.value!r} refused: {evidence.refused[ans.value]}",
            [FieldError("answer", evidence.refused[ans.value])],
        )
    reason = reason.strip() if isinstance(reason, str) and reason.strip() else None
    if evidence.needs_reason(ans):
        problem = text_problem(reason, question=gate)
        if problem:
            raise DecisionRefused(
                f"gate {gate.id}: answer {ans.value!r} needs a reason: {problem}", [FieldError("reason", problem)]
            )
    elif reason is not None:
        problem = text_problem(reason, question=gate)
        if problem:
            raise DecisionRefused(f"gate {gate.id}: {problem}", [FieldError("reason", problem)])
    return ans, reason


def _whence(evidence: Evidence) -> str:
    prov = evidence.context.get("provenance")
    return f" ({prov.describe()})" if isinstance(prov, Provenance) else ""


def build_entry(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    rationale: str | None = None,
    extra_consequences: list[str] | None = None,
    now: str | None = None,
) -> DecisionEntry:
    """The auto-decisions.md entry of ``ans`` at ``evidence.gate`` (formats.md §1.6): the gate's
    entry id and stage, the workflow prompt as shown, the answer made question-specific (its
    reason, else the figures it saw), the files read as evidence. How the answer came (flag,
    answers file, app) is not in the entry — the same decision is the same entry whichever front
    end took it — but in the journal and the command's result."""
    gate = evidence.gate
    answer_text = ans.label if not reason else f"{ans.label}: {reason}"
    if not reason:
        # Question-specific even without a typed reason: the answer with the figures it saw.
        figs = "; ".join(f"{k} {v}" for k, v in evidence.figures[:4])
        answer_text = f"{ans.label} ({figs})" if figs else ans.label
    level, notes = evidence.uncertainty
    considerations = list(evidence.warnings) or ["no warning was active at this gate"]
    if evidence.advice:
        considerations.append(f"advice shown: {evidence.advice}")
    return DecisionEntry(
        stage=gate.stage,
        gate_id=gate.entry_id,
        prompt_type=gate.prompt_type,
        workflow_prompt=evidence.workflow_prompt,
        gatekeeper_answer=answer_text,
        decision=evidence.decision_for(ans),
        rationale=rationale
        or reason
        or f"{user} chose {ans.value!r} at the {gate.entry_id} gate with the figures shown",
        principles_used=(gate.principle, f"decided by {user} at the {gate.entry_id} gate{_whence(evidence)}"),
        architecture_considerations=tuple(considerations),
        evidence_checked=tuple(evidence.files_read),
        uncertainty_level=level,
        uncertainty_notes=notes or "none beyond the figures shown at the gate",
        consequences=(ans.consequence, *(extra_consequences or ())),
        timestamp=now or now_iso(),
    )
