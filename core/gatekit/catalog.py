"""Every gate of the loops, as data: :class:`Gate`, :class:`Answer`, ``GATES`` and ``DECISION_POINTS``.

A :class:`Gate` names one decision point of an upstream loop: its id on the command line, the
ONE gate-id its auto-decisions.md entries carry (``entry_id``, the heading's
``<stage>.<entry_id>``; formats.md §1.6 leaves the id free, so consistency is ours to keep),
the loop, the workflow prompt as the upstream loop words it, the valid answers (each with a
single key), which answers need a free-text reason, and how each answer maps to the
auto-decisions decision (proceed / revise / reject / accept_gap). ``GATES`` holds the gates
``scars gate`` answers (by command-line id); ``DECISION_POINTS`` every decision point scars
writes an entry for (by entry id), the watch reopen included. ``env_var`` names the
environment variables that answer a gate without a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from scars.core.errors import UsageError
from scars.core.sanitize import shell_word
from scars.core.settings import env_var

GateDecision = Literal["proceed", "revise", "reject", "accept_gap"]


DECISIONS: tuple[str, ...] = ("proceed", "revise", "reject", "accept_gap")


LOOPS: tuple[str, ...] = ("samsara", "loop-spec", "aris", "bkit", "dag")


_LETTER_MARKER = re.compile(r"\(\w\)\s+")


@dataclass(frozen=True, slots=True)
class Answer:
    """One valid answer of a gate."""

    value: str  # machine value, e.g. "continue"
    key: str  # the single key that picks it at the terminal (also accepted as --answer)
    label: str  # the option as the upstream loop words it
    decision: GateDecision  # the auto-decisions decision it maps to
    needs_reason: bool  # a free-text, question-specific reason is required
    consequence: str  # what the loop does next (the entry's `consequences`)
    aliases: tuple[str, ...] = ()  # other accepted spellings (upstream letters, words)

    @property
    def plain_label(self) -> str:
        """The label without upstream's leading letter marker: "(A) enter iteration" -> "enter iteration"
        (a terminal shows the choice's key itself; "a) (A) enter …" says it twice)."""
        m = _LETTER_MARKER.match(self.label)
        return self.label[m.end() :] if m else self.label


@dataclass(frozen=True, slots=True)
class Gate:
    """One human gate of an upstream loop."""

    id: str  # the gate id on the command line and in `SCARS_ANSWER_<GATE>`
    entry_id: str  # the gate-id of its auto-decisions.md entries (`## Decision NNN - <stage>.<entry_id>`)
    loop: str  # samsara | loop-spec | aris | bkit | dag
    title: str
    stage: str  # auto-decisions `stage`; the heading is `<stage>.<id>`
    prompt_type: Literal["question", "confirmation"]
    answers: tuple[Answer, ...]
    principle: str  # the upstream rule the gate enforces (the entry's `principles_used`)
    source: str  # where upstream words the prompt (shown in help and docs)
    prompt: str = ""  # the workflow prompt as the loop words it; {placeholders} take the figures
    needs_item: bool = False  # the gate is about one scar item (`--item ID`)
    # What else than its loop's files the gate is about — the item of blocked-fix (`--item`), the
    # feature of bkit's feature gates (`--bkit-feature`), the sprint of sprint-pause (its file):
    # each a key of its evidence's context (``evidence.selector``). The other gates are about their
    # whole state file (loop-spec's feature.json, ARIS's REVIEW_STATE.json — a review gate answers
    # for every claim at once —, a DAG report).
    selects: tuple[str, ...] = ()
    cli: bool = True  # answered by `scars gate` (False: a decision scars itself takes)

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


# Seed 002's rule ("Max rounds: 3 rounds. If reached → forced stop with remaining items listed."),
# as the gate says it when it is reached: the remaining items follow, one per line
# (scars.core.samsara.rounds.remaining_items_listed).
SAMSARA_MAX_ROUNDS_REACHED = (
    "Max rounds reached ({done} of {max_rounds}): forced stop with the {remaining} remaining item(s) listed:"
)


SAMSARA_BLOCKED_PROMPT = (
    'Fix item "{description}" 被 implementer 回報 BLOCKED: {reason}。(A) 提供更多 context 重試 (B) 重新分類為 defer'
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
    "ITERATE judges the goal still unmet because of a SPEC-level gap: {gap}. Re-open SPEC/DISCUSS, ship as-is, or stop?"
)


REVIEW_PROMPT = (
    "{unit} {number} reviewed: score {score}/10, verdict {verdict}. STOP rule {stop}. "
    "Budget left: {budget}. (A) continue to {unit_lower} {next} (B) stop the loop"
)


PDCA_PROMPT = (
    "{feature}: Match Rate {rate} (threshold {threshold}%), iteration {count} of max {max}. "
    "(A) iterate again (B) accept as PARTIAL (C) stop"
)


PDCA_MAX_PROMPT = "Maximum iterations reached ({rate}). How to proceed? ({count} of {max} iterations)"


SPRINT_PAUSE_PROMPT = "Sprint {sprint} auto-paused by {trigger}: {message}. {actions}?"


DAG_ESCALATE_PROMPT = "{task}: ESCALATE to a person — {why}. Take over, retry with guidance, accept as-is, or abort?"


# Ship as-is and Stop - hand back: the two answers loop-spec's `spec` and `escalate` gates share.
LOOP_SPEC_SHIP_OR_STOP = (
    Answer(
        "ship",
        "s",
        "Ship as-is",
        "accept_gap",
        True,
        "complete now; the open gaps are recorded in warnings[] and the backlog",
        ("ship-as-is", "2"),
    ),
    Answer(
        "stop",
        "h",
        "Stop - hand back",
        "reject",
        False,
        "pause the cycle and return control; a resume asks again",
        ("hand-back", "3"),
    ),
)


LOOP_SPEC_ESCALATE_PROMPT = (
    "ITERATE escalated: {why}. Fix first: {fix}. The run ends DONE status=escalated — "
    "resume after the operator's fix, ship as-is, or stop?"
)


WATCH_REOPEN_PROMPT = (
    'Watch "{watch}" on the accepted item "{text}" ({item}) of {feature} fired: {cause}. Reopen the item for triage?'
)


GATES: dict[str, Gate] = {}  # command-line id -> gate (`scars gate GATE`, answers files)
DECISION_POINTS: dict[str, Gate] = {}  # entry id -> gate: every gate-id scars writes


def _register(gate: Gate) -> Gate:
    if gate.entry_id in DECISION_POINTS:
        raise ValueError(f"two gates write the entry id {gate.entry_id!r}")
    DECISION_POINTS[gate.entry_id] = gate
    if gate.cli:
        GATES[gate.id] = gate
    return gate


_register(
    Gate(
        id="entry",
        entry_id="entry",
        loop="samsara",
        title="Enter iteration or skip to validate-and-ship",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "enter",
                "a",
                "(A) enter iteration",
                "proceed",
                False,
                "enter samsara:iteration; remove any iteration_skip_record from index.yaml",
                "A",
                "iterate",
            ),
            _a(
                "skip",
                "b",
                "(B) skip to validate-and-ship",
                "accept_gap",
                True,
                "write iteration_skip_record into index.yaml and invoke samsara:validate-and-ship",
                "B",
            ),
        ),
        principle="iteration entry: cross-task pattern OR signal_lost >= 5 asks the gate; a parse failure is unknown and never skips",
        source="samsara implement SKILL → Transition (formats.md §1.3)",
        prompt=SAMSARA_ENTRY_PROMPT,
    )
)
_register(
    Gate(
        id="triage",
        entry_id="triage",
        loop="samsara",
        title="Triage every remaining item: fix / accept / defer",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "done",
                "d",
                "triage recorded",
                "proceed",
                False,
                "follow the recorded fix / accept / defer classification of each item",
                "recorded",
            ),
        ),
        principle="triage is a recorded gate decision; an accept carries re_review_signal, owner and rationale",
        source="samsara iteration SKILL Step 2 (formats.md §1.4)",
        prompt=SAMSARA_TRIAGE_PROMPT,
    )
)
_register(
    Gate(
        id="round-continue",
        entry_id="round-continuation",
        loop="samsara",
        title="Round continuation",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "continue",
                "a",
                "(A) 繼續下一輪",
                "proceed",
                False,
                "close the round with decision continue in iteration-log.yaml and triage the next round",
                "A",
            ),
            _a(
                "stop",
                "b",
                "(B) 停止，進入 Validation",
                "proceed",
                True,
                "close the round with decision stop in iteration-log.yaml and invoke samsara:validate-and-ship",
                "B",
            ),
        ),
        principle="the execution-mode gate decides whether another round is worth it; the safety valve is advisory",
        source="samsara iteration SKILL Step 4, round continuation gate",
        prompt=SAMSARA_ROUND_PROMPT,
    )
)
_register(
    Gate(
        id="safety-valve",
        entry_id="safety-valve",
        loop="samsara",
        title="Safety valve fired: continue despite it, or stop",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "continue",
                "a",
                "(A) continue despite the warning",
                "accept_gap",
                True,
                "close the round with decision continue, the warning named in decision_reason",
                "A",
            ),
            _a(
                "stop",
                "b",
                "(B) stop, go to Validation",
                "proceed",
                False,
                "close the round with decision stop (forced_stop at max rounds) naming the trigger; invoke samsara:validate-and-ship",
                "B",
            ),
        ),
        principle="safety valve is advisory: the active execution-mode gate makes the final call and a forced stop names its trigger",
        source="samsara iteration SKILL Step 4, safety valve checks",
        prompt=SAMSARA_ROUND_PROMPT,
    )
)
_register(
    Gate(
        id="blocked-fix",
        entry_id="blocked-fix",
        loop="samsara",
        title="A fix item was reported BLOCKED",
        stage="iteration",
        selects=("item",),
        prompt_type="question",
        answers=(
            _a(
                "retry",
                "a",
                "(A) 提供更多 context 重試",
                "revise",
                True,
                "re-dispatch the fix with the added context (never retried automatically)",
                "A",
                "retry_with_context",
            ),
            _a(
                "defer",
                "b",
                "(B) 重新分類為 defer",
                "accept_gap",
                True,
                "reclassify the item as defer; the outcome is logged in the iteration log",
                "B",
                "reclassify_as_defer",
            ),
        ),
        principle="a BLOCKED / NEEDS_CONTEXT fix is not retried automatically; the user decides",
        source="samsara iteration SKILL Step 3, blocked fix handling",
        prompt=SAMSARA_BLOCKED_PROMPT,
        needs_item=True,
    )
)
_register(
    Gate(
        id="spec",
        entry_id="spec",
        loop="loop-spec",
        title="SPEC-level gap: re-open, ship as-is, or stop",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "reopen",
                "r",
                "Re-open SPEC/DISCUSS",
                "revise",
                False,
                "rewind to DISCUSS refinement toward the original goal (costs an iteration); the spec "
                "freeze is retired into specApprovalHistory",
                "re-open",
                "1",
            ),
            *LOOP_SPEC_SHIP_OR_STOP,
        ),
        principle="a SPEC-level gap is the expensive rewind; step/interactive runs ask the operator",
        source="loop-spec skills/iterate/SKILL.md step 3 (spec route)",
        prompt=LOOP_SPEC_PROMPT,
    )
)
_register(
    Gate(
        id="escalate",
        entry_id="escalate",
        loop="loop-spec",
        title="ITERATE escalated: the gap needs an operator",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "resume",
                "r",
                "Resume after the operator's fix",
                "revise",
                True,
                "the operator did what the gap needed; ITERATE's verdict routes by the gap's type again",
                "resolved",
                "1",
            ),
            *LOOP_SPEC_SHIP_OR_STOP,
        ),
        principle="escalate: the gap needs an operator (needs_operator, or the same fix_first survived a "
        "remediation round); never rewind again for it",
        source="loop-spec skills/iterate/SKILL.md step 3 (escalate route)",
        prompt=LOOP_SPEC_ESCALATE_PROMPT,
    )
)
# loop-spec 7.x asks through question.json (its options are the question's own: the gate takes them
# from the file, ``loops.loopspec.questions.question_gate``); the two below are its blocked question's
# (``questions.BLOCKED_OPTIONS``: stop first, the default, so a headless answerer ends the run).
_register(
    Gate(
        id="question",
        entry_id="question",
        loop="loop-spec",
        title="loop-spec 7.x asks a question",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "stop", "s", "Stop", "reject", False, "loop-spec records 'stop'; the run ends at its next launcher call"
            ),
            _a(
                "fix-and-re-enter",
                "f",
                "Fix and re-enter",
                "revise",
                False,
                "loop-spec records 'fix-and-re-enter'; the next launcher call re-enters the phase",
            ),
        ),
        principle="7.x ends an entry at a question and resumes when `loop-spec answer` recorded one; a policy "
        "answers only a question with a default",
        source="loop-spec 7.x skills/loop-spec/program/loop_spec/questions.py (ask / answer), cli.py `answer`",
        prompt="{question}",
    )
)
_register(
    Gate(
        id="review-continue",
        entry_id="review-continue",
        loop="aris",
        title="Review iteration done: continue or stop",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "continue",
                "a",
                "(A) continue",
                "proceed",
                False,
                "run the next review iteration within the budgets left",
                "A",
                "c",
            ),
            _a(
                "stop",
                "b",
                "(B) stop",
                "accept_gap",
                True,
                "terminate the loop: REVIEW_STATE.json status completed and the termination reason",
                "B",
                "s",
            ),
        ),
        principle="STOP = score >= 6 AND verdict in {ready, almost} AND no FAIL / INCONCLUSIVE / ZERO_ELIGIBLE claim; unknown is never success",
        source="Mechanist auto-iteration-loop Phase B / ARIS auto-review-loop (formats.md §3.3, §3.6)",
        prompt=REVIEW_PROMPT,
    )
)
_register(
    Gate(
        id="pdca-continue",
        entry_id="pdca-continue",
        loop="bkit",
        title="PDCA check: iterate again, accept as PARTIAL, or stop",
        stage="iteration",
        selects=("feature",),
        prompt_type="question",
        answers=(
            _a(
                "iterate",
                "a",
                "(A) iterate again",
                "proceed",
                False,
                "run another Act cycle: bkit's ITERATE (check → act) while iterationCount is below the limit",
                "A",
                "i",
            ),
            _a(
                "partial",
                "b",
                "(B) accept as PARTIAL",
                "accept_gap",
                True,
                "bkit's forced report (REPORT_DONE: check → report) with the gap below the threshold kept visible",
                "B",
                "p",
            ),
            _a(
                "stop",
                "c",
                "(C) stop",
                "reject",
                True,
                "end the iteration: at a passing Match Rate bkit's MATCH_PASS (check → qa, SUCCESS), else its "
                "ABANDON (archived, archivedReason abandoned: FAILURE)",
                "C",
                "s",
            ),
        ),
        # the rule as the bkit reader has it configured (bkit.config.json), filled in by the gate
        principle="pass at Match Rate >= {threshold} %; bkit's state machine iterates while iterationCount < "
        "{max} (guardrails.loopBreaker.maxPdcaIterations) and forces the report at {max}; "
        "stop after {no_improvement} without improvement",
        source="bkit agents/pdca-iterator.md, Iteration Control; lib/pdca/state-transitions.js (formats.md §4.3)",
        prompt=PDCA_PROMPT,
    )
)
_register(
    Gate(
        id="pdca-max-iterations",
        entry_id="pdca-max-iterations",
        loop="bkit",
        title="Maximum iterations reached: manual fix, complete as-is, update design, or stop",
        stage="iteration",
        selects=("feature",),
        prompt_type="question",
        answers=(
            _a(
                "manual-fix",
                "m",
                "Manual fix",
                "revise",
                False,
                "fix the code manually, then re-analyze (/pdca-analyze): no state change until the next analysis",
                "manual",
                "1",
            ),
            _a(
                "accept",
                "a",
                "Complete as-is",
                "accept_gap",
                True,
                "generate the report with a warning: bkit's forced report (REPORT_DONE: check → report)",
                "complete",
                "complete-as-is",
                "2",
            ),
            _a(
                "update-design",
                "u",
                "Update design",
                "revise",
                True,
                "update the design document to match the implementation, then re-analyze",
                "design",
                "3",
            ),
            _a(
                "stop",
                "s",
                "Stop",
                "reject",
                True,
                "bkit's ABANDON: the feature is archived (archivedReason abandoned)",
                "4",
            ),
        ),
        principle="bkit's iterator asks how to proceed when iterationCount reaches {max} below {threshold} %",
        source="bkit scripts/iterator-stop.js (the Max Iterations question); seed 001 Iteration Control",
        prompt=PDCA_MAX_PROMPT,
    )
)
_register(
    Gate(
        id="sprint-pause",
        entry_id="sprint-pause",
        loop="bkit",
        title="Sprint auto-paused: the trigger's user actions",
        stage="iteration",
        selects=("sprint",),
        prompt_type="question",
        answers=(
            _a(
                "fix-resume",
                "f",
                "fix & resume",
                "proceed",
                True,
                "the cause is fixed: the sprint resumes (bkit's resumeSprint: no armed trigger may still fire)",
                "fix",
                "resume",
            ),
            _a(
                "forward-fix",
                "w",
                "forward fix",
                "accept_gap",
                True,
                "continue and fix the gap forward: the firing trigger is disarmed for this sprint and it resumes",
                "forward",
            ),
            _a(
                "carry-over",
                "c",
                "carry to next sprint",
                "accept_gap",
                True,
                "the sprint is archived; its unmet features are annotated as carried to the next sprint",
                "carry",
                "carry to next sprint",
            ),
            _a(
                "abort",
                "x",
                "abort",
                "reject",
                True,
                "the sprint is archived as aborted",
                "abort sprint",
                "abort with partial report",
                "archive as-is",
            ),
            _a(
                "increase-budget",
                "b",
                "increase budget & resume",
                "proceed",
                True,
                "config.budget is raised to --value tokens and the sprint resumes",
                "budget",
            ),
            _a(
                "extend-timeout",
                "t",
                "extend timeout & resume",
                "proceed",
                True,
                "config.phaseTimeoutHours is raised to --value hours and the sprint resumes",
                "timeout",
            ),
            _a(
                "force-advance",
                "p",
                "force-advance phase",
                "accept_gap",
                True,
                "the sprint moves to its next phase (a legal sprint transition) and resumes",
                "advance",
            ),
        ),
        principle="an auto-paused sprint resumes only when no armed trigger fires; each trigger offers its own "
        "user actions (lib/application/sprint-lifecycle/auto-pause.js)",
        source="bkit lib/application/sprint-lifecycle/auto-pause.js (AUTO_PAUSE_TRIGGERS userActions)",
        prompt=SPRINT_PAUSE_PROMPT,
    )
)


