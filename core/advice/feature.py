"""A samsara feature advised: its signal_lost series as a quality history, its open items as
triggers (the categories mapped to the detector's trigger types), the advice with the note of
which count it reads."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scars.core.advice.advisor import advise_history
from scars.core.advice.model import Advice, QualityPoint, Trigger
from scars.core.model import Feature, Round
from scars.core.records import replace
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import BASIS_LABEL, DEFAULT_MAX_ROUNDS, advice_series, split_rounds
from scars.core.samsara.rounds import field_of as _attr
from scars.core.samsara.rounds import norm as _norm

# samsara category -> dag trigger type (our mapping, see the module docstring)
CATEGORY_TRIGGER = {
    "silent_failure_conditions": "validation_failure",
    "unverified_assumptions": "low_confidence",
    "known_shortcuts": "requirement_unmet",
}


def _round_triggers(r: Round) -> tuple[Trigger, ...] | None:
    texts = [*r.fix, *(_attr(a, "description") if isinstance(a, Mapping) else a for a in r.accept), *r.defer]
    texts = [t for t in texts if t]
    if not texts:
        return None
    return tuple(Trigger("scar_item", _norm(t)) for t in texts)


def feature_triggers(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[Trigger]:
    """The open samsara items as triggers. An item is not fixable when it is decided accept or
    defer, is a systemic_ref (a cross-feature structural fact) or is era-D ``blocked``."""
    ds: dict[str, Any] = {}
    for key, d in (decisions or {}).items():
        ds[_attr(d, "item_id") or key] = d
    out = []
    for it in feature.items:
        if not it.counted:
            continue
        action = _attr(ds.get(it.id), "action") if it.id in ds else None
        fixable = action not in ("accept", "defer") and it.systemic_ref is None and it.status != "blocked"
        out.append(
            Trigger(
                CATEGORY_TRIGGER.get(it.category, it.category),
                it.systemic_ref or it.normalized or _norm(it.text),
                1.0,
                fixable,
                it.file,
            )
        )
    return out


def samsara_history(feature: Feature) -> tuple[list[QualityPoint], int, int]:
    """(points, max_iterations, current_iteration) from the feature's signal_lost series.

    The series is :func:`scars.core.samsara.rounds.advice_series`: the part of the one series
    (the header, the trends screen, ``scars loops`` and the gates show it whole) counted by one
    rule — the loop's recorded figures, or scars' recount from its first own round on — so the
    advisor never compares the loop's 22 with scars' 85: point 0 is its start (the iteration
    entry; the current signal_lost when no start is recorded), point r its value after done
    round r; the "now" point is not an iteration and is left out. quality = 1 − signal_lost /
    the start value (1.0 when that is 0). A point's trigger set is the set of items triaged at
    the start of the next round, and the current open items for the latest point.
    """

    log = feature.iteration_log
    done, _ = split_rounds(log)
    by_round = {r.round: r for r in done}
    series = advice_series(log, feature.signal_lost)
    start = next((p.value for p in series if p.label == "start"), feature.signal_lost)

    def quality(s: int) -> float:
        return 1.0 if start <= 0 else 1.0 - s / start

    current_triggers = tuple(feature_triggers(feature))
    points: list[QualityPoint] = [
        QualityPoint(
            0, quality(start), _round_triggers(done[0]) if done else current_triggers, start, None, start, 0, "start"
        )
    ]
    for p in series:
        if p.round is None:
            continue
        r = by_round[p.round]
        nxt = next((d for d in done if d.round > r.round), None)
        trig = _round_triggers(nxt) if nxt is not None else current_triggers
        hint = (r.budget_context or {}).get("strategy_hint") if isinstance(r.budget_context, Mapping) else None
        points.append(
            QualityPoint(
                r.round,
                quality(p.value),
                trig,
                p.value,
                str(hint) if hint else None,
                p.value,
                max(0, start - p.value),
                p.label,
            )
        )
    max_it = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    current = points[-1].iteration
    return points, max_it, current


def advise_feature(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    token_budget: float | None = None,
    tokens_used: float | None = None,
) -> Advice:
    """Advice for a samsara feature's next round (the app's advisor panel)."""
    points, max_it, current = samsara_history(feature)
    advice = advise_history(
        points,
        max_iterations=max_it,
        current_iteration=current,
        triggers=feature_triggers(feature, decisions),
        token_budget=token_budget,
        tokens_used=tokens_used,
        source="samsara",
        subject=feature.name,
    )
    rec = reconcile(feature)
    if rec.difference:  # the history and the open items are two counts: say so, and by how much
        series = advice_series(feature.iteration_log, feature.signal_lost)
        which = BASIS_LABEL[series[-1].basis] if series else BASIS_LABEL["recounted"]
        note = f"{rec.summary()} The history the advice reads is one count: {which}."
        advice = replace(advice, notes=(*advice.notes, note))
    return advice
