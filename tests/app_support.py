"""Hand-built features and helpers for the app tests (no reader needed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from scars.core.model import EvaluationContract, Feature, IterationLog, ParseFailure, Registry, Round, ScarItem

CAT_PREFIX = {"known_shortcuts": "ks", "silent_failure_conditions": "sf", "unverified_assumptions": "ua"}


def make_item(n: int, category: str = "known_shortcuts", *, text: str | None = None, task: str = "task-1",
              **kw) -> ScarItem:
    text = text if text is not None else f"Item number {n} in {task}"
    digest = hashlib.sha1(f"{category}:{n}:{text}".encode()).hexdigest()[:10]
    return ScarItem(
        id=f"{CAT_PREFIX[category]}-{digest}",
        category=category,  # type: ignore[arg-type]
        text=text,
        task_id=task,
        file=f"scar-reports/{task}-scar.yaml",
        line=n + 2,
        form="gen2",
        normalized=" ".join(text.lower().split()),
        **kw,
    )


def make_feature(path: Path, items: list[ScarItem], *, failures=(), rounds=(), repo_root: Path | None = None,
                 contract: str | None = None) -> Feature:
    groups = {"cross_task_patterns": (), "deferred_from_level_1": (), "unaddressed": ()}
    cross = [i.id for i in items if i.counted and i.text.startswith("Shared")]
    deferred = [i.id for i in items if i.counted and i.deferred and i.id not in cross]
    rest = [i.id for i in items if i.counted and i.id not in cross and i.id not in deferred]
    groups = {"cross_task_patterns": tuple(cross), "deferred_from_level_1": tuple(deferred),
              "unaddressed": tuple(rest)}
    counts = {c: sum(1 for i in items if i.counted and i.category == c) for c in CAT_PREFIX}
    log = IterationLog(file="iteration-log.yaml", feature="demo", signal_lost_initial=9, rounds=tuple(rounds)) \
        if rounds else None
    return Feature(
        name=path.name,
        path=str(path),
        repo_root=str(repo_root) if repo_root else None,
        items=tuple(items),
        parse_failures=tuple(failures),
        registry=Registry(state="missing"),
        contract=EvaluationContract(file="pre-thinking.md", feedback_loop=contract) if contract else None,
        iteration_log=log,
        signal_lost=sum(counts.values()),
        counts=counts,
        groups=groups,
        execution_mode="human-in-the-loop",
    )


def sample_feature(tmp_path: Path) -> Feature:
    repo = tmp_path / "repo"
    fdir = repo / "changes" / "2026-07-01_csv-export"
    fdir.mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / "src" / "export.py").write_text("".join(f"line {i} = {i}\n" for i in range(1, 60)))
    items = [
        make_item(1, text="Shared retry count is hard-coded to 3", task="task-1", where="src/export.py:40-42"),
        make_item(2, text="Shared retry count is hard-coded to 3", task="task-2"),
        make_item(3, "silent_failure_conditions", text="Timezone-naive timestamps compare as UTC", task="task-2",
                  deferred=True),
        make_item(4, "unverified_assumptions", text="Only one writer at a time", task="task-3", verified=False),
        make_item(5, text="CSV export skips [bold]empty[/bold] rows [@click=app.quit]x[/] \x1b[2Jend", task="task-3",
                  where="../../etc/passwd"),
        make_item(6, text="Orphan item of a broken report", task="task-4", counted=False),
    ]
    failures = [ParseFailure(file="scar-reports/task-4-scar.yaml", line=3, reason="not a mapping")]
    rounds = [Round(round=1, signal_lost_before=9, signal_lost_after=5, decision="continue",
                    fix=("a", "b", "c"), accept=({"description": "x", "owner": "alice"},), defer=("d",))]
    return make_feature(fdir, items, failures=failures, rounds=rounds, repo_root=repo,
                        contract="run pytest tests/test_export.py and read the failing assertion")
