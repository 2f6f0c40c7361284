"""``iteration-log.yaml`` (formats.md §1.5): read in any era (:func:`read_iteration_log`),
written in the seed (era B) form.

Principles (reliability notes §4–5):

* **Earlier bytes never change.** A new round is rendered on its own (ruamel, round-trip
  settings) and inserted as text after the last round of ``rounds:``; the file before the
  insertion point stays byte for byte, comments, quoting and block styles included. The
  result is loaded back and must equal the old data plus the new round, else the text path
  is abandoned.
* **Full rewrites only when provably safe.** The fallback loads the file with ruamel
  round-trip (``preserve_quotes=True``, width 4096, indentation detected from the file) and
  first checks that load + dump of the *untouched* file reproduces it byte for byte (the
  canary); a file that fails the canary is never rewritten (:class:`LogNotWritable`).
* **Compare before replace.** The caller passes the fingerprint of what it read; when the
  file changed on disk since then, a disjoint change (a comment, another round) is merged,
  anything else raises :class:`~scars.core.errors.ChangedOnDisk` saying what changed.
* Every write is :func:`scars.core.storage.durable.atomic_write`.

A round is a plain mapping in era-B key order (see :data:`ROUND_KEYS`); text values are
written double-quoted (newlines and controls escaped), enums and numbers plain.
"""

from __future__ import annotations

import importlib
import io
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from scars.core.errors import ChangedOnDisk, PathNotFound
from scars.core.model import IterationLog, Problem, Round
from scars.core.storage import confine, paths
from scars.core.storage.cache import same_file
from scars.core.storage.durable import Fingerprint, atomic_write
from scars.core.values import as_dict, as_text, opt_text

# The YAML reader (storage/safe_read, which imports PyYAML) is imported by the one function that
# parses the log with it, through importlib: a session opened over a cached feature writes and
# reads this file's bytes without it (its first paint: tests/tui/app/test_first_paint_imports.py),
# and scars.core imports no own module inside a function (tests/core/test_purity.py). Named here
# for the type checker and the import contracts.
SAFE_READ = "scars.core.storage.safe_read"
if TYPE_CHECKING:
    from scars.core.storage import safe_read  # noqa: F401

LOG_NAME = "iteration-log.yaml"

# Era-B key order of a round (formats.md §1.5); unknown keys follow in their given order.
ROUND_KEYS: tuple[str, ...] = (
    "round",
    "signal_lost_before",
    "budget_context",
    "items_triaged",
    "triage_result",
    "fixes_applied",
    "fixes_scar_count",
    "budget_spent",
    "evidence_gained",
    "residual_risk",
    "signal_lost_after",
    "decision",
    "decision_reason",
)
BUDGET_CONTEXT_KEYS = (
    "remaining_rounds_at_start",
    "stagnation_count_at_start",
    "net_rot_previous_round",
    "strategy_hint",
)
ACCEPT_KEYS = ("description", "re_review_signal", "owner", "rationale")
DECISIONS = ("continue", "stop", "forced_stop", "interrupted")
# Values written plain (not quoted): enums.
_PLAIN_KEYS = frozenset({"decision", "strategy_hint"})
DEFAULT_INDENT = (2, 4, 2)  # mapping, sequence, offset — the upstream form


class LogNotWritable(ChangedOnDisk):
    """iteration-log.yaml cannot be updated without changing bytes scars must keep."""


# --------------------------------------------------------------------------- YAML helpers


def _rt_yaml(indent: tuple[int, int, int] = DEFAULT_INDENT):
    # lazy: ruamel.yaml (~15 ms) only when a log is written; reading it (scars status) never loads it
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 4096
    y.allow_unicode = True
    y.indent(mapping=indent[0], sequence=indent[1], offset=indent[2])
    return y


def safe_load(data: bytes | str) -> Any:
    """Plain data of a YAML document (PyYAML C loader when present; nesting-limited)."""
    # lazy: PyYAML only when the log is parsed (opening a session over a cached feature reads its bytes only)
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml.load(data, Loader=loader)  # a safe loader


_KEY_LINE = re.compile(r"^( *)([^\s#:\-][^:#]*?):(\s|$)")
_SEQ_LINE = re.compile(r"^( *)- ")


