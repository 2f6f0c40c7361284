#!/usr/bin/env python3
"""scars benchmarks: every figure measured in one run, side by side with its baseline.

    python bench/run.py                  # generate small/large/wide, measure all, print a table
    python bench/run.py --json           # the same as a JSON list of
                                         #   {name, value, unit, baseline, ratio, target, ok, ...}
    python bench/run.py --markdown       # the table as markdown (docs/performance.md)
    python bench/run.py --smoke          # CI: `small` only, each measurement once; asserts nothing
                                         #   about time, fails only when a measured command fails
    python bench/run.py --data DIR       # keep the generated repositories in DIR (reused next run)
    python bench/run.py --only cold,warm # run some measurements only

Every measurement runs in fresh subprocesses started from here, so interpreter start-up is
inside both the figure and its baseline. Baseline and subject runs alternate and the
minimum of each is kept (the least-disturbed run on a shared machine). What each figure
includes is printed with it (``--json``: the ``note`` field).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import first_paint  # noqa: E402  (bench/first_paint.py, next to this file)
import generate  # noqa: E402  (bench/generate.py, next to this file)

PROBES = HERE / "probes.py"
# The app probe's figures kept as the least of the runs (each run's are medians of its steps).
APP_FIGURES = ("first_paint_s", "step_ms", "step_net_ms", "filter_ms")
REQUESTS_PROBE = HERE / "requests_probe.py"


@dataclass
class Result:
    name: str
    value: float | None
    unit: str
    baseline: float | None = None
    ratio: float | None = None
    target: float | None = None
    target_of: str = "ratio"  # "ratio" or "value": which figure the target bounds
    ok: bool | None = None
    note: str = ""
    samples: dict = field(default_factory=dict)
    error: str | None = None

    def of_baseline(self) -> Result:
        """The ratio as most rows have it: the value over its baseline (none without one)."""
        self.ratio = self.value / self.baseline if self.value is not None and self.baseline else None
        return self

    def judge(self) -> Result:
        if self.error is not None or self.target is None:
            self.ok = None if self.error is None else False
            return self
        fig = self.ratio if self.target_of == "ratio" else self.value
        self.ok = None if fig is None else fig <= self.target
        return self


class MeasureError(RuntimeError):
    pass


# --- running things -----------------------------------------------------------------------


def usable_cores() -> int:
    """The cores this process may run on (what scars' own pool counts)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def scars_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "scars"
    if exe.is_file():
        return [str(exe)]
    found = shutil.which("scars")
    return [found] if found else [sys.executable, "-m", "scars.tui"]


_STATE_DIR: list[str] = []


def _bench_state_dir() -> str:
    """One state directory for every command this run starts (the intents of the gate records the
    requests probe makes), removed at exit: the bench never writes into the user's own."""
    if not _STATE_DIR:
        _STATE_DIR.append(tempfile.mkdtemp(prefix="scars-bench-state-"))
        atexit.register(shutil.rmtree, _STATE_DIR[0], True)
    return _STATE_DIR[0]


def base_env(cache_dir: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL_")}
    env["NO_COLOR"] = "1"
    env["SCARS_STATE_DIR"] = _bench_state_dir()
    env.pop("SCARS_NO_CACHE", None)
    if cache_dir is not None:
        env["SCARS_CACHE_DIR"] = str(cache_dir)
        env["XDG_CACHE_HOME"] = str(cache_dir / "xdg")
    return env


# CPU seconds (user + system) of every command `wall` ran, its own worker processes included,
# by command: parallelism hides work on a loaded machine, so the CPU time is reported as well.
CPU: dict[str, list[float]] = {}


def _children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def wall(cmd: list[str], env: dict[str, str], ok_codes: tuple[int, ...] = (0,), cpu_key: str | None = None) -> float:
    """Wall time of one subprocess run, output discarded; raises on a failing command. Its CPU
    seconds (with its children's) are kept in CPU[cpu_key] when a key is given."""
    c = _children_cpu()
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - t
    if cpu_key is not None:
        CPU.setdefault(cpu_key, []).append(_children_cpu() - c)
    if proc.returncode not in ok_codes:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-5:]
        raise MeasureError(f"{' '.join(cmd[:3])} … exited {proc.returncode}: " + " | ".join(tail))
    return elapsed


def probe(args: list[str], env: dict[str, str], timeout: float = 1800) -> dict:
    proc = subprocess.run([sys.executable, str(PROBES), *args], env=env, capture_output=True, timeout=timeout)
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-6:]
        raise MeasureError(f"probe {args[0]} exited {proc.returncode}: " + " | ".join(tail))
    lines = proc.stdout.decode("utf-8", "replace").strip().splitlines()
    if not lines:
        raise MeasureError(f"probe {args[0]} printed nothing")
    return json.loads(lines[-1])


