"""Answers files: a prepared triage and its gates, read and shape-checked before anything is written."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scars.core.errors import DecisionRefused, FieldError, UsageError
from scars.core.gatekit.catalog import Gate
from scars.core.records import record
from scars.core.storage import safe_read

ITEM_ID = re.compile(r"^(ks|sf|ua)-[0-9a-f]{10}$")


ANSWERS_MAX_BYTES = 1_000_000


GATE_KEYS = {"answer", "reason", "item", "blocked", "value"}


# A samsara round gate's answer may carry the round's Rule-3 fields (kept as written: a mapping,
# lists, or "none"), and `rule3: none` to record all three as none explicitly.
ROUND_GATE_KEYS = {"budget_spent", "evidence_gained", "residual_risk", "rule3"}
ROUND_GATES = ("round-continue", "safety-valve")


@record(frozen=False)
class AnswersFile:
    gates: dict[str, list[dict[str, Any]]]  # gate id -> answers (blocked-fix may hold several)
    items: dict[str, dict[str, Any]]  # item id -> {action, fields…}
    source: str
    catalog: Mapping[str, Gate]  # the gates it was read against, by id (the registry's GATES)


def load_answers(path: str | os.PathLike, catalog: Mapping[str, Gate]) -> AnswersFile:
    """Read and check the shape of an answers file against ``catalog`` (the gates, by id: the
    registry's ``GATES``). Raises UsageError (cannot read) or DecisionRefused (every shape problem
    listed)."""
    p = Path(path)
    try:  # the one read policy (storage/safe_read); the file was named on the command line
        text = safe_read.read_text(p, limit=ANSWERS_MAX_BYTES, what="the answers file")
    except FileNotFoundError:
        raise UsageError(f"answers file {p} does not exist") from None
    except safe_read.Unreadable as exc:
        raise UsageError(f"cannot read answers file {p}: {exc}") from None
    try:  # the YAML guards: aliases, depth, duplicate keys (a gate answered twice)
        loaded = safe_read.loads(text)
    except safe_read.Unreadable as exc:
        raise DecisionRefused(
            f"{p}: not usable YAML ({exc}); nothing was recorded", [FieldError("answers", "not YAML")]
        ) from None
    if loaded.problems:
        raise DecisionRefused(
            f"{p}: invalid answers file, nothing was recorded:\n  "
            + "\n  ".join(f"line {line}: {reason}" for line, reason in loaded.problems),
            [FieldError("answers", reason) for _, reason in loaded.problems],
        )
    data = loaded.value
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DecisionRefused(
            f"{p}: must map gate ids and item ids to answers; nothing was recorded",
            [FieldError("answers", "not a mapping")],
        )
    errors: list[str] = []
    gates: dict[str, list[dict[str, Any]]] = {}
    items: dict[str, dict[str, Any]] = {}
    flat: list[tuple[Any, Any]] = []
    for key, value in data.items():
        if key in ("items", "gates") and isinstance(value, dict):
            flat.extend(value.items())
        else:
            flat.append((key, value))
    for key, value in flat:
        k = str(key)
        if k in catalog:
            entries = value if isinstance(value, list) else [value]
            for v in entries:
                if isinstance(v, (str, int)) and not isinstance(v, bool):
                    gates.setdefault(k, []).append({"answer": str(v)})
                elif isinstance(v, dict):
                    allowed = GATE_KEYS | (ROUND_GATE_KEYS if k in ROUND_GATES else set())
                    unknown = set(map(str, v)) - allowed
                    if unknown:
                        errors.append(
                            f"{k}: unknown key(s) {', '.join(sorted(unknown))} (allowed: {', '.join(sorted(allowed))})"
                        )
                        continue
                    gates.setdefault(k, []).append(
                        {
                            str(a): (b if str(a) in ROUND_GATE_KEYS else (None if b is None else str(b)))
                            for a, b in v.items()
                        }
                    )
                else:
                    errors.append(f"{k}: the answer must be a value or a mapping with answer/reason")
        elif ITEM_ID.match(k):
            if isinstance(value, str):
                items[k] = {"action": value.strip().lower()}
            elif isinstance(value, dict):
                entry = {str(a): b for a, b in value.items()}
                action = entry.pop("action", entry.pop("answer", None))
                if not isinstance(action, str):
                    errors.append(f"{k}: needs an action (fix, accept or defer)")
                    continue
                entry["action"] = action.strip().lower()
                items[k] = entry
            else:
                errors.append(f"{k}: the decision must be fix / accept / defer or a mapping with action and its fields")
        else:
            errors.append(
                f"{k!s}: neither a gate id ({', '.join(catalog)}) nor an item id (ks-/sf-/ua- and 10 hex digits)"
            )
    if errors:
        raise DecisionRefused(
            f"{p}: invalid answers file, nothing was recorded:\n  " + "\n  ".join(errors),
            [FieldError("answers", e) for e in errors],
        )
    return AnswersFile(gates=gates, items=items, source=str(p), catalog=catalog)