def detect_indent(text: str) -> tuple[int, int, int]:
    """(mapping, sequence, offset) as used by the file's first nested mapping and sequence."""
    mapping = sequence = offset = None
    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    for prev, cur in zip(lines, lines[1:]):
        pk = _KEY_LINE.match(prev)
        if not pk or prev.rstrip().split("#")[0].rstrip()[-1:] != ":":
            continue  # prev must be a bare `key:` opening a block
        base = len(pk.group(1))
        seq = _SEQ_LINE.match(cur)
        if seq and offset is None:
            offset = len(seq.group(1)) - base
            rest = cur[len(seq.group(0)) :]
            extra = len(rest) - len(rest.lstrip(" "))
            sequence = offset + 2 + extra
        elif not seq and mapping is None:
            ck = _KEY_LINE.match(cur)
            if ck and len(ck.group(1)) > base:
                mapping = len(ck.group(1)) - base
        if mapping is not None and offset is not None:
            break
    m, s, o = DEFAULT_INDENT
    mapping = mapping or m
    if offset is None or offset < 0:
        sequence, offset = s, o
    return mapping, max(sequence or s, offset + 2), offset


def dump_rt(data: Any, indent: tuple[int, int, int]) -> str:
    buf = io.StringIO()
    _rt_yaml(indent).dump(data, buf)
    return buf.getvalue()


def roundtrip(text: str, indent: tuple[int, int, int] | None = None) -> str:
    """load + dump with the round-trip settings (the canary compares this with ``text``)."""
    ind = indent or detect_indent(text)
    y = _rt_yaml(ind)
    return dump_rt(y.load(text), ind)


def canary(text: str) -> bool:
    """True when load + dump of the untouched file reproduces it byte for byte."""
    try:
        return roundtrip(text) == text
    except Exception:  # noqa: BLE001 - ruamel's errors are many: any of them means no byte-exact round trip
        return False


# --------------------------------------------------------------------------- rendering


def _styled(value: Any, key: str | None = None) -> Any:
    """A ruamel node for ``value``: texts double-quoted, enums plain, order kept."""
    # lazy: ruamel.yaml (~15 ms) only when a log is written; reading it (scars status) never loads it
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    if isinstance(value, dict):
        m = CommentedMap()
        for k, v in value.items():
            m[k] = _styled(v, k)
        return m
    if isinstance(value, (list, tuple)):
        s = CommentedSeq(_styled(v, key) for v in value)
        if not value:
            s.fa.set_flow_style()
        return s
    if isinstance(value, str):
        if key in _PLAIN_KEYS and re.fullmatch(r"[a-z_]+", value):
            return value
        return DoubleQuotedScalarString(value)
    return value


def order_round(entry: dict[str, Any]) -> dict[str, Any]:
    """The round mapping in era-B key order (unknown keys after, as given)."""
    out: dict[str, Any] = {k: entry[k] for k in ROUND_KEYS if k in entry}
    for k, v in entry.items():
        if k not in out:
            out[k] = v
    if isinstance(out.get("budget_context"), dict):
        bc = out["budget_context"]
        out["budget_context"] = {
            **{k: bc[k] for k in BUDGET_CONTEXT_KEYS if k in bc},
            **{k: v for k, v in bc.items() if k not in BUDGET_CONTEXT_KEYS},
        }
    return out


def render_round(entry: dict[str, Any], indent: tuple[int, int, int] = DEFAULT_INDENT) -> str:
    """The text of one round as an item of ``rounds:`` (lines start at the sequence's column)."""
    text = dump_rt({"rounds": [_styled(order_round(entry))]}, indent)
    assert text.startswith("rounds:\n")
    return text[len("rounds:\n") :]


def render_new_log(
    feature: str,
    signal_lost_initial: int,
    rounds: Iterable[dict[str, Any]] = (),
    *,
    max_rounds: int = 3,
    reviewer_retry_limit: int = 2,
) -> str:
    """A new iteration-log.yaml with its header keys and the given rounds."""
    # lazy: ruamel.yaml (~15 ms) only when a log is written; reading it (scars status) never loads it
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    head = dump_rt(
        {
            "feature": DoubleQuotedScalarString(feature),
            "signal_lost_initial": signal_lost_initial,
        },
        DEFAULT_INDENT,
    )
    budget = dump_rt(
        {"budget": {"max_rounds": max_rounds, "reviewer_retry_limit": reviewer_retry_limit}}, DEFAULT_INDENT
    )
    rounds = list(rounds)
    body = "rounds:\n" + "".join(render_round(r) for r in rounds) if rounds else "rounds: []\n"
    return head + "\n" + budget + "\n" + body