class Bench:
    def __init__(self, data: Path, work: Path, smoke: bool, repeat: int | None):
        self.data = data
        self.work = work
        self.smoke = smoke
        self.repeat = repeat
        self.scars = scars_cmd()
        self._fresh = 0

    def reps(self, full: int) -> int:
        if self.smoke:
            return 1
        return self.repeat if self.repeat is not None else full

    def fresh_cache(self) -> Path:
        self._fresh += 1
        d = self.work / f"cache-{self._fresh}"
        d.mkdir(parents=True)
        return d

    def repo(self, size: str) -> Path:
        return self.data / size

    def feature(self, size: str) -> Path:
        m = json.loads((self.repo(size) / generate.MANIFEST).read_text(encoding="utf-8"))
        return self.repo(size) / m["features"][0]["path"]

    def items(self, size: str) -> int:
        m = json.loads((self.repo(size) / generate.MANIFEST).read_text(encoding="utf-8"))
        return m["totals"]["entries"]

    def sizes(self) -> dict[str, str]:
        """Which generated repository stands for each role (smoke: `small` for all)."""
        if self.smoke:
            return {"small": "small", "large": "small", "wide": "small"}
        return {"small": "small", "large": "large", "wide": "wide"}

    def ensure_data(self) -> None:
        for size in sorted(set(self.sizes().values())):
            repo = self.repo(size)
            manifest = repo / generate.MANIFEST
            if manifest.is_file():
                m = json.loads(manifest.read_text(encoding="utf-8"))
                if m.get("generator_version") == generate.GENERATOR_VERSION and m.get("seed") == 0:
                    continue
                shutil.rmtree(repo)
            t = time.perf_counter()
            generate.generate(size, repo, seed=0)
            log(f"generated {size} in {time.perf_counter() - t:.1f} s -> {repo}")

    # --- measurements -------------------------------------------------------------------

    def m_cold(self) -> list[Result]:
        size = self.sizes()["large"]
        feat = self.feature(size)
        cmd = self.scars + ["status", "--json", str(feat)]
        subj, base = self._cold_pairs(cmd, [str(feat)], self.reps(3), "cold")
        r = Result(
            f"cold load: scars status --json ({size}, {self.items(size):,} items)",
            min(subj),
            "s",
            baseline=min(base),
            target=1.0,
            note="wall time of `scars status --json FEATURE` with an empty cache, interpreter start to exit "
            "(read, parse, aggregate, JSON to /dev/null); baseline: a fresh `python` that imports "
            "PyYAML and yaml.load(CSafeLoader)s every YAML file scars reads (reports, index.yaml, "
            "iteration-log.yaml, registry), one process, nothing else; " + cpu_note("cold"),
            samples={"subject": subj, "baseline": base, "cpu": CPU.get("cold"), "cpu_baseline": CPU.get("cold-base")},
        )
        r.of_baseline()
        self.cold_large = r.value
        return [r.judge()]

    def _cold_pairs(self, cmd: list[str], paths: list[str], n: int, key: str) -> tuple[list[float], list[float]]:
        base_cmd = [sys.executable, str(PROBES), "parse-baseline", *paths]
        subj, base = [], []
        for _ in range(n):
            base.append(wall(base_cmd, base_env(None), cpu_key=key + "-base"))
            subj.append(wall(cmd, base_env(self.fresh_cache()), cpu_key=key))
        return subj, base

    def m_warm(self) -> list[Result]:
        size = self.sizes()["large"]
        feat = self.feature(size)
        cmd = self.scars + ["status", "--json", str(feat)]
        cache = self.fresh_cache()
        env = base_env(cache)
        cold = [wall(cmd, env)]  # fills the cache
        warm = [wall(cmd, env) for _ in range(self.reps(5))]
        cold_ref = getattr(self, "cold_large", None) or cold[0]
        r = Result(
            f"warm reopen: scars status --json ({size}, unchanged files)",
            min(warm),
            "s",
            baseline=cold_ref,
            target=0.1,
            note="the same command again with the cache the first run wrote (every file re-checked "
            "by stat; files whose stamps are too recent to trust re-hashed); baseline: the cold run",
            samples={"warm": warm, "first": cold},
        )
        r.of_baseline()
        return [r.judge()]

    def m_wide(self) -> list[Result]:
        size = self.sizes()["wide"]
        repo = self.repo(size)
        cmd = self.scars + ["status", str(repo)]
        subj, base = self._cold_pairs(cmd, [str(repo)], self.reps(2), "wide")
        m = json.loads((repo / generate.MANIFEST).read_text(encoding="utf-8"))
        r = Result(
            f"wide: scars status on the repository root ({len(m['features']):,} features)",
            min(subj),
            "s",
            baseline=min(base),
            target=1.0,
            note="wall time of `scars status REPO` (one line per feature), empty cache; baseline: "
            "CSafeLoader over every YAML file of every feature in one fresh process; " + cpu_note("wide"),
            samples={"subject": subj, "baseline": base, "cpu": CPU.get("wide"), "cpu_baseline": CPU.get("wide-base")},
        )
        r.of_baseline()
        return [r.judge()]

    def m_startup(self) -> list[Result]:
        demo = str(DEMO_FEATURE)
        n = self.reps(10)
        env = base_env(None)
        cache = self.fresh_cache()
        env_c = base_env(cache)
        for argv in (["status", demo], ["status", "--json", demo]):
            wall(self.scars + argv, env_c)  # a user's second run: warm cache
        py, helpt, stat, stat_json = [], [], [], []
        for _ in range(n):
            py.append(wall([sys.executable, "-c", "pass"], env))
            helpt.append(wall(self.scars + ["--help"], env))
            stat.append(wall(self.scars + ["status", demo], env_c))
            stat_json.append(wall(self.scars + ["status", "--json", demo], env_c))
        out = []
        for name, xs, target in (
            ("start-up: scars --help", helpt, 2.0),
            ("start-up: scars status (demo)", stat, 3.0),
            ("start-up: scars status --json (demo)", stat_json, 3.0),
        ):
            r = Result(
                name,
                min(xs),
                "s",
                baseline=min(py),
                target=target,
                note="wall time, interpreter start to exit; baseline: `python -c pass`; "
                "status on the demo feature with its cache warm, into a pipe",
                samples={"subject": xs, "python -c pass": py},
            )
            r.of_baseline()
            out.append(r.judge())
        return out

    def m_memory(self) -> list[Result]:
        size = self.sizes()["large"]
        feat = self.feature(size)
        env = base_env(self.fresh_cache())
        imp = probe(["mem-import"], env)
        rd = probe(["mem-read", str(feat)], env)
        items = self.items(size)
        per_item = (rd["maxrss_kb"] - imp["maxrss_kb"]) * 1024 / items
        r = Result(
            f"peak memory per item ({size}, {items:,} items)",
            per_item,
            "B/item",
            baseline=imp["maxrss_kb"] / 1024,
            target=2048,
            target_of="value",
            note="(ru_maxrss of a process that runs read_feature, empty cache) minus (ru_maxrss of one "
            "that only imports scars.core.samsara.feature), divided by the items in the files; baseline "
            "column: the import-only process in MiB; parse workers are separate processes "
            f"(their peak: {rd.get('children_maxrss_kb', 0) / 1024:.0f} MiB)",
            samples={
                "read_maxrss_kb": rd["maxrss_kb"],
                "import_maxrss_kb": imp["maxrss_kb"],
                "children_maxrss_kb": rd.get("children_maxrss_kb"),
            },
        )
        return [r.judge()]

    def m_floor(self) -> list[Result]:
        """The measured floor of the cold figure: no cold read ends before scars' own parse of its
        files and the possible patterns are done, which need every item read and run in one
        process today."""
        size = self.sizes()["large"]
        feat = self.feature(size)
        cores = usable_cores()
        base_cmd = [sys.executable, str(PROBES), "parse-baseline", str(feat)]
        base = [wall(base_cmd, base_env(None), cpu_key="floor-base") for _ in range(self.reps(3))]
        env = {**base_env(None), "SCARS_NO_CACHE": "1"}
        got = probe(["patterns", str(feat), str(self.reps(3))], env)
        own = probe(["parse-scars", str(feat), str(self.reps(3))], env)
        b, p, s = min(base), got["cpu"], own["cpu"]
        parse = Result(
            f"floor: scars' own parse alone ({size}, {own['files']:,} files), CPU",
            s,
            "s",
            baseline=b,
            note="CPU seconds of scars' own load of the files the baseline parses (safe_read.load_path_quiet: "
            f"read, checks, the one-pass build; in one process, no start-up, best of {len(own['cpu_runs'])}); "
            "baseline: the bare CSafeLoader parse of the same files (wall, start-up included), measured in "
            "the same run",
            samples={"cpu": own["cpu_runs"], "baseline": base},
        ).of_baseline()
        patterns = Result(
            f"floor: possible patterns alone ({size}, {got['items']:,} counted items), CPU",
            p,
            "s",
            baseline=b,
            note="CPU seconds of possible_patterns on the counted items in one process (the items read "
            f"first, not timed; best of {len(got['cpu_runs'])}, wall {got['wall']:.2f} s, {got['patterns']:,} "
            "patterns); baseline: the bare CSafeLoader parse of the same files (as for cold load), "
            "measured in the same run",
            samples={"cpu": got["cpu_runs"], "baseline": base},
        ).of_baseline()
        bound = Result(
            f"floor: lower bound of cold load on {cores} cores (parse / {cores} + patterns)",
            s / cores + p,
            "s",
            baseline=b,
            target=1.0,
            note=f"scars' own parse spread perfectly over all {cores} usable cores (no start-up, no "
            "hand-over: lower than any real split) plus the possible patterns alone, which (as computed "
            "now) start when every item is read and run in one process: no cold `scars status --json` "
            "doing this work can be faster; its ratio to the bare parse is the lowest the cold ratio "
            "can reach while the patterns run so (the cold target needs it <= 1)",
            samples={"cores": cores, "parse_cpu": s, "patterns_cpu": p},
        ).of_baseline()
        split = Result(
            f"floor: lower bound of cold load with any split over {cores} cores ((parse + patterns) / {cores})",
            (s + p) / cores,
            "s",
            baseline=b,
            target=1.0,
            note=f"scars' own parse and the possible patterns alone, both spread perfectly over all {cores} "
            "usable cores (as if the patterns could be split, which they are not today): the CPU seconds "
            "of those two alone bound any cold `scars status --json` from below, however its work is "
            "scheduled; above 1 means the cold target cannot be met by this Python code on this machine",
            samples={"cores": cores, "parse_cpu": s, "patterns_cpu": p},
        ).of_baseline()
        return [parse.judge(), patterns.judge(), bound.judge(), split.judge()]

    def m_decide(self) -> list[Result]:
        n = 10 if self.smoke else 200
        res = {}
        for role in ("small", "large"):
            size = self.sizes()[role]
            copy = self.work / f"decide-{role}"
            if copy.exists():
                shutil.rmtree(copy)
            shutil.copytree(self.repo(size), copy)
            m = json.loads((copy / generate.MANIFEST).read_text(encoding="utf-8"))
            res[role] = probe(
                ["decide", str(copy), str(copy / m["features"][0]["path"]), str(n)], base_env(self.fresh_cache())
            )
            if "skipped" in res[role]:
                return [Result("decision save", None, "ms", note=res[role]["skipped"])]
        big, small = res["large"], res["small"]
        items_l, items_s = self.items(self.sizes()["large"]), self.items("small")
        r1 = Result(
            f"decision save p50 ({items_l:,} vs {items_s:,} items)",
            big["p50_ms"],
            "ms",
            baseline=small["p50_ms"],
            target=1.5,
            note="FeatureSession.decide (validated, appended, fsynced before it returns), "
            f"{n} decisions each; baseline: the same at the small feature",
            samples={"large": big, "small": small},
        )
        r1.of_baseline()
        r2 = Result(
            f"decision save p99 ({items_l:,} items)",
            big["p99_ms"],
            "ms",
            baseline=small["p99_ms"],
            target=10.0,
            target_of="value",
            note="p99 of the same runs; target 10 ms",
        )
        r2.of_baseline()
        r3 = Result(
            f"decision save p99 ratio ({items_l:,} vs {items_s:,})",
            big["p99_ms"],
            "ms",
            baseline=small["p99_ms"],
            target=1.5,
            note="p99 at large against p99 at small",
        )
        r3.ratio = r2.ratio
        return [r1.judge(), r2.judge(), r3.judge()]

    def m_app(self) -> list[Result]:
        """The app's figures, each the least-disturbed of alternating runs (``--repeat``, default 3)."""
        steps = "3" if self.smoke else "30"
        # As every figure: subject and baseline runs alternate, the least-disturbed of each kept (per
        # figure: a step's median is one number of a run; one run each swung the ratio 1.16-1.85).
        bigs: list[dict] = []
        smalls: list[dict] = []
        for _ in range(self.reps(3)):
            big = probe(
                ["app", str(self.feature(self.sizes()["large"])), "--steps", steps], base_env(self.fresh_cache())
            )
            if "skipped" in big:
                return [Result("app", None, "s", note=big["skipped"])]
            bigs.append(big)
            smalls.append(probe(["app", str(self.feature("small")), "--steps", steps], base_env(self.fresh_cache())))
        big = {**bigs[0], **{k: min(b[k] for b in bigs) for k in APP_FIGURES}}
        small = {**smalls[0], **{k: min(b[k] for b in smalls) for k in APP_FIGURES}}
        table = probe(["datatable", str(self.feature(self.sizes()["large"]))], base_env(self.fresh_cache()))
        n = big["items"]
        r1 = Result(
            f"app: start to first paint ({n:,} items)",
            big["first_paint_s"],
            "s",
            baseline=table["first_paint_s"],
            target=0.5,
            target_of="value",
            note="ScarsApp.from_feature(feature) inside run_test(size=120x40) until the first frame "
            "written after the rows are set: header, list and key hints (feature already read; the "
            f"detail follows in the next frame, and the app is idle at {big['idle_s']:.2f} s once the "
            "filter's index is built); baseline: a minimal app putting the same items in Textual's "
            "DataTable, until it is idle after add_rows",
            samples={"scars": big, "datatable": table},
        )
        r1.of_baseline()
        r2 = Result(
            f"app: cursor step ({n:,} vs {small['items']:,} items)",
            big["step_ms"],
            "ms",
            baseline=small["step_ms"],
            target=1.5,
            note="median time from action_cursor_down() to the last frame the app writes for it "
            f"(the list's two lines and the detail pane; an idle frame takes {big['idle_ms']:.1f} ms "
            "here); baseline: the same at the small feature",
            samples={"large": [b["step_ms"] for b in bigs], "small": [b["step_ms"] for b in smalls]},
        )
        r2.of_baseline()
        r2b = Result(
            f"app: cursor step, key to repaint net of the idle frame ({n:,} items)",
            big["step_net_ms"],
            "ms",
            baseline=small["step_net_ms"],
            target=16.0,
            target_of="value",
            note="the cursor step's median minus the idle frame's (one unchanged line asked to repaint, "
            "to its frame: Textual's frame timer and a minimal update); baseline column: the same at "
            "the small feature",
        )
        r2b.of_baseline()
        r3 = Result(
            f"app: apply a filter ({n:,} items)",
            big["filter_ms"],
            "ms",
            baseline=small["filter_ms"],
            target=50.0,
            target_of="value",
            note="MainScreen.apply_filter('retry') to the first frame showing its rows (built in the "
            f"filter's worker; {big['filter_rows']:,} rows match); the detail pane of the new cursor row "
            f"follows in a later frame, at {big['filter_detail_ms']:.0f} ms; baseline column: the same "
            "at the small feature",
        )
        r3.of_baseline()
        return [r1.judge(), r2.judge(), r2b.judge(), r3.judge()]