_register(
    Gate(
        id="dag-escalate",
        entry_id="dag-escalate",
        loop="dag",
        title="A DAG iteration escalated to a person",
        stage="iteration",
        prompt_type="question",
        answers=(
            _a(
                "take-over",
                "t",
                "Take over (human completion)",
                "accept_gap",
                False,
                "a person completes what is left (seed 000 Example 2: partial acceptance, human completion)",
                "human",
                "complete",
            ),
            _a(
                "retry",
                "r",
                "Retry with guidance",
                "revise",
                True,
                "iterate again with the person's fix direction as guidance (the reason is the guidance)",
                "refine",
                "guide",
            ),
            _a(
                "accept",
                "a",
                "Accept as-is",
                "accept_gap",
                True,
                "accept the output with its open triggers recorded",
                "accept-as-is",
            ),
            _a("abort", "x", "Abort", "reject", True, "stop the task: the output is not used", "stop"),
        ),
        principle="dag-iteration-detector: escalate on fixability < 0.3, no iteration left, under 25 % of the "
        "tokens, an insufficient budget, a plateau, or vague user rejection",
        source="dag-iteration-detector SKILL.md (seed 000): ESCALATE to human; dag-convergence-monitor: escalate",
        prompt=DAG_ESCALATE_PROMPT,
    )
)


