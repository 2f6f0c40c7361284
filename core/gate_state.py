"""The loops' own state, as the gates read and write it.

One ``gather_<loop>`` and one ``apply_<loop>`` per loop, registered in ``GATHER`` / ``APPLY``.
What each answer writes (besides its auto-decisions.md entry) is documented in the README,
section "Step-mode gates", and next to the code below:

* loop-spec ``feature.json`` — load, modify, write ``feature.json.tmp``, fsync, copy the old
  file to ``feature.json.bak``, rename (as loop-spec's ``feature-write.sh`` does); key order,
  unknown keys and the file's indentation are kept.
* ARIS / Mechanist ``REVIEW_STATE.json`` and bkit ``pdca-status.json`` — atomic replace, key
  order and unknown keys kept; only what the gate decides is changed.
* samsara — ``index.yaml`` ``iteration_skip_record`` (a one-line text edit, atomic, every other
  byte kept), ``iteration-log.yaml`` through ``FeatureSession.close_round`` and the blocked-fix
  outcome through ``FeatureSession.record_blocked_fix``.

A file changed on disk between reading and writing raises ``ChangedOnDisk`` (nothing written).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from scars.core.durable import Fingerprint, _fsync_dir, append_record, atomic_write, fingerprint, read_with_fingerprint
from scars.core.errors import ChangedOnDisk, PathNotFound, UsageError
from scars.core.lock import FeatureLock
from scars.core.loops.base import fmt_number
from scars.core.loops.bkit import no_improvement_run, project_of, read_status, status_files
from scars.core.loops.loopspec import gap_id, parse_backlog
from scars.core.loops.review import (
    ARIS_MAX_ROUNDS,
    BLOCKING_BUCKETS,
    MECHANIST_MAX_CLAIM_REENTRIES,
    MECHANIST_MAX_ITERATIONS,
    POSITIVE,
    STALL_LIMIT,
    TARGET_SCORE,
    parse_verify_buckets,
    score_met,
)
from scars.core.loops.review import canonical_verdict as _canonical_verdict
from scars.core.gates import (
    GAP_PREFIX_SHIP,
    Answer,
    Evidence,
    Gate,
    GateResult,
    append_auto_decision_file,
    entry_fields,
)

# --------------------------------------------------------------------------------------------
# Durable primitives come from scars.core.durable; the lock is scars.core.lock's FeatureLock on
# the loop's state directory (`<dir>/.scars/lock`), the same lock samsara features use.
# --------------------------------------------------------------------------------------------


def append_bytes(path: Path, data: bytes) -> None:
    append_record(path, data)


def check_unchanged(path: Path, fp: Fingerprint | None) -> None:
    if fp is None:
        return
    now = fingerprint(path)
    if now is None:
        raise ChangedOnDisk(f"{path} was removed since it was read; nothing was written")
    if not now.same_content(fp):
        raise ChangedOnDisk(f"{path} changed on disk since it was read; nothing was written — run the gate again")


@contextlib.contextmanager
def state_lock(directory: Path, user: str = "") -> Iterator[None]:
    with FeatureLock(directory, user=user):
        yield


# --------------------------------------------------------------------------------------------
# JSON state files: keep key order, unknown keys and the file's indentation.
# --------------------------------------------------------------------------------------------


def _detect_indent(text: str) -> int | None:
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped and line != stripped:
            return len(line) - len(stripped)
        if stripped:
            return None
    return 2


def load_json_state(path: Path) -> tuple[dict, dict]:
    """(data, meta): meta holds the fingerprint, indent and trailing newline for the write."""
    try:
        raw, fp = read_with_fingerprint(path)
    except IsADirectoryError:
        raise PathNotFound(f"{path} is a directory, not a state file") from None
    if raw is None:
        raise PathNotFound(f"{path} does not exist")
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UsageError(f"{path} is not valid JSON ({exc}); fix the file before answering its gate") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path} does not hold a JSON object")
    meta = {"fp": fp, "indent": _detect_indent(text), "newline": text.endswith("\n"), "text": text,
            "original": json.loads(text)}
    return data, meta


def dump_json_state(data: dict, meta: dict) -> bytes:
    text = json.dumps(data, indent=meta.get("indent", 2), ensure_ascii=False)
    return (text + ("\n" if meta.get("newline", True) else "")).encode("utf-8")


def write_feature_json(path: Path, data: dict, meta: dict) -> list[Path]:
    """loop-spec's write: ``feature.json.tmp``, fsync, old file copied to ``.bak``, rename."""
    check_unchanged(path, meta.get("fp"))
    tmp = path.with_name(path.name + ".tmp")
    bak = path.with_name(path.name + ".bak")
    mode = path.stat().st_mode & 0o7777
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(dump_json_state(data, meta))
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    shutil.copy2(path, bak)
    os.replace(tmp, path)
    _fsync_dir(path.parent)
    return [path, bak]


