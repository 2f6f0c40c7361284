#!/usr/bin/env python3
"""Measurement probes that ``bench/run.py`` starts in fresh subprocesses.

Each probe prints one JSON object on its last line of stdout. A probe that cannot run
because a part of scars is not there prints ``{"skipped": "<why>"}`` and exits 0; any
other failure raises (non-zero exit), which run.py reports as a failed measurement.

    python bench/probes.py parse-baseline PATH...     # CSafeLoader over the YAML scars reads
    python bench/probes.py parse-scars FEATURE N      # CPU of scars' own load of the same files (best of N)
    python bench/probes.py mem-import                 # ru_maxrss after importing the reader
    python bench/probes.py mem-read FEATURE           # ru_maxrss after read_feature
    python bench/probes.py patterns FEATURE N         # CPU of the possible patterns alone (best of N)
    python bench/probes.py decide REPO FEATURE N      # N durable decisions: p50 / p99
    python bench/probes.py app FEATURE [--steps N]    # first paint, cursor step, filter
    python bench/probes.py datatable FEATURE          # the same items in Textual's DataTable
"""

from __future__ import annotations

import gc
import json
import resource
import sys
import time
from pathlib import Path


def _emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def yaml_inputs(path: Path) -> list[Path]:
    """The YAML files scars reads for a feature directory, or for every feature of a repo.

    Scar reports, index.yaml, iteration-log.yaml and the repository's registry. (Markdown
    files are read by scars too but are not YAML, so the baseline does not parse them.)
    """
    path = Path(path)
    features = (
        [path] if (path / "scar-reports").is_dir() else sorted(p for p in (path / "changes").iterdir() if p.is_dir())
    )
    out: list[Path] = []
    for f in features:
        rdir = f / "scar-reports"
        if rdir.is_dir():
            out += sorted(p for p in rdir.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        out += [f / n for n in ("index.yaml", "iteration-log.yaml") if (f / n).is_file()]
    root = path if (path / "changes").is_dir() else path.parent.parent
    reg = root / ".samsara" / "systemic-scars.yaml"
    if reg.is_file():
        out.append(reg)
    return out


def parse_baseline(paths: list[str]) -> None:
    """The practical limit: read + ``yaml.load(CSafeLoader)`` each file, nothing else."""
    import yaml

    t0 = time.perf_counter()
    files = [f for p in paths for f in yaml_inputs(Path(p))]
    ok = bad = 0
    for f in files:
        try:
            yaml.load(f.read_bytes(), Loader=yaml.CSafeLoader)
            ok += 1
        except yaml.YAMLError:
            bad += 1
    _emit({"files": len(files), "parsed": ok, "errors": bad, "seconds": time.perf_counter() - t0})


def parse_scars(feature: str, n: int) -> None:
    """scars' own load (``safe_read.load_path_quiet``: read, checks, the one-pass build) of the files
    the baseline parses, in this process, cyclic GC off as in the read: CPU seconds, best of ``n``
    (no start-up: the part of a cold read no scheduling avoids)."""
    from scars.core.storage import safe_read

    files = yaml_inputs(Path(feature))
    cpu = []
    gc.disable()
    for _ in range(n):
        c = time.process_time()
        for f in files:
            safe_read.load_path_quiet(f)
        cpu.append(time.process_time() - c)
    _emit({"cpu": min(cpu), "cpu_runs": cpu, "files": len(files)})


def mem_import() -> None:
    import scars.core.samsara.feature  # noqa: F401

    _emit({"maxrss_kb": _maxrss_kb()})


def mem_read(feature: str) -> None:
    from scars.core.samsara.feature import read_feature

    f = read_feature(feature)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    _emit(
        {
            "maxrss_kb": _maxrss_kb(),
            "children_maxrss_kb": children,
            "items": len(f.items) + len(f.resolved),
            "signal_lost": f.signal_lost,
        }
    )


def patterns_probe(feature: str, n: int) -> None:
    """The possible patterns alone, in this process, on the feature's counted items (read first, not
    timed, the patterns left out of the read: computed in line on no item): CPU and wall seconds,
    the best of ``n`` runs, each with a fresh vocabulary (as a cold read starts) and the cyclic GC
    off (as in the forked child that computes them in a cold read)."""
    from scars.core.samsara import aggregate, patterns
    from scars.core.samsara.feature import read_feature

    real = aggregate.possible_patterns
    aggregate.possible_patterns = lambda items, literal: []  # the read computes no patterns
    try:
        f = read_feature(feature)
    finally:
        aggregate.possible_patterns = real
    counted = [it for it in f.items if it.counted]
    literal = list(f.cross_task_patterns)
    cpu, wall, found = [], [], 0
    gc.disable()
    for _ in range(n):
        patterns._local.vocabulary = None
        c, t = time.process_time(), time.perf_counter()
        found = len(patterns.possible_patterns(counted, literal))
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - t)
    _emit({"cpu": min(cpu), "wall": min(wall), "cpu_runs": cpu, "items": len(counted), "patterns": found})


