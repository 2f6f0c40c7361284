"""Step-mode gates: every human gate of the five loops, as data, plus recording an answer.

A :class:`Gate` names one decision point of an upstream loop: its id, the loop, the workflow
prompt as the upstream loop words it, the valid answers (each with a single key), which answers
need a free-text reason, and how each answer maps to the auto-decisions decision
(proceed / revise / reject / accept_gap, formats.md §1.6).

``gather(gate_id, path)`` reads the loop's files and returns :class:`Evidence` (the prompt with
its figures filled in, the figures, the warnings and the files read). ``apply_answer(...)``
records an answer: one ``auto-decisions.md`` entry in the exact §1.6 format (through
``FeatureSession.append_auto_decision`` for samsara, through the same formatter for the other
loops' state directories) plus the loop's own state (see ``scars.core.gate_state``).

Pure core: no terminal library is imported here. Errors are the typed ones of
``scars.core.errors``; the CLI maps them to exit codes.
"""

from __future__ import annotations

import os
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from scars.core.decisions import FieldError
from scars.core.errors import DecisionRefused, UsageError

Decision = Literal["proceed", "revise", "reject", "accept_gap"]
DECISIONS: tuple[str, ...] = ("proceed", "revise", "reject", "accept_gap")
LOOPS: tuple[str, ...] = ("samsara", "loop-spec", "aris", "bkit")


@dataclass(frozen=True, slots=True)
class Answer:
    """One valid answer of a gate."""

    value: str  # machine value, e.g. "continue"
    key: str  # the single key that picks it at the terminal (also accepted as --answer)
    label: str  # the option as the upstream loop words it
    decision: Decision  # the auto-decisions decision it maps to
    needs_reason: bool  # a free-text, question-specific reason is required
    consequence: str  # what the loop does next (the entry's `consequences`)
    aliases: tuple[str, ...] = ()  # other accepted spellings (upstream letters, words)


@dataclass(frozen=True, slots=True)
class Gate:
    """One human gate of an upstream loop."""

    id: str  # the gate id on the command line and in `SCARS_ANSWER_<GATE>`
    loop: str  # samsara | loop-spec | aris | bkit
    title: str
    stage: str  # auto-decisions `stage`; the heading is `<stage>.<id>`
    prompt_type: Literal["question", "confirmation"]
    answers: tuple[Answer, ...]
    principle: str  # the upstream rule the gate enforces (the entry's `principles_used`)
    source: str  # where upstream words the prompt (shown in help and docs)
    prompt: str = ""  # the workflow prompt as the loop words it; {placeholders} take the figures
    needs_item: bool = False  # the gate is about one scar item (`--item ID`)

    def answer(self, text: str) -> Answer | None:
        """The answer ``text`` names (value, key, alias or label; case-insensitive), or None."""
        t = " ".join(str(text).split()).casefold()
        if not t:
            return None
        for a in self.answers:
            names = {a.value, a.key, a.label, *a.aliases}
            if t in {n.casefold() for n in names}:
                return a
        return None

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(a.value for a in self.answers)

    def valid_answers_text(self) -> str:
        return ", ".join(f"{a.value} ({a.key})" for a in self.answers)


def _a(value, key, label, decision, needs_reason, consequence, *aliases) -> Answer:
    return Answer(value, key, label, decision, needs_reason, consequence, tuple(aliases))


# --------------------------------------------------------------------------------------------
# The gates. Prompts quoted from the seeds are kept verbatim (Chinese included): they are what
# the loop itself would show, and `workflow_prompt` must preserve the original prompt.
# --------------------------------------------------------------------------------------------