def _patch_top_level(text: str, original: dict, data: dict) -> str | None:
    """Edit only the changed top-level scalar values of ``text`` (every other byte kept).

    Returns None when the change is not of that shape or the result does not read back as
    ``data``; the caller then writes the whole document.
    """
    changed = [k for k in data if k not in original or original[k] != data[k]]
    if any(k not in data for k in original) or list(original) != [k for k in data if k in original]:
        return None
    out = text
    for key in changed:
        value = data[key]
        if isinstance(value, (dict, list)):
            return None
        enc = json.dumps(value, ensure_ascii=False)
        pat = re.compile(r'(?m)^(?P<ind>[ \t]*)' + re.escape(json.dumps(key, ensure_ascii=False))
                         + r'(?P<sep>\s*:\s*)(?P<val>"(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*|true|false|null)')
        if key in original:
            matches = list(pat.finditer(out))
            if len(matches) != 1 or isinstance(original[key], (dict, list)):
                return None
            m = matches[0]
            out = out[: m.start("val")] + enc + out[m.end("val"):]
        else:
            end = out.rstrip().rfind("}")
            body = out[:end].rstrip()
            if end < 0 or not body.endswith(("}", "]", '"', "e", "l", *"0123456789")):
                return None
            ind = re.search(r'(?m)^([ \t]+)"', out)
            indent = ind.group(1) if ind else "  "
            out = body + ",\n" + indent + json.dumps(key, ensure_ascii=False) + ": " + enc + "\n" + out[end:]
    try:
        if json.loads(out) != data:
            return None
    except ValueError:
        return None
    return out


def write_json_state(path: Path, data: dict, meta: dict) -> None:
    """Atomic replace; a change of top-level scalars only is a text edit keeping every other byte."""
    check_unchanged(path, meta.get("fp"))
    patched = None
    if meta.get("text") is not None and meta.get("original") is not None:
        patched = _patch_top_level(meta["text"], meta["original"], data)
    atomic_write(path, patched.encode("utf-8") if patched is not None else dump_json_state(data, meta))


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        with contextlib.suppress(ValueError):
            return str(Path(os.path.abspath(path)).relative_to(os.path.abspath(root)))
    return path.name


def _date() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def _utc_z() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _record(evidence: Evidence, ans: Answer, reason: str | None, *, user: str, source: str, now: str,
            extra_consequences: list[str] | None = None, rationale: str | None = None) -> tuple[Path, int]:
    """Append the gate's auto-decisions.md entry next to the loop's state file."""
    directory = Path(evidence.context["decisions_dir"])
    fields = entry_fields(evidence, ans, reason, user=user, source=source, now=now,
                          extra_consequences=extra_consequences, rationale=rationale)
    number = append_auto_decision_file(directory, **fields)
    return directory / "auto-decisions.md", number


def _result(evidence: Evidence, ans: Answer, reason: str | None, user: str, recorded: list[Path],
            number: int | None, **extra: Any) -> GateResult:
    root = evidence.context.get("root")
    seen: list[str] = []
    for p in recorded:
        d = _display(p, root)
        if d not in seen:
            seen.append(d)
    return GateResult(gate=evidence.gate.id, answer=ans.value, decision=evidence.decision_for(ans),
                      reason=reason, decided_by=user, recorded=seen, entry_number=number, extra=extra)


# --------------------------------------------------------------------------------------------
# loop-spec: the `spec` gate (formats.md §2.2, §2.4, §2.6).
# --------------------------------------------------------------------------------------------

LOOP_SPEC_PHASES = ("spec", "discuss", "plan", "execute", "verify", "iterate", "deliver", "completed")


def locate_loop_spec(path: Path) -> Path:
    """feature.json from a file, a feature state directory or a project root."""
    p = Path(path)
    if p.is_file():
        if p.name != "feature.json":
            raise UsageError(f"{p} is not a loop-spec feature.json")
        return p
    if not p.exists():
        raise PathNotFound(f"{p} does not exist")
    if (p / "feature.json").is_file():
        return p / "feature.json"
    for base in (p / ".loop-spec" / "features", p / "features", p):
        found = sorted(base.glob("*/feature.json")) if base.is_dir() else []
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            slugs = ", ".join(f.parent.name for f in found)
            raise UsageError(f"{base} holds several loop-spec features ({slugs}); give the feature directory as PATH")
    raise PathNotFound(f"no loop-spec feature.json at {p} (give .loop-spec/features/<slug> or its feature.json)")


