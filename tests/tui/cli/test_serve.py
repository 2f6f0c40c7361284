"""`scars serve` with real HTTP and websocket clients on localhost: the token is required (refused
without it or with a wrong one, accepted with it), a websocket from another site is refused, and
the app a browser gets is the real triage app, read-only unless --write."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

aiohttp = pytest.importorskip("aiohttp")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(feature_dir: Path, *extra: str) -> tuple[subprocess.Popen, str, int]:
    """The server, its token and port, once it says where it listens."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TEXTUAL_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "scars.tui", "serve", str(feature_dir), "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        seen.append(line)
        found = re.search(r"open (http://127\.0\.0\.1:\d+)/\?token=(\S+)", line)
        if found:
            break
    else:
        raise AssertionError("the server never said where it listens:\n" + "".join(seen))
    deadline = time.monotonic() + 30
    while True:  # the listening socket follows the startup line
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    return proc, found.group(2), port


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode(), r.headers.get("Set-Cookie") or ""
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), ""


async def screen_from_websocket(url: str, want: str, keys: str = "", then: str = "") -> str:
    """Connect as the page does, collect the app's output until ``want`` shows, type ``keys``, then
    collect until ``then`` shows."""
    async with aiohttp.ClientSession() as session, session.ws_connect(url) as ws:
        got = ""

        async def until(text: str) -> None:
            nonlocal got
            deadline = time.monotonic() + 60
            while text not in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", got):
                msg = await asyncio.wait_for(ws.receive(), timeout=max(deadline - time.monotonic(), 0.1))
                if msg.type == aiohttp.WSMsgType.BINARY:
                    got += msg.data.decode("utf-8", "replace")
                elif msg.type in (aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.ERROR):
                    raise AssertionError(f"the websocket closed before {text!r} showed")

        await until(want)
        if keys:
            await ws.send_json(["stdin", keys])
            await until(then)
        return got


def test_the_token_is_required_and_the_browser_gets_the_read_only_app(feature_dir):
    proc, token, port = start(feature_dir)
    base = f"http://127.0.0.1:{port}"
    try:
        assert get(f"{base}/")[0] == 403
        assert get(f"{base}/?token=not-the-token")[0] == 403
        status, page, cookie = get(f"{base}/?token={token}")
        assert status == 200 and f"ws://127.0.0.1:{port}/ws" in page
        assert "scars_serve_token=" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie

        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            asyncio.run(screen_from_websocket(f"ws://127.0.0.1:{port}/ws?width=100&height=30", "x"))
        assert refused.value.status == 403

        async def foreign_origin() -> None:
            async with aiohttp.ClientSession() as s:
                await s.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}", headers={"Origin": "http://evil.example"})

        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            asyncio.run(foreign_origin())
        assert refused.value.status == 403

        url = f"ws://127.0.0.1:{port}/ws?token={token}&width=100&height=30"
        shown = asyncio.run(screen_from_websocket(url, "2026-07-01_csv-export", keys="f", then="Not recorded"))
        assert "read-only (--read-only)" in re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", shown)
        assert not (feature_dir / ".scars" / "journal.jsonl").exists()  # read-only: nothing recorded
    finally:
        stop(proc)


def test_write_lets_the_browser_record(feature_dir):
    proc, token, port = start(feature_dir, "--write", "--as", "bob")
    try:
        url = f"ws://127.0.0.1:{port}/ws?token={token}&width=100&height=30"
        asyncio.run(screen_from_websocket(url, "2026-07-01_csv-export", keys="f", then="F fix"))
        from scars.core.samsara.session import FeatureSession

        with FeatureSession.open(feature_dir, read_only=True) as s:  # shown "F fix" only once on disk
            assert [(d.action, d.decided_by) for d in s.decisions.values()] == [("fix", "bob")]
    finally:
        stop(proc)


def test_as_needs_write_and_the_port_is_checked(feature_dir, capsys):
    from tests.factories import run_cli

    assert run_cli(["serve", str(feature_dir), "--as", "bob"], capsys)[0] == 2
    assert run_cli(["serve", str(feature_dir), "--port", "0"], capsys)[0] == 2
