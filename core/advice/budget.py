"""The budget matrix of the dag-iteration-detector (seed 000): the action the remaining
iterations, the token share left and the quality gap choose (the rule in ``advisor``'s docstring)."""

from __future__ import annotations

from scars.core.advice.trend import (
    above,
    below,
)


def budget_matrix(
    remaining: int, gap: float | None, token_share: float | None, improvements_remaining: int | None = None
) -> tuple[str, str]:
    """(action, the matrix row that chose it). ``gap`` None: no quality measured — only the
    ESCALATE rows (no iteration left, under 25 % of tokens) can be evaluated. A low gap with
    required improvements still open is not a converged output (seed 000's ConvergenceGoal
    requires them): it counts as a medium gap, never ACCEPT."""
    tokens = "no token budget given" if token_share is None else f"{token_share:.0%} of tokens left"
    if token_share is not None and below(token_share, 0.25):
        return "ESCALATE", f"{tokens} (< 25%): budget"
    if remaining <= 0:
        return "ESCALATE", "no iteration left"
    if gap is None:
        return "ITERATE", f"{remaining} iteration(s) left, {tokens}; no quality measured, so no gap row applies"
    open_items = bool(improvements_remaining)
    if remaining >= 3 and (token_share is None or above(token_share, 0.5)):
        head = f"{remaining} iterations left, {tokens}"
        if above(gap, 0.3):
            return "ITERATE", f"{head}, high gap {gap:.2f} (> 0.3)"
        if not below(gap, 0.1):
            return "REFINE", f"{head}, medium gap {gap:.2f} (0.1–0.3)"
        if open_items:
            return "REFINE", f"{head}, low gap {gap:.2f} but {improvements_remaining} required improvement(s) open"
        return "ACCEPT", f"{head}, low gap {gap:.2f} (< 0.1)"
    row = (
        f"{remaining} iteration(s) left, {tokens}"
        if remaining <= 2
        else f"{remaining} iterations left but only {tokens} (the 1–2 row applies)"
    )
    if above(gap, 0.3):
        return "FINAL_ATTEMPT", f"{row}, high gap {gap:.2f} (> 0.3)"
    if open_items:
        return "FINAL_ATTEMPT", f"{row}, gap {gap:.2f} but {improvements_remaining} required improvement(s) open"
    return "ACCEPT", f"{row}, gap {gap:.2f} (≤ 0.3)"
