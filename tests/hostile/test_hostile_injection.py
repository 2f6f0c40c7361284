"""Terminal injection through item texts: `scars status`, `--json`, and a real pty."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hostile.corpus import build_base
from tests.hostile.injection import FORBIDDEN, PAYLOADS, VISIBLE, forbidden_in, write_injection_report


@pytest.fixture
def feature(tmp_path: Path) -> Path:
    f = build_base(tmp_path / "repo")
    write_injection_report(f / "scar-reports")
    return f


def _scars(*args: str, env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="100")
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-m", "scars.tui.cli.main", *args], capture_output=True, timeout=60, env=env)


def test_status_output_is_inert_and_readable(feature: Path):
    p = _scars("status", str(feature))
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    out = p.stdout + p.stderr
    assert b"\x1b" not in out, "an ESC byte reached stdout"
    assert forbidden_in(out) == []
    text = p.stdout.decode("utf-8")
    assert all(ord(c) >= 0x20 or c in "\n" for c in text), "a raw control character in the output"
    # Every item is listed; each payload appears in its inert visible form, markup unparsed.
    for key, vis in VISIBLE.items():
        assert vis in text, f"{key}: not shown as {vis!r}"
    # A 20,000-character text is cut for the summary, not poured onto the terminal.
    assert len(text) < 20_000, f"scars status printed {len(text)} characters"


def test_status_json_is_escaped_and_round_trips(feature: Path):
    p = _scars("status", "--json", str(feature))
    assert p.returncode == 0, p.stderr.decode(errors="replace")
    raw = p.stdout
    assert b"\x1b" not in raw and forbidden_in(raw) == []
    assert all(b >= 0x20 or b in (0x0A,) for b in raw), "a raw control byte in --json output"
    data = json.loads(raw)
    texts = {it["text"] for it in data["items"]}
    # JSON carries the exact text (escaped), so a consumer gets what the file says.
    for key, payload in PAYLOADS.items():
        assert payload in texts, f"{key}: text changed in --json"


def _run_in_pty(
    argv: list[str],
    *,
    send: bytes | None = None,
    send_after: float = 0.0,
    timeout: float = 30.0,
    rows: int = 40,
    cols: int = 120,
    env_extra: dict | None = None,
    send_when: bytes | None = None,
) -> tuple[int, bytes]:
    """Run ``argv`` with a real pty as its terminal; return (exit status, everything it wrote).

    ``send`` is written to the terminal once ``send_when`` appeared in the output, or after
    ``send_after`` seconds.
    """
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
    env = dict(os.environ, TERM="xterm-256color", COLUMNS=str(cols), LINES=str(rows))
    env.pop("NO_COLOR", None)  # colour on: the worst case for a renderer
    env.update(env_extra or {})
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    chunks: list[bytes] = []
    start = time.monotonic()
    sent = send is None
    try:
        while True:
            ready = send_when is not None and send_when in b"".join(chunks)
            if not sent and (ready or time.monotonic() - start >= send_after):
                os.write(master, send)
                sent = True
            if time.monotonic() - start > timeout:
                proc.kill()
                raise AssertionError(f"{argv[3:]} did not finish in {timeout}s; output: {b''.join(chunks)[-2000:]!r}")
            r, _, _ = select.select([master], [], [], 0.1)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            elif proc.poll() is not None and sent:
                # drain what is left
                while select.select([master], [], [], 0.05)[0]:
                    try:
                        chunk = os.read(master, 65536)
                    except OSError:
                        break
                    if not chunk:
                        break
                    chunks.append(chunk)
                break
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
    return proc.returncode, b"".join(chunks)


def test_status_in_a_real_pty(feature: Path):
    rc, out = _run_in_pty([sys.executable, "-m", "scars.tui.cli.main", "status", str(feature)])
    assert rc == 0, out[-2000:]
    found = forbidden_in(out)
    assert found == [], f"input-borne sequences reached the terminal: {found}"
    assert "\u241b[2J".encode() in out or b"CSIMARK" not in out  # shown inert when shown


def test_forbidden_list_detects_a_raw_payload():
    """The detector itself: a raw payload written to a pty is found."""
    rc, out = _run_in_pty(
        [sys.executable, "-c", f"import sys; sys.stdout.write({PAYLOADS['osc52']!r} + {PAYLOADS['csi']!r})"]
    )
    assert rc == 0
    assert b"\x1b]52;" in forbidden_in(out) and b"\x1b[2J" in forbidden_in(out)
    assert len(FORBIDDEN) > 5
