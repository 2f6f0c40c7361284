"""The advice of any loop state, through its loop system (``loops.registry``): each system says
how its scores map to 0..1, the goal its reader evaluated and which of the advisor's rules apply
(``advice`` holds the rules, over any history)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scars.core.advice.model import Advice
from scars.core.loops.registry import system_of_kind


def loop_goal(kind: str, details: Mapping[str, Any]) -> tuple[float, float] | None:
    """(target, acceptable) on 0..1, from the goal the loop's reader evaluated (its details):
    the review STOP score, loop-spec's converged criterion score, bkit's threshold, a sprint's
    target and minimum, a DAG report's goal. None when the reader gave none."""
    system = system_of_kind(kind)
    return None if system is None else system.goal(kind, details)


def advise_loop_state(
    state: Any, *, token_budget: float | None = None, tokens_used: float | None = None
) -> Advice | None:
    """Advice for another loop's history (loop-spec judge scores, ARIS/Mechanist review
    scores, bkit match rates, DAG convergence reports) or a DAG iteration decision; None when it
    has no quality history."""
    system = system_of_kind(getattr(state, "kind", None))
    if system is None:
        return None
    advice: Advice | None = system.advise(state, token_budget=token_budget, tokens_used=tokens_used)
    return advice