def _loop_spec_root(feature_json: Path) -> Path:
    fdir = feature_json.parent
    if fdir.parent.name == "features" and fdir.parent.parent.name == ".loop-spec":
        return fdir.parent.parent.parent
    return fdir


def _gap_of(iterate: dict) -> dict | None:
    gap = iterate.get("feedback")
    if not isinstance(gap, dict):
        lv = iterate.get("lastVerdict")
        gap = lv.get("gap") if isinstance(lv, dict) else None
    return gap if isinstance(gap, dict) else None


def gather_loop_spec(gate: Gate, path: Path, **_: Any) -> Evidence:
    fj = locate_loop_spec(path)
    data, meta = load_json_state(fj)
    root = _loop_spec_root(fj)
    it = data.get("iterate") if isinstance(data.get("iterate"), dict) else {}
    gap = _gap_of(it)
    desc = str(gap.get("description") or "gap") if gap else "gap"
    fix = str(gap.get("fix_first") or gap.get("description") or "gap") if gap else "gap"
    lv = it.get("lastVerdict") if isinstance(it.get("lastVerdict"), dict) else {}
    figures = [
        ("feature", str(data.get("slug") or fj.parent.name)),
        ("original goal", str(data.get("feature_title") or "(none recorded)")),
        ("current phase", str(data.get("currentPhase"))),
        ("exec style", str(data.get("execStyle"))),
        ("iterations", f"{it.get('used', 0)} of {it.get('maxIterations', 10)} used"
                       f"{', confirmation used' if it.get('confirmationUsed') else ''}"),
        ("last route", str(it.get("lastRoute", "(none)"))),
        ("gap type", str(gap.get("type")) if gap else "(none)"),
        ("gap", desc),
        ("fix first", fix),
    ]
    if lv.get("summary"):
        figures.append(("judge summary", str(lv.get("summary"))))
    warnings: list[str] = []
    if gap is None:
        warnings.append("no gap is recorded in iterate.feedback or iterate.lastVerdict")
    elif gap.get("type") != "spec":
        warnings.append(f"the recorded gap is of type {gap.get('type')!r}, not 'spec'")
    if it.get("lastRoute") not in (None, "spec"):
        warnings.append(f"the last recorded route is {it.get('lastRoute')!r}, not 'spec'")
    if data.get("execStyle") in ("auto", "review-only") or data.get("autonomous") is True:
        warnings.append("upstream proceeds without asking in auto / review-only / autonomous runs")
    refused = {"ship": "no gap is recorded to ship with (iterate.feedback and lastVerdict.gap are empty)"} if gap is None else {}
    return Evidence(
        gate=gate, target=fj.parent, state_file=fj, refused=refused,
        workflow_prompt=gate.prompt.format(gap=desc),
        figures=figures, warnings=warnings,
        files_read=[_display(fj, root)],
        context={"root": root, "decisions_dir": fj.parent, "data": data, "meta": meta,
                 "gap_desc": desc, "gap_fix": fix},
        default="reopen",
    )


def backlog_path(root: Path) -> Path:
    env = os.environ.get("LOOP_SPEC_BACKLOG_FILE")
    if env:
        return Path(env)
    return root / ".loop-spec" / "BACKLOG.md"


def backlog_add(path: Path, slug: str, text: str, gid: str) -> str:
    """Append an `iterate-gap` entry unless it exists (unchecked, same text or id) or is terminal."""
    existing = path.read_text(encoding="utf-8") if path.exists() else ""
    entries, _ = parse_backlog(existing, str(path.name))
    for e in entries:
        if e.id == gid and e.terminal:
            return "terminal"
        if not e.done and (e.id == gid or e.text.strip() == " ".join(text.split())):
            return "exists"
    entry = f"- [ ] ({_date()} {slug} iterate-gap id={gid}) {' '.join(text.split())}\n"
    if not existing:
        data = ("# BACKLOG.md\n\nDeferred work queue of loop-spec: one line per item, "
                "checked when done.\n\n" + entry)
    else:
        data = ("" if existing.endswith("\n") else "\n") + entry
    path.parent.mkdir(parents=True, exist_ok=True)
    append_bytes(path, data.encode("utf-8"))
    return "added"


