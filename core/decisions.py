"""The decision model: fix / accept / defer per scar item, and its validation.

formats.md §1.4: an ``accept`` is a known risk and must carry ``re_review_signal`` (the
observable condition that triggers a re-review), ``owner`` (who watches for it) and
``rationale``; a ``defer`` may carry a ``reason`` and a ``revisit_when``. Every decision
records who made it (``decided_by``) and when (``decided_at``, ISO 8601 with zone), and may
carry a second person's sign-off (``reviewed_by``). A fix the implementer reported blocked
gets an outcome: retry with more context, or reclassify as defer.

Validation lives here and returns :class:`FieldError` values; the app, the gates and the
CLI show them and never decide a rule themselves.
"""

from __future__ import annotations

import datetime as _dt
import getpass
import os
import shutil
import subprocess
import unicodedata
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

Action = Literal["fix", "accept", "defer"]
ACTIONS: tuple[str, ...] = ("fix", "accept", "defer")
BlockedOutcome = Literal["retry_with_context", "reclassify_as_defer"]
BLOCKED_OUTCOMES: tuple[str, ...] = ("retry_with_context", "reclassify_as_defer")

# Fields required (and meaningful) for an accept, in the order the loop lists them.
ACCEPT_REQUIRED: tuple[str, ...] = ("re_review_signal", "owner", "rationale")
# Which optional fields belong to which action ("rationale" and "watch" are allowed where noted).
_ONLY_FOR: dict[str, tuple[str, ...]] = {
    "re_review_signal": ("accept",),
    "owner": ("accept",),
    "watch": ("accept",),
    "watch_base": ("accept",),
    "reason": ("defer",),
    "revisit_when": ("defer",),
}
TEXT_FIELDS: tuple[str, ...] = ("re_review_signal", "owner", "rationale", "reason", "revisit_when", "reviewed_by")
FIELD_LABEL: dict[str, str] = {
    "re_review_signal": "re-review signal",
    "owner": "owner",
    "rationale": "rationale",
    "reason": "reason",
    "revisit_when": "revisit when",
    "watch": "watch",
    "reviewed_by": "reviewed by",
    "action": "action",
    "item_id": "item id",
}

# Values that say nothing. Compared case-insensitively after trimming whitespace and a
# trailing full stop.
PLACEHOLDERS: frozenset[str] = frozenset(
    {
        "n/a", "na", "n.a", "n.a.", "tbd", "tba", "tbc", "todo", "to do", "fixme", "none", "null", "nil",
        "-", "--", "---", "?", "??", "???", "…", "...", "..", "x", "xx", "xxx", "unknown", "nobody",
        "no one", "noone", "whatever", "same", "see above", "placeholder", "<none>", "<tbd>", "\u2014", "\u2013",
    }
)
MAX_TEXT = 20_000


