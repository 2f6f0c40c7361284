"""A round gate's Rule-3 fields (budget_spent, evidence_gained, residual_risk) as given — by
flags, an answers file or the app's form — made into the round's values."""

from __future__ import annotations

from typing import Any

from scars.core.errors import DecisionRefused, FieldError
from scars.core.gatekit.answers import ROUND_GATE_KEYS

NONE_WORDS = frozenset({"none", "[]", "{}", "-"})


def given_round_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """:func:`round_fields` of the Rule-3 keys an answers-file entry gives."""
    return round_fields(**{k: entry[k] for k in ROUND_GATE_KEYS if k in entry})


def round_fields(
    *,
    budget_spent: Any = None,
    evidence_gained: Any = None,
    residual_risk: Any = None,
    rule3: Any = None,
) -> dict[str, Any]:
    """A round gate's Rule-3 fields as given (flags, an answers file, the app's form) made into
    the round's values: ``budget_spent`` a mapping of non-negative counts (``K=N,…`` text too),
    ``evidence_gained`` / ``residual_risk`` lists of texts (one text is a one-item list); the word
    ``none`` (or an empty list / mapping) records none, explicitly; ``rule3: none`` all three. A
    field not given is left out (the round takes it from its fix-round reports, or refuses).
    Raises DecisionRefused naming every bad field."""
    errors: list[FieldError] = []
    out: dict[str, Any] = {}
    if rule3 is not None:
        if isinstance(rule3, str) and rule3.strip().casefold() in NONE_WORDS:
            out.update(budget_spent={}, evidence_gained=[], residual_risk=[])
        else:
            errors.append(FieldError("rule3", "only `none` (record all three Rule-3 fields as none)"))
    if budget_spent is not None:
        value: Any = budget_spent
        if isinstance(value, str):
            text = value.strip()
            if text.casefold() in NONE_WORDS:
                value = {}
            else:
                value = {}
                for part in text.split(","):
                    k, sep, n = part.partition("=")
                    if not part.strip():
                        continue
                    if not sep or not k.strip() or not n.strip().isdigit():
                        errors.append(FieldError("budget_spent", f"{part.strip()!r} is not NAME=COUNT"))
                        break
                    value[k.strip()] = int(n.strip())
        if isinstance(value, dict) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value.values()
        ):
            out["budget_spent"] = {str(k): n for k, n in value.items()}
        elif not any(e.field == "budget_spent" for e in errors):
            errors.append(FieldError("budget_spent", "must map names to non-negative counts (or be none)"))
    for key, given in (("evidence_gained", evidence_gained), ("residual_risk", residual_risk)):
        if given is None:
            continue
        items = [given] if isinstance(given, str) else given
        if not isinstance(items, (list, tuple)) or not all(isinstance(x, str) for x in items):
            errors.append(FieldError(key, "must be texts (or none)"))
            continue
        texts = [x.strip() for x in items if x.strip()]
        out[key] = [] if len(texts) == 1 and texts[0].casefold() in NONE_WORDS else texts
    if errors:
        raise DecisionRefused(f"round fields refused: {'; '.join(str(e) for e in errors)}", errors)
    return out
