"""samsara's decision points as data: the entry, triage, round-continue, safety-valve and
blocked-fix gates, the watch reopen scars decides itself, their prompts as seed 002 words them."""

from __future__ import annotations

from scars.core.gatekit.catalog import Gate, answer_of

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

WATCH_REOPEN_PROMPT = (
    'Watch "{watch}" on the accepted item "{text}" ({item}) of {feature} fired: {cause}. Reopen the item for triage?'
)


# What PATH names for its gates (`scars gate --help`).
WHERE = "a samsara feature directory (changes/<date>_<feature>/)"


# Every decision point of the loop (its gates, and any it decides itself): the registry gathers
# them into GATES and DECISION_POINTS (scars.core.loops.registry).
POINTS: tuple[Gate, ...] = (
    Gate(
        id="entry",
        entry_id="entry",
        loop="samsara",
        title="Enter iteration or skip to validate-and-ship",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "enter",
                "a",
                "(A) enter iteration",
                "proceed",
                False,
                "enter samsara:iteration; remove any iteration_skip_record from index.yaml",
                "A",
                "iterate",
            ),
            answer_of(
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
    ),
    Gate(
        id="triage",
        entry_id="triage",
        loop="samsara",
        title="Triage every remaining item: fix / accept / defer",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
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
    ),
    Gate(
        id="round-continue",
        entry_id="round-continuation",
        loop="samsara",
        title="Round continuation",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "continue",
                "a",
                "(A) 繼續下一輪",
                "proceed",
                False,
                "close the round with decision continue in iteration-log.yaml and triage the next round",
                "A",
            ),
            answer_of(
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
    ),
    Gate(
        id="safety-valve",
        entry_id="safety-valve",
        loop="samsara",
        title="Safety valve fired: continue despite it, or stop",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "continue",
                "a",
                "(A) continue despite the warning",
                "accept_gap",
                True,
                "close the round with decision continue, the warning named in decision_reason",
                "A",
            ),
            answer_of(
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
    ),
    Gate(
        id="blocked-fix",
        entry_id="blocked-fix",
        loop="samsara",
        title="A fix item was reported BLOCKED",
        stage="iteration",
        selects=("item",),
        prompt_type="question",
        answers=(
            answer_of(
                "retry",
                "a",
                "(A) 提供更多 context 重試",
                "revise",
                True,
                "re-dispatch the fix with the added context (never retried automatically)",
                "A",
                "retry_with_context",
            ),
            answer_of(
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
    ),
    Gate(
        id="watch-reopen",
        entry_id="watch-reopen",
        loop="samsara",
        title="A re-review watch fired: the accepted item goes back to triage",
        stage="iteration",
        prompt_type="confirmation",
        answers=(
            answer_of(
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
    ),
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
ROUND_INTERRUPTED = answer_of(
    "interrupted", "-", "Interrupted", "reject", True, "stop the auto run; a person resumes the iteration"
)


BY_ID: dict[str, Gate] = {g.id: g for g in POINTS}
ENTRY, TRIAGE, ROUND_CONTINUE, SAFETY_VALVE, BLOCKED_FIX = (
    BY_ID[g] for g in ("entry", "triage", "round-continue", "safety-valve", "blocked-fix")
)
WATCH_REOPEN = BY_ID["watch-reopen"]
