"""Read a samsara feature directory (formats.md §1) into a ``Feature``.

Finds feature directories (``changes/<feature>/``) and the repository root, reads every input
of a feature — the scar reports (``scars.core.samsara.reports``, in parallel above a threshold),
the registry, index.yaml, iteration-log.yaml, auto-decisions.md and the evaluation contract —
and aggregates them. Reports are parsed once, with PyYAML's libyaml loader
(``scars.core.storage.safe_read``); no ruamel on this path. A reopen with unchanged files comes
from the cache (``scars.core.storage.cache``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from scars.core.formats.auto_decisions import parse_auto_decisions
from scars.core.formats.iteration_log import read_iteration_log
from scars.core.model import EvaluationContract, Feature, FeatureSummary, IterationLog, Problem, ScarItem, ScarReport
from scars.core.samsara.aggregate import aggregate, start_possible_patterns
from scars.core.samsara.contract import parse_contract
from scars.core.samsara.layout import (
    REPORTS_DIR,
    cached_feature,
    cached_read,
    feature_dir,
)

# re-exported: callers find features where they read them
from scars.core.samsara.layout import find_features as find_features
from scars.core.samsara.layout import is_feature_dir as is_feature_dir
from scars.core.samsara.registry import read_registry
from scars.core.samsara.reports import read_report, read_summary_report
from scars.core.samsara.resolutions import resolve_across
from scars.core.storage import cache as feature_cache
from scars.core.storage import parallel, safe_read
from scars.core.storage.parallel import gc_paused, read_reports
from scars.core.storage.paths import folder_refusal, symlink_refusal


def is_report_name(name: str) -> bool:
    """A scar report's file name: ``*.yaml`` or ``*.yml`` in any case (``task-2-scar.YAML``).
    Every other file of ``scar-reports/`` (hidden dot-files aside) is a parse failure."""
    return name.lower().endswith((".yaml", ".yml"))


def _entry_is_file(entry: os.DirEntry) -> bool:
    try:
        return entry.is_file()
    except OSError:  # a symlink loop
        return False


def read_feature(path: str | os.PathLike[str], meanwhile: Callable[[Feature], None] | None = None) -> Feature:
    """Read and aggregate one feature directory. Raises PathNotFound when it is not one.

    ``meanwhile``: called, when the feature is read (not found in the cache), with the feature
    aggregated but for its possible patterns, before they are known (:func:`aggregate`'s, early)."""
    p, repo_root, fp, hit = cached_read(path)
    if hit is not None:
        return hit
    return read_missed(p, repo_root, fp, meanwhile, early=meanwhile is not None)


# What marks the cache fingerprint of a summary (read_summary): never taken for a whole feature.
SUMMARY = {"summary": FeatureSummary.__name__}


def read_summary(path: str | os.PathLike[str]) -> FeatureSummary:
    """What a repository's one line per feature shows of the feature directory ``path``: from the
    whole feature when the cache holds it, else from a read without the possible patterns and the
    log's matches (nothing of that line depends on them), cached in the feature's cache file under
    its own fingerprint (marked :data:`SUMMARY`: a whole feature read later takes the file back). Raises PathNotFound as :func:`read_feature` does."""
    p, repo_root = feature_dir(path)
    fp, hit = cached_feature(p, repo_root, also=SUMMARY)  # the whole feature or its summary
    if isinstance(hit, FeatureSummary):
        return hit
    if isinstance(hit, Feature):
        return FeatureSummary.of(hit)
    if fp is not None:
        fp = {**fp, **SUMMARY}
    with gc_paused():
        summary = FeatureSummary.of(_read_feature_files(p, repo_root, summary=True))
    if fp is not None:
        feature_cache.store(p, fp, summary)
    return summary


def read_missed(
    p: Path,
    repo_root: Path | None,
    fp: dict[str, Any] | None,
    meanwhile: Callable[[Feature], None] | None = None,
    *,
    early: bool = False,
) -> Feature:
    """Read the absolute feature directory ``p`` that :func:`~scars.core.samsara.layout.cached_feature`
    did not find in the cache (``repo_root`` and the fingerprint ``fp`` it took, stat-only and taken
    before reading: not taken twice), and store it under ``fp`` (None: the cache is off).

    While the possible patterns are computed in a forked child (``aggregate``'s ``meanwhile``) the
    cache file's items are written, then ``meanwhile`` (the caller's own work that does not depend
    on them) runs — before them when ``early`` (the app's first paint does not wait for the cache);
    the file is completed with the feature once they are known (``early``: also when they are
    computed here, before them: :func:`aggregate`'s)."""
    store = feature_cache.begin_store(p, fp) if fp is not None else None

    def during(aggregated: Feature) -> None:
        if early and meanwhile is not None:  # the app's first paint does not wait for the cache
            meanwhile(aggregated)
        if store is not None:
            store.items(aggregated)
        if not early and meanwhile is not None:
            meanwhile(aggregated)

    try:
        with gc_paused():
            feature = _read_feature_files(p, repo_root, during, early=early)
    except BaseException:
        if store is not None:
            store.drop()
        raise
    if store is not None:
        store.finish(feature)
    return feature


def read_features(paths: Sequence[str | os.PathLike[str]], *, workers: int | None = None) -> list[Feature]:
    """``[read_feature(p) for p in paths]``, across processes for many features
    (``scars.core.storage.parallel``: from 64 features, or ``SCARS_WORKERS``)."""
    return parallel.read_features(paths, read_feature, workers=workers)


def read_summaries(paths: Sequence[str | os.PathLike[str]], *, workers: int | None = None) -> list[FeatureSummary]:
    """``[read_summary(p) for p in paths]``, across processes as :func:`read_features`."""
    return parallel.read_features(paths, read_summary, workers=workers)


def _read_feature_files(
    p: Path,
    repo_root: Path | None,
    meanwhile: Callable[[Feature], None] | None = None,
    summary: bool = False,
    *,
    early: bool = False,
) -> Feature:
    """read_feature without the cache: read every input of feature directory ``p`` (``meanwhile``,
    ``summary``, ``early``: :func:`~scars.core.samsara.aggregate.aggregate`'s)."""

    registry = read_registry(repo_root)
    failures: list[Problem] = []
    warnings: list[Problem] = []
    if safe_read.LOADER_WARNING:
        warnings.append(Problem("", None, safe_read.LOADER_WARNING, "warning"))
    registry_failure = registry.failure()
    if registry_failure is not None:
        failures.append(registry_failure)
    reports: list[ScarReport] = []
    dangling: list[tuple[str, str]] = []
    limit_root = repo_root or p
    rdir = p / REPORTS_DIR
    rdir_refusal = folder_refusal(rdir / "x", limit_root) if rdir.is_symlink() else None
    if rdir_refusal is not None:  # a symlinked scar-reports/ leading out: listed, never read
        failures.append(
            Problem(f"{REPORTS_DIR}/", None, "points outside the repository; not read (a symlink leads out)")
        )
    elif rdir.is_dir():
        names = sorted(e.name for e in os.scandir(rdir) if is_report_name(e.name))
        # Decide per name first (cheap checks), then read the reports — in parallel above a
        # threshold (scars.core.storage.parallel) — and merge the results in name order.
        slots: list[Any] = []
        jobs: list[tuple[Path, str]] = []
        for name in names:
            fp = rdir / name
            rel = f"{REPORTS_DIR}/{name}"
            refusal = symlink_refusal(fp, limit_root) or ("a directory, not a report file" if fp.is_dir() else None)
            if refusal is not None:
                pf = Problem(rel, None, refusal)
                slots.append(
                    (
                        ScarReport(file=rel, task_id=None, completion_status=None, items=(), parse_failure=pf),
                        [pf],
                        [],
                        [],
                    )
                )
                continue
            slots.append(len(jobs))
            jobs.append((fp, rel))
        results = read_reports(jobs, registry, read_summary_report if summary else read_report)
        for slot in slots:
            report, f, w, d = results[slot] if isinstance(slot, int) else slot
            reports.append(report)
            failures.extend(f)
            warnings.extend(w)
            dangling.extend(d)
        others = sorted(
            e.name
            for e in os.scandir(rdir)
            if not is_report_name(e.name) and not e.name.startswith(".") and _entry_is_file(e)
        )
        for name in others:
            # The seed's own non-conforming case (a markdown report): listed, never skipped, so
            # the entry verdict is unknown — a default skip would drop its items silently.
            pf = Problem(
                f"{REPORTS_DIR}/{name}",
                None,
                "not a .yaml / .yml file: a non-conforming scar report (e.g. markdown); its items cannot be counted",
            )
            reports.append(ScarReport(file=pf.file, task_id=None, completion_status=None, items=(), parse_failure=pf))
            failures.append(pf)
        if not names and not others:
            warnings.append(
                Problem(f"{REPORTS_DIR}/", None, "holds no .yaml report; signal_lost counts nothing here", "warning")
            )
    else:
        warnings.append(
            Problem(f"{REPORTS_DIR}/", None, "no such directory: signal_lost counts nothing here", "warning")
        )

    reports, across = resolve_across(reports, summary=summary)
    warnings.extend(across)
    all_items = [it for r in reports for it in r.items]
    items = tuple(it for it in all_items if not _excluded(it))
    # The possible patterns need the items only: started now (in a forked child at scale) they are
    # computed while the rest of the feature is read and its log matched.
    possible = None if summary else start_possible_patterns(items)
    try:
        index, contract, log, auto = _read_the_rest(p, limit_root, failures, warnings, summary)
    except BaseException:
        if possible is not None:
            possible.cancel()
        raise
    return aggregate(
        Feature(
            name=p.name,
            path=str(p),
            repo_root=str(repo_root) if repo_root else None,
            reports=tuple(reports),
            items=items,
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
        ),
        possible,
        meanwhile,
        summary,
        early=early,
    )


def _read_the_rest(
    p: Path, limit_root: Path, failures: list[Problem], warnings: list[Problem], summary: bool = False
) -> tuple[Any, EvaluationContract | None, IterationLog | None, tuple]:
    """index.yaml, the pre-thinking contract, iteration-log.yaml and auto-decisions.md of feature
    directory ``p``: (index, contract, log, auto decisions); their problems added to ``failures``
    and ``warnings``. ``summary``: the contract is not read (None), nothing of a summary depends
    on it and its read is never a parse failure."""
    index = None
    ip = p / "index.yaml"
    refused = {}
    for name in ("index.yaml", "iteration-log.yaml", "auto-decisions.md", "pre-thinking.md", "1.5-pre-thinking.md"):
        why = symlink_refusal(p / name, limit_root)
        if why is not None:
            refused[name] = why
            failures.append(Problem(name, None, why))
    if "index.yaml" not in refused and ip.exists():
        loaded, problem = safe_read.load_path_quiet(ip, root=limit_root)
        if problem is not None:
            failures.append(Problem("index.yaml", problem.line, problem.reason))
        else:
            assert loaded is not None  # load_path_quiet returns the file or its problem
            if loaded.value is not None and not isinstance(loaded.value, dict):
                failures.append(Problem("index.yaml", 1, "not a mapping"))
            else:
                index = loaded.value or {}
                for ln, reason in loaded.problems:
                    warnings.append(Problem("index.yaml", ln, reason, "warning"))

    contract = None
    for name in () if summary else ("pre-thinking.md", "1.5-pre-thinking.md"):
        cp = p / name
        if name in refused:
            break
        if cp.is_file():
            try:
                contract = parse_contract(safe_read.read_text(cp, root=limit_root), name)
            except (safe_read.Unreadable, OSError) as exc:
                warnings.append(Problem(name, None, f"cannot read ({exc})", "warning"))
            break

    log = None
    lp = p / "iteration-log.yaml"
    if "iteration-log.yaml" not in refused and lp.exists():
        try:
            log = read_iteration_log(lp, root=limit_root)
            warnings.extend(log.warnings)
        except safe_read.Unreadable as exc:
            failures.append(Problem("iteration-log.yaml", exc.line, exc.reason))
        except OSError as exc:
            failures.append(Problem("iteration-log.yaml", None, f"cannot read: {exc.strerror or exc}"))

    auto: tuple = ()
    ap = p / "auto-decisions.md"
    if "auto-decisions.md" not in refused and ap.is_file():
        try:
            auto = tuple(parse_auto_decisions(safe_read.read_text(ap, root=limit_root)))
        except (safe_read.Unreadable, OSError) as exc:
            line = exc.line if isinstance(exc, safe_read.Unreadable) else None
            failures.append(Problem("auto-decisions.md", line, f"cannot read: {exc}"))
        for e in auto:
            for prob in e.problems:
                warnings.append(Problem("auto-decisions.md", e.line, f"decision {e.number:03d}: {prob}", "warning"))
    return index, contract, log, auto


def _excluded(item: ScarItem) -> bool:
    """Resolved items, and assumptions verified true, are not part of the remaining set."""
    return item.resolved or (item.category == "unverified_assumptions" and item.verified is True)
