"""Machine-checkable watches on re-review signals: an accepted risk that comes back by itself.

An accept may carry, besides its prose ``re_review_signal``, a ``watch`` (``Decision.watch``,
or a ``watch`` key of an accept entry in iteration-log.yaml). Three forms, one per accept:

* ``path-changed: <glob>`` — fires when a file matching the glob changed in git (committed,
  staged, unstaged, deleted, or new and untracked) since the *base* commit: the commit that was
  ``HEAD`` when the accept was made.
* ``pattern: <regex> in <glob>`` — fires when the regex (Python ``re`` syntax) matches in a
  file matching the glob. The last `` in `` separates regex and glob. Evaluated in a child
  process with a wall-clock limit (:data:`REGEX_TIMEOUT` seconds in all) over at most
  :data:`MAX_FILES` files of at most :data:`MAX_FILE_BYTES` bytes each (a longer file is
  searched in its first :data:`MAX_FILE_BYTES` bytes; the result says so).
* ``recurs`` — fires when an item with the same normalised text (whitespace collapsed, case
  folded) is open in a scar report written after the accept (a report not in the base commit
  or changed since it; without git: modified after the accept's ``decided_at``), other than
  the accepted item itself.

Globs are relative to the repository root (the directory holding ``changes/``): ``*`` and
``?`` stay inside one path segment, ``**`` spans segments, ``[...]`` is a character class.
A glob that is absolute or climbs out with ``..`` is refused.

A watch that cannot be evaluated is *unobservable* — never quiet: no git (for path-changed),
no base commit, a glob that matches no file any more, an invalid regex, a regex that runs out
of time, an accepted item whose text is unknown (recurs).

The base commit is taken, in this order, from the watch itself (a mapping's ``base``), from
``watch_base`` of the accept, from ``<feature>/.scars/watches.jsonl`` (see
:func:`record_base`), or from the last commit dated at or before the accept's ``decided_at``
(``git rev-list -1 --before``); a base found that last way is recorded in watches.jsonl the
first time so it stays fixed.

``watches.jsonl`` is an append-only log (checksummed lines, the journal's framing) of ``base``
records and ``fired`` records; a fired record is what ``scars status`` counts as reopened.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from scars.core.clock import now_iso
from scars.core.git import GitUnavailable, changed_since, commit_at, current_commit, git_toplevel, run_git, tree_files
from scars.core.model import Feature, ScarItem
from scars.core.records import field, record
from scars.core.samsara.rounds import field_of as _attr
from scars.core.samsara.rounds import norm as _norm
from scars.core.sanitize import one_line
from scars.core.storage.durable import append_record, ensure_private_dir
from scars.core.storage.journal import frame, unframe
from scars.core.storage.paths import Unreadable, read_with_fingerprint

WATCHES_NAME = "watches.jsonl"


REGEX_TIMEOUT = 5.0  # seconds, for all files of one pattern watch together


MAX_FILE_BYTES = 1 << 20  # 1 MiB searched per file


MAX_FILES = 2000


MAX_SPEC = 2000


Kind = Literal["path-changed", "pattern", "recurs"]


State = Literal["fired", "quiet", "unobservable"]


class WatchSyntaxError(ValueError):
    """A watch text that is not one of the three forms; the message says which are valid."""


@record(slots=True)
class Watch:
    kind: Kind
    raw: str
    glob: str | None = None
    regex: str | None = None
    base: str | None = None  # base commit given with the watch (mapping form)

    def describe(self) -> str:
        if self.kind == "path-changed":
            return f"path-changed: {self.glob}"
        if self.kind == "pattern":
            return f"pattern: {self.regex} in {self.glob}"
        return "recurs"


@record(slots=True)
class WatchedAccept:
    """An accepted item carrying a watch, from the journal or from iteration-log.yaml."""

    item_id: str | None
    text: str
    spec: Any  # the watch as stored: str or mapping
    decided_at: str = ""
    base: str | None = None
    origin: str = "journal"  # "journal" | "iteration-log round N"
    item_file: str | None = None


@record(slots=True)
class WatchResult:
    item_id: str | None
    text: str
    watch: str  # the watch's text
    state: State
    cause: str  # why it fired, or why it cannot be evaluated, or what was checked
    figures: dict[str, Any] = field(default_factory=dict)
    origin: str = "journal"

    def to_dict(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "text": self.text,
            "watch": self.watch,
            "state": self.state,
            "cause": self.cause,
            "figures": dict(self.figures),
            "origin": self.origin,
        }


_FORMS = "path-changed: <glob> | pattern: <regex> in <glob> | recurs"


def _q(text: str | None) -> str:
    """A watch's text quoted as it was written, for a message or a cause (repr doubled every
    backslash of a regex: 'retry\\\\s+' for retry\\s+); made one inert line."""
    return "'" + one_line(text or "") + "'"


def _check_glob(glob: str) -> str:
    g = glob.strip()
    if not g:
        raise WatchSyntaxError("the glob is empty")
    if g.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:[\\/]", g) or g.startswith("~"):
        raise WatchSyntaxError(f"the glob {_q(g)} is absolute; write it relative to the repository root")
    if ".." in re.split(r"[\\/]", g):
        raise WatchSyntaxError(f"the glob {_q(g)} climbs out of the repository with '..'")
    if any(ord(c) < 32 for c in g):
        raise WatchSyntaxError("the glob contains control characters")
    return g


def parse_watch(spec: Any) -> Watch:
    """Parse a watch (text, or a mapping ``{spec|path-changed|pattern+in|recurs, base?}``)."""
    base = None
    if isinstance(spec, Mapping):
        base = spec.get("base") or spec.get("watch_base")
        base = str(base) if base else None
        if "spec" in spec or "watch" in spec:
            w = parse_watch(spec.get("spec", spec.get("watch")))
            return Watch(w.kind, w.raw, w.glob, w.regex, base)
        if "path-changed" in spec:
            g = _check_glob(str(spec["path-changed"]))
            return Watch("path-changed", f"path-changed: {g}", glob=g, base=base)
        if "pattern" in spec:
            g = _check_glob(str(spec.get("in", "")))
            rx = str(spec["pattern"])
            return Watch("pattern", f"pattern: {rx} in {g}", glob=g, regex=rx, base=base)
        if spec.get("recurs"):
            return Watch("recurs", "recurs", base=base)
        raise WatchSyntaxError(f"unknown watch mapping; use one of: {_FORMS}")
    if not isinstance(spec, str):
        raise WatchSyntaxError(f"a watch must be text, not {type(spec).__name__}; use one of: {_FORMS}")
    text = spec.strip()
    if len(text) > MAX_SPEC:
        raise WatchSyntaxError(f"the watch is too long ({len(text)} characters; at most {MAX_SPEC})")
    if "\n" in text:
        raise WatchSyntaxError("a watch is one line")
    if text.casefold() == "recurs":
        return Watch("recurs", "recurs")
    head, sep, rest = text.partition(":")
    key = head.strip().casefold()
    if not sep or key not in ("path-changed", "pattern"):
        raise WatchSyntaxError(f"unknown watch {_q(text)}; use one of: {_FORMS}")
    rest = rest.strip()
    if key == "path-changed":
        g = _check_glob(rest)
        return Watch("path-changed", f"path-changed: {g}", glob=g)
    rx, sep, glob = rest.rpartition(" in ")
    if not sep or not rx.strip():
        raise WatchSyntaxError(f"a pattern watch reads 'pattern: <regex> in <glob>' (got {_q(text)})")
    g = _check_glob(glob)
    return Watch("pattern", f"pattern: {rx.strip()} in {g}", glob=g, regex=rx.strip())


def validate_watch(spec: Any) -> str | None:
    """None when the watch parses (or is empty), else the message to show next to the field.

    An invalid regex is reported here too; at check time it makes the watch unobservable.
    """
    if spec is None or (isinstance(spec, str) and not spec.strip()):
        return None
    try:
        w = parse_watch(spec)
    except WatchSyntaxError as exc:
        return str(exc)
    if w.regex is not None:
        try:
            re.compile(w.regex)
        except re.error as exc:
            return f"invalid regex {_q(w.regex)}: {exc}"
    return None


def glob_to_regex(glob: str) -> re.Pattern[str]:
    """``*``/``?`` within a segment, ``**`` across segments, ``[...]`` classes; whole-path match."""
    i, n, out = 0, len(glob), []
    while i < n:
        c = glob[i]
        if c == "*":
            if glob.startswith("**", i):
                i += 2
                if i < n and glob[i] == "/":
                    i += 1
                    out.append("(?:.*/)?")
                else:
                    out.append(".*")
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = glob.find("]", i + 2 if i + 1 < n and glob[i + 1] in "!^" else i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j]
                neg = body.startswith(("!", "^"))
                body = "".join(ch if ch == "-" else re.escape(ch) for ch in (body[1:] if neg else body))
                piece = "[" + ("^" if neg else "") + body + "]"
                try:
                    re.compile(piece)
                except re.error:  # e.g. a reversed range: the bracket is literal
                    out.append(re.escape(c))
                else:
                    out.append(piece)
                    i = j
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z", re.DOTALL)


def match_paths(glob: str, paths: Iterable[str]) -> list[str]:
    g = glob.replace("\\", "/")
    while g.startswith("./"):
        g = g[2:]
    rx = glob_to_regex(g)
    return [p for p in paths if rx.match(p)]


def _walk_files(root: Path, limit: int = 200_000) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".scars", "node_modules", "__pycache__")]
        rel = os.path.relpath(dirpath, root)
        for f in filenames:
            out.append(f if rel == "." else f"{rel}/{f}".replace(os.sep, "/"))
            if len(out) >= limit:
                return sorted(out)
    return sorted(out)


_CHILD = r"""
import json, re, sys
job = json.loads(sys.stdin.read())
rx = re.compile(job["regex"], re.MULTILINE)
res = {"match": None, "truncated": [], "searched": 0, "unreadable": []}
for path, rel in job["files"]:
    try:
        with open(path, "rb") as f:
            data = f.read(job["cap"] + 1)
    except OSError as e:
        res["unreadable"].append(rel)
        continue
    if len(data) > job["cap"]:
        data = data[: job["cap"]]
        res["truncated"].append(rel)
    text = data.decode("utf-8", "replace")
    res["searched"] += 1
    m = rx.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        res["match"] = {"file": rel, "line": line, "text": m.group(0)[:200]}
        break
