"""Recorded vs recounted signal_lost: what the loop wrote in iteration-log.yaml beside what
scars counts now by seed 002's Step 1 rules, and why they differ where that can be derived.

The loop's own logs record ``signal_lost_initial``, ``signal_lost_before`` and
``signal_lost_after`` by whatever count the loop made (real logs: only the items deferred to
feature iteration; accepted items dropped after the round); scars recounts the remaining set
from the reports. :func:`reconcile` puts both side by side, the difference, the recount per
category, and the items the loop's count leaves out when the log shows it (each reason a
candidate with its items; a reason applies only when the log's own arithmetic shows the loop
counted that way):

* ``fixed_still_listed`` — the loop subtracted its fixes (``after = before - fixes_applied +
  new``), but the reports still list the items it fixed (no ``status: resolved``);
* ``accepted_not_counted`` — the loop also subtracted the items it accepted (``after = before -
  fixes_applied - accepted + new``): the seed counts them (accepts resolve nothing);
* ``informal_resolved`` — items whose text claims a resolution (``[RESOLVED]``, ``FIXED:``,
  ``MITIGATED:``; ``resolutions.claimed_resolution``) but that are not resolved by
  the seed's rule (the loop will have left them out);
* ``verified_missing`` — assumptions without ``verified`` (scars counts them as unverified);
* ``never_triaged`` — the loop triaged exactly as many items as it counted in round 1
  (``items_triaged == signal_lost_before``) and no round of the log names these items;
* ``not_found`` (the other way) — log descriptions that name no item scars can find: the loop
  counted items the reports do not hold (or words no matcher ties to them).

Items are given to the first reason that fits, in that order, so no item is counted twice.
"""

from __future__ import annotations

from typing import Any

from scars.core.model import CATEGORIES, CATEGORY_LABEL, Feature
from scars.core.records import field, record
from scars.core.samsara.items import claimed_resolution
from scars.core.samsara.rounds import BASIS_LABEL, counted_by_scars, signal_series, split_rounds

REASONS: dict[str, str] = {
    "fixed_still_listed": "the log fixed them, but their reports still list them (no `status: resolved`)",
    "accepted_not_counted": "the loop stopped counting the items it accepted; the seed counts them (accepts resolve nothing)",
    "informal_resolved": "their text claims a resolution ([RESOLVED], FIXED:, MITIGATED:) but they are not resolved by the seed's rule",
    "verified_missing": "assumptions without `verified`: counted as unverified",
    "never_triaged": "no round of the log names them, and the loop counted only what it triaged",
}


@record(slots=True)
class Reconciliation:
    """What the loop recorded and what scars recounts, and why they differ."""

    recorded: tuple[tuple[str, int], ...]  # (label, value) of the loop's own figures, in order
    recorded_latest: int | None  # the loop's latest figure (None: the log records none)
    recorded_source: str  # which field the latest figure is
    recounted: int  # signal_lost now, by the seed's rules
    counts: dict[str, int] = field(default_factory=dict)  # the recount per category
    explanations: tuple[dict[str, Any], ...] = ()  # {id, count, items, categories, text}
    not_found: int = 0  # log descriptions that name no item scars can find

    @property
    def difference(self) -> int | None:
        return None if self.recorded_latest is None else self.recounted - self.recorded_latest

    @property
    def accounted(self) -> int:
        return sum(int(e["count"]) for e in self.explanations)

    def to_dict(self) -> dict[str, Any]:
        return {
            "recorded": [{"label": label, "value": v} for label, v in self.recorded],
            "recorded_latest": self.recorded_latest,
            "recorded_source": self.recorded_source,
            "recounted": self.recounted,
            "difference": self.difference,
            "counts": dict(self.counts),
            "explanations": [dict(e) for e in self.explanations],
            "accounted": self.accounted,
            "not_found": self.not_found,
            "summary": self.summary(),
            "labels": dict(BASIS_LABEL),
        }

    def summary(self) -> str:
        """One paragraph: the two figures, the difference, and the reasons with their counts."""
        if self.recorded_latest is None:
            return f"signal_lost {self.recounted} recounted by scars; the log records no figure of the loop's own."
        d = self.difference or 0
        head = (
            f"signal_lost {self.recounted} recounted by scars (seed 002 Step 1) vs {self.recorded_latest} "
            f"recorded by the loop ({self.recorded_source})"
        )
        if d == 0:
            return head + ": they agree."
        parts = [f"{head}: scars counts {abs(d)} {'more' if d > 0 else 'fewer'}."]
        if self.explanations and d > 0:
            reasons = "; ".join(f"{e['count']} {e['text']}" for e in self.explanations)
            parts.append(f"Items the loop's count leaves out: {reasons}.")
            if self.accounted != d:
                parts.append(f"These account for {self.accounted} of the {d}; the rest cannot be derived from the log.")
        if self.not_found:
            parts.append(
                f"{self.not_found} description(s) of the log name no item of the reports (the loop counted "
                "items these reports do not hold, or in words the matcher does not tie to them)."
            )
        if d < 0:
            parts.append("The reports hold fewer remaining items than the loop counted.")
        elif not self.explanations and not self.not_found:
            parts.append("The log does not show why (it records totals only).")
        return " ".join(parts)