def _progress(fdir: Path, text: str) -> Path:
    path = fdir / "PROGRESS.md"
    existing = path.exists() and path.stat().st_size > 0
    prefix = ""
    if existing:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            prefix = "" if f.read(1) == b"\n" else "\n"
    append_bytes(path, f"{prefix}- {_date()}: {' '.join(text.split())}\n".encode("utf-8"))
    return path


def apply_loop_spec(evidence: Evidence, ans: Answer, reason: str | None, *, user: str, session: Any,
                    source: str, now: str) -> GateResult:
    fj: Path = evidence.state_file  # type: ignore[assignment]
    ctx = evidence.context
    fdir = fj.parent
    with state_lock(fdir, user):
        check_unchanged(fj, ctx["meta"]["fp"])
        data = json.loads(json.dumps(ctx["data"]))  # a copy to modify
        it = data.setdefault("iterate", {})
        desc, fix = ctx["gap_desc"], ctx["gap_fix"]
        recorded: list[Path] = []
        extra: list[str] = []
        warning = None
        if ans.value == "reopen":
            # Rewind: currentPhase -> spec, spec and every later phase leave completedPhases;
            # iterate.feedback keeps the gap so the re-entered phase fixes it first.
            data["currentPhase"] = "spec"
            if "currentPhaseStartedAt" in data:
                data["currentPhaseStartedAt"] = None
            if isinstance(data.get("completedPhases"), list):
                data["completedPhases"] = [p for p in data["completedPhases"] if p not in LOOP_SPEC_PHASES]
            it["lastRoute"] = "spec"
            extra.append("feature.json: currentPhase spec, completedPhases rewound")
        elif ans.value == "ship":
            # Ship as-is: deliver, the gap kept visible in warnings[] and on the backlog.
            warning = f"{GAP_PREFIX_SHIP} {desc} — fix first: {fix}"
            warns = data.get("warnings") if isinstance(data.get("warnings"), list) else []
            if warning not in warns:
                warns.append(warning)
            data["warnings"] = warns
            data["currentPhase"] = "deliver"
            if "currentPhaseStartedAt" in data:
                data["currentPhaseStartedAt"] = None
            done = data.get("completedPhases") if isinstance(data.get("completedPhases"), list) else []
            if "iterate" not in done:
                done.append("iterate")
            data["completedPhases"] = done
            it["feedback"] = None
            it["lastRoute"] = "deliver"
            extra.append("feature.json: currentPhase deliver, the gap in warnings[] and on the backlog")
        if ans.value in ("reopen", "ship"):
            if "updatedAt" in data:
                data["updatedAt"] = _utc_z()
        ad_path, number = _record(evidence, ans, reason, user=user, source=source, now=now,
                                  extra_consequences=extra)
        recorded.append(ad_path)
        if ans.value in ("reopen", "ship"):
            recorded.extend(write_feature_json(fj, data, ctx["meta"]))
        if ans.value == "ship":
            bl = backlog_path(ctx["root"])
            slug = str(data.get("slug") or fdir.name)
            if backlog_add(bl, slug, f"{desc} — fix first: {fix}", gap_id(fix)) == "added":
                recorded.append(bl)
        label = {"reopen": "re-open SPEC/DISCUSS", "ship": "ship as-is", "stop": "stop - hand back"}[ans.value]
        recorded.append(_progress(fdir, f"ITERATE spec gate: {label} (decision-{number:03d}, {user} via scars gate)"))
    return _result(evidence, ans, reason, user, recorded, number,
                   **({"warning": warning} if warning else {}))


# --------------------------------------------------------------------------------------------
# ARIS / Mechanist: `review-continue` (formats.md §3.2, §3.3, §3.6).
# --------------------------------------------------------------------------------------------

# The loops' constants and the STOP rule's score and verdict dimensions are the review reader's
# (scars.core.loops.review): one rule, one place, so `scars loops` and this gate agree.
MECHANIST_STALL = STALL_LIMIT


def canonical_verdict(raw: Any) -> str:
    """ready | almost | not ready (the loop readers' Phase B canonicalization; none = not ready)."""
    return _canonical_verdict(raw) or "not ready"


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = re.search(r"-?\d+(?:\.\d+)?", str(value or ""))
    return float(m.group()) if m else None


def locate_review_state(path: Path) -> Path:
    p = Path(path)
    if p.is_file():
        if not p.name.endswith(".json"):
            raise UsageError(f"{p} is not a REVIEW_STATE.json")
        return p
    if not p.exists():
        raise PathNotFound(f"{p} does not exist")
    for cand in (p / "review-stage" / "REVIEW_STATE.json", p / "REVIEW_STATE.json"):
        if cand.is_file():
            return cand
    raise PathNotFound(f"no REVIEW_STATE.json at {p} (looked in review-stage/ and the directory itself)")