# --------------------------------------------------------------------------- appending


_ROUNDS_LINE = re.compile(r"^rounds:[ \t]*(?P<rest>(\[\s*\]|null|~)?)[ \t]*(#.*)?$")
_TOP_LEVEL = re.compile(r"^[^\s#]")


def _find_rounds(lines: list[str]) -> int | None:
    for i, ln in enumerate(lines):
        if _ROUNDS_LINE.match(ln.rstrip("\r\n")):
            return i
    return None


def append_round_text(text: str, entry: dict[str, Any]) -> str:
    """``text`` with ``entry`` inserted as the last round; every earlier byte kept.

    Raises :class:`LogNotWritable` when the insertion cannot be proven right (the result,
    loaded back, must equal the old data plus the round).
    """
    old = _plain(text)
    if not isinstance(old, dict):
        raise LogNotWritable("iteration-log.yaml is not a mapping; scars will not rewrite it")
    old_rounds = old.get("rounds")
    if old_rounds is not None and not isinstance(old_rounds, list):
        raise LogNotWritable("iteration-log.yaml `rounds` is not a list; scars will not rewrite it")
    indent = detect_indent(text)
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    block = render_round(entry, indent)
    idx = _find_rounds(lines)
    if idx is None:
        if "rounds" in old:
            raise LogNotWritable("iteration-log.yaml has a `rounds` key scars cannot locate in the text")
        new_text = "".join(lines) + ("" if not lines or lines[-1].strip() == "" else "\n") + "rounds:\n" + block
    else:
        m = _ROUNDS_LINE.match(lines[idx].rstrip("\r\n"))
        if m and m.group("rest"):  # `rounds: []` / `rounds: null` -> a block sequence
            comment = lines[idx].rstrip("\r\n")[m.end("rest") :]
            lines[idx] = "rounds:" + (comment if comment.strip() else "") + "\n"
        end = len(lines)
        for j in range(idx + 1, len(lines)):
            if _TOP_LEVEL.match(lines[j]):
                end = j
                break
        if end < len(lines):  # leave column-0 comments and blank lines that lead into the next key
            while end - 1 > idx and (lines[end - 1].strip() == "" or lines[end - 1].startswith("#")):
                end -= 1
        before, after = lines[:end], lines[end:]
        sep = "\n" if _rounds_are_spaced(lines[idx + 1 : end], indent) else ""
        if before[-1].strip() == "":
            sep = ""
        new_text = "".join(before) + sep + block + "".join(after)
    new = _plain(new_text)
    expect = dict(old)
    expect["rounds"] = list(old_rounds or []) + [_plain_round(entry)]
    if not isinstance(new, dict) or new != expect:
        raise LogNotWritable("appending the round as text did not give the expected document")
    return new_text


def _rounds_are_spaced(body: list[str], indent: tuple[int, int, int]) -> bool:
    """True when the existing rounds are separated by blank lines (keep that style)."""
    dash = " " * indent[2] + "- "
    return any(body[k].startswith(dash) and body[k - 1].strip() == "" for k in range(1, len(body)))


def _plain(text: str) -> Any:
    try:
        return safe_load(text)
    except Exception as exc:
        raise LogNotWritable(
            f"iteration-log.yaml does not parse as YAML ({type(exc).__name__}); scars will not rewrite it"
        ) from exc


def _plain_round(entry: dict[str, Any]) -> Any:
    return safe_load(render_round(entry))[0]