SAMSARA_ENTRY_PROMPT = (
    "Iteration entry: signal_lost={signal_lost}, cross-task patterns={patterns}, "
    "parse failures={failures}; entry verdict: {verdict}. "
    "(A) enter iteration (B) skip to validate-and-ship"
)
SAMSARA_ROUND_PROMPT = (
    "Round {round} 完成。signal_lost: {before} → {after}。修復了 {fixed} 個 items，剩餘 {remaining} 個。\n\n"
    "(A) 繼續下一輪 (B) 停止，進入 Validation"
)
SAMSARA_STAGNATION_WARNING = "signal_lost 連續 2 輪未下降（{before} → {after}）。Iteration 可能在原地轉圈。建議停止。"
SAMSARA_NET_ROT_WARNING = "本輪 fix 產出 {new} 個新 scar items，修復了 {resolved} 個。淨 rot 增加。建議停止。"
SAMSARA_MAX_ROUNDS_WARNING = "Max rounds: {max_rounds} rounds. If reached → forced stop with remaining items listed."
SAMSARA_BLOCKED_PROMPT = (
    "Fix item \"{description}\" 被 implementer 回報 BLOCKED: {reason}。(A) 提供更多 context 重試 (B) 重新分類為 defer"
)
SAMSARA_TRIAGE_PROMPT = (
    "Feature-level scar items ({count} items, signal_lost = {signal_lost}):\n\n"
    "{groups}\n"
    "每個 item 需要分類：\n"
    "  (F) Fix — 有 actionable code change\n"
    "  (A) Accept — 已知風險，接受（必須附 re-review signal：什麼可觀測訊號出現時重審 + 誰負責（owner）+ rationale）\n"
    "  (D) Defer — 不在本次處理"
)
LOOP_SPEC_PROMPT = (
    "ITERATE judges the goal still unmet because of a SPEC-level gap: {gap}. "
    "Re-open SPEC/DISCUSS, ship as-is, or stop?"
)
REVIEW_PROMPT = (
    "{unit} {number} reviewed: score {score}/10, verdict {verdict}. STOP rule {stop}. "
    "Budget left: {budget}. (A) continue to {unit_lower} {next} (B) stop the loop"
)
PDCA_PROMPT = (
    "{feature}: Match Rate {rate} (threshold {threshold}%), iteration {count} of max {max}. "
    "(A) iterate again (B) accept as PARTIAL (C) stop"
)

# The warnings[] prefix of a gap shipped as-is at the loop-spec `spec` gate (ours; upstream's
# harvest uses `iterate-budget-spent:` / `iterate-terminal:`).
GAP_PREFIX_SHIP = "iterate-shipped-as-is:"

GATES: dict[str, Gate] = {}


def _register(gate: Gate) -> Gate:
    GATES[gate.id] = gate
    return gate