def verify_buckets(report: Path) -> dict[str, int] | None:
    """Claims per bucket in verify/VERIFY_REPORT.md (None when it cannot be read)."""
    try:
        text = report.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return parse_verify_buckets(text)


def _last_heading_number(review_md: Path) -> int | None:
    try:
        text = review_md.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    nums = [int(m.group(2)) for m in re.finditer(r"^## (Iteration|Round) (\d+)", text, re.M)]
    return max(nums) if nums else None


def gather_review(gate: Gate, path: Path, **_: Any) -> Evidence:
    sf = locate_review_state(path)
    state, meta = load_json_state(sf)
    stage_dir = sf.parent
    root = stage_dir.parent if stage_dir.name == "review-stage" else stage_dir
    files = [_display(sf, root)]
    mechanist = "iterations_consumed" in state
    score = _num(state.get("last_score"))
    raw_verdict = state.get("last_verdict")
    verdict = canonical_verdict(raw_verdict)
    warnings: list[str] = []
    score_ok = score_met(score)
    verdict_ok = verdict in POSITIVE
    review_md = stage_dir / "AUTO_REVIEW.md"
    heading = _last_heading_number(review_md)
    if heading is not None:
        files.append(_display(review_md, root))
    refused: dict[str, str] = {}
    uncertainty = ("low", "")
    if mechanist:
        consumed = int(_num(state.get("iterations_consumed")) or 0)
        reentries = int(_num(state.get("claim_reentries_consumed")) or 0)
        max_it = int(_num(state.get("max_iterations")) or MECHANIST_MAX_ITERATIONS)
        noop = int(_num(state.get("consecutive_noop_count")) or 0)
        report = root / "verify" / "VERIFY_REPORT.md"
        buckets = verify_buckets(report)
        if buckets is None:
            buckets_ok = None
            bucket_text = "unknown (verify/VERIFY_REPORT.md not found)"
            warnings.append("claim buckets unknown: verify/VERIFY_REPORT.md not found — unknown is never success")
            uncertainty = ("high", "the claim buckets could not be read")
        else:
            files.append(_display(report, root))
            blocking = sum(buckets[b] for b in BLOCKING_BUCKETS)
            buckets_ok = blocking == 0
            bucket_text = (f"FAIL {buckets['FAIL']}, INCONCLUSIVE {buckets['INCONCLUSIVE']}, "
                           f"ZERO_ELIGIBLE_VARIANTS {buckets['ZERO_ELIGIBLE_VARIANTS']}, "
                           f"PASS {buckets['PASS']}, INTEGRITY_ONLY {buckets['INTEGRITY_ONLY']}")
            uncertainty = ("medium", "claim buckets counted from the verdict tokens of VERIFY_REPORT.md rows")
        stop_met = bool(score_ok and verdict_ok and buckets_ok)
        left_it = max(max_it - consumed, 0)
        left_re = max(MECHANIST_MAX_CLAIM_REENTRIES - reentries, 0)
        budget = f"iterations {left_it} of {max_it}, claim re-entries {left_re} of {MECHANIST_MAX_CLAIM_REENTRIES}"
        number = heading if heading is not None else max(consumed, 1)
        unit = "Iteration"
        figures = [
            ("lineage", "Mechanist auto-iteration-loop"),
            ("status", str(state.get("status"))),
            ("score", f"{'?' if score is None else f'{score:g}'}/10 (target >= {fmt_number(TARGET_SCORE)}): {'met' if score_ok else 'not met'}"),
            ("verdict", f"{raw_verdict!s} → {verdict}: {'positive' if verdict_ok else 'not positive'}"),
            ("claim buckets", f"{bucket_text}: {'clear' if buckets_ok else ('unknown' if buckets_ok is None else 'blocking')}"),
            ("STOP rule", "met" if stop_met else "not met"),
            ("iterations consumed", f"{consumed} of {max_it} ({left_it} left)"),
            ("claim re-entries", f"{reentries} of {MECHANIST_MAX_CLAIM_REENTRIES} ({left_re} left)"),
            ("no-op streak", f"{noop} of {MECHANIST_STALL}"),
        ]
        if state.get("runs_total") is not None or state.get("gpu_hours_total") is not None:
            figures.append(("runs / GPU hours", f"{state.get('runs_total')} / {state.get('gpu_hours_total')}"))
        if left_it == 0:
            refused["continue"] = f"the iteration budget is spent ({consumed} of {max_it}); budgets are never reset"
        if noop >= MECHANIST_STALL:
            warnings.append(f"stall guard: {noop} consecutive no-op iterations (limit {MECHANIST_STALL})")
        if state.get("status") == "awaiting_upstream":
            warnings.append("status awaiting_upstream: the pending upstream calls run before the loop resumes")
    else:
        rnd = int(_num(state.get("round", state.get("current_round"))) or 0)
        max_rounds = int(_num(state.get("max_rounds")) or ARIS_MAX_ROUNDS)
        stop_met = bool(score_ok and verdict_ok)
        left = max(max_rounds - rnd, 0)
        budget = f"rounds {left} of {max_rounds}"
        number = heading if heading is not None else rnd
        unit = "Round"
        figures = [
            ("lineage", "ARIS auto-review-loop"),
            ("status", str(state.get("status"))),
            ("score", f"{'?' if score is None else f'{score:g}'}/10 (target >= {fmt_number(TARGET_SCORE)}): {'met' if score_ok else 'not met'}"),
            ("verdict", f"{raw_verdict!s} → {verdict}: {'positive' if verdict_ok else 'not positive'}"),
            ("claim buckets", "n/a (auto-review-loop has no claim buckets)"),
            ("STOP rule", "met" if stop_met else "not met"),
            ("rounds", f"{rnd} of {max_rounds} ({left} left)"),
        ]
        if isinstance(state.get("score_trajectory"), list):
            figures.append(("score trend", " → ".join(f"{_num(s):g}" if _num(s) is not None else "?"
                                                      for s in state["score_trajectory"])))
        if state.get("pending_experiments"):
            warnings.append(f"{len(state['pending_experiments'])} pending experiment(s) in REVIEW_STATE.json")
        if left == 0:
            refused["continue"] = f"the round budget is spent ({rnd} of {max_rounds})"
    if state.get("status") == "completed":
        refused.setdefault("continue", "REVIEW_STATE.json says status completed; the loop returns at once on resume")
    if score is None:
        warnings.append("last_score is missing or not a number")
    overrides = {"stop": "proceed"} if stop_met else {}
    reason_required = {"continue"} if stop_met else set()
    if stop_met:
        advice = "STOP rule met: the loop would stop here"
    elif "continue" in refused:
        advice = f"STOP rule not met and {refused['continue']}: the loop closes out"
    else:
        advice = f"STOP rule not met: the loop would continue ({budget} left)"
    prompt = gate.prompt.format(unit=unit, unit_lower=unit.lower(), number=number,
                                  next=number + 1, score="?" if score is None else f"{score:g}",
                                  verdict=verdict, stop="met" if stop_met else "not met", budget=budget)
    return Evidence(
        gate=gate, target=stage_dir, state_file=sf, workflow_prompt=prompt,
        figures=figures, warnings=warnings, files_read=files,
        context={"root": root, "decisions_dir": stage_dir, "data": state, "meta": meta,
                 "mechanist": mechanist, "stop_met": stop_met,
                 "exhausted": "continue" in refused and state.get("status") != "completed"},
        reason_required=reason_required, decision_overrides=overrides, refused=refused,
        advice=advice, default="stop" if stop_met else "continue", uncertainty=uncertainty,
    )