def _percentile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    k = min(len(xs) - 1, max(0, round(q * (len(xs) - 1))))
    return xs[k]


def decide(repo: str, feature: str, n: int) -> None:
    """Time ``FeatureSession.decide`` (durable: on disk, fsynced) for n different items."""
    try:
        from scars.core.samsara.session import FeatureSession
    except ImportError as exc:
        _emit({"skipped": f"scars.core.samsara.session is not available ({exc})"})
        return
    t_open = time.perf_counter()
    session = FeatureSession.open(feature)
    t_open = time.perf_counter() - t_open
    try:
        items = [it for it in session.feature.items if it.counted][:n]
        times: list[float] = []
        for k, it in enumerate(items):
            action = ("fix", "accept", "defer")[k % 3]
            fields: dict = {}
            if action == "accept":
                fields = {
                    "re_review_signal": "a second writer appears in the logs",
                    "owner": "platform team",
                    "rationale": "single writer in production today",
                }
            elif action == "defer":
                fields = {"reason": "needs the scheduler redesign", "revisit_when": "after the Q3 scheduler work"}
            t = time.perf_counter()
            session.decide(it.id, action, **fields)
            times.append(time.perf_counter() - t)
    finally:
        session.close()
    _emit(
        {
            "n": len(times),
            "open_s": t_open,
            "p50_ms": 1000 * _percentile(times, 0.5),
            "p99_ms": 1000 * _percentile(times, 0.99),
            "max_ms": 1000 * max(times),
            "items": len(session.feature.items),
        }
    )


