"""Hand-built Feature / IterationLog objects for the budget, advisor and watch tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scars.core.model import CATEGORIES, Feature, IterationLog, Round, ScarItem


def item(n: int, category: str = "known_shortcuts", *, text: str | None = None, deferred: bool = False,
         where: str | None = None, counted: bool = True, file: str = "scar-reports/task-1-scar.yaml") -> ScarItem:
    prefix = {"known_shortcuts": "ks", "silent_failure_conditions": "sf", "unverified_assumptions": "ua"}[category]
    t = text if text is not None else f"item {n} of {category}"
    return ScarItem(
        id=f"{prefix}-{n:010x}", category=category, text=t, task_id="task-1", file=file, line=n,
        form="gen2", deferred=deferred, where=where, counted=counted, normalized=" ".join(t.split()).casefold(),
    )


def rnd(n: int, before: int | None, after: int | None, *, decision: str | None = "continue",
        new: int | None = 0, retries: int | None = None, fix=(), accept=(), defer=()) -> Round:
    spent = None if retries is None else {"reviewer_retries": retries}
    return Round(round=n, signal_lost_before=before, signal_lost_after=after, decision=decision,
                 fixes_scar_count=new, budget_spent=spent, fix=tuple(fix), accept=tuple(accept),
                 defer=tuple(defer))


def log(*rounds: Round, max_rounds: int = 3, retry_limit: int = 2, initial: int | None = None) -> IterationLog:
    first = rounds[0].signal_lost_before if rounds else None
    return IterationLog(file="iteration-log.yaml", feature="demo",
                        signal_lost_initial=initial if initial is not None else first,
                        max_rounds=max_rounds, reviewer_retry_limit=retry_limit, budget_present=True,
                        rounds=tuple(rounds))


def feature(items=(), iteration_log: IterationLog | None = None, signal: int | None = None,
            path: str = "/nonexistent/changes/2026-01-01_demo") -> Feature:
    items = tuple(items)
    counts = {c: sum(1 for i in items if i.counted and i.category == c) for c in CATEGORIES}
    sl = signal if signal is not None else sum(counts.values())
    return Feature(name="demo", path=path, repo_root=None, items=items, iteration_log=iteration_log,
                   signal_lost=sl, counts=counts)


@dataclass(frozen=True)
class D:
    """A stand-in with the attributes of scars.core.samsara.decisions.Decision that the rules read."""

    item_id: str
    action: str
    watch: str | None = None
    decided_at: str = ""
    re_review_signal: str | None = None


def decisions(**by_action: Any) -> dict[str, D]:
    out: dict[str, D] = {}
    for action, items in by_action.items():
        for it in items:
            out[it.id] = D(it.id, action)
    return out