def reconcile(feature: Feature) -> Reconciliation:
    """The loop's recorded figures beside scars' recount (see the module docstring)."""
    log = feature.iteration_log
    points = signal_series(log, feature.signal_lost)
    recorded = tuple((p.label, p.value) for p in points if p.basis == "recorded")
    latest = next((p for p in reversed(points) if p.basis == "recorded"), None)
    counts: dict[str, int] = {c: int(feature.counts.get(c, 0)) for c in CATEGORIES}
    source = "" if latest is None else (latest.source or latest.label)
    if latest is None or log is None:
        return Reconciliation(recorded, None, source, feature.signal_lost, counts)

    # Items are given reasons only when scars counts more than the loop recorded (only then are
    # the item objects asked for: a feature from the cache loads its items when first asked).
    counted = [it for it in feature.items if it.counted] if feature.signal_lost > latest.value else []
    by_id = {it.id: it for it in counted}
    named: dict[str, str] = {}  # item id -> the action of the latest round naming it
    for m in feature.log_matches:
        if m.item_id is not None:
            named[m.item_id] = m.action
    # Items a description may name although the matcher did not take it: never said "not named".
    maybe_named = {cid for m in feature.log_matches if not m.confident for cid, _sc in m.candidates}
    loop_rounds = [r for r in split_rounds(log)[0] if not counted_by_scars(r)]
    drops_fixes = drops_accepts = False
    for r in loop_rounds:
        if r.signal_lost_before is None or r.signal_lost_after is None:
            continue
        fixed = r.fixes_applied if r.fixes_applied is not None else len(r.fix)
        new = r.fixes_scar_count or 0
        # The loop's own arithmetic: it subtracted at least its fixes (and its accepts).
        if fixed and r.signal_lost_after <= r.signal_lost_before - fixed + new:
            drops_fixes = True
        if r.accept and r.signal_lost_after <= r.signal_lost_before - fixed - len(r.accept) + new:
            drops_accepts = True
    first = loop_rounds[0] if loop_rounds else None
    counted_only_triaged = (
        first is not None
        and first.items_triaged is not None
        and first.signal_lost_before is not None
        and first.items_triaged == first.signal_lost_before
    )
    in_pattern = {i for ids in feature.cross_task_patterns for i in ids}  # the literal rule, as aggregated

    def reason_of(it_id: str) -> str | None:
        it = by_id[it_id]
        action = named.get(it_id)
        if action == "fix" and drops_fixes:
            return "fixed_still_listed"
        if action == "accept" and drops_accepts:
            return "accepted_not_counted"
        if claimed_resolution(it.text) is not None:
            return "informal_resolved"
        if it.category == "unverified_assumptions" and it.verified is None:
            return "verified_missing"
        if action is None and counted_only_triaged and it_id not in in_pattern and it_id not in maybe_named:
            return "never_triaged"
        return None

    groups: dict[str, list[str]] = {k: [] for k in REASONS}
    for it in counted:
        why = reason_of(it.id)
        if why is not None:
            groups[why].append(it.id)
    explanations = []
    for key, ids in groups.items():
        if not ids:
            continue
        cats: dict[str, int] = {}
        for i in ids:
            cats[by_id[i].category] = cats.get(by_id[i].category, 0) + 1
        by_cat = ", ".join(f"{n} {CATEGORY_LABEL[c]}" for c, n in cats.items())
        explanations.append(
            {
                "id": key,
                "count": len(ids),
                "items": ids,
                "categories": cats,
                "text": f"{REASONS[key]} ({by_cat})",
            }
        )
    not_found = sum(1 for m in feature.log_matches if m.target is None)
    return Reconciliation(recorded, latest.value, source, feature.signal_lost, counts, tuple(explanations), not_found)
