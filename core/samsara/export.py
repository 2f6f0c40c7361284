"""Export a samsara feature's scar items and decisions: SARIF 2.1.0, OpenVEX 0.2.0, JSON.

Mapping (the README section "Other loops and export" documents it):

* every remaining item is one SARIF result; ``ruleId`` is its category; the message is its
  text; the location is the item's ``where`` (Gen 3) or the report's ``debt_location`` when
  that is a relative path inside the repository, else the scar report itself at the item's
  line — always with a ``region`` (line 1 when none is known), relative to ``SRCROOT``, which
  the run declares in ``originalUriBaseIds`` (the repository root);
* ``partialFingerprints`` carry the stable item id and GitHub's ``primaryLocationLineHash``
  (derived from that id, so an alert follows its item across runs and edits, and REST uploads do
  not duplicate alerts);
* accept → a suppression ``{kind: external, status: accepted, justification: rationale}``
  with owner, re-review signal, watch and round in its ``properties``: a closed (dismissed)
  alert where suppressions are honoured;
* defer → **no** suppression: tools that dismiss alerts from suppressions treat any suppression
  as dismissed (GitHub's dismiss-alerts, DefectDojo's SARIF parser), and a deferred item is
  still open; the deferral is in the message and the result's ``properties``;
* fix, or no decision yet → no suppression (the decision is in the result's properties),
  except that an era-D report which itself marks an item ``accepted`` gives an ``inSource``
  accepted suppression (``accepted_because`` as justification);
* the feature's parse failures become tool execution notifications, never dropped.

OpenVEX: one statement per item; accept → ``affected`` with an action statement naming the
re-review signal and owner (an accepted risk is still present); fix → ``affected`` with the
fix as the action; defer and undecided → ``under_investigation``; resolved items → ``fixed``.
Every statement has ``status_notes``.

Decisions are read through their attributes (``scars.core.samsara.decisions.Decision`` or anything
shaped like it), so this module does not depend on how they were stored.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote  # loaded by pathlib already: no start-up cost

from scars.core.model import CATEGORIES, CATEGORY_LABEL, Feature, Problem, ScarItem
from scars.core.samsara.status import item_to_json

FORMATS: tuple[str, ...] = ("sarif", "openvex", "json")
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
OPENVEX_CONTEXT = "https://openvex.dev/ns/v0.2.0"
FINGERPRINT_KEY = "scarsItemId/v1"
LINE_HASH_KEY = "primaryLocationLineHash"  # the partial fingerprint GitHub code scanning matches alerts by
SRCROOT = "SRCROOT"
SRCROOT_DESCRIPTION = "The root of the repository: every artifact uri of this log is relative to it."

RULES: dict[str, dict[str, str]] = {
    "known_shortcuts": {
        "name": "KnownShortcut",
        "short": "A known shortcut left by an implementation task",
        "full": "A scar item of the known_shortcuts section: a shortcut the implementer knowingly took.",
        "level": "warning",
    },
    "silent_failure_conditions": {
        "name": "SilentFailureCondition",
        "short": "A condition under which the code fails silently",
        "full": "A scar item of the silent_failure_conditions section: a way the code can fail without a signal.",
        "level": "warning",
    },
    "unverified_assumptions": {
        "name": "UnverifiedAssumption",
        "short": "An assumption the implementation made without verifying it",
        "full": "A scar item of the assumptions_made section whose assumption was not verified.",
        "level": "note",
    },
}

# A relative path at the start of a `where` text, optionally with a line (and column):
# "core/reader.py:120", "src/a.py#L12", "docs/x.md line 4", "agents/x.md Step 2 + …".
_WHERE = re.compile(
    r"^(?P<path>(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]*|(?:[\w.-]+/)+[\w.-]*)"
    r"(?::(?P<line>\d+)(?::(?P<col>\d+))?|#L(?P<hline>\d+)|\s+line\s+(?P<wline>\d+))?"
    r"(?=$|[\s,;)]|:(?!\d))",
    re.IGNORECASE,
)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _decision_field(decision: Any, name: str) -> Any:
    return getattr(decision, name, None) if decision is not None else None


def decision_dict(decision: Any) -> dict[str, Any] | None:
    if decision is None:
        return None
    if hasattr(decision, "to_dict"):
        return decision.to_dict()
    keys = (
        "item_id",
        "action",
        "re_review_signal",
        "owner",
        "rationale",
        "reason",
        "revisit_when",
        "watch",
        "decided_by",
        "decided_at",
        "reviewed_by",
        "pending_review",
        "batch_id",
        "blocked_outcome",
    )
    return {k: getattr(decision, k, None) for k in keys}


def repo_relative_location(where: str | None, repo_root: Path | None) -> tuple[str, int | None, int | None] | None:
    """(path, line, column) from a ``where`` text when it names a relative path inside the repo.

    The path must start the text (what follows it is free prose): ``path``, ``path:12``,
    ``path:12:3``, ``path#L12``, ``path line 12``. Absolute paths, ``..`` escapes, URLs, and
    (when ``repo_root`` is known) paths whose resolution — symlinks included — leaves the
    repository give None.
    """
    if not where or not isinstance(where, str):
        return None
    text = where.strip().strip("`'\"")
    if not text or "://" in text.split()[0]:
        return None
    if text.startswith(("/", "\\", "~")) or re.match(r"^[A-Za-z]:[\\/]", text):
        return None
    m = _WHERE.match(text)
    if not m:
        return None
    raw = m.group("path")
    normal = posixpath.normpath(raw.replace("\\", "/"))
    if normal == "." or normal.startswith("../") or normal == "..":
        return None
    if repo_root is not None:
        try:
            (repo_root / normal).resolve().relative_to(repo_root.resolve())
        except (ValueError, OSError, RuntimeError):
            return None
    line = m.group("line") or m.group("hline") or m.group("wline")
    col = m.group("col")
    return normal, int(line) if line else None, int(col) if col else None


def _report_debt_location(feature: Feature, item: ScarItem) -> str | None:
    for report in feature.reports:
        if report.file == item.file:
            return report.debt_location
    return None


def _feature_prefix(feature: Feature) -> str:
    """The feature directory relative to the repository root (posix), for report locations."""
    if feature.repo_root:
        try:
            return Path(feature.path).resolve().relative_to(Path(feature.repo_root).resolve()).as_posix()
        except ValueError:
            pass
    return f"changes/{feature.name}"


def _location(feature: Feature, item: ScarItem) -> dict[str, Any]:
    repo_root = Path(feature.repo_root) if feature.repo_root else None
    for candidate in (item.where, _report_debt_location(feature, item)):
        found = repo_relative_location(candidate, repo_root)
        if found:
            path, line, col = found
            # Every result on a file has a region: code scanning places an alert on a line.
            region = {"startLine": line or 1, **({"startColumn": col} if line and col else {})}
            return {"physicalLocation": {"artifactLocation": {"uri": path, "uriBaseId": SRCROOT}, "region": region}}
    physical = {
        "artifactLocation": {"uri": f"{_feature_prefix(feature)}/{item.file}", "uriBaseId": SRCROOT},
        "region": {"startLine": item.line or 1},
    }
    return {"physicalLocation": physical, "message": {"text": "the scar report that lists this item"}}


def line_hash(item_id: str) -> str:
    """The stable part of a ``primaryLocationLineHash`` for an item (16 hex of its id's SHA-256)."""
    return hashlib.sha256(item_id.encode("utf-8")).hexdigest()[:16]


def _suppression(decision: Any, round_number: int | None) -> dict[str, Any] | None:
    action = _decision_field(decision, "action")
    if action not in ("accept", "defer"):
        return None
    props: dict[str, Any] = {}

    def put(key: str, value: Any) -> None:
        if value not in (None, "", False):
            props[key] = value

    if action != "accept":
        return None  # a deferred item stays open: see deferral()
    suppression: dict[str, Any] = {"kind": "external", "status": "accepted"}
    justification = _decision_field(decision, "rationale")
    put("owner", _decision_field(decision, "owner"))
    put("reReviewSignal", _decision_field(decision, "re_review_signal"))
    put("watch", _decision_field(decision, "watch"))
    if justification:
        suppression["justification"] = justification
    put("round", round_number)
    put("decidedBy", _decision_field(decision, "decided_by"))
    put("decidedAt", _decision_field(decision, "decided_at"))
    put("reviewedBy", _decision_field(decision, "reviewed_by"))
    put("pendingReview", _decision_field(decision, "pending_review"))
    if props:
        suppression["properties"] = props
    return suppression


def deferral(decision: Any, item: ScarItem) -> dict[str, Any] | None:
    """A deferred item's deferral (a scars defer, or an era-D report's own ``deferred``), for the
    result's properties and message — never a suppression, so the alert stays open."""
    if _decision_field(decision, "action") == "defer":
        out = {
            "reason": _decision_field(decision, "reason") or _decision_field(decision, "rationale"),
            "revisitWhen": _decision_field(decision, "revisit_when"),
            "decidedBy": _decision_field(decision, "decided_by"),
            "decidedAt": _decision_field(decision, "decided_at"),
        }
        return {k: v for k, v in out.items() if v not in (None, "")}
    if decision is None and item.status == "deferred":
        return {"reason": "deferred by the scar report (era D)"}
    return None


def _in_source_suppression(item: ScarItem) -> dict[str, Any] | None:
    """An era-D report that itself marks the item accepted (no scars decision)."""
    if item.status == "accepted":
        suppression = {"kind": "inSource", "status": "accepted"}
        if item.accepted_because:
            suppression["justification"] = item.accepted_because
        return suppression
    return None


def to_sarif(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    round_number: int | None = None,
    tool_version: str = "0+unknown",
    item_rounds: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: every remaining item a result (see the module doc).

    ``item_rounds`` gives the round each decision was made in (else ``round_number``).
    """
    decisions = decisions or {}
    item_rounds = item_rounds or {}
    rule_ids = list(CATEGORIES)
    rules = [
        {
            "id": cat,
            "name": RULES[cat]["name"],
            "shortDescription": {"text": RULES[cat]["short"]},
            "fullDescription": {"text": RULES[cat]["full"]},
            "defaultConfiguration": {"level": RULES[cat]["level"]},
            "properties": {"category": CATEGORY_LABEL[cat]},
        }
        for cat in rule_ids
    ]
    results = []
    seen_hashes: dict[str, int] = {}
    for item in feature.items:
        decision = decisions.get(item.id)
        h = line_hash(item.id)
        seen_hashes[h] = seen_hashes.get(h, 0) + 1
        props: dict[str, Any] = {
            "scarsItemId": item.id,
            "taskId": item.task_id,
            "reportFile": item.file,
            "reportLine": item.line,
            "form": item.form,
            "deferredFromLevel1": item.deferred,
            "counted": item.counted,
            "decision": _decision_field(decision, "action"),
        }
        if item.systemic_ref:
            props["systemicRef"] = item.systemic_ref
        if item.bites_when:
            props["bitesWhen"] = item.bites_when
        if _decision_field(decision, "action") == "fix":
            props["fixDecidedBy"] = _decision_field(decision, "decided_by") or None
        deferred = deferral(decision, item)
        text = item.text if item.text.strip() else "(empty scar item)"
        if deferred is not None:
            props["deferral"] = deferred
            text += f" — deferred: {deferred.get('reason') or 'no reason recorded'}"
        result: dict[str, Any] = {
            "ruleId": item.category,
            "ruleIndex": rule_ids.index(item.category),
            "level": RULES[item.category]["level"],
            "message": {"text": text},
            "locations": [_location(feature, item)],
            "partialFingerprints": {FINGERPRINT_KEY: item.id, LINE_HASH_KEY: f"{h}:{seen_hashes[h]}"},
            "properties": {k: v for k, v in props.items() if v is not None},
        }
        suppression = _suppression(decision, item_rounds.get(item.id, round_number))
        if suppression is None and decision is None:
            suppression = _in_source_suppression(item)
        if suppression is not None:
            result["suppressions"] = [suppression]
        results.append(result)
    notifications = [
        {
            "level": "error",
            "message": {"text": str(f)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f"{_feature_prefix(feature)}/{f.file}", "uriBaseId": SRCROOT},
                        "region": {"startLine": f.line or 1},
                    }
                }
            ],
        }
        for f in feature.parse_failures
    ]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "scars", "version": tool_version, "rules": rules}},
        # SRCROOT is declared; its uri is left out on purpose: the paths are relative to the
        # repository root, which the consumer (the checkout code scanning analyses) resolves.
        "originalUriBaseIds": {SRCROOT: {"description": {"text": SRCROOT_DESCRIPTION}}},
        "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
        "results": results,
        "properties": {
            "feature": feature.name,
            "signalLost": feature.signal_lost,
            "entry": feature.entry.verdict if feature.entry is not None else None,
            **({"round": round_number} if round_number is not None else {}),
        },
    }
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": [run]}


# --------------------------------------------------------------------------- OpenVEX


def _vex_statement(
    item: ScarItem, decision: Any, product: dict[str, Any], round_number: int | None, resolved: bool = False
) -> dict[str, Any]:
    action = _decision_field(decision, "action")
    statement: dict[str, Any] = {
        "vulnerability": {"name": item.id, "description": item.text},
        "products": [product],
    }
    when = _decision_field(decision, "decided_at")
    if when:
        statement["timestamp"] = when
    where = f" (round {round_number})" if round_number is not None else ""
    if resolved:
        statement["status"] = "fixed"
        statement["status_notes"] = "resolved in a scar report" + (f": {item.resolution}" if item.resolution else "")
    elif action == "accept":
        statement["status"] = "affected"
        signal = _text(_decision_field(decision, "re_review_signal")) or "unspecified"
        owner = _decision_field(decision, "owner") or "unspecified"
        statement["action_statement"] = f"Accepted as a known risk{where}; re-review when: {signal}; owner: {owner}"
        statement["status_notes"] = _decision_field(decision, "rationale") or "accepted"
    elif action == "fix":
        statement["status"] = "affected"
        statement["action_statement"] = f"Fix decided{where}; the item stays affected until a report resolves it"
        statement["status_notes"] = f"fix decided by {_decision_field(decision, 'decided_by') or 'unknown'}"
    elif action == "defer":
        statement["status"] = "under_investigation"
        revisit = _decision_field(decision, "revisit_when")
        statement["status_notes"] = f"deferred{where}: {_decision_field(decision, 'reason') or 'no reason given'}" + (
            f"; revisit when: {revisit}" if revisit else ""
        )
    else:
        statement["status"] = "under_investigation"
        statement["status_notes"] = "not triaged yet" + (" (deferred from Level 1)" if item.deferred else "")
    return statement


def to_openvex(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    author: str = "scars",
    round_number: int | None = None,
    timestamp: str | None = None,
    item_rounds: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """An OpenVEX 0.2.0 document: one statement per item (resolved items as ``fixed``)."""
    decisions = decisions or {}
    item_rounds = item_rounds or {}
    stamp = timestamp or datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    product = {"@id": f"pkg:generic/{quote(feature.name, safe='')}"}
    statements = [
        _vex_statement(it, decisions.get(it.id), product, item_rounds.get(it.id, round_number)) for it in feature.items
    ]
    statements += [_vex_statement(it, None, product, round_number, resolved=True) for it in feature.resolved]
    digest = hashlib.sha256(json.dumps(statements, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return {
        "@context": OPENVEX_CONTEXT,
        "@id": f"urn:scars:vex:{quote(feature.name, safe='')}:{digest[:16]}",
        "author": author,
        "role": "triage",
        "timestamp": stamp,
        "version": 1,
        "tooling": "scars",
        "statements": statements,
    }


# --------------------------------------------------------------------------- JSON


def to_json(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    round_number: int | None = None,
    item_rounds: Mapping[str, int] | None = None,
) -> dict[str, Any]:
    """Items with their decisions, the feature's figures and its parse failures."""
    decisions = decisions or {}
    item_rounds = item_rounds or {}
    return {
        "feature": feature.name,
        "signal_lost": feature.signal_lost,
        "entry": feature.entry.verdict if feature.entry is not None else None,
        "round": round_number,
        "items": [
            dict(
                item_to_json(it),
                decision=decision_dict(decisions.get(it.id)),
                decision_round=item_rounds.get(it.id) if it.id in decisions else None,
            )
            for it in feature.items
        ],
        "resolved": [item_to_json(it) for it in feature.resolved],
        "parse_failures": [_failure(f) for f in feature.parse_failures],
        "decided": sum(1 for it in feature.items if it.id in decisions),
    }


def decision_rounds(records: list[dict[str, Any]], decisions: Mapping[str, Any]) -> dict[str, int]:
    """The round each current decision was recorded in, from the journal's decision records.

    A record's ``round`` applies to the decisions it holds; the current decision of an item
    is matched by its ``decided_at`` (an undo restores an earlier one, with its own round).
    """
    out: dict[str, int] = {}
    for record in records:
        if record.get("type") != "decision" or not isinstance(record.get("round"), int):
            continue
        for entry in record.get("decisions") or []:
            if not isinstance(entry, dict):
                continue
            item_id: Any = entry.get("item_id")
            current = decisions.get(item_id)
            if current is not None and getattr(current, "decided_at", None) == entry.get("decided_at"):
                out[entry["item_id"]] = record["round"]
    return out


def _failure(f: Problem) -> dict[str, Any]:
    return {"file": f.file, "line": f.line, "reason": f.message}


def export(feature: Feature, decisions: Mapping[str, Any] | None, fmt: str, **options: Any) -> dict[str, Any]:
    """Dispatch on ``fmt`` (one of FORMATS)."""
    rounds = options.get("item_rounds")
    if fmt == "sarif":
        return to_sarif(
            feature,
            decisions,
            round_number=options.get("round_number"),
            tool_version=options.get("tool_version", "0+unknown"),
            item_rounds=rounds,
        )
    if fmt == "openvex":
        return to_openvex(
            feature,
            decisions,
            author=options.get("author") or "scars",
            round_number=options.get("round_number"),
            timestamp=options.get("timestamp"),
            item_rounds=rounds,
        )
    if fmt == "json":
        return to_json(feature, decisions, round_number=options.get("round_number"), item_rounds=rounds)
    raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