def apply_review(evidence: Evidence, ans: Answer, reason: str | None, *, user: str, session: Any,
                 source: str, now: str) -> GateResult:
    sf: Path = evidence.state_file  # type: ignore[assignment]
    ctx = evidence.context
    with state_lock(sf.parent, user):
        check_unchanged(sf, ctx["meta"]["fp"])
        recorded: list[Path] = []
        extra: list[str] = []
        data = json.loads(json.dumps(ctx["data"]))
        if ans.value == "stop":
            # Only what the gate decides: the loop is completed, and why.
            data["status"] = "completed"
            if ctx["mechanist"]:
                if ctx["stop_met"]:
                    data["termination_reason"] = "positive_verdict"
                elif ctx["exhausted"]:
                    data["termination_reason"] = "iterations_exhausted"
                else:
                    data["termination_reason"] = "human_stop"
            extra.append(f"REVIEW_STATE.json: status completed"
                         f"{', termination_reason ' + data['termination_reason'] if 'termination_reason' in data and ctx['mechanist'] else ''}")
        ad_path, number = _record(evidence, ans, reason, user=user, source=source, now=now,
                                  extra_consequences=extra)
        recorded.append(ad_path)
        if ans.value == "stop":
            write_json_state(sf, data, ctx["meta"])
            recorded.append(sf)
    return _result(evidence, ans, reason, user, recorded, number)


