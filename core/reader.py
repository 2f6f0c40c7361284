"""Read a samsara feature directory (formats.md §1) into a ``Feature``.

Tolerant on read: every era (A–D) of scar report, the legacy ``resolved_items`` list and the
in-place ``status: resolved`` form, Gen 1 plain strings, Gen 2 description dicts,
``systemic_ref`` items, Gen 3 slot items and era-D lifecycle items, side by side. Unknown
keys are kept (``ScarReport.extra``, ``ScarItem.raw``), never rejected. Nothing is dropped
silently: a report that cannot be used is a ``ParseFailure`` (file relative to the feature
directory, line where known, a reason naming the key or item) and its items stay readable
with ``counted=False``.

Reports are parsed once, with PyYAML's libyaml loader (``scars.core.yamlsafe``); no ruamel on
this path.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from scars.core import yamlsafe
from scars.core.autodecisions import parse_auto_decisions
from scars.core import cache as feature_cache
from scars.core.parallel import gc_paused, read_reports
from scars.core.errors import PathNotFound
from scars.core.paths import resolve_inside
from scars.core.model import (
    CATEGORIES,
    REGISTRY_FILE,
    SECTION_OF,
    EvaluationContract,
    Feature,
    IterationLog,
    ParseFailure,
    Registry,
    Round,
    ScarItem,
    ScarReport,
)

REPORTS_DIR = "scar-reports"
REGISTRY_PATH = tuple(REGISTRY_FILE.split("/"))
# Files whose presence makes a directory a samsara feature directory.
FEATURE_MARKERS = (
    REPORTS_DIR,
    "index.yaml",
    "iteration-log.yaml",
    "pre-thinking.md",
    "1.5-pre-thinking.md",
    "auto-decisions.md",
)
ID_PREFIX = {"known_shortcuts": "ks", "silent_failure_conditions": "sf", "unverified_assumptions": "ua"}
CATEGORY_OF_SECTION = {v: k for k, v in SECTION_OF.items()}
LIFECYCLE_STATUSES = frozenset({"open", "resolved", "accepted", "deferred", "blocked"})
MAX_MARKDOWN_BYTES = yamlsafe.MAX_FILE_BYTES

_WS = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Whitespace-normalised, case-folded text: the key of the literal pattern rule."""
    return _WS.sub(" ", text).strip().casefold()


def item_id(category: str, file: str, key: str, occurrence: int) -> str:
    """``<ks|sf|ua>-<10 hex>`` from the report file, category, normalised text, occurrence."""
    digest = hashlib.sha1(f"{file}\x00{category}\x00{key}\x00{occurrence}".encode("utf-8")).hexdigest()
    return f"{ID_PREFIX[category]}-{digest[:10]}"


# Keys of an item that its own lifecycle changes (resolved in place, verified, deferred,
# accepted at level 1, era-D status and iteration map): not part of what the item *is*.
_LIFECYCLE_KEYS = frozenset({"status", "resolution", "iteration", "deferred_to_feature_iteration", "verified",
                             "accepted_because"})


