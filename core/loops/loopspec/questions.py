"""loop-spec 7.x's question gate (``question``): the open question of a 7.x run, answered as
``loop-spec answer --question <id> --answer <value>`` answers it (``questions.answer`` and
``cli.py``, read at index commits 05581a2 and 0d9e8b9).

7.x asks through files: ``questions.open`` in ``state.json`` names the question and
``attempts/<attempt>/question.json`` holds its text, options (``{value, label}``) and default. Its
``answer`` writes, and so does this gate, in this order:

1. ``attempts/<attempt>/answer.json`` — ``{questionId, value, scope, answeredAt, by}`` (the
   answer schema, nothing else), ``by: "human"``, ``scope: "question"``;
2. ``state.json`` — ``questions.answered[<id>] = {value, scope, answeredAt, by, phase, attempt}``,
   the id appended to ``questions.retired``, ``questions.open = null``;
3. ``state.digest`` — the digest of the state as written, so the program accepts it as its own.

Each as ``jsonio.atomic_write_json`` writes it (key-sorted, indent 2, non-ASCII as itself, a
newline), through one intent (``storage.intent``) under the run folder's lock, every write
confined to that folder. ``loop-spec answer`` then runs the controller; scars does not: the next
launcher call for the slug (``loop-spec <entry> --project-root <repo> --slug <slug>``) continues
the run from the answered state. A state whose digest does not match is refused, as 7.x refuses it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from scars.core.clock import parse_time
from scars.core.errors import PathNotFound, UsageError
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.gatekit.state_io import check_unchanged, gate_result, load_json_state, record_entry, state_lock
from scars.core.loops.loopspec import v7
from scars.core.records import replace
from scars.core.storage.intent import Plan

REJECT_WORDS = ("stop", "abort", "reject", "cancel", "decline")
REVISE_WORDS = ("fix", "revise", "re-enter", "reenter", "rewind", "retry", "redo")


def _decision(value: str) -> str:
    low = value.lower()
    if any(w in low for w in REJECT_WORDS):
        return "reject"
    if any(w in low for w in REVISE_WORDS):
        return "revise"
    return "proceed"


def question_gate(gate: Gate, question: dict[str, Any]) -> Gate:
    """The catalog's ``question`` gate with the open question's own options as its answers (keys:
    each value's first free letter, else its number)."""
    answers: list[Answer] = []
    used: set[str] = {"j", "k"}  # j / k move the pointer at the terminal
    for number, option in enumerate(question.get("options") or [], 1):
        value = option["value"]
        key = next((c for c in value.lower() if c.isalnum() and c not in used), None) or str(number % 10)
        used.add(key)
        default = " (the question's default)" if value == question.get("default") else ""
        answers.append(
            Answer(
                value,
                key,
                option["label"],
                _decision(value),  # type: ignore[arg-type]  # one of DECISIONS
                False,
                f"loop-spec records {value!r} for question {question.get('id')}{default}; the run continues "
                "at its next launcher call",
                (str(number),) if key != str(number) else (),
            )
        )
    return replace(gate, answers=tuple(answers))


def locate_run(path: Path) -> Path:
    """The state.json of the 7.x run ``path`` names: the file, its folder, or a project whose runs
    hold exactly one open question."""
    p = Path(path)
    if p.is_file():
        if not v7.is_state_file(p):
            raise UsageError(f"{p} is not a loop-spec 7.x state.json")
        return p
    if not p.exists():
        raise PathNotFound.missing(p)
    if (p / v7.STATE_FILE).is_file():
        return p / v7.STATE_FILE
    base, how, problems = v7.repo_home(p)
    if base is None:
        why = "; ".join(pr.message for pr in problems) or f"no run under {v7.state_home()} (repo id {how})"
        raise PathNotFound(f"no loop-spec 7.x run of {p}: {why}")
    states = v7.project_states(p)
    waiting = [s for s in states if s.waiting_for_human]
    if len(waiting) == 1:
        return Path(waiting[0].path)
    if not waiting:
        raise PathNotFound(f"no loop-spec 7.x run of {p} has an open question ({len(states)} run(s) under {base})")
    names = ", ".join(s.name for s in waiting)
    raise UsageError(f"several loop-spec 7.x runs of {p} ask a question ({names}); give the run's state.json as PATH")


def gather_question(gate: Gate, path: Path, **_: Any) -> Evidence:
    """The open question of a 7.x run, from its reader (``loops.loopspec.v7``): `scars loops` and
    this gate show the same run."""
    fj = locate_run(path)
    folder = fj.parent
    why = v7.own_folder_problem(folder)
    if why:
        raise UsageError(f"{folder} is {why}; nothing was read or written")
    loop = v7.read_state(fj)
    data, meta = load_json_state(fj, folder)
    d = loop.details
    question = d.get("question")
    if question is None:
        raise UsageError(
            f"the loop-spec 7.x run {loop.name} has no open question (phase {d.get('current_phase')}); nothing to answer"
        )
    if question.get("kind") == "text" or not question.get("options"):
        raise UsageError(
            f"question {question.get('id')} of {loop.name} takes free text, which scars does not answer: run "
            f"`loop-spec answer --project-root <repo> --slug {loop.name} --question {question.get('id')} --answer <text>`"
        )
    asked = question_gate(gate, question)
    figures = [
        ("run", f"{loop.name} ({d.get('entry') or 'entry unknown'}, {d.get('run_id') or 'run id unknown'})"),
        ("loop-spec", str(d["loop_spec_version"].get("version") or "7.x")),
        ("state", str(fj)),
        ("phase", str(question.get("phase") or d.get("current_phase"))),
        ("question", f"{question.get('id')} ({question.get('kind')})"),
        ("options", ", ".join(f"{o['value']} ({o['label']})" for o in question["options"])),
        ("default", str(question.get("default"))),
        (
            "rewinds",
            f"{loop.budget.used} of {loop.budget.limit}" if loop.budget.limit is not None else d["rewind_limit_from"],
        ),
    ]
    judge = d.get("judge")
    if isinstance(judge, dict):
        gaps = [f"{g.get('target')}: {g.get('text')}" for g in judge.get("gaps") or [] if isinstance(g, dict)]
        figures.append(("judge", f"{judge.get('verdict')}" + (f"; gaps: {'; '.join(gaps)}" if gaps else "")))
    if d.get("prior_gaps"):
        figures.append(("prior gaps", str(len(d["prior_gaps"]))))
    warnings = [str(p) for p in loop.parse_failures]
    refused: dict[str, str] = {}
    if d.get("digest_ok") is not True:
        for a in asked.answers:
            refused[a.value] = "state.digest does not match state.json: loop-spec refuses this state, so does scars"
    how = d.get("repo_id_how") or ""
    if "pinned" in how:
        warnings.append(f"the repo id is {how}: the run is the one that id names")
    return Evidence(
        gate=asked,
        target=folder,
        state_file=fj,
        refused=refused,
        workflow_prompt=str(question.get("text") or question.get("id")),
        figures=figures,
        facts={"question": question.get("id"), "slug": loop.name, "options": [o["value"] for o in question["options"]]},
        warnings=warnings,
        files_read=[str(fj), str(question.get("file"))],
        context={
            "root": folder,
            "decisions_dir": folder,
            "data": data,
            "meta": meta,
            "question": question,
            "loop_state": loop,
        },
        advice=f"loop-spec's default answer policy would answer {question.get('default')!r}"
        if question.get("default") is not None
        else "this question has no default: a person must answer it",
        default=question.get("default") if question.get("default") in asked.values else None,
    )


def _answered_at(now: str) -> str:
    """``ids.now_iso``: UTC, to the second, ``+00:00``."""
    when = parse_time(now) or dt.datetime.now(dt.UTC)
    return when.astimezone(dt.UTC).isoformat(timespec="seconds")


def apply_question(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    source: str,
    now: str,
) -> GateResult:
    fj: Path = evidence.state_file  # type: ignore[assignment]  # gather always sets it
    folder = fj.parent
    ctx = evidence.context
    question = ctx["question"]
    with state_lock(folder, user, root=folder):
        check_unchanged(fj, ctx["meta"]["fp"], folder)
        state = json.loads(json.dumps(ctx["data"]))
        if v7.read_state(fj).details.get("digest_ok") is not True:
            raise UsageError(f"{fj}: state.digest does not match state.json; loop-spec refuses it; nothing was written")
        questions = state.get("questions")
        open_q = questions.get("open") if isinstance(questions, dict) else None
        if not isinstance(open_q, dict) or open_q.get("questionId") != question["id"]:
            raise UsageError(f"question {question['id']} is no longer open in {fj}; nothing was written")
        at = _answered_at(now)
        record = {
            "questionId": question["id"],
            "value": ans.value,
            "scope": "question",
            "answeredAt": at,
            "by": "human",
        }
        answers = questions.setdefault("answered", {})
        answers[question["id"]] = {
            "value": ans.value,
            "scope": "question",
            "answeredAt": at,
            "by": "human",
            "phase": open_q.get("phase"),
            "attempt": open_q.get("attempt"),
        }
        questions.setdefault("retired", []).append(question["id"])
        questions["open"] = None
        plan = Plan(folder, root=folder)
        ad_path, number = record_entry(
            plan,
            evidence,
            ans,
            reason,
            user=user,
            now=now,
            extra_consequences=[
                f"answer.json, state.json and state.digest written as `loop-spec answer` writes them "
                f"(question {question['id']} retired, answered {ans.value!r} by human)"
            ],
        )
        answer_path = folder / "attempts" / str(open_q.get("attempt")) / "answer.json"
        plan.replace(answer_path, v7.program_json(record))
        plan.replace(fj, v7.program_json(state), mode=os.stat(fj).st_mode & 0o7777)
        plan.replace(folder / v7.DIGEST_FILE, (v7.state_digest(state) + "\n").encode())
        plan.commit()
    recorded = [ad_path, answer_path, fj, folder / v7.DIGEST_FILE]
    return gate_result(evidence, ans, reason, user, recorded, number, question=question["id"])
