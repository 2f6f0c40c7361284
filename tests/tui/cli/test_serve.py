"""`scars serve` with real HTTP and websocket clients on localhost: the token is required (refused
without it or with a wrong one, accepted with it), a websocket from another site is refused, and
the app a browser gets is the real triage app, read-only unless --write. The page's URLs follow the
host the browser used (so `--host 0.0.0.0` works from another machine), a name that only resolves
here is refused, and the token is never logged."""

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


def start(feature_dir: Path, *extra: str, seen: list[str] | None = None) -> tuple[subprocess.Popen, str, int]:
    """The server, its token and port, once it says where it listens (its output so far in ``seen``)."""
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
    seen = [] if seen is None else seen
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


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
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


def ws_status(port: int, token: str, headers: dict[str, str]) -> int:
    """The status a websocket handshake with ``headers`` gets (101 when accepted)."""

    async def connect() -> int:
        async with aiohttp.ClientSession(skip_auto_headers=()) as s:
            try:
                async with s.ws_connect(f"ws://127.0.0.1:{port}/ws?token={token}", headers=headers) as ws:
                    await ws.close()
                    return 101
            except aiohttp.WSServerHandshakeError as exc:
                return exc.status

    return asyncio.run(connect())


def page_urls(page: str) -> tuple[str, str]:
    """The websocket URL and the static files' base a served page holds."""
    ws = re.search(r'data-session-websocket-url="([^"]*)"', page)
    static = re.search(r'href="([^"]*)css/xterm\.css"', page)
    assert ws and static, page
    return ws.group(1), static.group(1)


def test_the_page_follows_the_host_the_browser_used(feature_dir):
    """`--host 0.0.0.0` reached from another machine as 192.0.2.7:PORT: the page's websocket and
    static URLs name 192.0.2.7:PORT (textual-serve would write ws://0.0.0.0:PORT), and the
    websocket from that page (Origin http://192.0.2.7:PORT) is accepted on that host only."""
    proc, token, port = start(feature_dir)
    base = f"http://127.0.0.1:{port}"
    try:
        for host in (f"192.0.2.7:{port}", "192.0.2.7:9000", f"[2001:db8::7]:{port}", f"LocalHost:{port}"):
            status, page, _ = get(f"{base}/?token={token}", {"Host": host})
            assert status == 200
            shown = host.lower()
            assert page_urls(page) == (f"ws://{shown}/ws", f"http://{shown}/static/")
        assert page_urls(get(f"{base}/?token={token}", {"Host": "192.0.2.7"})[1])[0] == "ws://192.0.2.7/ws"

        page_host = f"192.0.2.7:{port}"
        assert ws_status(port, token, {"Host": page_host, "Origin": f"http://{page_host}"}) == 101
        for origin in (
            f"http://192.0.2.8:{port}",  # another host
            "http://192.0.2.7:9000",  # the same host, another port
            f"https://{page_host}",  # another scheme
            f"http://{page_host}.evil.example",
            "null",
            f"http://127.0.0.1:{port}",  # this server by another of its hosts: not the page's
        ):
            assert ws_status(port, token, {"Host": page_host, "Origin": origin}) == 403, origin
    finally:
        stop(proc)


def test_a_name_that_only_resolves_here_is_refused(feature_dir):
    """DNS rebinding: a page of evil.example whose name resolves to this machine reaches the server
    with Host evil.example and its own Origin, a matching pair: refused, even with the token, on
    every path; the machine's own name and localhost are accepted."""
    import socket as sock

    proc, token, port = start(feature_dir)
    base = f"http://127.0.0.1:{port}"
    try:
        for host in (f"evil.example:{port}", f"localhost.evil.example:{port}", f"{port}", "bad_name", "[::1"):
            assert get(f"{base}/?token={token}", {"Host": host})[0] == 403, host
            assert get(f"{base}/static/js/textual.js", {"Host": host})[0] == 403, host
        evil = f"evil.example:{port}"
        assert ws_status(port, token, {"Host": evil, "Origin": f"http://{evil}"}) == 403
        own = f"{sock.gethostname()}:{port}"
        assert page_urls(get(f"{base}/?token={token}", {"Host": own})[1])[0] == f"ws://{own.lower()}/ws"
        assert get(f"{base}/static/js/textual.js", {"Host": own})[0] == 200
    finally:
        stop(proc)


def test_the_token_is_printed_once_and_never_logged(feature_dir):
    """The access log said `GET /?token=…` and the page's Referer: the token shows only on the line
    that gives the URL, whatever the requests (the page, its static files with the page as Referer,
    the websocket with the token in its query, refused ones)."""
    seen: list[str] = []
    proc, token, port = start(feature_dir, seen=seen)
    base = f"http://127.0.0.1:{port}"
    try:
        page_url = f"{base}/?token={token}"
        assert get(page_url)[0] == 200
        assert get(f"{base}/static/js/textual.js", {"Referer": page_url})[0] == 200
        assert get(f"{base}/nowhere?token={token}", {"Referer": page_url})[0] == 404
        assert get(f"{base}/?token={token}", {"Host": "evil.example"})[0] == 403
        assert ws_status(port, token, {"Origin": "http://evil.example"}) == 403
        url = f"ws://127.0.0.1:{port}/ws?token={token}&width=100&height=30"
        asyncio.run(screen_from_websocket(url, "2026-07-01_csv-export"))
    finally:
        stop(proc)
    assert proc.stdout is not None
    out = "".join(seen) + proc.stdout.read()
    assert '"GET /static/js/textual.js" 200' in out  # the access log is on, and was read
    assert '"GET /nowhere" 404' in out
    lines = [line for line in out.splitlines() if token in line]
    assert lines == [f"scars serve: open {base}/?token={token}"], out


def test_the_host_rule():
    from scars.tui.cli.commands import serve

    names = serve.own_names("0.0.0.0")
    assert "localhost" in names and "0.0.0.0" not in names
    assert serve.own_names("pair.example") >= {"pair.example", "localhost"}
    assert serve.page_host("192.0.2.7:8000", names) == ("192.0.2.7", 8000)
    assert serve.page_host("[2001:DB8::7]:8000", names) == ("2001:db8::7", 8000)
    assert serve.page_host("192.0.2.7", names).origin == "http://192.0.2.7"
    assert serve.page_host("pair.example:8000", serve.own_names("pair.example")).netloc == "pair.example:8000"
    for bad in ("pair.example:8000", "evil.example", "", None, "192.0.2.7:0", "192.0.2.7:65536", "a..b", "-a", "[x]"):
        assert serve.page_host(bad, names) is None, bad
    assert serve.page_host("192.0.2.7:65535", names) is not None
    page = serve.page_host("192.0.2.7:8000", names)
    assert serve.origin_ok("http://192.0.2.7:8000", page)
    assert serve.origin_ok(None, page)  # not a browser: the token still guards
    assert not serve.origin_ok("http://192.0.2.7", page)
    assert serve.origin_ok("http://192.0.2.7:80", serve.page_host("192.0.2.7", names))
    assert serve.printed_url("127.0.0.1", 8000) == "http://127.0.0.1:8000"
    assert serve.printed_url("::1", 8000) == "http://[::1]:8000"
    assert serve.printed_url("0.0.0.0", 8000) == f"http://{socket.gethostname()}:8000"
