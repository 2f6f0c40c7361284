"""The JSON views of a feature: ``scars status --json`` (docs/commands.md; its JSON Schema is
``core/schemas/status.schema.json``) and its parts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scars.core.model import GROUPS, Feature, ScarItem
from scars.core.samsara.decisions import (
    JournalState,
    carried_from_log,
    describe_carried,
    feature_state,
    reopened_now,
    with_carried,
)
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import signal_series
from scars.core.storage import cache as feature_cache

# The JSON Schema of `scars status --json` (a feature's object, or a repository's), package data
# beside the SARIF schema; docs/commands.md lists its fields and a test holds the two together.
STATUS_SCHEMA = "status.schema.json"


def status_schema_text() -> str:
    """The JSON Schema of `scars status --json`, as the package holds it (`scars status --schema`)."""
    # the package's own file beside this module's package (importlib.resources would import
    # tempfile on every `scars status`: tests/tui/cli/test_startup_imports.py)
    return (Path(__file__).resolve().parent.parent / "schemas" / STATUS_SCHEMA).read_text(encoding="utf-8")


def item_to_json(it: ScarItem) -> dict[str, Any]:
    """An item's JSON (status, export); ``extra`` (its keys no era defines) only when it has some."""
    out: dict[str, Any] = {
        "id": it.id,
        "category": it.category,
        "text": it.text,
        "task_id": it.task_id,
        "file": it.file,
        "line": it.line,
        "form": it.form,
        "deferred": it.deferred,
        "systemic_ref": it.systemic_ref,
        "registry_state": it.registry_state,
        "registry_description": it.registry_description,
        "counted": it.counted,
        "resolved": it.resolved,
        "status": it.status,
        "scar_id": it.scar_id,
        "where": it.where,
        "debt_location": it.debt_location,
        "notes": list(it.notes),
        "bites_when": it.bites_when,
        "verified": it.verified,
        "note": it.note,
    }
    if it.extra:
        out["extra"] = it.extra
    return out


def round_to_json(r) -> dict[str, Any]:
    return {
        "round": r.round,
        "signal_lost_before": r.signal_lost_before,
        "signal_lost_after": r.signal_lost_after,
        "decision": r.decision,
        "decision_reason": r.decision_reason,
        "fixes_applied": r.fixes_applied,
        "fixes_scar_count": r.fixes_scar_count,
        "fix": len(r.fix),
        "accept": len(r.accept),
        "defer": len(r.defer),
        "era": r.era,
    }


def feature_to_json(feature: Feature) -> dict[str, Any]:
    """The object `scars status --json` prints for one feature (docs/commands.md, the schema's ``feature``)."""
    out, decisions = _feature_object(feature)
    out["items"] = [dict(item_to_json(it), decision=_decision_json(decisions, it.id)) for it in feature.items]
    out["resolved"] = [dict(item_to_json(it), decision=_decision_json(decisions, it.id)) for it in feature.resolved]
    return out


# `scars status --json` on one line: what json.dumps(feature_to_json(feature), ensure_ascii=True)
# writes, each item's JSON (undecided) encoded once and kept with the cached feature.
_ITEMS_PART = "status-items"
_ITEMS_CODE = ("model.py", "samsara/status.py")
_UNDECIDED_TAIL = "null}"  # how each kept item's JSON ends: ..., "decision": null}


def feature_json_line(feature: Feature) -> str:
    """``json.dumps(feature_to_json(feature), ensure_ascii=True)``, the same bytes, with the items'
    JSON taken from the cache when this very feature came from it (a warm reopen encodes only
    the decisions)."""
    pieces, _at = _line_pieces(feature, _encoded_items(feature))
    return "".join(pieces)


def json_line_around_patterns(feature: Feature, encoded: list[str]) -> tuple[str, str]:
    """:func:`feature_json_line` of a feature that is ``feature`` but for its possible patterns, cut
    where their JSON goes: (before, after), so that its line is ``before +
    possible_patterns_json(it) + after`` (a cold read builds them while the possible patterns are
    computed: ``read_missed``'s ``meanwhile``). ``encoded``: :func:`encode_items` of ``feature``
    (not kept: :func:`keep_encoded_items` keeps it with the feature stored)."""
    pieces, at = _line_pieces(feature, encoded)
    return "".join(pieces[:at]), "".join(pieces[at + 1 :])


def possible_patterns_json(feature: Feature) -> str:
    """The JSON of ``feature``'s possible patterns in its ``scars status --json`` line."""
    return json.dumps([dict(p) for p in feature.possible_patterns], ensure_ascii=True)


def keep_encoded_items(feature: Feature, encoded: list[str]) -> None:
    """Keep ``encoded`` (:func:`encode_items` of ``feature``) with ``feature`` in the cache, as
    :func:`feature_json_line` does (when ``feature`` is the one the cache stored)."""
    _encoded_items(feature, encoded)


