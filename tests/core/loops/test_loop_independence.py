"""One loop's folder loads no other loop (issue 30): the samsara gate path, and the record path
answering a samsara gate, import no bkit, DAG, loop-spec or review module (import-linter's
independence contract checks the static imports; this checks what a process really loads)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

OTHERS = ("bkit", "dag", "loopspec", "review")


def _loaded(code: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return json.loads(out.splitlines()[-1])


@pytest.mark.parametrize(
    "code",
    [
        "import scars.core.loops.samsara.gather",
        "import scars.core.loops.samsara.record",
        "import scars.core.loops.samsara.replay",
        "import scars.core.loops.samsara.reopen",
        "import scars.core.loops.samsara.system",
        "from scars.core.gates import recording\nfrom scars.core.loops.registry import loop_system\nloop_system('samsara')",
    ],
)
def test_the_samsara_gate_path_loads_no_other_loop(code):
    loaded = _loaded(code)
    assert "scars.core.loops.samsara.gather" in loaded or "scars.core.loops.samsara.reopen" in loaded
    others = [m for m in loaded if any(m.startswith(f"scars.core.loops.{o}") for o in OTHERS)]
    assert others == []


def test_listing_the_loops_loads_every_registered_system():
    loaded = _loaded("from scars.core.loops.registry import systems\nsystems()")
    assert {f"scars.core.loops.{o}.system" for o in (*OTHERS, "samsara")} <= set(loaded)
