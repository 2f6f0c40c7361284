"""Export a samsara feature's scar items and decisions: SARIF 2.1.0, OpenVEX 0.2.0, JSON.

Mapping (docs/exporting.md documents it):

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

from scars.core.errors import ScarsError
from scars.core.model import CATEGORIES, CATEGORY_LABEL, Feature, Problem, ScarItem
from scars.core.records import record
from scars.core.samsara.status import item_to_json

FORMATS: tuple[str, ...] = ("sarif", "openvex", "json")
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
OPENVEX_CONTEXT = "https://openvex.dev/ns/v0.2.0"
FINGERPRINT_KEY = "scarsItemId/v1"
LINE_HASH_KEY = "primaryLocationLineHash"  # the partial fingerprint GitHub code scanning matches alerts by
SRCROOT = "SRCROOT"
SRCROOT_DESCRIPTION = "The root of the repository: every artifact uri of this log is relative to it."
INFORMATION_URI = "https://pypi.org/project/scars/"  # the tool's public page (SARIF tool.driver.informationUri)
CATEGORY_PREFIX = "scars"  # runAutomationDetails.id = "scars/<feature>/": GitHub's category, one per feature
# GitHub code scanning's limits of one upload (docs: "SARIF support for code scanning", upload limits).
GITHUB_RESULTS_PER_RUN = 25_000
GITHUB_RUNS_PER_FILE = 20
_REPORT_READ_LIMIT = 5 * 1024 * 1024  # a report larger than this is not read for an item's line (docs/reading.md)

RULES: dict[str, dict[str, str]] = {
    "known_shortcuts": {
        "name": "KnownShortcut",
        "short": "A known shortcut left by an implementation task",
        "full": "A scar item of the known_shortcuts section: a shortcut the implementer knowingly took.",
        "level": "warning",
        "help": "A shortcut the implementer took on purpose and wrote down in the scar report. Triage it in "
        "scars: fix it in the next round, accept it as a known risk (with a re-review signal, an owner and a "
        "rationale: the alert is dismissed), or defer it (the alert stays open).",
    },
    "silent_failure_conditions": {
        "name": "SilentFailureCondition",
        "short": "A condition under which the code fails silently",
        "full": "A scar item of the silent_failure_conditions section: a way the code can fail without a signal.",
        "level": "warning",
        "help": "A way the code can fail without any signal, written down in the scar report. Triage it in "
        "scars: fix it (add the signal or the handling), accept it as a known risk (with a re-review signal, an "
        "owner and a rationale: the alert is dismissed), or defer it (the alert stays open).",
    },
    "unverified_assumptions": {
        "name": "UnverifiedAssumption",
        "short": "An assumption the implementation made without verifying it",
        "full": "A scar item of the assumptions_made section whose assumption was not verified.",
        "level": "note",
        "help": "An assumption the implementation relies on that nobody verified. Triage it in scars: fix it "
        "(verify it, or make the code not depend on it), accept it as a known risk (with a re-review signal, an "
        "owner and a rationale: the alert is dismissed), or defer it (the alert stays open).",
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


def _existing_file(repo_root: Path | None, path: str) -> bool:
    """Whether ``path`` (repository-relative) is a regular file of the checkout, inside it."""
    if repo_root is None:
        return False  # nothing to check against: never a link that may be broken
    try:
        target = (repo_root / path).resolve()
        target.relative_to(repo_root.resolve())
        return target.is_file()
    except (ValueError, OSError, RuntimeError):
        return False


class _Places:
    """The alert keys already given in one export, and the report files read for an item's place.

    GitHub's dismiss-alerts keys an alert by ``ruleId;uri;startLine;startColumn``: two results
    with one key are one alert to it, so every result of an export gets a key of its own."""

    def __init__(self) -> None:
        self.used: set[tuple[str, str, int, int | None]] = set()
        self._lines: dict[str, list[str]] = {}

    def free(self, rule: str, uri: str, line: int, col: int | None) -> bool:
        return (rule, uri, line, col) not in self.used

    def take(self, rule: str, uri: str, line: int, col: int | None) -> None:
        self.used.add((rule, uri, line, col))

    def has_line(self, repo_root: Path | None, uri: str, line: int) -> bool:
        """Whether a file of the checkout has that line (one over 5 MiB is not read: trusted)."""
        target = (repo_root / uri).resolve() if repo_root is not None else None
        try:
            if target is not None and target.stat().st_size > _REPORT_READ_LIMIT:
                return True
        except OSError:
            return False
        return line <= len(self.report_lines(repo_root, uri))

    def report_lines(self, repo_root: Path | None, uri: str) -> list[str]:
        """The lines of a file (a scar report) inside the repository (none when unreadable or outside)."""
        if uri not in self._lines:
            lines: list[str] = []
            if _existing_file(repo_root, uri):
                target = (repo_root / uri).resolve()  # type: ignore[operator]  # repo_root known when the file exists
                try:
                    if target.stat().st_size <= _REPORT_READ_LIMIT:
                        lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
                except OSError:
                    lines = []
            self._lines[uri] = lines
        return self._lines[uri]


def _physical(uri: str, line: int, col: int | None = None) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": line, **({"startColumn": col} if col else {})}
    return {"artifactLocation": {"uri": uri, "uriBaseId": SRCROOT}, "region": region}


def _text_column(line_text: str, text: str) -> int | None:
    """The 1-based column where an item's text starts on its report line, when it is found there."""
    head = text.strip().splitlines()[0][:40] if text.strip() else ""
    at = line_text.find(head) if head else -1
    return at + 1 if at >= 0 else None