def append_round_rt(text: str, entry: dict[str, Any]) -> str:
    """Fallback: ruamel round-trip rewrite, only when the canary holds."""
    indent = detect_indent(text)
    y = _rt_yaml(indent)
    try:
        doc = y.load(text)
    except Exception as exc:
        raise LogNotWritable(
            f"iteration-log.yaml does not load ({type(exc).__name__}); scars will not rewrite it"
        ) from exc
    if dump_rt(doc, indent) != text:
        raise LogNotWritable(
            "iteration-log.yaml uses constructs a rewrite would change (load + dump is not byte-identical); "
            "scars will not rewrite it. The round is kept in the journal (.scars/journal.jsonl)."
        )
    # lazy: ruamel.yaml (~15 ms) only when a log is written; reading it (scars status) never loads it
    from ruamel.yaml.comments import CommentedSeq

    if not isinstance(doc, dict):
        raise LogNotWritable("iteration-log.yaml is not a mapping; scars will not rewrite it")
    rounds = doc.get("rounds")
    if rounds is not None and not isinstance(rounds, list):
        raise LogNotWritable("iteration-log.yaml `rounds` is not a list; scars will not rewrite it")
    if rounds is None:
        rounds = CommentedSeq()
        doc["rounds"] = rounds
    rounds.append(_styled(order_round(entry)))
    new_text = dump_rt(doc, indent)
    old = _plain(text)
    expect = dict(old)
    expect["rounds"] = list(old.get("rounds") or []) + [_plain_round(entry)]
    if _plain(new_text) != expect:
        raise LogNotWritable("rewriting iteration-log.yaml did not give the expected document")
    return new_text


def add_round(text: str, entry: dict[str, Any]) -> str:
    """``text`` plus one round: the text insertion when provable, else the canary-guarded rewrite."""
    try:
        return append_round_text(text, entry)
    except LogNotWritable:
        return append_round_rt(text, entry)


# --------------------------------------------------------------------------- the file


def round_numbers(data: Any) -> list[int]:
    """The round numbers a log document holds: each ``rounds`` entry's integer ``round`` (a
    ``rounds`` that is not a list holds none, as :func:`read_iteration_log` reads it)."""
    rounds = data.get("rounds") if isinstance(data, dict) else None
    if not isinstance(rounds, list):
        return []
    return [r["round"] for r in rounds if isinstance(r, dict) and isinstance(r.get("round"), int)]


def round_numbers_read(log: IterationLog) -> list[int]:
    """:func:`round_numbers` of the document ``log`` was read from, without parsing it again (each
    of its rounds keeps its entry as read: ``Round.raw``; entries that are no mapping, which
    round_numbers skips, are not rounds)."""
    return [r.raw["round"] for r in log.rounds if isinstance(r.raw, dict) and isinstance(r.raw.get("round"), int)]


def _describe_change(base: Any, now: Any) -> list[str]:
    changes: list[str] = []
    if not isinstance(base, dict) or not isinstance(now, dict):
        return ["the file is no longer a YAML mapping"]
    for key in sorted(set(base) | set(now), key=str):
        if key == "rounds":
            continue
        if base.get(key) != now.get(key):
            changes.append(f"`{key}` changed")
    b_rounds = base.get("rounds") or []
    n_rounds = now.get("rounds") or []
    for i, r in enumerate(b_rounds):
        num = r.get("round", i + 1) if isinstance(r, dict) else i + 1
        if i >= len(n_rounds):
            changes.append(f"round {num} was removed")
        elif n_rounds[i] != r:
            keys = (
                sorted(k for k in set(r) | set(n_rounds[i]) if r.get(k) != n_rounds[i].get(k))
                if isinstance(n_rounds[i], dict) and isinstance(r, dict)
                else []
            )
            changes.append(f"round {num} was edited" + (f" ({', '.join(map(str, keys))})" if keys else ""))
    return changes