def app_probe(feature_dir: str, steps: int) -> None:
    """In one process: read the feature (not timed), then start the app and measure."""
    import asyncio

    try:
        from scars.tui.app.app import ScarsApp
        from scars.tui.app.screens.main import MainScreen
    except ImportError as exc:
        _emit({"skipped": f"the app is not available ({exc})"})
        return
    from textual._wait import wait_for_idle

    from scars.core.samsara.feature import read_feature

    feature = read_feature(feature_dir)

    async def main() -> dict:
        t0 = time.perf_counter()
        app = ScarsApp.from_feature(feature)
        # Every frame the app writes out (Textual's one call per screen update), timed: the first
        # paint is the first frame after the rows are set (the Loaded handler's end), not the
        # moment the app is idle again; the app builds the filter's index after that frame.
        painted: list[float] = []
        display = app._display

        def timed_display(screen, update):
            painted.append(time.perf_counter())
            return display(screen, update)

        app._display = timed_display  # type: ignore[method-assign]
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_loaded()
            loaded = time.perf_counter()
            await pilot.pause()
            ready = time.perf_counter() - t0
            first_paint = next(t for t in painted if t >= loaded) - t0
            screen = app.screen
            assert isinstance(screen, MainScreen), type(screen)
            items = screen.items

            async def to_last_frame(act) -> float:
                """Seconds from ``act()`` to the last frame the app wrote for it. The app settles as in
                ``pilot.pause()`` (its messages processed, then no CPU for one 20 ms sleep) but without
                the pause's own forced screen update at the end, which would paint after the idle
                wait instead of when the app paints."""
                painted.clear()
                t = time.perf_counter()
                act()
                await pilot._wait_for_screen()
                await wait_for_idle(0)
                return painted[-1] - t if painted else float("nan")

            # The idle frame: one unchanged line asked to repaint, to its frame (Textual's frame
            # timer and a minimal update: the floor under any key's repaint).
            idle = [await to_last_frame(lambda: items.refresh_row(items.cursor)) for _ in range(steps)]
            step = [await to_last_frame(screen.action_cursor_down) for _ in range(steps)]
            # A filter: to the first frame after its rows land in the list (set_rows, from the
            # filter's worker), and to the last frame (the detail pane of the new cursor row).
            landed: list[float] = []
            set_rows = items.set_rows

            def timed_set_rows(rows, **kwargs):
                set_rows(rows, **kwargs)
                landed.append(time.perf_counter())

            items.set_rows = timed_set_rows  # type: ignore[method-assign]

            async def filter_frames(text: str) -> tuple[float, float]:
                landed.clear()
                t = time.perf_counter()
                last = await to_last_frame(lambda: screen.apply_filter(text)) + t
                assert (app.filter.source if app.filter else "") == text and len(landed) == 1
                assert all(w.is_finished for w in app.workers), "the filter's worker still running"
                return next(p for p in painted if p >= landed[0]) - t, last - t

            filt, filt_detail = await filter_frames("retry")
            shown = len(items.rows)
            unfilt, _ = await filter_frames("")
        med = sorted(step)[len(step) // 2]
        idle_med = sorted(idle)[len(idle) // 2]
        return {
            "first_paint_s": first_paint,
            "idle_s": ready,
            "step_ms": 1000 * med,
            "idle_ms": 1000 * idle_med,
            "step_net_ms": 1000 * max(0.0, med - idle_med),
            "filter_ms": 1000 * filt,
            "filter_detail_ms": 1000 * filt_detail,
            "unfilter_ms": 1000 * unfilt,
            "filter_rows": shown,
            "items": len(feature.items),
        }

    _emit(asyncio.run(main()))


def datatable_probe(feature_dir: str) -> None:
    """The comparison: every item as a row of Textual's built-in DataTable."""
    import asyncio

    from textual.app import App, ComposeResult
    from textual.widgets import DataTable

    from scars.core.samsara.feature import read_feature
    from scars.core.sanitize import one_line

    feature = read_feature(feature_dir)
    rows = [(it.id, it.category, it.task_id or "", one_line(it.text, 80)) for it in feature.items]

    class TableApp(App[None]):
        def compose(self) -> ComposeResult:
            yield DataTable()

        def on_mount(self) -> None:
            table = self.query_one(DataTable)
            table.add_columns("id", "category", "task", "text")
            table.add_rows(rows)

    async def main() -> dict:
        t0 = time.perf_counter()
        app = TableApp()
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await pilot.pause()
            first_paint = time.perf_counter() - t0
            table = app.query_one(DataTable)
            step = []
            for _ in range(10):
                t = time.perf_counter()
                table.action_cursor_down()
                await pilot.pause()
                step.append(time.perf_counter() - t)
        return {"first_paint_s": first_paint, "rows": len(rows), "step_ms": 1000 * sorted(step)[5]}

    _emit(asyncio.run(main()))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "parse-baseline":
        parse_baseline(rest)
    elif cmd == "parse-scars":
        parse_scars(rest[0], int(rest[1]))
    elif cmd == "mem-import":
        mem_import()
    elif cmd == "mem-read":
        mem_read(rest[0])
    elif cmd == "patterns":
        patterns_probe(rest[0], int(rest[1]))
    elif cmd == "decide":
        decide(rest[0], rest[1], int(rest[2]))
    elif cmd == "app":
        steps = int(rest[2]) if len(rest) > 2 and rest[1] == "--steps" else 20
        app_probe(rest[0], steps)
    elif cmd == "datatable":
        datatable_probe(rest[0])
    else:
        print(f"probes.py: unknown probe {cmd!r}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