# --------------------------------------------------------------------------------------------
# bkit PDCA: `pdca-continue` (formats.md §4.2, §4.3).
# --------------------------------------------------------------------------------------------

BKIT_CRITICAL_MAX = 10
BKIT_NO_IMPROVEMENT = 3
BKIT_HISTORY_CAP = 100


def locate_pdca(path: Path) -> tuple[Path, Path]:
    """(pdca-status.json, project root) from the file, the project or its state directory."""
    p = Path(path)
    if p.is_file():
        if not p.name.endswith("pdca-status.json"):
            raise UsageError(f"{p} is not a bkit pdca-status.json")
        return p, project_of(p)
    if not p.exists():
        raise PathNotFound(f"{p} does not exist")
    found = status_files(p)
    if found:
        return found[0], p
    for cand in (p / "pdca-status.json", p / ".pdca-status.json"):
        if cand.is_file():
            return cand, project_of(cand)
    raise PathNotFound(f"no bkit pdca-status.json at {p} (looked in .bkit/state/ and docs/)")


def _bkit_feature(sf: Path, root: Path, feature: str) -> Any:
    """The bkit reader's state of one feature: threshold, limit and pass rule as `scars loops` has them."""
    return next(s for s in read_status(sf, root) if s.name == feature)


def _sprint_trend(root: Path, feature: str) -> tuple[list[float | None], str | None]:
    sdir = root / ".bkit" / "state" / "sprints"
    if not sdir.is_dir():
        return [], None
    for f in sorted(sdir.glob("*.json")):
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        names = data.get("features") if isinstance(data.get("features"), list) else []
        if feature not in names and data.get("feature") != feature:
            continue
        hist = data.get("iterateHistory")
        if isinstance(hist, list) and hist:
            return [(_num(h.get("matchRate")) if isinstance(h, dict) and h.get("matchRate") is not None else None)
                    for h in hist], _display(f, root)
    return [], None


def gather_pdca(gate: Gate, path: Path, *, feature: str | None = None, **_: Any) -> Evidence:
    sf, root = locate_pdca(path)
    data, meta = load_json_state(sf)
    features = data.get("features") if isinstance(data.get("features"), dict) else {}
    if feature is None:
        primary = data.get("primaryFeature")
        if isinstance(primary, str) and primary in features:
            feature = primary
        else:
            active = [f for f, v in features.items() if isinstance(v, dict) and v.get("phase") in ("do", "check", "act")]
            if len(active) == 1:
                feature = active[0]
            else:
                raise UsageError(f"{sf}: name the feature with --feature (features: {', '.join(features) or 'none'})")
    if feature not in features or not isinstance(features[feature], dict):
        raise UsageError(f"{sf}: no feature {feature!r} (features: {', '.join(features) or 'none'})")
    f = features[feature]
    # One rule, one place: the threshold, the iteration limit and the pass rule are the bkit
    # reader's (scars.core.loops.bkit), so `scars loops` and this gate never disagree.
    state = _bkit_feature(sf, root, feature)
    threshold, max_it = state.details["threshold"], state.budget.limit
    rate, count, passes = state.details["match_rate"], state.budget.used, state.details["match_rate_met"]
    config_file = root / "bkit.config.json"
    files = [_display(sf, root)] + (["bkit.config.json"] if config_file.is_file() else [])
    warnings: list[str] = [f"{p.file}: {p.reason}" for p in state.parse_failures]
    trend, trend_file = _sprint_trend(root, feature)
    if trend_file:
        files.append(trend_file)
    if not trend or (rate is not None and trend[-1] != rate):
        trend = trend + [rate]
    streak = no_improvement_run(trend)
    trend_text = " → ".join("unmeasured" if v is None else f"{v:g}%" for v in trend)
    refused: dict[str, str] = {}
    reason_required: set[str] = set()
    overrides: dict[str, str] = {}
    if rate is None:
        warnings.append("Match Rate not measured (null is never 100)")
    if count >= max_it:
        warnings.append(f"iteration limit reached: {count} of max {max_it}" + (" (beyond the limit)" if count > max_it else ""))
        reason_required.add("iterate")
    if count >= BKIT_CRITICAL_MAX:
        refused["iterate"] = f"{count} iterations reached the critical maximum {BKIT_CRITICAL_MAX}"
    if streak >= BKIT_NO_IMPROVEMENT:
        warnings.append(f"no improvement for {streak} consecutive iterations: bkit stops with FAILURE")
        reason_required.add("iterate")
    thr_text = fmt_number(threshold)
    if passes:
        reason_required.add("iterate")
        overrides["stop"] = "proceed"
        advice = f"Match Rate {rate:g}% passes the {thr_text}% threshold: the loop completes with SUCCESS"
    elif count >= max_it or streak >= BKIT_NO_IMPROVEMENT:
        advice = "the loop's own rule stops here (FAILURE, or PARTIAL if you accept the gap)"
    else:
        advice = f"below the {thr_text}% threshold with iterations left: the loop would iterate again"
    rate_text = "not measured" if rate is None else f"{rate:g}%"
    figures = [
        ("feature", feature),
        ("phase", str(f.get("phase"))),
        ("Match Rate", f"{rate_text} (threshold {thr_text}%): {'pass' if passes else 'below'}"),
        ("trend", trend_text + ("" if trend_file else " (no per-iteration history on disk)")),
        ("iterations", f"{count} of max {max_it} (critical {BKIT_CRITICAL_MAX})"),
        ("no-improvement streak", f"{streak} of {BKIT_NO_IMPROVEMENT}"),
        ("last iteration status", str(f.get("lastIterationStatus"))),
    ]
    prompt = gate.prompt.format(feature=feature, rate=rate_text, threshold=thr_text, count=count, max=max_it)
    return Evidence(
        gate=gate, target=sf.parent, state_file=sf, workflow_prompt=prompt,
        figures=figures, warnings=warnings, files_read=files,
        context={"root": root, "decisions_dir": sf.parent, "data": data, "meta": meta,
                 "feature": feature, "rate": rate},
        reason_required=reason_required, decision_overrides=overrides, refused=refused,
        advice=advice, default="stop" if passes else ("iterate" if "iterate" not in refused else "partial"),
    )