class IterationLogFile:
    """iteration-log.yaml of one feature: read with a fingerprint, append rounds safely."""

    def __init__(self, feature_dir: str | Path, *, root: str | Path | None = None):
        self.path = Path(feature_dir) / LOG_NAME
        # The repository the write stays in (storage/confine; None: the feature directory is its own).
        self.root = Path(feature_dir) if root is None else Path(root)
        self.base_text: str | None = None
        self.base_fp: Fingerprint | None = None
        self._rounds: tuple[str, list[int]] | None = None  # (the text, its round numbers)
        self.refusal: str | None = None  # why the read rule refused the file (None: read, or absent)
        self.reload()

    def _read(self) -> tuple[bytes, Fingerprint] | tuple[None, None]:
        """The file and its fingerprint, read by the read rule inside the repository
        (``storage/safe_read``); one the rule refuses (a link leading out) reads as absent and
        says why in :attr:`refusal` — its write is refused by the write rule."""
        try:
            got = paths.read_with_fingerprint(self.path, root=self.root, what=LOG_NAME)
        except paths.Unreadable as exc:
            self.refusal = str(exc)
            return None, None
        self.refusal = None
        return got

    def reload(self) -> None:
        data, fp = self._read()
        self.base_text = None if data is None else data.decode("utf-8")
        self.base_fp = fp

    @property
    def exists(self) -> bool:
        return self.base_text is not None

    def data(self) -> Any:
        return None if self.base_text is None else _plain(self.base_text)

    def rounds_on_disk(self) -> list[int]:
        """The round numbers of the text read (:func:`round_numbers`), parsed once per text."""
        text = self.base_text
        if text is None:
            return []
        known = self._rounds
        if known is None or known[0] is not text:
            known = self._rounds = (text, round_numbers(self.data()))
        return list(known[1])

    def assume_read(self, log: IterationLog | None, stamp: Any) -> None:
        """``log``, read from this file when its cache stamp (``storage.cache``: stat, taken before
        that read) was ``stamp``: when the text held now was read from the file in that same
        state, its round numbers are the ones ``log`` was read with (the app's first screen shows
        the next round's number without loading YAML to parse the file a second time)."""
        if log is not None and self.base_text is not None and same_file(stamp, self.base_fp):
            self._rounds = (self.base_text, round_numbers_read(log))

    def append_rounds(
        self,
        entries: list[dict[str, Any]],
        *,
        feature: str,
        signal_lost_initial: int,
        max_rounds: int = 3,
        reviewer_retry_limit: int = 2,
    ) -> list[int]:
        """Append the rounds not on disk yet (idempotent); returns the numbers written.

        A round whose number is already on disk is skipped when equal; when it differs, the
        file and the journal disagree and :class:`ChangedOnDisk` is raised.
        """
        # Refused before a byte of it is read when the write rule refuses its write (storage/confine).
        confine.check(self.path, self.root)
        for _attempt in range(3):
            raw, fp = self._read()
            current = None if raw is None else raw.decode("utf-8")
            changed = (self.base_fp is None) != (fp is None) or (fp is not None and not fp.same_content(self.base_fp))
            if (self.base_fp is not None or fp is not None) and changed:
                self._check_disjoint(current)
            if current is None:
                text = render_new_log(
                    feature, signal_lost_initial, max_rounds=max_rounds, reviewer_retry_limit=reviewer_retry_limit
                )
            else:
                text = current
            on_disk = {}
            for r in (_plain(text).get("rounds") or []) if isinstance(_plain(text), dict) else []:
                if isinstance(r, dict) and isinstance(r.get("round"), int):
                    on_disk[r["round"]] = r
            written: list[int] = []
            for e in entries:
                num: Any = e.get("round")
                if num in on_disk:
                    if on_disk[num] != _plain_round(e):
                        raise ChangedOnDisk(
                            f"{self.path.name}: round {num} on disk differs from the round scars recorded; "
                            "not overwritten (run `scars log verify` to compare)"
                        )
                    continue
                text = add_round(text, e)
                written.append(num)
            if not written and current is not None:
                self.base_text, self.base_fp = current, fp
                return []
            # compare-and-swap: the file must still be what we based the change on
            if not _same(self._read()[1], fp):
                continue
            atomic_write(self.path, text.encode("utf-8"), root=self.root)
            self.reload()
            return written
        raise ChangedOnDisk(f"{self.path} keeps changing while scars writes it; try again")

    def _check_disjoint(self, current: str | None) -> None:
        """A change since our read is fine when every round we read is still there, unchanged."""
        if current is None:
            raise ChangedOnDisk(f"{self.path} was deleted since scars read it; not recreated (run `scars log verify`)")
        if self.base_text is None:
            now = _plain(current)
            if isinstance(now, dict):
                return  # someone created it meanwhile: append to theirs
            raise ChangedOnDisk(f"{self.path} was created by someone else and is not a YAML mapping")
        base, now = _plain(self.base_text), _plain(current)
        changes = _describe_change(base, now)
        if changes:
            raise ChangedOnDisk(
                f"{self.path} changed on disk since scars read it: {'; '.join(changes)}. Nothing was overwritten."
            )


