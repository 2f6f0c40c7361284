"""samsara's answers files: validated entirely against a read-only view (no lock, nothing
written), then replayed under the writer lock in the loop's order (all or nothing)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.errors import DecisionRefused, FieldError, UsageError
from scars.core.gatekit.answers import ROUND_GATES, AnswersFile
from scars.core.gatekit.evidence import GateResult, validate_answer
from scars.core.loops.samsara.catalog import BY_ID as GATES
from scars.core.loops.samsara.gather import gather, open_read_only
from scars.core.loops.samsara.record import apply, writable
from scars.core.loops.samsara.rule3 import given_round_fields
from scars.core.provenance import Provenance, as_provenance
from scars.core.samsara.decisions import validate_decision
from scars.core.samsara.session import FeatureSession
from scars.core.text import text_problem

REPLAY_ORDER = ("entry", "triage", "blocked-fix", "safety-valve", "round-continue")


def _validate_items(session: FeatureSession, items: dict[str, dict[str, Any]]) -> list[str]:
    errors = []
    feature = session.feature
    for item_id, entry in items.items():
        fields = {k: v for k, v in entry.items() if k != "action"}
        action: Any = entry.get("action")  # checked by validate_decision below
        try:
            it = feature.item(item_id)
        except KeyError:
            errors.append(f"{item_id}: no such item in {feature.name}")
            continue
        if it.resolved:
            errors.append(f"{item_id}: already resolved in its report")
            continue
        for fe in validate_decision(action, **fields):
            errors.append(f"{item_id}: {fe.field}: {fe.message}")
    return errors


def replay(
    path: str | os.PathLike[str],
    af: AnswersFile,
    *,
    user: str,
    options: dict[str, Any],
    source: Provenance | str,
    auto_entry: bool | None = None,
) -> list[GateResult]:
    feature_dir = Path(path)
    errors: list[str] = []
    plan: list[tuple[str, dict[str, Any]]] = []
    # 1. Validate everything against a read-only view (no lock, no file touched).
    with open_read_only(feature_dir) as ro:
        errors.extend(_validate_items(ro, af.items))
        # The items open a round when none is open (the one rule: FeatureSession.open_round_for_decision),
        # which is refused after a stop or past max_rounds: said before anything is recorded.
        opens_round = bool(af.items) and ro.current_round() is None
        if opens_round:
            try:
                ro.check_decision_round()
            except DecisionRefused as exc:
                errors.append(f"items: {exc}")
        for gid in REPLAY_ORDER:
            entries = af.gates.get(gid, [])
            if gid == "triage" and af.items and not entries:
                entries = [{"answer": "done"}]
            if gid != "blocked-fix" and len(entries) > 1:
                errors.append(f"{gid}: one answer expected, {len(entries)} given")
                continue
            for e in entries:
                opts = dict(options)
                if e.get("item"):
                    opts["item"] = e["item"]
                if e.get("blocked"):
                    opts["blocked"] = e["blocked"]
                if gid in ROUND_GATES and (af.items or "triage" in af.gates):
                    # Its figures depend on the decisions replayed first; checked again before writing.
                    ans = GATES[gid].answer(e.get("answer") or "")
                    if ans is None:
                        errors.append(
                            f"{gid}: {e.get('answer')!r} is not a valid answer; valid answers: "
                            f"{GATES[gid].valid_answers_text()}"
                        )
                    elif ans.needs_reason or gid == "safety-valve":
                        problem = (
                            text_problem(e.get("reason"), question=GATES[gid])
                            if (ans.needs_reason or e.get("reason"))
                            else None
                        )
                        if problem:
                            errors.append(f"{gid}: {problem}")
                    try:
                        if opens_round:  # the round its figures are of is opened by the items replayed first
                            given_round_fields(e)
                            plan.append((gid, {**e, **opts}))
                            continue
                        ro_ev = gather(GATES[gid], feature_dir, session=ro)
                        # The valves after the round do not depend on the triage replayed first:
                        # a plain round-continue answer to continue past one is refused here.
                        if (
                            ans is not None
                            and ans.value in ro_ev.refused
                            and "safety valve" in ro_ev.refused[ans.value]
                        ):
                            errors.append(f"{gid}: answer {ans.value!r} refused: {ro_ev.refused[ans.value]}")
                        given_round_fields(e)
                    except (UsageError, DecisionRefused) as exc:
                        errors.append(f"{gid}: {exc}")
                    plan.append((gid, {**e, **opts}))
                    continue
                try:
                    ev = gather(GATES[gid], feature_dir, session=ro, item=opts.get("item"), blocked=opts.get("blocked"))
                    if gid == "blocked-fix" and (af.items.get(opts.get("item") or "") or {}).get("action") == "fix":
                        ev.refused.clear()  # decided fix by this same file, before the blocked-fix step
                    validate_answer(ev, e.get("answer"), e.get("reason"))
                    if gid in ROUND_GATES:
                        given_round_fields(e)
                except (UsageError, DecisionRefused) as exc:
                    errors.append(f"{gid}: {exc}")
                    continue
                plan.append((gid, {**e, **opts}))
    if errors:
        raise DecisionRefused(
            f"{af.source}: invalid answers file, nothing was recorded:\n  " + "\n  ".join(errors),
            [FieldError("answers", e) for e in errors],
        )
    # 2. Replay under the writer lock, in the loop's order.
    results: list[GateResult] = []
    with writable(feature_dir, user, as_provenance(source)) as session:
        for gid, e in plan:
            if gid == "triage":
                for item_id, entry in af.items.items():
                    fields = {k: v for k, v in entry.items() if k != "action"}
                    session.decide(item_id, entry["action"], **fields)
            ev = gather(GATES[gid], feature_dir, session=session, item=e.get("item"), blocked=e.get("blocked"))
            ans, reason = validate_answer(ev, e.get("answer"), e.get("reason"))
            given: dict[str, Any] | None = given_round_fields(e) if gid in ROUND_GATES else None
            results.append(
                apply(
                    ev,
                    ans,
                    reason,
                    user=user,
                    session=session,
                    source=source,
                    auto_entry=auto_entry,
                    round_fields=given,
                )
            )
    return results