DEMO_FEATURE = HERE.parent / "core" / "demo" / "repo" / "changes" / "2026-11-02_csv-export"
INBOX_FEATURES = 15  # the repository root of the inbox figure: this many copies of the demo feature


def m_first_paint(self: Bench) -> list[Result]:
    """The first screen as a person sees it (issue 31): each command started in a pseudo-terminal
    (bench/first_paint.py) until the frame that shows what it is for, against a bare Textual app
    showing one Static, started the same way; the runs alternate and the least of each is kept."""
    root = self.work / "inbox-repo"
    for k in range(INBOX_FEATURES):
        shutil.copytree(DEMO_FEATURE, root / "changes" / f"2026-11-{k + 1:02d}_demo-{k + 1}")
    cases = [
        (
            f"first paint: scars triage ({self.items(self.sizes()['small']):,} items)",
            lambda: (self.scars + ["triage", str(self.feature(self.sizes()["small"]))], None, "todo"),
            "its rows (a row's state, `todo`)",
        ),
        (
            f"first paint: scars at a repository root ({INBOX_FEATURES} features, Loops inbox)",
            lambda: (self.scars, root, "waiting for a person"),
            "the Loops inbox's title and rows",
        ),
        (
            "first paint: scars demo",
            lambda: (self.scars + ["demo", "--dir", tempfile.mkdtemp(dir=self.work, prefix="demo-")], None, "todo"),
            "the demo's rows (after copying it)",
        ),
    ]
    bare: list[float] = []
    got: dict[str, list[float]] = {name: [] for name, _, _ in cases}
    parts: dict[str, list[float]] = {"textual": [], "app": [], "read": [], "fork": []}
    small = str(self.feature(self.sizes()["small"]))
    for _ in range(self.reps(5)):
        bare.append(first_paint.bare_app(base_env(None)))
        for name, make, _ in cases:
            cmd, cwd, marker = make()
            env = base_env(self.fresh_cache())
            if cwd is not None:
                cmd = ["sh", "-c", 'cd "$0" && exec "$@"', str(cwd), *cmd]
            got[name].append(first_paint.first_paint(cmd, marker, env))
        parts["textual"].append(first_paint.part(first_paint.IMPORT, first_paint.TEXTUAL_MODULES, base_env(None)))
        parts["app"].append(first_paint.part(first_paint.IMPORT, first_paint.APP_MODULES, base_env(None)))
        parts["read"].append(first_paint.part(first_paint.READ_TO_LIST, [small], base_env(self.fresh_cache())))
        parts["fork"].append(wall([sys.executable, "-c", first_paint.TO_FORK], base_env(None)))
    out = []
    for name, _, shows in cases:
        r = Result(
            name,
            min(got[name]),
            "s",
            baseline=min(bare),
            target=1.5,
            note=f"start in a 120x40 pseudo-terminal to the first frame showing {shows}, cache empty; "
            "baseline: a bare Textual app showing one Static, to its first frame",
            samples={"scars": got[name], "bare app": bare},
        )
        r.of_baseline()
        out.append(r.judge())
    # What stops the ratios: the least the first screen could take with today's imports if nothing
    # else (the CLI, Textual's start, the app's own mount and paint) cost more than in the bare app,
    # and the least the read ahead of `scars triage` takes until its child has the list.
    beyond = max(0.0, min(parts["app"]) - min(parts["textual"]))
    imports_floor = Result(
        "floor: first paint with the app's imports alone (bare app + imports beyond Textual's)",
        min(bare) + beyond,
        "s",
        baseline=min(bare),
        target=1.5,
        note=f"the app's imports {min(parts['app']):.3f} s, Textual's {min(parts['textual']):.3f} s "
        "(each in a fresh interpreter, its start-up not included); baseline: the bare app",
        samples=parts,
    )
    # The feature is read ahead in a child forked before Textual loads (tui/cli/commands/_app.py):
    # no frame shows its list before the child has read it.
    read_floor = Result(
        f"floor: first paint of scars triage ({self.items(self.sizes()['small']):,} items): its read ahead",
        min(parts["fork"]) + min(parts["read"]),
        "s",
        baseline=min(bare),
        target=1.5,
        note=f"start-up to the fork of the child that reads ahead, {min(parts['fork']):.3f} s (a fresh "
        f"interpreter importing what the CLI imports before it forks), + the feature read until the "
        f"list can be shown, {min(parts['read']):.3f} s, cache empty; baseline: the bare app",
    )
    out += [imports_floor.of_baseline().judge(), read_floor.of_baseline().judge()]
    return out