def _same(a: Fingerprint | None, b: Fingerprint | None) -> bool:
    if a is None or b is None:
        return a is b
    return a == b


def _int_or_none(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _str_tuple(v: Any) -> tuple[str, ...]:
    if isinstance(v, list):
        return tuple(as_text(x) if not isinstance(x, dict) else as_text(x.get("description", x)) for x in v)
    if v is None:
        return ()
    return (as_text(v),)


def read_iteration_log(path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None) -> IterationLog:
    """Read iteration-log.yaml of any era (through ``storage/safe_read``: a symlink only inside
    ``root`` when given).

    Raises ``PathNotFound`` when the file is missing and ``safe_read.Unreadable`` when it is
    not usable YAML (not a mapping included). Missing ``budget`` gives the defaults 3/2 with
    ``budget_present=False``; partial rounds (``decision: interrupted``) are read with the
    missing fields as None; unknown keys stay in each ``Round.raw``.
    """
    safe_read = importlib.import_module(SAFE_READ)  # the YAML reader: not for a session over a cached feature
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        raise PathNotFound.missing(p)
    try:
        loaded = safe_read.load_yaml(p, root=root)
    except FileNotFoundError:  # a dangling symlink
        raise paths.Unreadable("not a regular file") from None
    data = loaded.value
    if not isinstance(data, dict):
        raise paths.Unreadable("not a mapping", 1)
    warnings: list[Problem] = [Problem(p.name, ln, reason, "warning") for ln, reason in loaded.problems]

    def warn(line: int | None, message: str) -> None:
        warnings.append(Problem(p.name, line, message, "warning"))

    budget: Any = data.get("budget")
    budget_present = isinstance(budget, dict)
    max_rounds, retry = 3, 2
    if budget_present:
        mr = _int_or_none(budget.get("max_rounds"))
        rr = _int_or_none(budget.get("reviewer_retry_limit"))
        max_rounds = mr if mr is not None else 3
        retry = rr if rr is not None else 2
    elif budget is not None:
        warn(loaded.key_lines.get("budget"), "budget is not a mapping; defaults 3/2 used")
    rounds: list[Round] = []
    raw_rounds = data.get("rounds")
    if raw_rounds is not None and not isinstance(raw_rounds, list):
        warn(loaded.key_lines.get("rounds"), "rounds is not a list; no rounds read")
        raw_rounds = []
    round_lines = loaded.item_lines.get("rounds", [])
    for n, r in enumerate(raw_rounds or []):
        line = round_lines[n] if n < len(round_lines) else None
        if not isinstance(r, dict):
            warn(line, f"rounds[{n}] is not a mapping; skipped")
            continue
        number = _int_or_none(r.get("round"))
        if number is None:
            warn(line, f"rounds[{n}] has no round number; numbered {n + 1}")
            number = n + 1
        tr = as_dict(r.get("triage_result"))
        accepts = (
            tuple(
                a if isinstance(a, dict) else {"description": as_text(a)}
                for a in (tr.get("accept") or [])
                if a is not None
            )
            if isinstance(tr.get("accept"), (list, type(None)))
            else ()
        )
        bc = r.get("budget_context") if isinstance(r.get("budget_context"), dict) else None
        era: Literal["A", "B"] = "A" if (bc is None or any("expiry_date" in a for a in accepts)) else "B"
        decision = opt_text(r.get("decision"))
        if decision != "interrupted":
            for req in ("signal_lost_before", "signal_lost_after", "decision"):
                if req not in r:
                    warn(line, f"round {number} has no {req}")
        rounds.append(
            Round(
                round=number,
                signal_lost_before=_int_or_none(r.get("signal_lost_before")),
                signal_lost_after=_int_or_none(r.get("signal_lost_after")),
                decision=decision,
                decision_reason=opt_text(r.get("decision_reason")),
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
        feature=opt_text(data.get("feature")),
        signal_lost_initial=_int_or_none(data.get("signal_lost_initial")),
        max_rounds=max_rounds,
        reviewer_retry_limit=retry,
        budget_present=budget_present,
        rounds=tuple(rounds),
        warnings=tuple(warnings),
    )