print(json.dumps(res))
"""


def search_bounded(
    regex: str, files: list[tuple[str, str]], *, timeout: float | None = None, cap: int | None = None
) -> dict[str, Any]:
    """Search ``files`` ([(absolute path, shown path)]) for ``regex`` in a child process.

    Returns the child's result, or ``{"timeout": True}`` when it ran out of time (the child
    is killed). The regex must already compile.
    """
    # lazy: subprocess (~4 ms) only when a search runs, not for a warm `scars status` that imports this module
    import subprocess

    job = json.dumps({"regex": regex, "files": files, "cap": cap if cap is not None else MAX_FILE_BYTES})
    try:
        cp = subprocess.run(
            [sys.executable, "-I", "-S", "-c", _CHILD],
            input=job.encode("utf-8"),
            capture_output=True,
            timeout=timeout if timeout is not None else REGEX_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        return {"timeout": True}
    if cp.returncode != 0:
        return {"error": cp.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["child failed"]}
    return json.loads(cp.stdout.decode("utf-8"))


def watches_path(feature_dir: str | os.PathLike) -> Path:
    return Path(feature_dir) / ".scars" / WATCHES_NAME


def read_watch_log(feature_dir: str | os.PathLike) -> list[dict[str, Any]]:

    p = watches_path(feature_dir)
    try:  # by the read rule: a watches.jsonl (or .scars/) linked out of the feature is never opened
        data, _fp = read_with_fingerprint(p, root=feature_dir, what=WATCHES_NAME)
    except (OSError, Unreadable):
        return []
    if data is None:
        return []
    out = []
    for line in data.split(b"\n"):
        if not line.strip():
            continue
        rec = unframe(line)
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _append(
    feature_dir: str | os.PathLike, record: dict[str, Any], *, root: str | os.PathLike | None = None
) -> dict[str, Any]:
    """Append a watch record to ``.scars/watches.jsonl``, inside ``root`` (the repository; None: the
    feature directory is its own) by the write rule; made private (0600 / 0700)."""
    root = feature_dir if root is None else root
    ensure_private_dir(Path(feature_dir) / ".scars", root=root)
    record = {"v": 1, "at": now_iso(), **record}
    append_record(watches_path(feature_dir), frame(record), root=root, private=True)
    return record


def _spec_text(spec: Any) -> str:
    try:
        return parse_watch(spec).describe()
    except WatchSyntaxError:
        return str(spec)


def record_base(
    feature_dir: str | os.PathLike,
    item_id: str,
    spec: Any,
    *,
    text: str = "",
    base: str | None = None,
    decided_at: str = "",
) -> str | None:
    """Record the base commit of an accept's watch (HEAD now unless given). Call it when the
    accept is made; the caller holds the feature lock. Returns the commit recorded (None when
    there is no git history, in which case nothing is written)."""
    commit = base or current_commit(feature_dir)
    if not commit:
        return None
    _append(
        feature_dir,
        {
            "type": "base",
            "item_id": item_id,
            "watch": _spec_text(spec),
            "base": commit,
            "text": text,
            "decided_at": decided_at,
        },
    )
    return commit


def reopened_items(feature_dir: str | os.PathLike) -> dict[str, dict[str, Any]]:
    """item_id -> the latest ``fired`` record (the cause) of items a watch reopened."""
    out: dict[str, dict[str, Any]] = {}
    for rec in read_watch_log(feature_dir):
        if rec.get("type") == "fired" and rec.get("item_id"):
            out[str(rec["item_id"])] = rec
    return out


def watched_accepts(feature: Feature, decisions: Mapping[str, Any] | None = None) -> list[WatchedAccept]:
    """Accepts carrying a watch: current decisions first, then accept entries of the log
    (matched to their items by the one matcher, ``feature.log_matches``) that no decision in
    scars overrides; a decision carried from the log is read from the log itself."""
    out: list[WatchedAccept] = []
    seen: set[str] = set()
    by_id: dict[str, ScarItem] = {it.id: it for it in (*feature.items, *feature.resolved)}
    for key, d in (decisions or {}).items():
        if _attr(d, "carried_round") is not None:  # carried from the log: read from the log below
            continue
        item_id = _attr(d, "item_id") or key
        seen.add(item_id)
        if _attr(d, "action") != "accept":
            continue
        spec = _attr(d, "watch")
        if spec is None or (isinstance(spec, str) and not spec.strip()):
            continue
        it = by_id.get(item_id)
        out.append(
            WatchedAccept(
                item_id,
                it.text if it else "",
                spec,
                _attr(d, "decided_at") or "",
                _attr(d, "watch_base"),
                "journal",
                it.file if it else None,
            )
        )
    # Accepts of the log, each matched to its item by the one matcher (feature.log_matches).
    for m in feature.log_matches:
        a = m.entry
        if m.action != "accept" or not isinstance(a, Mapping):
            continue
        spec = a.get("watch")
        if spec is None or (isinstance(spec, str) and not spec.strip()):
            continue
        item_id = m.item_id
        it = by_id.get(item_id) if item_id is not None else None
        if item_id is not None and item_id in seen:
            continue
        if item_id is not None:
            seen.add(item_id)
        out.append(
            WatchedAccept(
                item_id,
                it.text if it else m.description,
                spec,
                str(a.get("decided_at") or ""),
                a.get("watch_base"),
                f"iteration-log round {m.round}",
                it.file if it else None,
            )
        )
    return out


def _repo_root(feature: Feature) -> Path:
    if feature.repo_root:
        return Path(feature.repo_root)
    p = Path(feature.path)
    return p.parent.parent if p.parent.name == "changes" else p


def _resolve_base(
    feature: Feature, wa: WatchedAccept, w: Watch, log: list[dict[str, Any]], top: Path
) -> tuple[str | None, str]:
    if w.base:
        return w.base, "given with the watch"
    if wa.base:
        return str(wa.base), "watch_base of the accept"
    desc = w.describe()
    for rec in reversed(log):
        if (
            rec.get("type") == "base"
            and rec.get("watch") == desc
            and (rec.get("item_id") == wa.item_id or (wa.item_id is None and rec.get("text") == wa.text))
        ):
            return str(rec.get("base")), "recorded in .scars/watches.jsonl"
    if wa.decided_at:
        c = commit_at(top, wa.decided_at)
        if c:
            return c, f"last commit at or before the accept ({wa.decided_at})"
    return None, ""


def _inside(root: Path, rel: str) -> bool:
    try:
        return (root / rel).resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def evaluate(
    feature: Feature, wa: WatchedAccept, *, watch_log: list[dict[str, Any]] | None = None, record: bool = False
) -> WatchResult:
    """Evaluate one watched accept. With ``record``, a base found through ``decided_at`` is
    written to watches.jsonl (the caller holds the feature lock)."""
    log = watch_log if watch_log is not None else read_watch_log(feature.path)

    def result(state: State, cause: str, watch: str, **figures: Any) -> WatchResult:
        return WatchResult(wa.item_id, wa.text, watch, state, cause, figures, wa.origin)

    try:
        w = parse_watch(wa.spec)
    except WatchSyntaxError as exc:
        return result("unobservable", f"the watch cannot be read: {exc}", str(wa.spec))
    desc = w.describe()
    root = _repo_root(feature)

    if w.kind == "pattern":
        try:
            re.compile(w.regex or "")
        except re.error as exc:
            return result("unobservable", f"invalid regex {_q(w.regex)}: {exc}", desc)
        try:
            top = git_toplevel(root)
            files = tree_files(top)
            rel_prefix = os.path.relpath(root, top).replace(os.sep, "/")
            if rel_prefix != ".":
                files = [f[len(rel_prefix) + 1 :] for f in files if f.startswith(rel_prefix + "/")]
        except GitUnavailable:
            files = _walk_files(root)
        matched = [f for f in match_paths(w.glob or "", files) if _inside(root, f) and (root / f).is_file()]
        if not matched:
            return result("unobservable", f"the glob {_q(w.glob)} matches no file any more", desc, files=0)
        capped = matched[:MAX_FILES]
        res = search_bounded(w.regex or "", [(str(root / f), f) for f in capped])
        if res.get("timeout"):
            return result(
                "unobservable",
                f"the regex did not finish within {REGEX_TIMEOUT:g} s (catastrophic backtracking?)",
                desc,
                files=len(capped),
            )
        if "error" in res:
            return result("unobservable", f"the regex search failed: {res['error'][0]}", desc)
        figures = {
            "files": len(matched),
            "searched": res["searched"],
            "truncated": res["truncated"][:20],
            "skipped_over_limit": max(0, len(matched) - MAX_FILES),
        }
        m = res.get("match")
        if m:
            return result(
                "fired", f"pattern {_q(w.regex)} appears in {m['file']}:{m['line']}", desc, match=m, **figures
            )
        note = ""
        if res["truncated"] or figures["skipped_over_limit"]:
            note = f" (searched the first {MAX_FILE_BYTES} bytes of each file, at most {MAX_FILES} files)"
        return result("quiet", f"pattern not found in {res['searched']} matching file(s){note}", desc, **figures)

    if w.kind == "path-changed":
        try:
            top = git_toplevel(root)
        except GitUnavailable as exc:
            return result("unobservable", f"no git: {exc}", desc)
        base, how = _resolve_base(feature, wa, w, log, top)
        if not base:
            return result(
                "unobservable",
                "no base commit: the accept has no recorded commit and no commit predates its time",
                desc,
            )
        try:
            run_git(top, "cat-file", "-e", f"{base}^{{commit}}")
        except GitUnavailable:
            return result(
                "unobservable",
                f"the base commit {base[:12]} is not in this repository (history rewritten?)",
                desc,
                base=base,
            )
        if record and how.startswith("last commit") and wa.item_id:
            record_base(feature.path, wa.item_id, wa.spec, text=wa.text, base=base, decided_at=wa.decided_at)
        rel_prefix = os.path.relpath(root, top).replace(os.sep, "/")
        try:
            changed = changed_since(top, base)
            current = tree_files(top)
        except GitUnavailable as exc:
            return result("unobservable", f"git failed: {exc}", desc, base=base)
        if rel_prefix != ".":
            pre = rel_prefix + "/"
            changed = [c[len(pre) :] for c in changed if c.startswith(pre)]
            current = [c[len(pre) :] for c in current if c.startswith(pre)]
        hits = match_paths(w.glob or "", changed)
        if hits:
            shown = ", ".join(hits[:5]) + (f" and {len(hits) - 5} more" if len(hits) > 5 else "")
            return result(
                "fired", f"{shown} changed since {base[:12]}", desc, base=base, base_from=how, changed=hits[:50]
            )
        if not match_paths(w.glob or "", current):
            return result("unobservable", f"the glob {_q(w.glob)} matches no file any more", desc, base=base)
        return result(
            "quiet", f"no file matching {_q(w.glob)} changed since {base[:12]}", desc, base=base, base_from=how
        )

    # recurs
    text = _norm(wa.text) if wa.text else ""
    if not text:
        for rec in reversed(log):
            if rec.get("item_id") == wa.item_id and rec.get("text"):
                text = _norm(rec["text"])
                break
    if not text:
        return result("unobservable", "the accepted item's text is unknown (its report is gone)", desc)
    later = _later_reports(feature, wa, log)
    if later is None:
        return result(
            "unobservable",
            "cannot tell which reports are later than the accept (no git base and no decision time)",
            desc,
        )
    again = [
        it
        for it in feature.items
        if it.id != wa.item_id
        and (it.normalized or _norm(it.text)) == text
        and it.file in later
        and it.file != wa.item_file
    ]
    if again:
        h = again[0]
        return result(
            "fired",
            f"the same item is open again in {h.file}" + (f":{h.line}" if h.line else ""),
            desc,
            items=[x.id for x in again],
            reports=sorted({x.file for x in again}),
        )
    return result("quiet", f"not seen again in {len(later)} later report(s)", desc, later_reports=len(later))


def _later_reports(feature: Feature, wa: WatchedAccept, log: list[dict[str, Any]]) -> set[str] | None:
    """Report files (relative to the feature) written after the accept, or None if unknowable."""
    reports = [r.file for r in feature.reports] or sorted({it.file for it in feature.items})
    fdir = Path(feature.path)
    try:
        top = git_toplevel(fdir)
        w = parse_watch(wa.spec)
        base, _ = _resolve_base(feature, wa, w, log, top)
    except (GitUnavailable, WatchSyntaxError):
        top, base = None, None
    if top is not None and base:
        rel = os.path.relpath(fdir, top).replace(os.sep, "/")
        pre = "" if rel == "." else rel + "/"
        try:
            changed = set(changed_since(top, base))
        except GitUnavailable:
            changed = None
        if changed is not None:
            return {r for r in reports if pre + r in changed}
    if wa.decided_at:
        try:
            when = _dt.datetime.fromisoformat(wa.decided_at)
        except ValueError:
            return None
        if when.tzinfo is None:
            when = when.astimezone()
        out = set()
        for r in reports:
            try:
                mtime = (fdir / r).stat().st_mtime
            except OSError:
                continue
            if mtime > when.timestamp():
                out.add(r)
        return out
    return None


def check_feature(
    feature: Feature, decisions: Mapping[str, Any] | None = None, *, record: bool = False
) -> list[WatchResult]:
    """Evaluate every watch of the feature (no reopening; see :func:`apply_results`)."""
    log = read_watch_log(feature.path)
    return [evaluate(feature, wa, watch_log=log, record=record) for wa in watched_accepts(feature, decisions)]


def already_reopened(result: WatchResult, watch_log: list[dict[str, Any]]) -> dict | None:
    """The ``fired`` record that already reopened this accept, if any.

    An accept from the journal is never already reopened: a reopen removes the journal's
    decision, so an accept still there was made after any earlier reopen. An accept read from
    iteration-log.yaml stays in that file; one fired record for its item and watch reopens it
    for good.
    """
    if result.origin == "journal":
        return None
    for rec in reversed(watch_log):
        if rec.get("type") == "fired" and rec.get("item_id") == result.item_id and rec.get("watch") == result.watch:
            return rec
    return None