def requests_probe(args: list[str], work: Path, timeout: float = 1800) -> dict:
    """bench/requests_probe.py (gate requests): one JSON object, or MeasureError."""
    env = base_env(None)
    proc = subprocess.run(
        [sys.executable, str(REQUESTS_PROBE), *args, str(work)], env=env, capture_output=True, timeout=timeout
    )
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-6:]
        raise MeasureError(f"requests probe {args[0]} exited {proc.returncode}: " + " | ".join(tail))
    return json.loads(proc.stdout.decode("utf-8", "replace").strip().splitlines()[-1])


def m_requests(self: Bench) -> list[Result]:
    n = 3 if self.smoke else 100
    idle_s = 1.0 if self.smoke else 60.0
    lat = requests_probe(["latency", str(n)], self.work / "requests-latency")
    r1 = Result(
        f"request: answer-to-wake p50 ({n} requests)",
        lat["p50_ms"],
        "ms",
        baseline=lat["in_place_ms"],
        note="a real `scars gate spec PATH --wait --json` per request; the answer written as the app writes "
        "it (requests.answer_request) at a random moment of the waiter's poll; from its return to the "
        "waiter's result line (poll every "
        f"{lat['poll_s']:g} s, re-read, record, print); baseline: the record path alone (gates.record), "
        "median",
        samples=lat,
    )
    r1.of_baseline()
    p99 = lat["p99_ms"]
    r2 = replace(r1, name=f"request: answer-to-wake p99 ({n} requests)", value=p99, target=500.0, samples={})
    r2.target_of, r2.note = "value", "p99 of the same runs; target 500 ms"
    r2.ratio = p99 / r2.baseline if r2.baseline else None
    idle = requests_probe(["idle", str(idle_s)], self.work / "requests-idle", timeout=idle_s + 300)
    r3 = Result(
        f"request: a waiter's CPU idling {idle['seconds']:.0f} s",
        idle["cpu_pct"],
        "%",
        target=1.0,
        target_of="value",
        note=f"utime + stime of the waiting process over {idle['seconds']:.0f} s after its request was posted "
        f"({idle['cpu_s']:.2f} s of CPU), in % of one core; target 1 %",
        samples=idle,
    )
    return [r1.judge(), r2.judge(), r3.judge()]


