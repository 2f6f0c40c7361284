"""loop-spec 7.x: the run state kept outside the repository, read into a :class:`LoopState`.

7.x (aztechead/loop-spec ``skills/loop-spec/program/loop_spec/``, read at index commits 06a9ffa
— ``paths.py``, ``state.py``, ``iterate.py`` — 05581a2 ``questions.py``, 0d9e8b9 ``cli.py``,
489df87 ``budget.py``, ``jsonio.py``, ``schemas/question.json``, 421db3a ``ids.py``,
``schemas/answer.json``) keeps one run's state at ``<state home>/<repo id>/<slug>/state.json``:

* the state home: ``--state-home``, else ``$LOOP_SPEC_HOME``, else ``~/.loop-spec`` (the skills
  pass no ``--state-home`` since 7.7.0, so a person's runs are under the default or the variable);
* the repo id: ``git config --local loop-spec.repoId`` when pinned (7.x pins it in a shallow
  clone), else the first 16 hex of sha256 of the sorted-first root commit of HEAD, else of the
  project's real path (no git history);
* ``state.json`` is the program's alone: ``state.digest`` beside it holds
  ``sha256:`` of the state as compact, key-sorted JSON, and the program refuses a state whose
  digest does not match ("state.json was edited outside the program");
* ``iterate`` is ``{priorGaps, judgeStep, judge: {verdict: met|unmet, gaps: [{target, text}],
  caveats}, boundShas, inputs}``; the ITERATE product (``products.iterate.product``) has
  ``exit`` ∈ converged / converged with caveats / rewind / escalated;
* ``budget`` is ``{limit, spent, transitions}``: the shared rewind budget, its limit
  ``$LOOP_SPEC_REWIND_BUDGET`` when set, else the state's (2) — from 7.0.0 to 7.8.x; since 7.9.0
  no count bounds rewinds (docs/migration: "Rewind progress rule");
* a question is ``questions.open`` (``{questionId, attempt, phase, kind, askedAt, path,
  defaultValue}``) with ``attempts/<attempt>/question.json`` holding its text and options; it is
  answered by ``loop-spec answer`` (``scars.core.loops.loopspec.questions`` writes what it writes).

Reading a file outside the repository is a deliberate exception, kept narrow: only
``<state home>/<repo id>/<slug>/`` of the repository's own id, each folder this user's own (owned
by them, not writable by anyone — a umask 002 group bit is 7.x's own default on many systems), every file through the read rule with that folder as its root (a
link leading out of it is refused, never followed).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

from scars.core import settings
from scars.core.git import GitUnavailable, run_git
from scars.core.loops.base import Budget, LoopState, StopRule, read_json
from scars.core.loops.loopspec import versions
from scars.core.model import Problem
from scars.core.records import replace
from scars.core.storage import safe_read
from scars.core.text import join_clauses
from scars.core.values import as_dict

STATE_FILE = "state.json"
DIGEST_FILE = "state.digest"
DEFAULT_REWIND_LIMIT = 2
NO_REWIND_COUNT_SINCE = (7, 9, 0)
CONVERGED_EXITS = ("converged", "converged with caveats")
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")  # a repo id, slug or attempt as a path part


def state_home() -> Path:
    """7.x's state home as this user has it (never made here; 7.x makes it on first use)."""
    return Path(os.path.abspath(settings.current().loop_spec_home))


def repo_id(project_root: Path) -> tuple[str | None, str]:
    """(the repo id 7.x keys ``project_root``'s runs by, how it was found); id None when the pin is
    not a single path part (then nothing is read)."""

    def git(*args: str) -> str | None:
        try:
            return run_git(project_root, *args).strip()
        except GitUnavailable:
            return None

    pinned = git("config", "--local", "--get", "loop-spec.repoId")
    if pinned:
        if not _ID.match(pinned):
            return None, f"git config loop-spec.repoId {pinned!r} is not a repo id (not read)"
        return pinned, "pinned by the clone's git config (loop-spec.repoId)"
    roots = (git("rev-list", "--max-parents=0", "HEAD") or "").split()
    canonical = sorted(roots)[0] if roots else str(Path(project_root).resolve())
    rid = hashlib.sha256(canonical.encode()).hexdigest()[:16]
    return rid, ("of the root commit " + canonical[:12]) if roots else "of the project's path (no git history)"


