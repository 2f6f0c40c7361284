"""Scar reports (formats.md §1.1–1.2): every era (A–D) and item shape, read into ``ScarItem``.

Tolerant on read: every era of scar report, the legacy ``resolved_items`` list and the
in-place ``status: resolved`` form, Gen 1 plain strings, Gen 2 description dicts,
``systemic_ref`` items, Gen 3 slot items and era-D lifecycle items, side by side. Unknown
keys are kept (``ScarReport.extra``, ``ScarItem.extra``), never rejected. Nothing is dropped
silently: a report that cannot be used is a ``Problem`` (file relative to the feature
directory, line where known, a reason naming the key or item) and its items stay readable
with ``counted=False``. Item ids and fingerprints are computed here.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from sys import intern
from typing import Any

from scars.core.model import SECTION_OF, Problem, Registry, ScarItem, ScarReport, odd_normal
from scars.core.records import replace
from scars.core.samsara.items import fingerprint_of
from scars.core.storage import safe_read
from scars.core.text import normalize
from scars.core.values import as_text, json_ready, opt_text, readable

ID_PREFIX = {"known_shortcuts": "ks", "silent_failure_conditions": "sf", "unverified_assumptions": "ua"}


CATEGORY_OF_SECTION = {v: k for k, v in SECTION_OF.items()}


LIFECYCLE_STATUSES = frozenset({"open", "resolved", "accepted", "deferred", "blocked"})


def item_id(category: str, file: str, key: str, occurrence: int) -> str:
    """``<ks|sf|ua>-<10 hex>`` from the report file, category, normalised text, occurrence."""
    digest = hashlib.sha1(f"{file}\x00{category}\x00{key}\x00{occurrence}".encode()).hexdigest()
    return f"{ID_PREFIX[category]}-{digest[:10]}"


# An item's keys that some era defines (read into ScarItem's fields); any other key is extra.
ITEM_KEYS = frozenset(
    {
        "description", "what", "bites_when", "where", "accepted_because", "assumption", "verified", "note",
        "resolution", "status", "scar_id", "iteration", "deferred_to_feature_iteration", "systemic_ref",
    }
)  # fmt: skip


def extra_keys(raw: Any) -> dict[str, Any] | None:
    """The keys of an item no era defines, JSON-ready, in the order written (None: none)."""
    if not isinstance(raw, dict):
        return None
    extra = {k: v for k, v in raw.items() if as_text(k) not in ITEM_KEYS}
    return json_ready(extra) if extra else None


# An item's short fields that many items repeat (a lifecycle status, a bites_when, an SC-N …):
# one string each per reader process, so that the reports a reader process hands back (one
# pickle per chunk of reports) hold each once (3 MB of copies at 50,000 items).
_SHARED_FIELDS = ("status", "scar_id", "where", "bites_when", "accepted_because", "note")


class _ReportBuilder:
    def __init__(self, rel: str, registry: Registry, summary: bool = False):
        self.rel = rel
        self.registry = registry
        self.summary = summary  # read_report's: no fingerprints, extra keys, notes nor their warnings
        self.failures: list[Problem] = []
        self.warnings: list[Problem] = []
        self.dangling: list[tuple[str, str]] = []
        self.items: list[ScarItem] = []
        self._occ: dict[tuple[str, str], int] = {}
        self.scar_ids: dict[str, str] = {}  # era-D scar_id -> the first item label holding it

    def fail(self, line: int | None, reason: str) -> None:
        self.failures.append(Problem(self.rel, line, reason))

    def warn(self, line: int | None, reason: str) -> None:
        self.warnings.append(Problem(self.rel, line, reason, "warning"))

    def add(
        self,
        category: str,
        key: str,
        *,
        raw: Any,
        text: str,
        normalized: str = "",
        shown_whole: bool = False,
        **kw: Any,
    ) -> None:
        """One item; ``raw``: it as parsed (its fingerprint and extra keys are taken from it,
        none when ``shown_whole``: an unrecognised shape shows all its keys in its text);
        ``normalized``: its literal key ("" for none), held only when ``text`` does not give it."""
        occ = self._occ.get((category, key), 0)
        self._occ[(category, key)] = occ + 1
        for name in _SHARED_FIELDS:
            v = kw.get(name)
            if v.__class__ is str:
                kw[name] = intern(v)
        self.items.append(
            ScarItem(
                id=item_id(category, self.rel, key, occ),
                category=category,  # type: ignore[arg-type]  # one of CATEGORIES (CATEGORY_OF_SECTION)
                text=text,
                file=self.rel,
                extra=None if shown_whole or self.summary else extra_keys(raw),
                fingerprint="" if self.summary else fingerprint_of(self.rel, category, raw),
                odd_normal=odd_normal(text, normalized),
                **kw,
            )
        )

    def unrecognised(
        self, category: str, line: int | None, reason: str, raw: Any, form: str, debt_location: str | None, common: dict
    ) -> None:
        """An item of a shape no era defines: a parse failure; the item is still shown, as its keys
        and values (never Python's repr), and not counted. Its id keeps the text as it was read."""
        self.fail(line, reason)
        self.add(
            category,
            "\x01" + normalize(as_text(raw)),
            text=readable(raw),
            form=form,
            debt_location=debt_location,
            shown_whole=True,
            **common,
        )

    def notice(self, line: int | None, label: str, d: dict, text: str, resolved: bool) -> tuple[str, ...]:
        """What the seed's rules count but a reader should be told (issue 14, "no silent
        counting"): each is a warning of the feature and a note of the item (none for a summary)."""
        if self.summary:
            return ()
        notes: list[str] = []  # a resolution claimed in the text: samsara.resolutions (across reports)
        status = opt_text(d.get("status"))
        if status in ("accepted", "deferred", "blocked") and not isinstance(d.get("iteration"), dict):
            notes.append(
                f"status {status} with `iteration: {'null' if d.get('iteration') is None else 'not a map'}`: "
                f"era D records who {status} it in an iteration map (round, rationale, owner …); counted as remaining"
            )
        scar_id = opt_text(d.get("scar_id"))
        if scar_id:
            first = self.scar_ids.get(scar_id)
            if first is None:
                self.scar_ids[scar_id] = label
            else:
                notes.append(
                    f"scar_id {scar_id} is also the id of {first} in this report (era D: unique per file, "
                    "never reused); both items are counted"
                )
        for n in notes:
            self.warn(line, f"{label}: {n}")
        return tuple(notes)


def read_report(
    path: Path, rel: str, registry: Registry, *, summary: bool = False
) -> tuple[ScarReport, list[Problem], list[Problem], list[tuple[str, str]]]:
    """Read one scar report. Returns (report, parse failures, warnings, dangling refs).

    ``summary``: for what a repository's one line per feature shows (``FeatureSummary``: the
    counts, the literal patterns, the parse failures), which none of the items' fingerprints,
    extra keys and notes, nor the warnings that come with the notes, change: those are left out
    (a fifth of the read's time). Its items never leave the summary read."""
    b = _ReportBuilder(rel, registry, summary)
    loaded, problem = safe_read.load_path_quiet(path)
    if problem is not None:
        b.fail(problem.line, problem.reason)
        return (
            ScarReport(file=rel, task_id=None, completion_status=None, items=(), parse_failure=b.failures[0]),
            b.failures,
            [],
            [],
        )
    assert loaded is not None  # load_path_quiet returns the file or its problem
    for line, reason in loaded.problems:
        b.fail(line, reason)
    data = loaded.value
    if data is None:
        b.fail(None, "empty report (no YAML document)")
    elif not isinstance(data, dict):
        b.fail(1, f"not a mapping: the top level is {describe_shape(data)}, expected task_id/known_shortcuts/… keys")
    if not isinstance(data, dict):
        return (
            ScarReport(file=rel, task_id=None, completion_status=None, items=(), parse_failure=b.failures[0]),
            b.failures,
            [],
            [],
        )

    kl = loaded.key_lines
    task_id = data.get("task_id")
    if task_id is None or as_text(task_id).strip() == "":
        b.fail(1, "missing task_id (required; the era-D validator rejects a report without it)")
        task_id = None
    else:
        task_id = as_text(task_id)
    debt_location = opt_text(data.get("debt_location"))

    # Legacy resolved_items: (section, normalised description) pairs.
    resolved_keys: dict[tuple[str, str], str] = {}
    resolved_entries: list[tuple[str, str, str]] = []
    ri = data.get("resolved_items")
    if ri is not None:
        if not isinstance(ri, list):
            b.warn(kl.get("resolved_items"), "resolved_items is not a list; ignored")
        else:
            for _n, e in enumerate(ri):
                if isinstance(e, dict) and e.get("original_description") is not None:
                    section_, desc_ = as_text(e.get("original_section")), as_text(e["original_description"])
                    resolved_keys[(section_, normalize(desc_))] = as_text(e.get("resolution"))
                    resolved_entries.append((section_, desc_, as_text(e.get("resolution"))))

    for section in ("known_shortcuts", "silent_failure_conditions", "assumptions_made"):
        if section not in data:
            continue
        value = data[section]
        if value is None:
            continue
        if not isinstance(value, list):
            b.fail(kl.get(section), f"{section} is {describe_shape(value)}, expected a list of items")
            continue
        lines = loaded.item_lines.get(section, [])
        category = CATEGORY_OF_SECTION[section]
        for idx, raw in enumerate(value):
            line = lines[idx] if idx < len(lines) else kl.get(section)
            _read_item(b, section, category, idx, raw, line, debt_location, task_id, resolved_keys)

    if not summary:
        _odd_deferrals(b, data, kl, loaded.item_lines)
    extra = {k: v for k, v in data.items() if k not in _KNOWN_TOP}
    items = b.items
    if b.failures:
        items = [replace(it, counted=False) for it in items]
    report = ScarReport(
        file=rel,
        task_id=task_id,
        completion_status=opt_text(data.get("completion_status")),
        items=tuple(items),
        parse_failure=b.failures[0] if b.failures else None,
        debt_location=debt_location,
        extra=extra,
        resolved_entries=tuple(resolved_entries),
    )
    return report, b.failures, b.warnings, b.dangling


def read_summary_report(
    path: Path, rel: str, registry: Registry
) -> tuple[ScarReport, list[Problem], list[Problem], list[tuple[str, str]]]:
    """``read_report(path, rel, registry, summary=True)`` (a module-level function: the parallel
    read hands it to its workers by reference)."""
    return read_report(path, rel, registry, summary=True)


def _odd_deferrals(b: _ReportBuilder, data: dict, kl: dict, item_lines: dict) -> None:
    """Level-1 deferrals under keys no era defines (a top-level ``deferred_to_feature_iteration:``
    list in a fix report, ``deferred_to_feature_iteration_notes:``): not read as deferrals (only an
    item's own ``deferred_to_feature_iteration: true`` is one) — said, never silently skipped."""
    for key, value in data.items():
        name = as_text(key)
        if name in _KNOWN_TOP or not name.casefold().startswith("deferred"):
            continue
        size = f"a list of {len(value)}" if isinstance(value, list) else describe_shape(value)
        b.warn(
            kl.get(key),
            f"top-level {name} ({size}) is not a key of any era: a Level-1 deferral is an item's own "
            "`deferred_to_feature_iteration: true`, so nothing here is read as deferred (the items stay "
            "as their sections say)",
        )
    for section in ("known_shortcuts", "silent_failure_conditions", "assumptions_made"):
        value = data.get(section)
        if not isinstance(value, list):
            continue
        lines = item_lines.get(section, [])
        for idx, raw in enumerate(value):
            if not isinstance(raw, dict):
                continue
            for key in raw:
                name = as_text(key)
                if name != "deferred_to_feature_iteration" and name.casefold().startswith("deferred"):
                    flag = raw.get("deferred_to_feature_iteration")
                    b.warn(
                        lines[idx] if idx < len(lines) else kl.get(section),
                        f"{section}[{idx}]: {name} is not a key of any era; the item is "
                        + ("deferred by its `deferred_to_feature_iteration: true`" if flag is True
                           else "not deferred (no `deferred_to_feature_iteration: true` beside it)"),
                    )  # fmt: skip


def _quote(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= width else one[: width - 1] + "…")


_KNOWN_TOP = frozenset(
    {
        "task_id",
        "completion_status",
        "known_shortcuts",
        "silent_failure_conditions",
        "assumptions_made",
        "debt_registered",
        "debt_location",
        "narrative",
        "resolved_items",
    }
)


def _read_item(
    b: _ReportBuilder,
    section: str,
    category: str,
    idx: int,
    raw: Any,
    line: int | None,
    debt_location: str | None,
    task_id: str | None,
    resolved_keys: dict[tuple[str, str], str],
) -> None:
    label = f"{section}[{idx}]"
    common: dict[str, Any] = {"task_id": task_id, "line": line, "raw": raw}

    if section == "assumptions_made":
        if isinstance(raw, str):
            b.warn(line, f"{label} is a plain string; read as an assumption with 'verified' missing (counted)")
            text = raw
            verified = None
            d: dict = {}
        elif isinstance(raw, dict) and "assumption" in raw:
            d = raw
            text = as_text(raw.get("assumption"))
            v = raw.get("verified")
            if v is None:
                b.warn(line, f"{label} has no 'verified'; counted as unverified")
                verified = None
            elif isinstance(v, bool):
                verified = v
            else:
                b.warn(line, f"{label} 'verified' is {v!r}, not true/false; counted as unverified")
                verified = None
        else:
            b.unrecognised(
                category,
                line,
                f"{label}: unrecognised assumption shape ({describe_shape(raw)}); expected a map with 'assumption' and 'verified'",
                raw,
                "assumption",
                debt_location,
                common,
            )
            return
        _check_text_fields(b, d, label, line)
        key = normalize(text)
        status = opt_text(d.get("status"))
        resolved = status == "resolved" or (section, key) in resolved_keys
        resolution = opt_text(d.get("resolution")) if status == "resolved" else resolved_keys.get((section, key))
        deferred = _deferred(b, d, label, line)
        b.add(
            category,
            key,
            text=text,
            form="assumption",
            deferred=deferred,
            resolved=resolved,
            resolution=resolution,
            status=status,
            scar_id=opt_text(d.get("scar_id")),
            note=opt_text(d.get("note")),
            verified=verified,
            where=opt_text(d.get("where")),
            debt_location=debt_location,
            normalized=key,
            notes=b.notice(line, label, d, text, resolved or verified is True),
            **common,
        )
        return

    systemic_ref = None
    registry_state = None
    registry_description = None
    bites_when = accepted_because = note = None
    where = None
    d = raw if isinstance(raw, dict) else {}
    if isinstance(raw, str):
        form, text = "gen1", raw
    elif isinstance(raw, dict) and "systemic_ref" in raw:
        form = "systemic_ref"
        systemic_ref = as_text(raw.get("systemic_ref")).strip()
        note = opt_text(raw.get("note"))
        text = note if note else f"systemic_ref: {systemic_ref}"
        reg = b.registry
        if not systemic_ref:
            b.fail(line, f"{label}: empty systemic_ref")
        elif reg.state == "present":
            if systemic_ref in reg.entries:
                registry_state = "found"
                registry_description = opt_text(reg.entries[systemic_ref].get("description"))
            else:
                registry_state = "dangling"
                b.fail(
                    line, f"{label}: systemic_ref {systemic_ref!r} is not in .samsara/systemic-scars.yaml (dangling)"
                )
                b.dangling.append((b.rel, systemic_ref))
        else:
            # Missing or unreadable registry: unknown, still counted (formats.md §1.3, §1.7).
            # An unreadable one is listed once as its own parse failure (read_feature).
            registry_state = "unknown"
    elif isinstance(raw, dict) and "what" in raw:
        form = "lifecycle" if ("scar_id" in raw or "iteration" in raw) else "gen3"
        text = as_text(raw.get("what"))
        bites_when = opt_text(raw.get("bites_when"))
        accepted_because = opt_text(raw.get("accepted_because"))
        if raw.get("where") is not None:
            where = as_text(raw.get("where"))
        missing = [k for k in ("bites_when", "where") if k not in raw]
        if missing:
            b.warn(line, f"{label}: slot item without {', '.join(missing)}")
    elif isinstance(raw, dict) and "description" in raw:
        form = "lifecycle" if ("scar_id" in raw or "iteration" in raw) else "gen2"
        text = as_text(raw.get("description"))
        if isinstance(raw.get("where"), str):  # an item-level location written beside a description
            where = raw["where"]
    else:
        b.unrecognised(
            category,
            line,
            f"{label}: unrecognised item shape ({describe_shape(raw)}); expected a string, description, what/bites_when/where or systemic_ref",
            raw,
            "gen2",
            debt_location,
            common,
        )
        return

    _check_text_fields(b, d, label, line)
    status = opt_text(d.get("status"))
    if status is not None and form == "lifecycle" and status not in LIFECYCLE_STATUSES:
        b.warn(line, f"{label}: status {status!r} is not one of {', '.join(sorted(LIFECYCLE_STATUSES))}")
    key = normalize(text)
    id_key = f"ref:{systemic_ref}\x00{key}" if form == "systemic_ref" else key
    resolved = status == "resolved" or (section, key) in resolved_keys
    resolution = opt_text(d.get("resolution")) if status == "resolved" else resolved_keys.get((section, key))
    b.add(
        category,
        id_key,
        text=text,
        form=form,
        deferred=_deferred(b, d, label, line),
        systemic_ref=systemic_ref,
        registry_state=registry_state,
        registry_description=registry_description,
        resolved=resolved,
        resolution=resolution,
        status=status,
        scar_id=opt_text(d.get("scar_id")),
        where=where,
        debt_location=debt_location,
        bites_when=bites_when,
        accepted_because=accepted_because,
        note=note,
        normalized=key,
        notes=b.notice(line, label, d, text, resolved),
        **common,
    )


_TEXT_FIELDS = ("description", "what", "bites_when", "where", "accepted_because", "assumption", "note", "resolution")


def _check_text_fields(b: _ReportBuilder, d: dict, label: str, line: int | None) -> None:
    """A text field holding a list or a map is an unrecognised item shape (not text to show)."""
    for key in _TEXT_FIELDS:
        v = d.get(key)
        if isinstance(v, (list, dict)):
            b.fail(line, f"{label}: {key} is a {type(v).__name__}, expected text")


def _deferred(b: _ReportBuilder, d: dict, label: str, line: int | None) -> bool:
    v = d.get("deferred_to_feature_iteration", False)
    if isinstance(v, bool):
        return v
    if v is None:
        return False
    b.warn(line, f"{label}: deferred_to_feature_iteration is {v!r}, not true/false; read as false")
    return False


def describe_shape(raw: Any) -> str:
    if isinstance(raw, dict):
        keys = ", ".join(str(k) for k in list(raw)[:6])
        return f"a map with keys {keys}" if keys else "an empty map"
    if raw is None:
        return "an empty value"
    name = {"str": "string", "int": "number", "float": "number", "bool": "boolean", "list": "list"}.get(
        type(raw).__name__, type(raw).__name__
    )
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
