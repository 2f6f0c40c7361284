"""What the hostile tests observe of one read: run inside an isolated child (see isolate.py).

``probe(feature_dir)`` reads the feature with ``scars.core.samsara.feature.read_feature`` and runs
``scars status`` and ``scars status --json`` in-process on it, and returns a JSON-able
summary: the parse failures, which reports were read, the item texts (cut short), warnings,
and facts about the status output (exit code, size, raw control bytes, traceback, secrets).
"""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path
from typing import Any

from scars.core.sanitize import UNSAFE
from tests.hostile.corpus import SECRET

# Raw characters that must never reach a terminal from input text: every one the sanitiser makes
# visible (C0 controls but \t and \n, DEL, C1, Unicode's format characters and separators), by its
# own definition.
RAW_CONTROL = UNSAFE


def _cut(s: Any, n: int = 300) -> str:
    s = s if isinstance(s, str) else repr(s)
    return s if len(s) <= n else s[:n] + "…"


def run_cli(args: list[str]) -> dict:
    from scars.tui.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(args)
    text, etext = out.getvalue(), err.getvalue()
    res = {
        "rc": rc,
        "seconds": time.perf_counter() - t0,
        "size": len(text),
        "stderr": _cut(etext, 2000),
        "traceback": "Traceback" in text or "Traceback" in etext,
        "raw_control": sorted({f"U+{ord(c):04X}" for c in RAW_CONTROL.findall(text + etext)}),
        "secret": SECRET in text or SECRET in etext,
        "max_line": max((len(line) for line in text.splitlines()), default=0),
        "head": _cut(text, 4000),
    }
    if "--json" in args and rc == 0:
        data = json.loads(text)
        res["json_failures"] = [pf.get("file") for pf in data.get("parse_failures", [])]
        res["json_items"] = [_cut(it.get("text"), 200) for it in data.get("items", [])]
    return res


def probe(feature: Path, *, status: bool = True) -> dict:
    from scars.core.samsara.feature import read_feature

    t0 = time.perf_counter()
    f = read_feature(feature)
    seconds = time.perf_counter() - t0
    log = f.iteration_log
    out = {
        "seconds": seconds,
        "failures": [{"file": pf.file, "line": pf.line, "reason": _cut(pf.message, 500)} for pf in f.parse_failures],
        "reports": [{"file": r.file, "failed": r.parse_failure is not None} for r in f.reports],
        "items": [
            {"file": it.file, "text": _cut(it.text, 200), "counted": it.counted, "registry_state": it.registry_state}
            for it in f.items
        ],
        "dangling": [list(d) for d in f.dangling_refs],
        "warnings": [_cut(str(w), 500) for w in f.warnings][:100],
        "registry": None
        if f.registry is None
        else {"state": f.registry.state, "reason": _cut(f.registry.reason or "", 500)},
        "log_warnings": [] if log is None else [_cut(str(w), 500) for w in log.warnings][:100],
        "signal_lost": f.signal_lost,
    }
    if status:
        out["status"] = run_cli(["status", str(feature)])
        out["status_json"] = run_cli(["status", "--json", str(feature)])
    return out