def state_digest(state: Any) -> str:
    """``ids.digest``: sha256 of the state as compact, key-sorted JSON (the program's guard)."""
    canonical = json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def program_json(state: Any) -> bytes:
    """``jsonio.atomic_write_json``'s bytes: key-sorted, indent 2, non-ASCII as itself, a newline."""
    return (json.dumps(state, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def own_folder_problem(path: Path) -> str | None:
    """Why ``path`` is not a folder of this user's alone to read state from (None: it is)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISLNK(st.st_mode):
        return "a symlink (never followed)"
    if not stat.S_ISDIR(st.st_mode):
        return "not a folder"
    if st.st_uid != os.getuid() or st.st_mode & stat.S_IWOTH:
        return "not this user's (another user owns it, or anyone may write it)"
    return None


def repo_home(project_root: Path) -> tuple[Path | None, str, list[Problem]]:
    """``<state home>/<repo id>`` for ``project_root`` (None when there is none to read), how the
    id was found, and what is wrong on the way."""
    rid, how = repo_id(project_root)
    if rid is None:
        return None, how, [Problem(str(project_root), None, f"loop-spec 7.x state: {how}", "warning")]
    home = state_home()
    base = home / rid
    why = own_folder_problem(base)
    if why == "absent":
        return None, how, []
    if why:
        return None, how, [Problem(str(base), None, f"loop-spec 7.x state folder is {why}; not read", "warning")]
    return base, how, []


def project_states(project_root: Path) -> list[LoopState]:
    """Every 7.x run of ``project_root`` (one per slug folder of its repo id), by slug."""
    base, how, problems = repo_home(project_root)
    if base is None:
        return []  # nothing of 7.x's for this repository (a bad pin says so through its gate)
    out: list[LoopState] = []
    try:
        names = sorted(safe_read.list_dir(base, root=base, what="the state folder"))
    except (OSError, safe_read.Unreadable):
        names = []
    for name in names:
        folder = base / name
        if not _ID.match(name) or own_folder_problem(folder) is not None:
            continue  # last-result.json, a link, another's folder: no run of this repository's
        if (folder / STATE_FILE).is_file() or (folder / STATE_FILE).is_symlink():
            out.append(read_state(folder / STATE_FILE, project_root=project_root, repo_id_how=how))
    if problems and out:
        out[0] = _with_problems(out[0], problems)
    # What names a waiting run for its gate: the repository while it is the only one asking (a
    # request's root is the repository), else its own state.json.
    asking = [s for s in out if s.waiting_for_human]
    for n, s in enumerate(out):
        if s.waiting_for_human:
            out[n] = replace(s, details={**s.details, "gate_path": str(project_root) if len(asking) == 1 else s.path})
    return out


def _with_problems(state: LoopState, problems: list[Problem]) -> LoopState:
    return replace(state, parse_failures=(*state.parse_failures, *problems))


def is_state_file(path: Path) -> bool:
    """A ``state.json`` 7.x wrote (its ``schema`` and ``stateFormat``/``loopSpecVersion`` keys)."""
    if path.name != STATE_FILE:
        return False
    data, failure = read_json(path, path.parent)
    return failure is None and isinstance(data, dict) and "questions" in data and "loopSpecVersion" in data


def _rewind_limit(version: str | None, stored: Any) -> tuple[int | None, str]:
    vt = versions.version_tuple(version)
    if vt is not None and vt >= NO_REWIND_COUNT_SINCE:
        return None, "since 7.9.0 no count bounds rewinds (an identical re-run stops; a recurrence asks)"
    env = settings.current().loop_spec_rewind_budget
    if env:
        try:
            return int(env), "LOOP_SPEC_REWIND_BUDGET"
        except ValueError:
            return None, f"LOOP_SPEC_REWIND_BUDGET {env!r} is not an integer (loop-spec refuses to run)"
    if isinstance(stored, int) and not isinstance(stored, bool):
        return stored, "the state's budget.limit"
    return DEFAULT_REWIND_LIMIT, "loop-spec's default"


def open_question(state: dict[str, Any], folder: Path, failures: list[Problem]) -> dict[str, Any] | None:
    """The open question with its ``question.json`` (text, options, default), or None. The file
    is taken from ``attempts/<attempt>/`` of the run's own folder, never from the path recorded."""
    questions = as_dict(state.get("questions"))
    current = questions.get("open")
    if not isinstance(current, dict):
        return None
    qid, attempt = current.get("questionId"), current.get("attempt")
    out: dict[str, Any] = {
        "id": qid,
        "attempt": attempt,
        "phase": current.get("phase"),
        "kind": current.get("kind"),
        "asked_at": current.get("askedAt"),
        "default": current.get("defaultValue"),
        "text": None,
        "options": [],
        "file": None,
    }
    if not (isinstance(qid, str) and isinstance(attempt, str) and _ID.match(attempt)):
        failures.append(Problem(STATE_FILE, None, "questions.open names no usable questionId / attempt"))
        return out
    path = folder / "attempts" / attempt / "question.json"
    out["file"] = str(path)
    record, failure = read_json(path, folder)
    if failure is not None:
        failures.append(Problem(str(path), None, f"the open question's file: {failure.message}"))
        return out
    if not isinstance(record, dict) or record.get("questionId") != qid:
        failures.append(Problem(str(path), None, "question.json is not the open question's"))
        return out
    options = [
        {"value": o["value"], "label": str(o.get("label") or o["value"])}
        for o in record.get("options") or []
        if isinstance(o, dict) and isinstance(o.get("value"), str)
    ]
    out.update(text=record.get("text"), options=options, kind=record.get("kind") or out["kind"])
    if "defaultValue" in record:
        out["default"] = record.get("defaultValue")
    return out


def _product(state: dict[str, Any], phase: str) -> dict[str, Any]:
    products = as_dict(state.get("products"))
    entry = products.get(phase)
    product = entry.get("product") if isinstance(entry, dict) else None
    return product if isinstance(product, dict) else {}


def read_state(path: Path, *, project_root: Path | None = None, repo_id_how: str | None = None) -> LoopState:
    """One 7.x run as a LoopState; never raises on bad input."""
    path = Path(path)
    folder = path.parent
    failures: list[Problem] = []
    data, failure = read_json(path, folder)
    slug = folder.name
    shown = str(path)
    if failure is None and not isinstance(data, dict):
        failure = Problem(shown, None, "state.json is not a JSON object")
    if failure is not None:
        failure = Problem(shown, failure.line, failure.message)
        return LoopState(
            kind="loop-spec",
            name=slug,
            path=shown,
            budget=Budget(None, None, "rewinds"),
            stop_rule=StopRule(None, ("state.json unusable",)),
            route=None,
            waiting_for_human=False,
            reason=f"state.json unusable: {failure.message}",
            parse_failures=(failure,),
            details={"loop_spec_version": {"line": versions.LINE_7, "version": None, "why": "state.json"}},
        )
    version = data.get("loopSpecVersion") if isinstance(data.get("loopSpecVersion"), str) else None
    line = versions.version_line(version) or versions.LINE_7
    assumed = versions.Assumed(versions.LINE_7, f"state.json in the state home, loopSpecVersion {version}", version)
    if line != versions.LINE_7:
        failures.append(
            Problem(shown, None, f"loopSpecVersion {version!r} in a 7.x state home; read as 7.x", "warning")
        )
    digest_ok: bool | None = None
    digest_path = folder / DIGEST_FILE
    if digest_path.is_file() or digest_path.is_symlink():
        try:
            expected = safe_read.read_text(digest_path, root=folder, limit=4096, what=DIGEST_FILE).strip()
            digest_ok = expected == state_digest(data)
        except (OSError, safe_read.Unreadable) as exc:
            failures.append(Problem(str(digest_path), None, f"{DIGEST_FILE}: {exc}"))
    if digest_ok is not True:
        failures.append(
            Problem(
                shown,
                None,
                "state.digest does not match state.json: loop-spec refuses to resume it "
                '("state.json was edited outside the program")'
                if digest_ok is False
                else "no state.digest beside state.json: loop-spec refuses to resume it",
                "warning",
            )
        )

    run = as_dict(data.get("run"))
    phase_block = as_dict(data.get("phase"))
    phase = phase_block.get("current") if isinstance(phase_block.get("current"), str) else None
    budget_block = as_dict(data.get("budget"))
    spent = budget_block.get("spent") if isinstance(budget_block.get("spent"), int) else None
    limit, limit_from = _rewind_limit(version, budget_block.get("limit"))
    iterate = as_dict(data.get("iterate"))
    judge = iterate.get("judge") if isinstance(iterate.get("judge"), dict) else None
    prior_gaps = [g for g in iterate.get("priorGaps") or [] if isinstance(g, dict)]
    product = _product(data, "iterate")
    exit_ = product.get("exit") if isinstance(product.get("exit"), str) else None
    result = data.get("result") if isinstance(data.get("result"), dict) else None
    classification = (result or {}).get("classification")
    question = open_question(data, folder, failures)

    reasons: list[str] = []
    if exit_ in CONVERGED_EXITS:
        met, outcome = True, "converged"
        caveats = product.get("caveats") or []
        reasons.append(f"ITERATE: {exit_}" + (f" ({len(caveats)} caveat(s))" if caveats else ""))
    elif exit_ == "escalated":
        met, outcome = True, "escalated"
        reasons.append("ITERATE: escalated (unmet with no gap, or no rewind budget left)")
    elif result is not None:
        met, outcome = True, str(classification or result.get("status") or "finished")
        reasons.append(f"the run finished: {outcome}")
    else:
        met, outcome = False, None
        if judge is not None:
            reasons.append(f"judge: {judge.get('verdict')} ({len(judge.get('gaps') or [])} gap(s))")
        elif exit_ == "rewind":
            reasons.append(
                "ITERATE rewound: " + join_clauses([str(g.get("text")) for g in product.get("gaps") or []][:1])
            )
        else:
            reasons.append("not judged yet" if phase != "iterate" else "ITERATE: the judge has not answered")
        if limit is not None and spent is not None:
            reasons.append(f"{max(limit - spent, 0)} of {limit} rewinds left ({limit_from})")
        else:
            reasons.append(limit_from)
    reasons.append(assumed.describe())

    waiting = question is not None
    if question is not None:
        reason = f"question ({question['kind'] or 'question'}, {question['phase'] or phase}): {question['text'] or question['id']}"
    elif met:
        reason = reasons[0]
    else:
        reason = f"phase {phase or 'unknown'}; the next launcher call continues the run"
    status = (
        "waiting: question"
        if waiting
        else "converged"
        if outcome == "converged"
        else outcome
        if met and outcome
        else (phase or "unknown")
    )
    details: dict[str, Any] = {
        "loop_spec_version": assumed.to_dict(),
        "slug": slug,
        "state_home": str(folder.parent.parent),
        "repo_id": folder.parent.name,
        "repo_id_how": repo_id_how,
        "project_root": str(project_root) if project_root is not None else None,
        "run_id": run.get("id"),
        "entry": run.get("entry"),
        "current_phase": phase,
        "judge": judge,
        "prior_gaps": prior_gaps,
        "iterate_exit": exit_,
        "iterate_gaps": product.get("gaps") or [],
        "caveats": product.get("caveats") or [],
        "rewind_limit_from": limit_from,
        "question": question,
        "result": result,
        "digest_ok": digest_ok,
    }
    return LoopState(
        kind="loop-spec",
        name=slug,
        path=shown,
        budget=Budget(spent, limit, "rewinds"),
        stop_rule=StopRule(met, tuple(reasons), outcome),
        route=exit_,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=data,
        status=status,
        trend_label="",
        points=(),
        details=details,
    )