def _report_place(feature: Feature, item: ScarItem, places: _Places) -> tuple[str, int, int | None]:
    """Where the scar report lists the item: its line (found by its text when the reader gave
    none), and — when an earlier result of this export already holds that line — the column its
    text starts at, else the next column no result holds (two items written on one line)."""
    repo_root = Path(feature.repo_root) if feature.repo_root else None
    uri = f"{_feature_prefix(feature)}/{item.file}"
    line = item.line
    lines: list[str] | None = None
    if not line:
        lines = places.report_lines(repo_root, uri)
        head = item.text.strip().splitlines()[0][:40] if item.text.strip() else ""
        line = next((n for n, t in enumerate(lines, 1) if head and head in t), 1)
    if places.free(item.category, uri, line, None):
        return uri, line, None
    lines = places.report_lines(repo_root, uri) if lines is None else lines
    col = _text_column(lines[line - 1], item.text) if 0 < line <= len(lines) else None
    col = col or 1
    while not places.free(item.category, uri, line, col):
        col += 1
    return uri, line, col


def _location(feature: Feature, item: ScarItem, places: _Places) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(the result's location, its related locations); records the alert key it takes.

    The item's own ``where`` is the location when it names a line of a file that exists in the
    checkout (and has that line) and no earlier result holds that line; else the scar report at the item's line. A
    file named without a line (or by the report's ``debt_location``) that exists is a related
    location; a path the checkout does not have is never a location (it would be a broken link)."""
    repo_root = Path(feature.repo_root) if feature.repo_root else None
    related: list[dict[str, Any]] = []
    for n, candidate in enumerate((item.where, _report_debt_location(feature, item))):
        found = repo_relative_location(candidate, repo_root)
        if not found or not _existing_file(repo_root, found[0]):
            continue
        path, line, col = found
        col = col if line else None
        if line and not places.has_line(repo_root, path, line):
            line = col = None  # past the file's end: not a true line, the file alone is related
        if n == 0 and line and places.free(item.category, path, line, col):
            places.take(item.category, path, line, col)
            return {"physicalLocation": _physical(path, line, col)}, related
        about = "named by the item" if n == 0 else "the report's debt_location"
        place = _physical(path, line, col) if line else {"artifactLocation": {"uri": path, "uriBaseId": SRCROOT}}
        if all(r["physicalLocation"] != place for r in related):
            related.append({"id": len(related) + 1, "physicalLocation": place, "message": {"text": about}})
    uri, line, col = _report_place(feature, item, places)
    places.take(item.category, uri, line, col)
    location = {
        "physicalLocation": _physical(uri, line, col),
        "message": {"text": "the scar report that lists this item"},
    }
    return location, related


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


def _rules() -> list[dict[str, Any]]:
    return [
        {
            "id": cat,
            "name": RULES[cat]["name"],
            "shortDescription": {"text": RULES[cat]["short"]},
            "fullDescription": {"text": RULES[cat]["full"]},
            "help": {"text": RULES[cat]["help"], "markdown": RULES[cat]["help"]},
            "defaultConfiguration": {"level": RULES[cat]["level"]},
            "properties": {"category": CATEGORY_LABEL[cat]},
        }
        for cat in CATEGORIES
    ]


def category(feature: Feature) -> str:
    """The run's ``runAutomationDetails.id``: GitHub's category (the part before the last "/"),
    one per feature, so each feature's alerts are their own analysis."""
    return f"{CATEGORY_PREFIX}/{feature.name}/"


def sarif_run(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    round_number: int | None = None,
    tool_version: str = "0+unknown",
    item_rounds: Mapping[str, int] | None = None,
    places: _Places | None = None,
) -> dict[str, Any]:
    """One feature's SARIF run (see the module doc); ``places``: the alert keys the export's
    earlier runs hold (a run of its own when None)."""
    decisions = decisions or {}
    item_rounds = item_rounds or {}
    places = places if places is not None else _Places()
    rule_ids = list(CATEGORIES)
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
        if item.where:
            props["where"] = item.where
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
        location, related = _location(feature, item, places)
        result: dict[str, Any] = {
            "ruleId": item.category,
            "ruleIndex": rule_ids.index(item.category),
            "level": RULES[item.category]["level"],
            "message": {"text": text},
            "locations": [location],
            **({"relatedLocations": related} if related else {}),
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
            "locations": [{"physicalLocation": _physical(f"{_feature_prefix(feature)}/{f.file}", f.line or 1)}],
        }
        for f in feature.parse_failures
    ]
    driver = {"name": "scars", "version": tool_version, "informationUri": INFORMATION_URI, "rules": _rules()}
    return {
        "tool": {"driver": driver},
        "automationDetails": {"id": category(feature)},
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


def sarif_log(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {"$schema": SARIF_SCHEMA_URI, "version": "2.1.0", "runs": runs}


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
    return sarif_log(
        [sarif_run(feature, decisions, round_number=round_number, tool_version=tool_version, item_rounds=item_rounds)]
    )


def alert_key(result: Mapping[str, Any]) -> tuple[Any, ...]:
    """The key GitHub's dismiss-alerts matches an alert by: ``ruleId;uri;startLine;startColumn``."""
    physical = result["locations"][0]["physicalLocation"]
    region = physical.get("region") or {}
    return (result["ruleId"], physical["artifactLocation"]["uri"], region.get("startLine"), region.get("startColumn"))


def github_limit_warnings(
    doc: Mapping[str, Any],
    *,
    results_per_run: int = GITHUB_RESULTS_PER_RUN,
    runs_per_file: int = GITHUB_RUNS_PER_FILE,
) -> list[str]:
    """What in a SARIF log exceeds GitHub code scanning's upload limits, one sentence each."""
    out: list[str] = []
    runs = list(doc.get("runs") or [])
    if len(runs) > runs_per_file:
        out.append(
            f"{len(runs)} runs (features) in one file exceed GitHub code scanning's limit of {runs_per_file:,} "
            f"runs per upload: upload it in parts (export each feature on its own)"
        )
    for run in runs:
        n = len(run.get("results") or [])
        if n > results_per_run:
            name = (run.get("properties") or {}).get("feature") or "?"
            out.append(
                f"feature {name}: {n:,} results exceed GitHub code scanning's limit of {results_per_run:,} "
                f"results per run: GitHub will not keep {n - results_per_run:,} of them (the file holds them all)"
            )
    return out


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
    """An OpenVEX 0.2.0 document: one statement per item (resolved items as ``fixed``).

    A feature with neither remaining nor resolved items raises :class:`NothingToState`: the
    schema requires at least one statement."""
    statements = vex_statements(feature, decisions, round_number=round_number, item_rounds=item_rounds)
    return vex_document(feature.name, statements, author=author, timestamp=timestamp)


class NothingToState(ScarsError):
    """An OpenVEX export with no statement: the schema (``statements``: ``minItems: 1``) rejects it."""


def vex_statements(
    feature: Feature,
    decisions: Mapping[str, Any] | None = None,
    *,
    round_number: int | None = None,
    item_rounds: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    decisions = decisions or {}
    item_rounds = item_rounds or {}
    product = {"@id": f"pkg:generic/{quote(feature.name, safe='')}"}
    statements = [
        _vex_statement(it, decisions.get(it.id), product, item_rounds.get(it.id, round_number)) for it in feature.items
    ]
    statements += [_vex_statement(it, None, product, round_number, resolved=True) for it in feature.resolved]
    return statements


def vex_document(
    name: str, statements: list[dict[str, Any]], *, author: str = "scars", timestamp: str | None = None
) -> dict[str, Any]:
    """The OpenVEX document holding ``statements`` (``name``: the feature's, or the repository's)."""
    if not statements:
        raise NothingToState(
            f"{name}: no scar item to state (none remaining, none resolved): an OpenVEX document needs at "
            "least one statement; nothing written"
        )
    stamp = timestamp or datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    digest = hashlib.sha256(json.dumps(statements, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return {
        "@context": OPENVEX_CONTEXT,
        "@id": f"urn:scars:vex:{quote(name, safe='')}:{digest[:16]}",
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
    for rec in records:
        if rec.get("type") != "decision" or not isinstance(rec.get("round"), int):
            continue
        for entry in rec.get("decisions") or []:
            if not isinstance(entry, dict):
                continue
            item_id: Any = entry.get("item_id")
            current = decisions.get(item_id)
            if current is not None and getattr(current, "decided_at", None) == entry.get("decided_at"):
                out[entry["item_id"]] = rec["round"]
    return out


def _failure(f: Problem) -> dict[str, Any]:
    return {"file": f.file, "line": f.line, "reason": f.message}


@record
class FeatureExport:
    """One feature of a whole-repository export, with what its session holds."""

    feature: Feature
    decisions: Mapping[str, Any]
    item_rounds: Mapping[str, int]
    round_number: int | None


def export_many(
    entries: list[FeatureExport],
    fmt: str,
    *,
    name: str = "repository",
    tool_version: str = "0+unknown",
    author: str | None = None,
    timestamp: str | None = None,
) -> dict[str, Any]:
    """Several features in one document: SARIF, one run per feature (each its own category, no
    two results with one alert key); OpenVEX, every feature's statements (each its own product);
    JSON, ``{"features": [...]}``. Raises ValueError for an unknown ``fmt``."""
    if fmt == "sarif":
        places = _Places()
        return sarif_log(
            [
                sarif_run(
                    e.feature,
                    e.decisions,
                    round_number=e.round_number,
                    tool_version=tool_version,
                    item_rounds=e.item_rounds,
                    places=places,
                )
                for e in entries
            ]
        )
    if fmt == "openvex":
        statements = [
            s
            for e in entries
            for s in vex_statements(e.feature, e.decisions, round_number=e.round_number, item_rounds=e.item_rounds)
        ]
        return vex_document(name, statements, author=author or "scars", timestamp=timestamp)
    if fmt == "json":
        return {
            "features": [
                to_json(e.feature, e.decisions, round_number=e.round_number, item_rounds=e.item_rounds) for e in entries
            ]
        }
    raise ValueError(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")


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