def _line_pieces(feature: Feature, encoded: list[str]) -> tuple[list[str], int]:
    """The pieces :func:`feature_json_line` joins, and which of them is the possible patterns' JSON."""
    out, decisions = _feature_object(feature)
    dumps = json.dumps
    cut = len(_UNDECIDED_TAIL)
    pieces: list[str] = []  # joined once: the items' text is tens of megabytes, each concatenation a copy
    at = -1
    n_items, n_resolved = feature.sizes()  # the item objects are asked for only to put decisions in
    for n, (key, value) in enumerate(out.items()):
        pieces += ("{" if n == 0 else ", ", dumps(key), ": ")
        if key == "items" or key == "resolved":
            start = 0 if key == "items" else n_items
            texts = encoded[start : start + (n_items if key == "items" else n_resolved)]
            if decisions:
                for i, it in enumerate(feature.items if key == "items" else feature.resolved):
                    d = _decision_json(decisions, it.id)
                    if d is not None:
                        texts[i] = f"{texts[i][:-cut]}{dumps(d, ensure_ascii=True)}}}"
            pieces += ("[", ", ".join(texts), "]")
        else:
            if key == "possible_patterns":  # possible_patterns_json(feature)
                at = len(pieces)
            pieces.append(dumps(value, ensure_ascii=True))
    pieces.append("}")
    return pieces, at


def encode_items(feature: Feature) -> list[str]:
    """Each item's JSON (items, then resolved) with ``"decision": null``: what :func:`feature_json_line`
    joins (with the decisions in force put in)."""
    dumps = json.dumps
    return [
        dumps(dict(item_to_json(it), decision=None), ensure_ascii=True) for it in (*feature.items, *feature.resolved)
    ]


def _encoded_items(feature: Feature, encoded: list[str] | None = None) -> list[str]:
    """:func:`encode_items` of ``feature``: ``encoded`` when given, else the part kept with the cached
    feature, else encoded now; kept with the feature when it is the one the cache stored."""
    n = sum(feature.sizes())
    where = Path(feature.path)
    if encoded is None:
        kept = feature_cache.load_part(where, _ITEMS_PART, feature, _ITEMS_CODE)
        if isinstance(kept, list) and len(kept) == n:
            return kept
        encoded = encode_items(feature)
    elif len(encoded) != n:
        raise ValueError(f"{len(encoded)} items encoded for a feature of {n}")
    feature_cache.store_part(where, _ITEMS_PART, feature, _ITEMS_CODE, encoded)
    return encoded


def _feature_object(feature: Feature) -> tuple[dict[str, Any], dict[str, Any]]:
    """feature_to_json's object with ``items`` and ``resolved`` still None (in their places), and
    the decisions in force."""

    log = feature.iteration_log
    # Decisions and rounds recorded by scars (.scars/journal.jsonl); a decision made on another
    # item than the one holding its id now is taken back and listed (docs/commands.md, Item ids).
    state = feature_state(feature.path, items=_every_item(feature))
    moved = [
        {
            "item_id": k,
            "action": m["decision"].action,
            "decided_by": m["decision"].decided_by,
            "decided_at": m["decision"].decided_at,
            "text": m["text"],
            "decided_item_now": m["decided_item_now"],
        }
        for k, m in sorted(state.moved.items())
    ]
    reopened = set(state.reopened) | {r["item_id"] for r in reopened_json(feature)}
    decisions = with_carried(state.decisions, carried_from_log(feature), reopened)
    return {
        "feature": feature.name,
        "path": feature.path,
        "signal_lost": feature.signal_lost,
        "counts": dict(feature.counts),
        "groups": {g: list(feature.groups.get(g, ())) for g in GROUPS},
        "cross_task_patterns": [list(ids) for ids in feature.cross_task_patterns],
        "possible_patterns": [dict(p) for p in feature.possible_patterns],  # as possible_patterns_json
        "parse_failures": [{"file": f.file, "line": f.line, "reason": f.message} for f in feature.parse_failures],
        "dangling_refs": [{"file": f, "id": i} for f, i in feature.dangling_refs],
        "warnings": [str(w) for w in feature.warnings],
        "entry": {
            "verdict": feature.entry.verdict if feature.entry else "unknown",
            "record": feature.entry.record if feature.entry else "",
        },
        "registry": feature.registry.state if feature.registry else "missing",
        "execution_mode": feature.execution_mode,
        "items": None,
        "resolved": None,
        "log_matches": [log_match_json(m) for m in feature.log_matches],
        "signal_lost_series": [
            {"label": p.label, "value": p.value, "round": p.round, "source": p.source, "basis": p.basis}
            for p in signal_series(log, feature.signal_lost)
        ],
        "signal_lost_reconciliation": reconcile(feature).to_dict(),
        "rounds": status_rounds([round_to_json(r) for r in log.rounds] if log else [], state),
        "max_rounds": log.max_rounds if log else 3,
        "reopened": reopened_json(feature),
        "moved_decisions": moved,
    }, decisions


