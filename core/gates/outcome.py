"""What a waiting loop learns once its gate request is settled: :func:`request_outcome` (one place
for `scars gate … --wait --json`, and the MCP server's ``wait_for_answer``).

``answered`` carries the recorded answer and ``next``: what the loop does now — the answer's
consequence as the gate's catalog words it, and for a samsara triage the items to fix (text,
file, line), the accepts and the defers as the feature's decisions in force say. A request still
waiting is ``pending``; one whose loop files changed since it was posted ``expired`` (an answer to
it would be refused); ``withdrawn`` and ``refused`` carry their reason.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.errors import DecisionRefused, HumanNeeded, LockHeld
from scars.core.gates import requests as rq
from scars.core.loops.registry import GATES
from scars.core.samsara.decisions import current_decisions
from scars.core.samsara.feature import read_feature

STATES: tuple[str, ...] = ("answered", "pending", "expired", "withdrawn", "refused")


def _item_line(it: Any, decision: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"id": it.id, "text": it.text, "file": it.file, "line": it.line, "category": it.category}
    reason = getattr(decision, "reason", None) or getattr(decision, "rationale", None)
    if reason:
        out["reason"] = reason
    if getattr(decision, "re_review_signal", None):
        out["re_review_signal"] = decision.re_review_signal
    if getattr(decision, "revisit_when", None):
        out["revisit_when"] = decision.revisit_when
    return out


def triage_next(feature_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """The triage's outcome for the loop: the items to fix, the accepts, the defers (decisions in force)."""
    feature = read_feature(feature_dir)
    decisions = current_decisions(feature.path, feature)
    out: dict[str, list[dict[str, Any]]] = {"fix": [], "accept": [], "defer": []}
    undecided: list[str] = []
    for it in feature.items:
        d = decisions.get(it.id)
        if d is None:
            undecided.append(it.id)
        elif str(d.action) in out:
            out[str(d.action)].append(_item_line(it, d))
    return {**out, "undecided": undecided}


def loop_next(gate_id: str, answer: str, loop_path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """What the loop does after ``answer`` to ``gate_id`` was recorded."""
    gate = GATES[gate_id]
    ans = gate.answer(answer)
    out: dict[str, Any] = {"gate": gate_id, "answer": answer, "do": ans.consequence if ans else ""}
    if gate_id == "triage" and loop_path is not None:
        out.update(triage_next(loop_path))
    return out


def result_outcome(result: dict[str, Any], loop_path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """``answered``: a recorded GateResult's JSON with what the loop does next."""
    return {
        "status": "answered",
        "answer": dict(result),
        "next": loop_next(str(result["gate"]), str(result["answer"]), loop_path),
    }


def request_outcome(
    root: str | os.PathLike[str], rid: str, *, timeout: float, user: str = "", poll: float | None = None
) -> dict[str, Any]:
    """Wait at most ``timeout`` seconds for request ``rid`` to be settled, record an answer
    through the one record path (:func:`~scars.core.gates.requests.apply_request`) and say how it
    stands: one of :data:`STATES`, with ``request`` and, once answered, ``answer`` and ``next``."""
    root = Path(root)
    kw: dict[str, Any] = {} if poll is None else {"poll": poll}
    try:
        got = rq.wait_for_answer(root, rid, timeout=timeout, **kw)
    except HumanNeeded:
        req = rq.load_request(root, rid)
        view = rq.inspect_request(root, req, read_only=True)
        state = "expired" if view.state == "expired" else "pending"
        out: dict[str, Any] = {"status": state, "request": rid, "gate": req.gate, "waited_s": timeout}
        if state == "expired":
            out["reason"] = f"the loop's files changed since it was posted ({', '.join(view.changed)}); ask again"
        return out
    if got.status == "withdrawn":
        by = (got.withdrawn or {}).get("by", "?")
        return {"status": "withdrawn", "request": rid, "gate": got.gate, "reason": f"withdrawn by {by}"}
    if got.status == "refused":
        return {"status": "refused", "request": rid, "gate": got.gate, "reason": got.refusal or ""}
    try:
        result = rq.apply_request(root, rid, user=user)
    except DecisionRefused as exc:
        return {"status": "refused", "request": rid, "gate": got.gate, "reason": str(exc)}
    except LockHeld as exc:  # answered, recorded once the loop's writer lets go: ask again
        return {
            "status": "pending",
            "request": rid,
            "gate": got.gate,
            "answered": got.answered_text(),
            "reason": f"answered; recorded once the loop's writer lets go: {exc}",
        }
    out = result_outcome(result.as_json(), got.loop_path(root))
    out["request"] = rid
    return out