def item_fingerprint(item: ScarItem) -> str:
    """What the item is, beyond its id: its report file, category and every field as written
    except its line and its lifecycle keys (16 hex).

    Two items with the same text in one report and category get their ids by occurrence, so
    an item inserted *before* an existing one takes over the existing one's id. A decision
    records this fingerprint; when the item now holding the id has another one, the decision
    was made on a different item and is not applied to it (scars.core.journal.check_items).
    """
    raw = item.raw
    if isinstance(raw, dict):
        raw = {str(k): v for k, v in raw.items() if str(k) not in _LIFECYCLE_KEYS}
    try:
        body = json.dumps(raw, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # keys of mixed types: compare their text
        body = repr(raw)
    digest = hashlib.sha1(f"{item.file}\x00{item.category}\x00{body}".encode("utf-8")).hexdigest()
    return digest[:16]


# --------------------------------------------------------------------------- discovery


def is_feature_dir(path: Path) -> bool:
    if not path.is_dir():
        return False
    return any((path / m).exists() for m in FEATURE_MARKERS)


def find_repo_root(path: str | os.PathLike[str]) -> Path | None:
    """Nearest ancestor (``path`` itself included) holding ``changes/`` or ``.samsara/``."""
    p = Path(path).absolute()
    if p.is_file():
        p = p.parent
    for candidate in (p, *p.parents):
        if (candidate / "changes").is_dir() or (candidate / ".samsara").is_dir():
            return candidate
    return None


def find_features(root: str | os.PathLike[str]) -> list[Path]:
    """Feature directories under ``root/changes/``, sorted by name (dated names sort by date)."""
    changes = Path(root) / "changes"
    if not changes.is_dir():
        return []
    return sorted((p for p in changes.iterdir() if is_feature_dir(p)), key=lambda p: p.name)


# --------------------------------------------------------------------------- helpers


def _as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return str(value)


def _opt_text(value: Any) -> str | None:
    return None if value is None else _as_text(value)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symlink loop (Python 3.11)
        return False


def _entry_is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a symlink loop
        return False


def _refusal(path: Path, root: Path) -> str | None:
    """Why a symlinked input file is not read (outside the repository, a loop …), or None."""
    if not path.is_symlink():
        return None
    got = resolve_inside(root, os.path.relpath(path, root))
    return got if isinstance(got, str) else None


# --------------------------------------------------------------------------- registry


_REGISTRY_MEMO: dict[str, tuple[tuple, Registry]] = {}


def read_registry(repo_root: Path | None) -> Registry:
    """The repository's registry; parsed once per process while its file is unchanged.

    (Reading every feature of a repository reads the same registry each time: the memo is
    keyed by the file's stat stamp, as scars.core.cache explains, and skips files changed
    too recently for a stamp to be trusted.)
    """
    if repo_root is None:
        return _read_registry(repo_root)
    path = repo_root.joinpath(*REGISTRY_PATH)
    stamp = feature_cache._entry(path)
    memo = _REGISTRY_MEMO.get(str(path))
    if memo is not None and memo[0] == stamp:
        return memo[1]
    registry = _read_registry(repo_root)
    if not feature_cache._too_recent(stamp):
        _REGISTRY_MEMO[str(path)] = (stamp, registry)
    return registry


def _read_registry(repo_root: Path | None) -> Registry:
    if repo_root is None:
        return Registry(state="missing", reason="no repository root found")
    path = repo_root.joinpath(*REGISTRY_PATH)
    rel = REGISTRY_FILE
    if not path.exists() and not path.is_symlink():
        return Registry(state="missing", path=rel)
    if not _inside(path, repo_root):
        return Registry(state="unreadable", path=rel, reason="symlink points outside the repository")
    loaded, problem = yamlsafe.load_path_quiet(path)
    if problem is not None:
        return Registry(state="unreadable", path=rel, reason=problem.reason, line=problem.line)
    if loaded.problems:  # duplicate keys: which list of ids is meant is not knowable
        line, reason = loaded.problems[0]
        return Registry(state="unreadable", path=rel, reason=reason, line=line)
    data = loaded.value
    if data is None:
        return Registry(state="unreadable", path=rel, reason="empty file (no YAML document)")
    if not isinstance(data, dict):
        return Registry(state="unreadable", path=rel, line=1,
                        reason=f"not a mapping: the top level is {_shape(data)}, expected an 'entries' list")
    entries = data.get("entries")
    if not isinstance(entries, list):
        got = "missing" if "entries" not in data else f"{_shape(entries)}, not a list"
        return Registry(state="unreadable", path=rel, reason=f"'entries' is {got}",
                        line=loaded.key_lines.get("entries"))
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if isinstance(e, dict) and e.get("id") is not None:
            out[_as_text(e["id"])] = e
    return Registry(state="present", entries=out, path=rel)


# --------------------------------------------------------------------------- reports


class _ReportBuilder:
    def __init__(self, rel: str, registry: Registry):
        self.rel = rel
        self.registry = registry
        self.failures: list[ParseFailure] = []
        self.warnings: list[str] = []
        self.dangling: list[tuple[str, str]] = []
        self.items: list[ScarItem] = []
        self._occ: dict[tuple[str, str], int] = {}

    def fail(self, line: int | None, reason: str) -> None:
        self.failures.append(ParseFailure(self.rel, line, reason))

    def warn(self, line: int | None, reason: str) -> None:
        where = f"{self.rel}:{line}" if line else self.rel
        self.warnings.append(f"{where}: {reason}")

    def add(self, category: str, key: str, **kw: Any) -> None:
        occ = self._occ.get((category, key), 0)
        self._occ[(category, key)] = occ + 1
        self.items.append(
            ScarItem(id=item_id(category, self.rel, key, occ), category=category, file=self.rel, **kw)
        )


def read_report(path: Path, rel: str, registry: Registry) -> tuple[ScarReport, list[ParseFailure], list[str], list[tuple[str, str]]]:
    """Read one scar report. Returns (report, parse failures, warnings, dangling refs)."""
    b = _ReportBuilder(rel, registry)
    loaded, problem = yamlsafe.load_path_quiet(path)
    if problem is not None:
        b.fail(problem.line, problem.reason)
        return ScarReport(file=rel, task_id=None, completion_status=None, items=(), parse_failure=b.failures[0]), b.failures, [], []
    for line, reason in loaded.problems:
        b.fail(line, reason)
    data = loaded.value
    if data is None:
        b.fail(None, "empty report (no YAML document)")
    elif not isinstance(data, dict):
        b.fail(1, f"not a mapping: the top level is {_shape(data)}, expected task_id/known_shortcuts/… keys")
    if not isinstance(data, dict):
        return ScarReport(file=rel, task_id=None, completion_status=None, items=(), parse_failure=b.failures[0]), b.failures, [], []

    kl = loaded.key_lines
    task_id = data.get("task_id")
    if task_id is None or _as_text(task_id).strip() == "":
        b.fail(1, "missing task_id (required; the era-D validator rejects a report without it)")
        task_id = None
    else:
        task_id = _as_text(task_id)
    debt_location = _opt_text(data.get("debt_location"))

    # Legacy resolved_items: (section, normalised description) pairs.
    resolved_keys: dict[tuple[str, str], str] = {}
    ri = data.get("resolved_items")
    if ri is not None:
        if not isinstance(ri, list):
            b.warn(kl.get("resolved_items"), "resolved_items is not a list; ignored")
        else:
            for n, e in enumerate(ri):
                if isinstance(e, dict) and e.get("original_description") is not None:
                    resolved_keys[(_as_text(e.get("original_section")), normalize(_as_text(e["original_description"])))] = _as_text(e.get("resolution"))

    for section in ("known_shortcuts", "silent_failure_conditions", "assumptions_made"):
        if section not in data:
            continue
        value = data[section]
        if value is None:
            continue
        if not isinstance(value, list):
            b.fail(kl.get(section), f"{section} is {_shape(value)}, expected a list of items")
            continue
        lines = loaded.item_lines.get(section, [])
        category = CATEGORY_OF_SECTION[section]
        for idx, raw in enumerate(value):
            line = lines[idx] if idx < len(lines) else kl.get(section)
            _read_item(b, section, category, idx, raw, line, debt_location, task_id, resolved_keys)

    extra = {k: v for k, v in data.items() if k not in _KNOWN_TOP}
    items = b.items
    if b.failures:
        items = [replace(it, counted=False) for it in items]
    report = ScarReport(
        file=rel,
        task_id=task_id,
        completion_status=_opt_text(data.get("completion_status")),
        items=tuple(items),
        parse_failure=b.failures[0] if b.failures else None,
        debt_location=debt_location,
        extra=extra,
    )
    return report, b.failures, b.warnings, b.dangling


_KNOWN_TOP = frozenset(
    {
        "task_id", "completion_status", "known_shortcuts", "silent_failure_conditions",
        "assumptions_made", "debt_registered", "debt_location", "narrative", "resolved_items",
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
            text = _as_text(raw.get("assumption"))
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
            b.fail(line, f"{label}: unrecognised assumption shape ({_shape(raw)}); expected a map with 'assumption' and 'verified'")
            b.add(category, "\x01" + normalize(_as_text(raw)), text=_as_text(raw), form="assumption", **common)
            return
        _check_text_fields(b, d, label, line)
        key = normalize(text)
        status = _opt_text(d.get("status"))
        resolved = status == "resolved" or (section, key) in resolved_keys
        resolution = _opt_text(d.get("resolution")) if status == "resolved" else resolved_keys.get((section, key))
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
            scar_id=_opt_text(d.get("scar_id")),
            note=_opt_text(d.get("note")),
            verified=verified,
            where=debt_location,
            normalized=key,
            **common,
        )
        return

    systemic_ref = None
    registry_state = None
    registry_description = None
    bites_when = accepted_because = note = None
    where = debt_location
    d = raw if isinstance(raw, dict) else {}
    if isinstance(raw, str):
        form, text = "gen1", raw
    elif isinstance(raw, dict) and "systemic_ref" in raw:
        form = "systemic_ref"
        systemic_ref = _as_text(raw.get("systemic_ref")).strip()
        note = _opt_text(raw.get("note"))
        text = note if note else f"systemic_ref: {systemic_ref}"
        reg = b.registry
        if not systemic_ref:
            b.fail(line, f"{label}: empty systemic_ref")
        elif reg.state == "present":
            if systemic_ref in reg.entries:
                registry_state = "found"
                registry_description = _opt_text(reg.entries[systemic_ref].get("description"))
            else:
                registry_state = "dangling"
                b.fail(line, f"{label}: systemic_ref {systemic_ref!r} is not in .samsara/systemic-scars.yaml (dangling)")
                b.dangling.append((b.rel, systemic_ref))
        else:
            # Missing or unreadable registry: unknown, still counted (formats.md §1.3, §1.7).
            # An unreadable one is listed once as its own parse failure (read_feature).
            registry_state = "unknown"
    elif isinstance(raw, dict) and "what" in raw:
        form = "lifecycle" if ("scar_id" in raw or "iteration" in raw) else "gen3"
        text = _as_text(raw.get("what"))
        bites_when = _opt_text(raw.get("bites_when"))
        accepted_because = _opt_text(raw.get("accepted_because"))
        if raw.get("where") is not None:
            where = _as_text(raw.get("where"))
        missing = [k for k in ("bites_when", "where") if k not in raw]
        if missing:
            b.warn(line, f"{label}: slot item without {', '.join(missing)}")
    elif isinstance(raw, dict) and "description" in raw:
        form = "lifecycle" if ("scar_id" in raw or "iteration" in raw) else "gen2"
        text = _as_text(raw.get("description"))
    else:
        b.fail(line, f"{label}: unrecognised item shape ({_shape(raw)}); expected a string, description, what/bites_when/where or systemic_ref")
        b.add(category, "\x01" + normalize(_as_text(raw)), text=_as_text(raw), form="gen2", **common)
        return

    _check_text_fields(b, d, label, line)
    status = _opt_text(d.get("status"))
    if status is not None and form == "lifecycle" and status not in LIFECYCLE_STATUSES:
        b.warn(line, f"{label}: status {status!r} is not one of {', '.join(sorted(LIFECYCLE_STATUSES))}")
    key = normalize(text)
    id_key = f"ref:{systemic_ref}\x00{key}" if form == "systemic_ref" else key
    resolved = status == "resolved" or (section, key) in resolved_keys
    resolution = _opt_text(d.get("resolution")) if status == "resolved" else resolved_keys.get((section, key))
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
        scar_id=_opt_text(d.get("scar_id")),
        where=where,
        bites_when=bites_when,
        accepted_because=accepted_because,
        note=note,
        normalized=key,
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


def _shape(raw: Any) -> str:
    if isinstance(raw, dict):
        keys = ", ".join(str(k) for k in list(raw)[:6])
        return f"a map with keys {keys}" if keys else "an empty map"
    if raw is None:
        return "an empty value"
    name = {"str": "string", "int": "number", "float": "number", "bool": "boolean", "list": "list"}.get(
        type(raw).__name__, type(raw).__name__
    )
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


# --------------------------------------------------------------------------- other files


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_tuple(v: Any) -> tuple[str, ...]:
    if isinstance(v, list):
        return tuple(_as_text(x) if not isinstance(x, dict) else _as_text(x.get("description", x)) for x in v)
    if v is None:
        return ()
    return (_as_text(v),)


def read_iteration_log(path: str | os.PathLike[str]) -> IterationLog:
    """Read iteration-log.yaml of any era.

    Raises ``PathNotFound`` when the file is missing and ``yamlsafe.YamlProblem`` when it is
    not usable YAML (not a mapping included). Missing ``budget`` gives the defaults 3/2 with
    ``budget_present=False``; partial rounds (``decision: interrupted``) are read with the
    missing fields as None; unknown keys stay in each ``Round.raw``.
    """
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise PathNotFound(f"{p} does not exist")
    if not p.is_file():  # a directory, a FIFO, a device, a dangling symlink: never opened
        raise yamlsafe.YamlProblem("not a regular file")
    loaded = yamlsafe.load_file(p)
    data = loaded.value
    if not isinstance(data, dict):
        raise yamlsafe.YamlProblem("not a mapping", 1)
    warnings = [f"line {ln}: {reason}" for ln, reason in loaded.problems]
    budget = data.get("budget")
    budget_present = isinstance(budget, dict)
    max_rounds, retry = 3, 2
    if budget_present:
        mr = _int_or_none(budget.get("max_rounds"))
        rr = _int_or_none(budget.get("reviewer_retry_limit"))
        max_rounds = mr if mr is not None else 3
        retry = rr if rr is not None else 2
    elif budget is not None:
        warnings.append("budget is not a mapping; defaults 3/2 used")
    rounds: list[Round] = []
    raw_rounds = data.get("rounds")
    if raw_rounds is not None and not isinstance(raw_rounds, list):
        warnings.append("rounds is not a list; no rounds read")
        raw_rounds = []
    round_lines = loaded.item_lines.get("rounds", [])
    for n, r in enumerate(raw_rounds or []):
        line = round_lines[n] if n < len(round_lines) else None
        if not isinstance(r, dict):
            warnings.append(f"line {line}: rounds[{n}] is not a mapping; skipped")
            continue
        number = _int_or_none(r.get("round"))
        if number is None:
            warnings.append(f"line {line}: rounds[{n}] has no round number; numbered {n + 1}")
            number = n + 1
        tr = r.get("triage_result") if isinstance(r.get("triage_result"), dict) else {}
        accepts = tuple(a if isinstance(a, dict) else {"description": _as_text(a)} for a in (tr.get("accept") or []) if a is not None) if isinstance(tr.get("accept"), (list, type(None))) else ()
        bc = r.get("budget_context") if isinstance(r.get("budget_context"), dict) else None
        era = "A" if (bc is None or any("expiry_date" in a for a in accepts)) else "B"
        decision = _opt_text(r.get("decision"))
        if decision != "interrupted":
            for req in ("signal_lost_before", "signal_lost_after", "decision"):
                if req not in r:
                    warnings.append(f"line {line}: round {number} has no {req}")
        rounds.append(
            Round(
                round=number,
                signal_lost_before=_int_or_none(r.get("signal_lost_before")),
                signal_lost_after=_int_or_none(r.get("signal_lost_after")),
                decision=decision,
                decision_reason=_opt_text(r.get("decision_reason")),
                items_triaged=_int_or_none(r.get("items_triaged")),
                fix=_str_tuple(tr.get("fix")),
                accept=accepts,
                defer=_str_tuple(tr.get("defer")),
                fixes_applied=_int_or_none(r.get("fixes_applied")),
                fixes_scar_count=_int_or_none(r.get("fixes_scar_count")),
                budget_context=bc,
                budget_spent=r.get("budget_spent") if isinstance(r.get("budget_spent"), dict) else None,
                evidence_gained=_str_tuple(r.get("evidence_gained")),
                residual_risk=_str_tuple(r.get("residual_risk")),
                era=era,
                raw=r,
            )
        )
    return IterationLog(
        file=p.name,
        feature=_opt_text(data.get("feature")),
        signal_lost_initial=_int_or_none(data.get("signal_lost_initial")),
        max_rounds=max_rounds,
        reviewer_retry_limit=retry,
        budget_present=budget_present,
        rounds=tuple(rounds),
        warnings=tuple(warnings),
    )


_CONTRACT_LABELS = {
    "primary evaluator": "primary_evaluator",
    "agent can perform it by": "agent_can_perform_it_by",
    "pass signal": "pass_signal",
    "fail signal": "fail_signal",
    "feedback loop": "feedback_loop",
    "out of scope validation": "out_of_scope_validation",
}
_LABEL = re.compile(r"^\s*\*\*([^*]+?):?\*\*:?\s*(.*)$")
_EXEC_MODE = re.compile(r"^\s*(?:\*\*)?Execution mode:?(?:\*\*)?:?\s*`?([A-Za-z-]+)`?", re.IGNORECASE)


def parse_contract(text: str, file: str) -> EvaluationContract | None:
    """The ``## Evaluation Contract`` block, label to next label (formats.md §1.10)."""
    execution_mode = None
    for line in text.splitlines():
        m = _EXEC_MODE.match(line)
        if m:
            execution_mode = m.group(1).lower()
            break
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if re.match(r"^#{1,6}\s+Evaluation Contract\b", line.strip(), re.IGNORECASE):
            start = i + 1
            break
    values: dict[str, list[str]] = {}
    if start is not None:
        current: str | None = None
        for line in lines[start:]:
            if line.lstrip().startswith("#"):
                break  # next heading ends the block
            m = _LABEL.match(line)
            if m:
                label = m.group(1).strip().rstrip(":").lower()
                current = _CONTRACT_LABELS.get(label)
                if current is not None:
                    values[current] = [m.group(2)]
                continue
            if current is not None:
                values[current].append(line)
    if start is None and execution_mode is None:
        return None
    fields = {k: "\n".join(v).strip() or None for k, v in values.items()}
    return EvaluationContract(file=file, execution_mode=execution_mode, **fields)


def _read_text(path: Path) -> str:
    return yamlsafe.decode(yamlsafe.read_bounded(path, MAX_MARKDOWN_BYTES))


# --------------------------------------------------------------------------- the feature


def read_feature(path: str | os.PathLike[str]) -> Feature:
    """Read and aggregate one feature directory. Raises PathNotFound when it is not one."""

    p = Path(path).absolute()
    if not p.exists():
        raise PathNotFound(f"{path} does not exist")
    if not p.is_dir():
        raise PathNotFound(f"{path} is not a directory")
    if not is_feature_dir(p):
        raise PathNotFound(
            f"{path} is not a samsara feature directory (it holds none of {', '.join(FEATURE_MARKERS)}); "
            "give changes/<feature>/ or a repository root holding changes/"
        )
    repo_root = find_repo_root(p.parent) if not (p / "changes").is_dir() else find_repo_root(p)
    # A reopen with unchanged files comes from the cache (scars.core.cache: keyed by a stat
    # fingerprint of every input, taken before reading, never used when one changed).
    fp = None
    if feature_cache.enabled():
        try:
            fp = feature_cache.fingerprint(p, repo_root)
        except OSError:
            fp = None
    with gc_paused():
        if fp is not None:
            hit = feature_cache.load(p, fp)
            if isinstance(hit, Feature):
                return hit
        feature = _read_feature_files(p, repo_root)
    if fp is not None:
        feature_cache.store(p, fp, feature)
    return feature


def _read_feature_files(p: Path, repo_root: Path | None) -> Feature:
    """read_feature without the cache: read every input of feature directory ``p``."""
    from scars.core.aggregate import aggregate

    registry = read_registry(repo_root)
    failures: list[ParseFailure] = []
    warnings: list[str] = []
    if yamlsafe.LOADER_WARNING:
        warnings.append(yamlsafe.LOADER_WARNING)
    registry_failure = registry.failure()
    if registry_failure is not None:
        failures.append(registry_failure)
    reports: list[ScarReport] = []
    dangling: list[tuple[str, str]] = []
    limit_root = repo_root or p
    rdir = p / REPORTS_DIR
    if rdir.is_dir():
        names = sorted(e.name for e in os.scandir(rdir) if e.name.endswith((".yaml", ".yml")))
        # Decide per name first (cheap checks), then read the reports — in parallel above a
        # threshold (scars.core.parallel) — and merge the results in name order.
        slots: list[Any] = []
        jobs: list[tuple[Path, str]] = []
        for name in names:
            fp = rdir / name
            rel = f"{REPORTS_DIR}/{name}"
            refusal = _refusal(fp, limit_root) or ("a directory, not a report file" if fp.is_dir() else None)
            if refusal is not None:
                pf = ParseFailure(rel, None, refusal)
                slots.append((ScarReport(file=rel, task_id=None, completion_status=None, items=(), parse_failure=pf),
                              [pf], [], []))
                continue
            slots.append(len(jobs))
            jobs.append((fp, rel))
        results = read_reports(jobs, registry)
        for slot in slots:
            report, f, w, d = results[slot] if isinstance(slot, int) else slot
            reports.append(report)
            failures.extend(f)
            warnings.extend(w)
            dangling.extend(d)
        if not names:
            warnings.append(f"{REPORTS_DIR}/ holds no .yaml report; signal_lost counts nothing here")
        others = sorted(e.name for e in os.scandir(rdir) if not e.name.endswith((".yaml", ".yml")) and _entry_is_file(e))
        for name in others:
            if not name.startswith("."):
                warnings.append(f"{REPORTS_DIR}/{name}: not a .yaml file; not read as a scar report")
    else:
        warnings.append(f"no {REPORTS_DIR}/ directory: signal_lost counts nothing here")

    index = None
    ip = p / "index.yaml"
    refused = {}
    for name in ("index.yaml", "iteration-log.yaml", "auto-decisions.md", "pre-thinking.md", "1.5-pre-thinking.md"):
        why = _refusal(p / name, limit_root)
        if why is not None:
            refused[name] = why
            failures.append(ParseFailure(name, None, why))
    if "index.yaml" not in refused and ip.exists():
        loaded, problem = yamlsafe.load_path_quiet(ip)
        if problem is not None:
            failures.append(ParseFailure("index.yaml", problem.line, problem.reason))
        elif loaded.value is not None and not isinstance(loaded.value, dict):
            failures.append(ParseFailure("index.yaml", 1, "not a mapping"))
        else:
            index = loaded.value or {}
            for ln, reason in loaded.problems:
                warnings.append(f"index.yaml:{ln}: {reason}")

    contract = None
    for name in ("pre-thinking.md", "1.5-pre-thinking.md"):
        cp = p / name
        if name in refused:
            break
        if cp.is_file():
            try:
                contract = parse_contract(_read_text(cp), name)
            except (yamlsafe.YamlProblem, OSError) as exc:
                warnings.append(f"{name}: cannot read ({exc})")
            break

    log = None
    lp = p / "iteration-log.yaml"
    if "iteration-log.yaml" not in refused and lp.exists():
        try:
            log = read_iteration_log(lp)
            warnings.extend(f"iteration-log.yaml: {w}" for w in log.warnings)
        except yamlsafe.YamlProblem as exc:
            failures.append(ParseFailure("iteration-log.yaml", exc.line, exc.reason))
        except OSError as exc:
            failures.append(ParseFailure("iteration-log.yaml", None, f"cannot read: {exc.strerror or exc}"))

    auto: tuple = ()
    ap = p / "auto-decisions.md"
    if "auto-decisions.md" not in refused and ap.is_file():
        try:
            auto = tuple(parse_auto_decisions(_read_text(ap)))
        except (yamlsafe.YamlProblem, OSError) as exc:
            failures.append(ParseFailure("auto-decisions.md", getattr(exc, "line", None), f"cannot read: {exc}"))
        for e in auto:
            for prob in e.problems:
                warnings.append(f"auto-decisions.md:{e.line}: decision {e.number:03d}: {prob}")

    all_items = [it for r in reports for it in r.items]
    return aggregate(
        Feature(
            name=p.name,
            path=str(p),
            repo_root=str(repo_root) if repo_root else None,
            reports=tuple(reports),
            items=tuple(it for it in all_items if not _excluded(it)),
            resolved=tuple(it for it in all_items if _excluded(it)),
            parse_failures=tuple(failures),
            dangling_refs=tuple(dangling),
            warnings=tuple(warnings),
            registry=registry,
            contract=contract,
            index=index,
            iteration_log=log,
            auto_decisions=auto,
            execution_mode=contract.execution_mode if contract else None,
        )
    )


def _excluded(item: ScarItem) -> bool:
    """Resolved items, and assumptions verified true, are not part of the remaining set."""
    return item.resolved or (item.category == "unverified_assumptions" and item.verified is True)


__all__ = [
    "CATEGORIES",
    "find_features",
    "find_repo_root",
    "is_feature_dir",
    "normalize",
    "read_feature",
    "read_iteration_log",
    "read_registry",
    "read_report",
]
