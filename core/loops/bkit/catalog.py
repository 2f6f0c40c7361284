"""bkit's gates as data: the PDCA iteration (``pdca-continue``), its maximum (``pdca-max-iterations``)
and the sprint's auto-pause (``sprint-pause``)."""

from __future__ import annotations

from scars.core.gatekit.catalog import Gate, answer_of

PDCA_PROMPT = (
    "{feature}: Match Rate {rate} (threshold {threshold}%), iteration {count} of max {max}. "
    "(A) iterate again (B) accept as PARTIAL (C) stop"
)

PDCA_MAX_PROMPT = "Maximum iterations reached ({rate}). How to proceed? ({count} of {max} iterations)"

SPRINT_PAUSE_PROMPT = "Sprint {sprint} auto-paused by {trigger}: {message}. {actions}?"


# What PATH names for its gates (`scars gate --help`).
WHERE = "bkit's .bkit/state/pdca-status.json (or the project holding .bkit/)"


# Every decision point of the loop (its gates, and any it decides itself): the registry gathers
# them into GATES and DECISION_POINTS (scars.core.loops.registry).
POINTS: tuple[Gate, ...] = (
    Gate(
        id="pdca-continue",
        entry_id="pdca-continue",
        loop="bkit",
        title="PDCA check: iterate again, accept as PARTIAL, or stop",
        stage="iteration",
        selects=("feature",),
        prompt_type="question",
        answers=(
            answer_of(
                "iterate",
                "a",
                "(A) iterate again",
                "proceed",
                False,
                "run another Act cycle: bkit's ITERATE (check → act) while iterationCount is below the limit",
                "A",
                "i",
            ),
            answer_of(
                "partial",
                "b",
                "(B) accept as PARTIAL",
                "accept_gap",
                True,
                "bkit's forced report (REPORT_DONE: check → report) with the gap below the threshold kept visible",
                "B",
                "p",
            ),
            answer_of(
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
    ),
    Gate(
        id="pdca-max-iterations",
        entry_id="pdca-max-iterations",
        loop="bkit",
        title="Maximum iterations reached: manual fix, complete as-is, update design, or stop",
        stage="iteration",
        selects=("feature",),
        prompt_type="question",
        answers=(
            answer_of(
                "manual-fix",
                "m",
                "Manual fix",
                "revise",
                False,
                "fix the code manually, then re-analyze (/pdca-analyze): no state change until the next analysis",
                "manual",
                "1",
            ),
            answer_of(
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
            answer_of(
                "update-design",
                "u",
                "Update design",
                "revise",
                True,
                "update the design document to match the implementation, then re-analyze",
                "design",
                "3",
            ),
            answer_of(
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
    ),
    Gate(
        id="sprint-pause",
        entry_id="sprint-pause",
        loop="bkit",
        title="Sprint auto-paused: the trigger's user actions",
        stage="iteration",
        selects=("sprint",),
        prompt_type="question",
        answers=(
            answer_of(
                "fix-resume",
                "f",
                "fix & resume",
                "proceed",
                True,
                "the cause is fixed: the sprint resumes (bkit's resumeSprint: no armed trigger may still fire)",
                "fix",
                "resume",
            ),
            answer_of(
                "forward-fix",
                "w",
                "forward fix",
                "accept_gap",
                True,
                "continue and fix the gap forward: the firing trigger is disarmed for this sprint and it resumes",
                "forward",
            ),
            answer_of(
                "carry-over",
                "c",
                "carry to next sprint",
                "accept_gap",
                True,
                "the sprint is archived; its unmet features are annotated as carried to the next sprint",
                "carry",
                "carry to next sprint",
            ),
            answer_of(
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
            answer_of(
                "increase-budget",
                "b",
                "increase budget & resume",
                "proceed",
                True,
                "config.budget is raised to --value tokens and the sprint resumes",
                "budget",
            ),
            answer_of(
                "extend-timeout",
                "t",
                "extend timeout & resume",
                "proceed",
                True,
                "config.phaseTimeoutHours is raised to --value hours and the sprint resumes",
                "timeout",
            ),
            answer_of(
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
    ),
)