_register(Gate(
    id="entry", loop="samsara", title="Enter iteration or skip to validate-and-ship",
    stage="iteration", prompt_type="question",
    answers=(
        _a("enter", "a", "(A) enter iteration", "proceed", False,
           "enter samsara:iteration; remove any iteration_skip_record from index.yaml", "A", "iterate"),
        _a("skip", "b", "(B) skip to validate-and-ship", "accept_gap", True,
           "write iteration_skip_record into index.yaml and invoke samsara:validate-and-ship", "B"),
    ),
    principle="iteration entry: cross-task pattern OR signal_lost >= 5 asks the gate; a parse failure is unknown and never skips",
    source="samsara implement SKILL → Transition (formats.md §1.3)",
    prompt=SAMSARA_ENTRY_PROMPT,
))
_register(Gate(
    id="triage", loop="samsara", title="Triage every remaining item: fix / accept / defer",
    stage="iteration", prompt_type="question",
    answers=(
        _a("done", "d", "triage recorded", "proceed", False,
           "follow the recorded fix / accept / defer classification of each item", "recorded"),
    ),
    principle="triage is a recorded gate decision; an accept carries re_review_signal, owner and rationale",
    source="samsara iteration SKILL Step 2 (formats.md §1.4)",
    prompt=SAMSARA_TRIAGE_PROMPT,
))
_register(Gate(
    id="round-continue", loop="samsara", title="Round continuation",
    stage="iteration", prompt_type="question",
    answers=(
        _a("continue", "a", "(A) 繼續下一輪", "proceed", False,
           "close the round with decision continue in iteration-log.yaml and triage the next round", "A"),
        _a("stop", "b", "(B) 停止，進入 Validation", "proceed", True,
           "close the round with decision stop in iteration-log.yaml and invoke samsara:validate-and-ship", "B"),
    ),
    principle="the execution-mode gate decides whether another round is worth it; the safety valve is advisory",
    source="samsara iteration SKILL Step 4, round continuation gate",
    prompt=SAMSARA_ROUND_PROMPT,
))
_register(Gate(
    id="safety-valve", loop="samsara", title="Safety valve fired: continue despite it, or stop",
    stage="iteration", prompt_type="question",
    answers=(
        _a("continue", "a", "(A) continue despite the warning", "accept_gap", True,
           "close the round with decision continue, the warning named in decision_reason", "A"),
        _a("stop", "b", "(B) stop, go to Validation", "proceed", False,
           "close the round with decision stop (forced_stop at max rounds) naming the trigger; invoke samsara:validate-and-ship", "B"),
    ),
    principle="safety valve is advisory: the active execution-mode gate makes the final call and a forced stop names its trigger",
    source="samsara iteration SKILL Step 4, safety valve checks",
    prompt=SAMSARA_ROUND_PROMPT,
))
_register(Gate(
    id="blocked-fix", loop="samsara", title="A fix item was reported BLOCKED",
    stage="iteration", prompt_type="question",
    answers=(
        _a("retry", "a", "(A) 提供更多 context 重試", "revise", True,
           "re-dispatch the fix with the added context (never retried automatically)", "A", "retry_with_context"),
        _a("defer", "b", "(B) 重新分類為 defer", "accept_gap", True,
           "reclassify the item as defer; the outcome is logged in the iteration log", "B", "reclassify_as_defer"),
    ),
    principle="a BLOCKED / NEEDS_CONTEXT fix is not retried automatically; the user decides",
    source="samsara iteration SKILL Step 3, blocked fix handling",
    prompt=SAMSARA_BLOCKED_PROMPT,
    needs_item=True,
))
_register(Gate(
    id="spec", loop="loop-spec", title="SPEC-level gap: re-open, ship as-is, or stop",
    stage="iteration", prompt_type="question",
    answers=(
        _a("reopen", "r", "Re-open SPEC/DISCUSS", "revise", False,
           "rewind to refine the spec toward the original goal (costs an iteration)", "re-open", "1"),
        _a("ship", "s", "Ship as-is", "accept_gap", True,
           "complete now; the accepted gap is recorded in warnings[] and the backlog", "ship-as-is", "2"),
        _a("stop", "h", "Stop - hand back", "reject", False,
           "pause the cycle and return control (resume later)", "hand-back", "3"),
    ),
    principle="a SPEC-level gap is the expensive rewind; step/interactive runs ask the operator",
    source="loop-spec skills/iterate/SKILL.md step 3 (spec route)",
    prompt=LOOP_SPEC_PROMPT,
))
_register(Gate(
    id="review-continue", loop="aris", title="Review iteration done: continue or stop",
    stage="iteration", prompt_type="question",
    answers=(
        _a("continue", "a", "(A) continue", "proceed", False,
           "run the next review iteration within the budgets left", "A", "c"),
        _a("stop", "b", "(B) stop", "accept_gap", True,
           "terminate the loop: REVIEW_STATE.json status completed and the termination reason", "B", "s"),
    ),
    principle="STOP = score >= 6 AND verdict in {ready, almost} AND no FAIL / INCONCLUSIVE / ZERO_ELIGIBLE claim; unknown is never success",
    source="Mechanist auto-iteration-loop Phase B / ARIS auto-review-loop (formats.md §3.3, §3.6)",
    prompt=REVIEW_PROMPT,
))
_register(Gate(
    id="pdca-continue", loop="bkit", title="PDCA check: iterate again, accept as PARTIAL, or stop",
    stage="iteration", prompt_type="question",
    answers=(
        _a("iterate", "a", "(A) iterate again", "proceed", False,
           "run another Act cycle (iterationCount grows by one)", "A", "i"),
        _a("partial", "b", "(B) accept as PARTIAL", "accept_gap", True,
           "finish as PARTIAL: the gap below the threshold is kept visible; go to the report", "B", "p"),
        _a("stop", "c", "(C) stop", "reject", True,
           "stop the iteration with a FAILURE outcome", "C", "s"),
    ),
    principle="pass at Match Rate >= 90 %; at most 5 iterations (critical 10); stop after 3 without improvement",
    source="bkit agents/pdca-iterator.md, Iteration Control (formats.md §4.3)",
    prompt=PDCA_PROMPT,
))