_register(
    Gate(
        id="watch-reopen",
        entry_id="watch-reopen",
        loop="samsara",
        title="A re-review watch fired: the accepted item goes back to triage",
        stage="iteration",
        prompt_type="confirmation",
        answers=(
            _a(
                "reopen",
                "r",
                "Reopen",
                "revise",
                False,
                "the item returns to triage (fix / accept / defer)",
            ),
        ),
        principle="an accepted risk is re-reviewed when its re-review signal fires, not on a date",
        source="scars watch check (README, Watches)",
        prompt=WATCH_REOPEN_PROMPT,
        cli=False,
    )
)


# The decision points seed 002's Auto Mode Gate names, each with its one entry id.
SEED_002_POINTS: dict[str, str] = {
    "triage": "triage",
    "blocked-fix": "blocked-fix",
    "round continuation": "round-continuation",
    "safety valve": "safety-valve",
}


# Entry ids earlier scars versions wrote for a decision point (read, never written).
FORMER_ENTRY_IDS: dict[str, str] = {"round-continue": "round-continuation"}


# A round closed as interrupted (`scars round close --decision interrupted`): no gate offers it,
# its entry is the round continuation's.
ROUND_INTERRUPTED = _a(
    "interrupted", "-", "Interrupted", "reject", True, "stop the auto run; a person resumes the iteration"
)