@dataclass(frozen=True, slots=True)
class FieldError:
    """One refused field: ``field`` is the decision field's name, ``message`` says why."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


@dataclass(frozen=True)
class Decision:
    item_id: str
    action: Action
    re_review_signal: str | None = None
    owner: str | None = None
    rationale: str | None = None
    reason: str | None = None
    revisit_when: str | None = None
    watch: Any = None  # a machine-checkable watch (see scars.core.watch), a string or a mapping
    watch_base: str | None = None  # the git commit current when an accept with a watch was made
    decided_by: str = ""
    decided_at: str = ""
    reviewed_by: str | None = None
    pending_review: bool = False
    batch_id: str | None = None
    blocked_outcome: BlockedOutcome | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Decision":
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})

    def with_(self, **changes: Any) -> "Decision":
        return replace(self, **changes)


def is_meaningful(value: Any) -> bool:
    """False for None, empty, whitespace-only, punctuation-only and placeholder texts."""
    if value is None:
        return False
    if not isinstance(value, str):
        return False
    text = unicodedata.normalize("NFKC", value).strip()
    if not text:
        return False
    folded = text.casefold()
    if folded in PLACEHOLDERS or folded.rstrip(".").strip() in PLACEHOLDERS:
        return False
    # Nothing but punctuation, symbols or invisible characters.
    if not any(unicodedata.category(ch)[0] in "LN" for ch in text):
        return False
    return True


def _why_not_meaningful(value: Any) -> str:
    if value is None:
        return "is missing"
    if not isinstance(value, str):
        return f"must be text, not {type(value).__name__}"
    if not value.strip():
        return "is empty"
    return f"is a placeholder ({value.strip()!r}); say something a person can act on"


def validate_decision(action: str, **fields_: Any) -> list[FieldError]:
    """Every problem with a decision, one :class:`FieldError` per field (empty list = valid).

    ``fields_`` are Decision fields (re_review_signal, owner, rationale, reason,
    revisit_when, watch, reviewed_by, decided_by …); unknown names are refused too.
    """
    errors: list[FieldError] = []
    known = {f.name for f in fields(Decision)} - {"item_id", "action"}
    for name in fields_:
        if name not in known:
            errors.append(FieldError(name, "is not a decision field"))
    if action not in ACTIONS:
        errors.append(FieldError("action", f"must be one of fix, accept, defer (got {action!r})"))
        return errors
    if action == "accept":
        for name in ACCEPT_REQUIRED:
            value = fields_.get(name)
            if not is_meaningful(value):
                label = FIELD_LABEL[name]
                errors.append(FieldError(name, f"an accept needs a meaningful {label}; it {_why_not_meaningful(value)}"))
    for name, actions in _ONLY_FOR.items():
        value = fields_.get(name)
        if value is not None and value != "" and action not in actions:
            errors.append(FieldError(name, f"applies only to {' / '.join(actions)}, not to {action}"))
    for name in TEXT_FIELDS:
        value = fields_.get(name)
        if value is None:
            continue
        if not isinstance(value, str):
            errors.append(FieldError(name, f"must be text, not {type(value).__name__}"))
        elif len(value) > MAX_TEXT:
            errors.append(FieldError(name, f"is too long ({len(value)} characters; at most {MAX_TEXT})"))
        elif name not in ACCEPT_REQUIRED or action != "accept":
            # Optional texts: absent is fine, but a given one must say something.
            if value != "" and not is_meaningful(value):
                errors.append(FieldError(name, _why_not_meaningful(value)))
    watch = fields_.get("watch")
    if watch is not None and not isinstance(watch, (str, dict)):
        errors.append(FieldError("watch", "must be text or a mapping"))
    elif isinstance(watch, str) and watch and not is_meaningful(watch):
        errors.append(FieldError("watch", _why_not_meaningful(watch)))
    elif watch:
        from scars.core.watch import validate_watch

        problem = validate_watch(watch)
        if problem:
            errors.append(FieldError("watch", problem))
    reviewed_by = fields_.get("reviewed_by")
    decided_by = fields_.get("decided_by")
    if is_meaningful(reviewed_by) and decided_by and reviewed_by.strip().casefold() == str(decided_by).strip().casefold():
        errors.append(FieldError("reviewed_by", "a sign-off must come from a second person, not the one who decided"))
    outcome = fields_.get("blocked_outcome")
    if outcome is not None and outcome not in BLOCKED_OUTCOMES:
        errors.append(FieldError("blocked_outcome", f"must be one of {', '.join(BLOCKED_OUTCOMES)}"))
    first: dict[str, FieldError] = {}
    for e in errors:  # one error per field: the first found is the most useful
        first.setdefault(e.field, e)
    return list(first.values())


def format_errors(errors: list[FieldError]) -> str:
    return "; ".join(str(e) for e in errors)


def now_iso() -> str:
    """Now, ISO 8601 with the local zone offset, to the second."""
    return _dt.datetime.now(_dt.timezone.utc).astimezone().isoformat(timespec="seconds")


def _git_user_name() -> str | None:
    git = shutil.which("git")
    if not git:
        return None
    try:
        out = subprocess.run(
            [git, "config", "user.name"],
            capture_output=True,
            text=True,
            timeout=3,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    name = out.stdout.strip()
    return name if out.returncode == 0 and name else None


def resolve_user(explicit: str | None = None) -> str:
    """Who decides: ``explicit`` (``--as``), then ``SCARS_USER``, then git's ``user.name``,
    then the login name."""
    for candidate in (explicit, os.environ.get("SCARS_USER")):
        if candidate and candidate.strip():
            return candidate.strip()
    name = _git_user_name()
    if name:
        return name
    try:
        return getpass.getuser()
    except Exception:  # no login name in this environment
        return "unknown"


def make_decision(item_id: str, action: str, *, decided_by: str, decided_at: str | None = None, **fields_: Any) -> Decision:
    """A validated Decision; raises DecisionRefused naming every bad field."""
    from scars.core.errors import DecisionRefused

    clean = {k: (v.strip() if isinstance(v, str) else v) for k, v in fields_.items()}
    clean = {k: v for k, v in clean.items() if not (v == "" and k in TEXT_FIELDS)}
    errors = validate_decision(action, decided_by=decided_by, **clean)
    if not item_id or not isinstance(item_id, str):
        errors.insert(0, FieldError("item_id", "is required"))
    if errors:
        raise DecisionRefused(f"decision refused for {item_id}: {format_errors(errors)}", errors)
    return Decision(item_id=item_id, action=action, decided_by=decided_by, decided_at=decided_at or now_iso(), **clean)