MEASURES = {
    "cold": Bench.m_cold,
    "warm": Bench.m_warm,
    "wide": Bench.m_wide,
    "startup": Bench.m_startup,
    "memory": Bench.m_memory,
    "floor": Bench.m_floor,
    "decide": Bench.m_decide,
    "app": Bench.m_app,
    "first_paint": m_first_paint,
    "requests": m_requests,
}


def cpu_note(key: str) -> str:
    """The CPU seconds of a subject and its baseline (min over the runs), for the note."""
    subj, base = CPU.get(key), CPU.get(key + "-base")
    if not subj or not base:
        return "CPU seconds not measured"
    return f"CPU seconds (user + system, workers included): {min(subj):.2f} s vs baseline {min(base):.2f} s"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def fmt(x: float | None, unit: str = "") -> str:
    if x is None:
        return "–"
    if abs(x) >= 100:
        s = f"{x:,.0f}"
    elif abs(x) >= 10:
        s = f"{x:.1f}"
    else:
        s = f"{x:.3g}"
    return f"{s} {unit}".strip()


def compile_scars() -> None:
    """scars' modules compiled to bytecode before anything is timed, as installing a wheel does:
    an editable checkout run with PYTHONDONTWRITEBYTECODE (or one never run) would compile every
    module on every start, about 55 ms of `scars status` that no installed copy pays."""
    import compileall

    for part in ("core", "tui"):
        if not compileall.compile_dir(HERE.parent / part, quiet=2, workers=1):
            raise MeasureError(f"{part}/ does not compile")