GENERIC_ANSWERS = frozenset({
    "ok", "okay", "k", "approved", "approve", "looks good", "lgtm", "continue", "yes", "y", "yep",
    "sure", "fine", "good", "done", "go", "go ahead", "proceed", "stop", "no", "n", "agreed", "agree",
    "accept", "accepted", "ship it", "ship", "fine by me", "whatever", "none", "n/a", "na", "-", "?",
    "yes please", "sounds good", "all good", "ack", "confirmed", "confirm", "skip", "retry", "defer",
    # the same in the upstream's other language
    "好", "好的", "可以", "同意", "繼續", "继续", "停止", "是", "確認", "确认", "沒問題", "没问题", "通過", "通过",
})


def _norm_reason(text: str) -> str:
    t = " ".join(str(text).split()).casefold()
    return re.sub(r"^[\W_]+|[\W_]+$", "", t)


def generic_reason_problem(reason: str | None, gate: Gate | None = None) -> str | None:
    """Why ``reason`` is not a question-specific answer (formats.md §1.6 validity), or None."""
    if reason is None or not str(reason).strip():
        return "a reason is required"
    n = _norm_reason(reason)
    words = set(GENERIC_ANSWERS)
    if gate is not None:
        for a in gate.answers:
            words |= {a.value.casefold(), a.key.casefold(), _norm_reason(a.label), *(x.casefold() for x in a.aliases)}
    if n in words or sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in n) < 4:
        return (f"{reason.strip()!r} is a generic answer; say why, specific to this question "
                "(e.g. which items or figures made you decide)")
    return None


def env_var(gate_id: str, what: str = "ANSWER") -> str:
    """`SCARS_ANSWER_<GATE>` / `SCARS_REASON_<GATE>` for a gate id."""
    return f"SCARS_{what}_" + gate_id.upper().replace("-", "_")


def get_gate(gate_id: str) -> Gate:
    try:
        return GATES[gate_id]
    except KeyError:
        raise UsageError(f"unknown gate {gate_id!r}; gates: {', '.join(GATES)}") from None


@dataclass
class Evidence:
    """What a gate shows before it asks: read from the loop's files."""

    gate: Gate
    target: Path  # the samsara feature directory, or the loop's state directory
    state_file: Path | None  # feature.json / REVIEW_STATE.json / pdca-status.json (None for samsara)
    workflow_prompt: str  # the prompt as the loop words it, figures filled in
    figures: list[tuple[str, str]] = field(default_factory=list)
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

    def needs_reason(self, answer: Answer) -> bool:
        if answer.value in self.reason_required:
            return True
        return answer.needs_reason and answer.value not in self.reason_optional

    def decision_for(self, answer: Answer) -> str:
        return self.decision_overrides.get(answer.value, answer.decision)


@dataclass
class GateResult:
    gate: str
    answer: str
    decision: str
    reason: str | None
    decided_by: str
    recorded: list[str]
    entry_number: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        out = {
            "gate": self.gate,
            "answer": self.answer,
            "decision": self.decision,
            "reason": self.reason,
            "decided_by": self.decided_by,
            "recorded": list(self.recorded),
        }
        out.update(self.extra)
        return out