def point_of(entry_id: str) -> Gate | None:
    """The decision point an auto-decisions.md gate-id names (None: not one scars writes)."""
    return DECISION_POINTS.get(entry_id)


def get_gate(gate_id: str) -> Gate:
    try:
        return GATES[gate_id]
    except KeyError:
        raise UsageError(f"unknown gate {gate_id!r}; gates: {', '.join(GATES)}") from None


def answers_hint(gate: Gate, path: str | None, item: str | None = None) -> str:
    """The exact command that answers ``gate`` without a terminal (for exit 3); ``item``: the
    item a blocked-fix gate was asked about (else the ITEM_ID placeholder)."""
    where = f" {shell_word(path)}" if path else ""
    if gate.id == "triage":
        return f"scars gate triage{where} --answers ANSWERS.yaml"
    needs = [a for a in gate.answers if a.needs_reason]
    a = gate.answers[0]
    item = f" --item {shell_word(item) if item else 'ITEM_ID'}" if gate.needs_item else ""
    reason = ' --reason "WHY"' if a.needs_reason else ""
    cmd = f"scars gate {gate.id}{where}{item} --answer {a.value}{reason}"
    return cmd + hint_tail(gate, gate.values, [x.value for x in needs])


def hint_tail(gate: Gate, answers: Sequence[str], need_reason: Sequence[str], refused: Sequence[str] = ()) -> str:
    """The parenthesis after an answer command: the answers, which need a reason, which are
    refused here, and the gate's environment variable."""
    extra = f" (answers: {', '.join(answers)}"
    if need_reason:
        extra += f"; --reason needed for {', '.join(need_reason)}"
    if refused:
        extra += f"; refused here: {', '.join(refused)}"
    return extra + f"; or set {env_var(gate.id)})"