def table(results: list[Result], markdown: bool) -> str:
    head = ["measurement", "value", "baseline", "ratio", "target", "ok"]
    rows = []
    for r in results:
        tgt = (
            "–"
            if r.target is None
            else (f"ratio ≤ {r.target:g}" if r.target_of == "ratio" else f"≤ {r.target:g} {r.unit}")
        )
        ok = "error" if r.error else ("–" if r.ok is None else ("yes" if r.ok else "NO"))
        base_unit = "MiB" if r.unit == "B/item" else r.unit
        rows.append(
            [
                r.name,
                fmt(r.value, r.unit),
                fmt(r.baseline, base_unit),
                "–" if r.ratio is None else f"{r.ratio:.2f}",
                tgt,
                ok,
            ]
        )
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * 4 + [":---:"]) + "|"]
        out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
        return "\n".join(out)
    widths = [max(len(str(row[i])) for row in [head, *rows]) for i in range(len(head))]
    lines = [
        "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(row, widths)))
        for row in [head, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__
    )
    p.add_argument("--smoke", action="store_true", help="small only, each measurement once; never judges time")
    p.add_argument("--json", action="store_true", help="print the results as a JSON list")
    p.add_argument("--markdown", action="store_true", help="print the table as markdown")
    p.add_argument("--data", type=Path, help="directory for the generated repositories (kept and reused)")
    p.add_argument("--only", help=f"comma-separated subset of: {', '.join(MEASURES)}")
    p.add_argument(
        "--repeat", type=int, help="runs per timed command (default: 3 cold, 5 warm, 2 wide, 10 start-up, 3 app)"
    )
    args = p.parse_args(argv)
    only = list(MEASURES) if not args.only else [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = [s for s in only if s not in MEASURES]
    if unknown:
        p.error(f"unknown measurement(s): {', '.join(unknown)}; choose from {', '.join(MEASURES)}")

    with tempfile.TemporaryDirectory(prefix="scars-bench-") as tmp:
        data = args.data or (Path(tmp) / "data")
        bench = Bench(data, Path(tmp) / "work", args.smoke, args.repeat)
        bench.work.mkdir(parents=True)
        bench.ensure_data()
        compile_scars()
        results: list[Result] = []
        failed = False
        for name in only:
            log(f"measuring {name} …")
            t = time.perf_counter()
            try:
                got = MEASURES[name](bench)
            except (MeasureError, subprocess.TimeoutExpired, OSError) as exc:
                failed = True
                got = [Result(name, None, "", error=str(exc), ok=False)]
            for r in got:
                if args.smoke:  # smoke never judges time
                    r.ok = None if r.error is None else False
            results.extend(got)
            log(f"  {name}: {time.perf_counter() - t:.1f} s")

    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2, ensure_ascii=False))
    else:
        print(table(results, args.markdown))
        for r in results:
            if r.error:
                print(f"\n{r.name}: FAILED: {r.error}")
        if not args.markdown:
            print()
            for r in results:
                if r.note:
                    print(f"* {r.name}: {r.note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