def validate_answer(evidence: Evidence, answer_text: str | None, reason: str | None) -> tuple[Answer, str | None]:
    """Check an answer (and its reason) against the gate; raise DecisionRefused (exit 4)."""
    gate = evidence.gate
    if answer_text is None or not str(answer_text).strip():
        raise DecisionRefused(f"gate {gate.id}: no answer given; valid answers: {gate.valid_answers_text()}",
                              [FieldError("answer", "missing")])
    ans = gate.answer(answer_text)
    if ans is None:
        raise DecisionRefused(
            f"gate {gate.id}: {str(answer_text)!r} is not a valid answer; valid answers: {gate.valid_answers_text()}",
            [FieldError("answer", "invalid")],
        )
    if ans.value in evidence.refused:
        raise DecisionRefused(f"gate {gate.id}: answer {ans.value!r} refused: {evidence.refused[ans.value]}",
                              [FieldError("answer", evidence.refused[ans.value])])
    reason = reason.strip() if isinstance(reason, str) and reason.strip() else None
    if evidence.needs_reason(ans):
        problem = generic_reason_problem(reason, gate)
        if problem:
            raise DecisionRefused(f"gate {gate.id}: answer {ans.value!r} needs a reason: {problem}",
                                  [FieldError("reason", problem)])
    elif reason is not None:
        problem = generic_reason_problem(reason, gate)
        if problem and problem != "a reason is required":
            raise DecisionRefused(f"gate {gate.id}: {problem}", [FieldError("reason", problem)])
    return ans, reason


# --------------------------------------------------------------------------------------------
# auto-decisions.md (formats.md §1.6): one formatter for every loop — scars.core.autodecisions_write.
# --------------------------------------------------------------------------------------------


def now_iso() -> str:
    return datetime.now(timezone.utc).astimezone().replace(microsecond=0).isoformat()


def append_auto_decision_file(directory: Path, **fields: Any) -> int:
    """Append one entry to ``<directory>/auto-decisions.md`` (created with a title when absent).

    Used for the loops whose state directory is not a samsara feature (loop-spec, ARIS /
    Mechanist, bkit), with the formatter samsara's ``FeatureSession.append_auto_decision``
    uses; the caller holds the directory's lock. Returns the new entry's number.
    """
    from scars.core.autodecisions_write import append_entry

    return append_entry(Path(directory), **fields)


# --------------------------------------------------------------------------------------------
# gather / apply: dispatch to the loop's module.
# --------------------------------------------------------------------------------------------


def gather(gate_id: str, path: str | os.PathLike | None = None, **options: Any) -> Evidence:
    """Read the loop's files for ``gate_id`` at ``path`` (default: the current directory)."""
    gate = get_gate(gate_id)
    from scars.core import gate_state

    return gate_state.GATHER[gate.loop](gate, Path(path) if path is not None else Path.cwd(), **options)


def apply_answer(evidence: Evidence, answer_text: str, reason: str | None = None, *,
                 user: str, session: Any = None, source: str = "terminal",
                 now: str | None = None) -> GateResult:
    """Validate and record an answer; return what was recorded.

    ``source`` says where the answer came from (terminal, flag, environment, answers file) and
    goes into the entry's evidence. For samsara, ``session`` is an open, writable
    ``FeatureSession``; the other loops lock their state directory themselves.
    """
    ans, reason = validate_answer(evidence, answer_text, reason)
    from scars.core import gate_state

    return gate_state.APPLY[evidence.gate.loop](evidence, ans, reason, user=user, session=session,
                                                source=source, now=now or now_iso())