def _every_item(feature: Feature) -> Iterator[ScarItem]:
    """The feature's items, then its resolved ones, taken when iterated (a feature from the cache
    loads its items only when asked: the journal's replay asks only when there is a journal)."""
    yield from feature.items
    yield from feature.resolved


def _decision_json(decisions: dict[str, Any], item_id: str) -> dict[str, Any] | None:
    """The item's decision in force with its fields, or None when undecided. A decision carried
    from an earlier round of iteration-log.yaml has ``carried_round`` and ``carried`` (the words
    the app shows)."""
    d = decisions.get(item_id)
    if d is None:
        return None
    out = d.to_dict()
    if d.carried:
        out["carried"] = describe_carried(d)
    return out


def log_match_json(m) -> dict[str, Any]:
    """One triaged description of iteration-log.yaml and the item it was matched to."""
    return {
        "round": m.round,
        "action": m.action,
        "index": m.index,
        "description": m.description,
        "item_id": m.item_id,
        "target": m.target,
        "confidence": m.confidence,
        "score": round(m.score, 3),
        "reason": m.reason,
        "candidates": [{"id": i, "score": round(sc, 3)} for i, sc in m.candidates],
    }


def reopened_json(feature: Feature) -> list[dict[str, Any]]:
    """Items a fired watch reopened and nobody has decided again (scars.core.samsara.watches)."""

    recs = reopened_now(feature.path)
    return [
        {
            "item_id": k,
            "watch": r.get("watch"),
            "cause": r.get("cause"),
            "at": r.get("at"),
            "auto_decision": r.get("auto_decision"),
        }
        for k, r in sorted(recs.items())
    ]


def status_rounds(disk_rounds: list[dict[str, Any]], state: JournalState) -> list[dict[str, Any]]:
    """``scars status --json`` rounds: those on disk, then rounds the journal closed that the
    log lacks (``"pending_write": true``), then the open round (``"open": true``)."""
    out = [dict(r, source="iteration-log.yaml") for r in disk_rounds]
    on_disk = {r.get("round") for r in disk_rounds}
    for rec in state.closed_rounds:
        entry = rec.get("entry") or {}
        if rec.get("round") in on_disk:
            continue
        tr = entry.get("triage_result") or {}
        out.append(
            {
                "round": rec.get("round"),
                "signal_lost_before": entry.get("signal_lost_before"),
                "signal_lost_after": entry.get("signal_lost_after"),
                "decision": entry.get("decision"),
                "decision_reason": entry.get("decision_reason"),
                "fixes_applied": entry.get("fixes_applied"),
                "fixes_scar_count": entry.get("fixes_scar_count"),
                "fix": len(tr.get("fix") or ()),
                "accept": len(tr.get("accept") or ()),
                "defer": len(tr.get("defer") or ()),
                "era": "B",
                "source": "journal",
                "pending_write": True,
            }
        )
    if state.open_round:
        o = state.open_round
        out.append(
            {
                "round": o.get("round"),
                "signal_lost_before": o.get("signal_lost_before"),
                "budget_context": o.get("budget_context"),
                "started_at": o.get("at"),
                "started_by": o.get("by"),
                "open": True,
                "source": "journal",
            }
        )
    return out


# `scars status --json --summary` and the MCP server's `feature_status`: what an agent needs of a
# feature, sized for its context (the full JSON of an 85-item feature is ~176 KB). Each field of
# the full object can be asked for by name (``fields``); these are given without asking.
SUMMARY_FIELDS: tuple[str, ...] = (
    "feature",
    "path",
    "signal_lost",
    "counts",
    "entry",
    "registry",
    "execution_mode",
    "max_rounds",
    "rounds",
)


def summary_fields(full: dict[str, Any]) -> tuple[str, ...]:
    """Every field a summary may ask for: the full object's, and the summary's own ones."""
    return tuple(full) + ("decided", "undecided", "parse_failure_count")


def feature_summary(full: dict[str, Any], fields: list[str] | tuple[str, ...] | None = None) -> dict[str, Any]:
    """The agent-sized status of a feature from its full `scars status --json` object: the
    :data:`SUMMARY_FIELDS`, the decisions counted per action (``decided``), the undecided items'
    ids and the parse failures counted — plus each
    field of ``fields`` as the full object has it. An unknown field: ValueError naming the known."""
    asked = list(fields or ())
    known = summary_fields(full)
    unknown = [f for f in asked if f not in known]
    if unknown:
        raise ValueError(f"unknown field(s) {', '.join(unknown)}; known: {', '.join(known)}")
    out: dict[str, Any] = {k: full[k] for k in SUMMARY_FIELDS if k in full}
    decided: dict[str, int] = {}
    undecided: list[str] = []
    for it in full.get("items") or ():
        d = it.get("decision")
        if d:
            decided[str(d.get("action"))] = decided.get(str(d.get("action")), 0) + 1
        else:
            undecided.append(str(it["id"]))
    out["decided"] = decided
    out["undecided"] = undecided
    out["parse_failure_count"] = len(full.get("parse_failures") or ())
    for f in asked:
        if f in full:
            out[f] = full[f]
    return out