def apply_pdca(evidence: Evidence, ans: Answer, reason: str | None, *, user: str, session: Any,
               source: str, now: str) -> GateResult:
    sf: Path = evidence.state_file  # type: ignore[assignment]
    ctx = evidence.context
    name = ctx["feature"]
    with state_lock(sf.parent, user):
        check_unchanged(sf, ctx["meta"]["fp"])
        data = json.loads(json.dumps(ctx["data"]))
        f = data["features"][name]
        stamp = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        extra: list[str] = []
        rate = ctx["rate"]
        rate_text = "unmeasured" if rate is None else f"{rate:g}%"
        if ans.value == "partial":
            # PARTIAL: the gap below the threshold is accepted; the feature moves on to the report.
            f["previousPhase"] = f.get("phase")
            f["phase"] = "report"
            f["lastIterationStatus"] = "partial"
            action = f"accepted as PARTIAL at Match Rate {rate_text} by {user} (scars gate): {reason}"
        elif ans.value == "stop":
            f["lastIterationStatus"] = "stopped"
            action = f"iteration stopped at Match Rate {rate_text} by {user} (scars gate): {reason}"
        if ans.value in ("partial", "stop"):
            if isinstance(f.get("timestamps"), dict):
                f["timestamps"]["lastUpdated"] = stamp
            if "lastUpdated" in data:
                data["lastUpdated"] = stamp
            hist = data.get("history") if isinstance(data.get("history"), list) else []
            hist.append({"timestamp": stamp, "feature": name, "phase": f.get("phase"), "action": " ".join(action.split())})
            data["history"] = hist[-BKIT_HISTORY_CAP:]
            extra.append(f"pdca-status.json: features.{name}.lastIterationStatus {f['lastIterationStatus']}"
                         + (", phase report" if ans.value == "partial" else "") + "; history entry added")
        ad_path, number = _record(evidence, ans, reason, user=user, source=source, now=now,
                                  extra_consequences=extra)
        recorded = [ad_path]
        if ans.value in ("partial", "stop"):
            write_json_state(sf, data, ctx["meta"])
            recorded.append(sf)
    return _result(evidence, ans, reason, user, recorded, number, feature=name)


def _samsara_gather(gate: Gate, path: Path, **options: Any) -> Evidence:
    from scars.core import gate_samsara

    return gate_samsara.gather(gate, path, **options)


def _samsara_apply(evidence: Evidence, ans: Answer, reason: str | None, **kw: Any) -> GateResult:
    from scars.core import gate_samsara

    return gate_samsara.apply(evidence, ans, reason, **kw)


GATHER = {"loop-spec": gather_loop_spec, "aris": gather_review, "bkit": gather_pdca,
          "samsara": _samsara_gather}
APPLY = {"loop-spec": apply_loop_spec, "aris": apply_review, "bkit": apply_pdca,
         "samsara": _samsara_apply}

__all__ = ["GATHER", "APPLY", "canonical_verdict", "gap_id", "verify_buckets"]