def entry_fields(evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str,
                 now: str, extra_consequences: list[str] | None = None,
                 rationale: str | None = None) -> dict[str, Any]:
    """The §1.6 fields of the entry for an answer (shared by every loop)."""
    gate = evidence.gate
    answer_text = ans.label if not reason else f"{ans.label}: {reason}"
    if not reason:
        # Question-specific even without a typed reason: the answer with the figures it saw.
        figs = "; ".join(f"{k} {v}" for k, v in evidence.figures[:4])
        answer_text = f"{ans.label} ({figs})" if figs else ans.label
    level, notes = evidence.uncertainty
    notes = notes or "none beyond the figures shown at the gate"
    principles = [gate.principle, f"human gate answered by {user} via scars gate ({source})"]
    considerations = list(evidence.warnings) or ["no warning was active at this gate"]
    if evidence.advice:
        considerations.append(f"advice shown: {evidence.advice}")
    return dict(
        stage=gate.stage,
        gate_id=gate.id,
        prompt_type=gate.prompt_type,
        workflow_prompt=evidence.workflow_prompt,
        answer=answer_text,
        decision=evidence.decision_for(ans),
        rationale=rationale or reason or f"{user} chose {ans.value!r} at the {gate.id} gate with the figures shown",
        principles=principles,
        considerations=considerations,
        evidence=list(evidence.files_read),
        uncertainty_level=level,
        uncertainty_notes=notes,
        consequences=[ans.consequence, *(extra_consequences or [])],
        timestamp=now,
    )


def answers_hint(gate: Gate, path: str | None) -> str:
    """The exact command that answers ``gate`` without a terminal (for exit 3)."""
    where = f" {path}" if path else ""
    if gate.id == "triage":
        return f"scars gate triage{where} --answers ANSWERS.yaml"
    needs = [a for a in gate.answers if a.needs_reason]
    a = gate.answers[0]
    item = " --item ITEM_ID" if gate.needs_item else ""
    reason = ' --reason "WHY"' if a.needs_reason else ""
    cmd = f"scars gate {gate.id}{where}{item} --answer {a.value}{reason}"
    extra = f" (answers: {', '.join(gate.values)}"
    if needs:
        extra += f"; --reason needed for {', '.join(x.value for x in needs)}"
    extra += f"; or set {env_var(gate.id)})"
    return cmd + extra



def record(evidence: Evidence, answer_text: str, reason: str | None = None, *, user: str,
           source: str = "terminal") -> GateResult:
    """Record an answer: samsara gates under the feature's writer session, others directly."""
    if evidence.gate.loop == "samsara":
        from scars.core import gate_samsara

        return gate_samsara.record(evidence, answer_text, reason, user=user, source=source)
    return apply_answer(evidence, answer_text, reason, user=user, source=source)


def record_triage(evidence: Evidence, *, user: str, source: str) -> GateResult | None:
    """The `triage` gate's entry after the app has recorded the item decisions (None: none made)."""
    from scars.core import gate_samsara

    return gate_samsara.record_triage(evidence, user=user, source=source)


# --------------------------------------------------------------------------------------------
# Answers files: a prepared triage and its gates, validated entirely before anything is written.
# --------------------------------------------------------------------------------------------

ITEM_ID = re.compile(r"^(ks|sf|ua)-[0-9a-f]{10}$")
ANSWERS_MAX_BYTES = 1_000_000
GATE_KEYS = {"answer", "reason", "item", "blocked"}


@dataclass
class AnswersFile:
    gates: dict[str, list[dict[str, Any]]]  # gate id -> answers (blocked-fix may hold several)
    items: dict[str, dict[str, Any]]  # item id -> {action, fields…}
    source: str


def load_answers(path: str | os.PathLike) -> AnswersFile:
    """Read and check the shape of an answers file. Raises UsageError (cannot read) or
    DecisionRefused (every shape problem listed)."""
    p = Path(path)
    try:
        if p.stat().st_size > ANSWERS_MAX_BYTES:
            raise UsageError(f"{p}: answers file larger than {ANSWERS_MAX_BYTES} bytes")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"answers file {p} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read answers file {p}: {exc}") from None
    import yaml

    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        raise DecisionRefused(f"{p}: not valid YAML ({str(exc).splitlines()[0]}); nothing was recorded",
                              [FieldError("answers", "not YAML")]) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DecisionRefused(f"{p}: must map gate ids and item ids to answers; nothing was recorded",
                              [FieldError("answers", "not a mapping")])
    errors: list[str] = []
    gates: dict[str, list[dict[str, Any]]] = {}
    items: dict[str, dict[str, Any]] = {}
    flat: list[tuple[Any, Any]] = []
    for key, value in data.items():
        if key in ("items", "gates") and isinstance(value, dict):
            flat.extend(value.items())
        else:
            flat.append((key, value))
    for key, value in flat:
        k = str(key)
        if k in GATES:
            entries = value if isinstance(value, list) else [value]
            for v in entries:
                if isinstance(v, (str, int)) and not isinstance(v, bool):
                    gates.setdefault(k, []).append({"answer": str(v)})
                elif isinstance(v, dict):
                    unknown = set(map(str, v)) - GATE_KEYS
                    if unknown:
                        errors.append(f"{k}: unknown key(s) {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(GATE_KEYS))})")
                        continue
                    gates.setdefault(k, []).append({str(a): (None if b is None else str(b)) for a, b in v.items()})
                else:
                    errors.append(f"{k}: the answer must be a value or a mapping with answer/reason")
        elif ITEM_ID.match(k):
            if isinstance(value, str):
                items[k] = {"action": value.strip().lower()}
            elif isinstance(value, dict):
                entry = {str(a): b for a, b in value.items()}
                action = entry.pop("action", entry.pop("answer", None))
                if not isinstance(action, str):
                    errors.append(f"{k}: needs an action (fix, accept or defer)")
                    continue
                entry["action"] = action.strip().lower()
                items[k] = entry
            else:
                errors.append(f"{k}: the decision must be fix / accept / defer or a mapping with action and its fields")
        else:
            errors.append(f"{k!s}: neither a gate id ({', '.join(GATES)}) nor an item id (ks-/sf-/ua- and 10 hex digits)")
    if errors:
        raise DecisionRefused(f"{p}: invalid answers file, nothing was recorded:\n  " + "\n  ".join(errors),
                              [FieldError("answers", e) for e in errors])
    return AnswersFile(gates=gates, items=items, source=str(p))


def replay_answers_file(named_gate: str, path: str | os.PathLike, answers_path: str | os.PathLike, *,
                        user: str, options: dict[str, Any] | None = None) -> list[GateResult]:
    """Validate every entry of an answers file, then record them all (or nothing)."""
    gate = get_gate(named_gate)
    af = load_answers(answers_path)
    options = {k: v for k, v in (options or {}).items() if v is not None}
    errors: list[str] = []
    for gid in af.gates:
        if GATES[gid].loop != gate.loop:
            errors.append(f"{gid}: a {GATES[gid].loop} gate, not one of {gate.loop}")
    if af.items and gate.loop != "samsara":
        errors.append(f"item decisions ({len(af.items)}) only apply to samsara features")
    if named_gate not in af.gates and not (named_gate == "triage" and af.items):
        errors.append(f"the answers file has no answer for gate {named_gate}")
    if errors:
        raise DecisionRefused(f"{af.source}: nothing was recorded:\n  " + "\n  ".join(errors),
                              [FieldError("answers", e) for e in errors])
    source = f"answers file {Path(answers_path).name}"
    if gate.loop == "samsara":
        from scars.core import gate_samsara

        return gate_samsara.replay(path, af, user=user, options=options, source=source)
    evidences = []
    for gid, entries in af.gates.items():
        if len(entries) != 1:
            errors.append(f"{gid}: one answer expected, {len(entries)} given")
            continue
        e = entries[0]
        ev = gather(gid, path, **options)
        try:
            validate_answer(ev, e.get("answer"), e.get("reason"))
        except DecisionRefused as exc:
            errors.append(str(exc))
        evidences.append((ev, e))
    if errors:
        raise DecisionRefused(f"{af.source}: nothing was recorded:\n  " + "\n  ".join(errors),
                              [FieldError("answers", e) for e in errors])
    return [apply_answer(ev, e["answer"], e.get("reason"), user=user, source=source) for ev, e in evidences]
