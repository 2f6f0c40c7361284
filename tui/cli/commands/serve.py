"""`scars serve [FEATURE_DIR]`: the triage app in a browser, for a pairing partner (textual-serve).

Each browser connection runs its own `scars triage` process behind a websocket (textual-serve's
web driver). Three guards, all on by default:

* it listens on 127.0.0.1 only (``--host`` to choose another address, said loudly);
* every request but the page's static files needs the random token printed at start (in the URL
  once, then in a same-site cookie the page's websocket carries), compared in constant time; a
  websocket from another origin is refused;
* the app is read-only (``--write`` to record: decisions then go through the same lock and
  journal as at a terminal, and a second writer is refused as usual).
"""

from __future__ import annotations

import argparse
import hmac
import secrets
import shlex
import sys
from pathlib import Path

DESCRIPTION = (
    "Serve the triage app of FEATURE_DIR (default: as `scars triage` picks it) to a web browser through "
    "textual-serve, e.g. for a pairing partner. Listens on 127.0.0.1 only unless --host says otherwise; every "
    "request needs the random token of the printed URL; the app is read-only unless --write. Stop with Ctrl-C."
)
COOKIE = "scars_serve_token"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("feature_dir", nargs="?", metavar="FEATURE_DIR", help="the feature directory")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1 only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    parser.add_argument("--write", action="store_true", help="let the browser record decisions (default: read-only)")
    parser.add_argument("--as", dest="as_user", metavar="NAME", help="with --write: record decisions as NAME")


def token_ok(given: str | None, token: str) -> bool:
    return bool(given) and hmac.compare_digest(str(given).encode(), token.encode())


def app_command(feature_dir: Path, *, write: bool, user: str | None) -> str:
    """The shell command textual-serve starts for each browser connection."""
    words = [sys.executable, "-m", "scars.tui", "triage", str(feature_dir)]
    if not write:
        words.append("--read-only")
    if user:
        words += ["--as", user]
    return shlex.join(words)


def make_server(command: str, *, host: str, port: int, token: str, title: str):  # noqa: ANN201 - textual-serve
    # lazy: textual-serve (aiohttp) loads only for this command
    from aiohttp import web
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(self.guard)
            return app

        @web.middleware
        async def guard(self, request: web.Request, handler):  # noqa: ANN001, ANN201 - aiohttp
            if request.path.startswith("/static/"):  # the page's scripts and fonts: public files
                return await handler(request)
            given = request.query.get("token") or request.cookies.get(COOKIE)
            if not token_ok(given, token):
                raise web.HTTPForbidden(text="scars serve: this URL needs the token printed when the server started\n")
            origin = request.headers.get("Origin")
            if request.path == "/ws" and origin and origin.rstrip("/") != self.public_url.rstrip("/"):
                raise web.HTTPForbidden(text="scars serve: a websocket from another site is refused\n")
            response = await handler(request)
            if request.query.get("token") and isinstance(response, web.Response):
                response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
            return response

        async def on_startup(self, app: web.Application) -> None:
            print(f"scars serve: {title}", flush=True)
            print(f"scars serve: open {self.public_url}/?token={token}", flush=True)
            print("scars serve: Ctrl-C stops the server", flush=True)

    return GuardedServer(command, host=host, port=port, title=title)


def run(args: argparse.Namespace) -> int:
    # lazy: another command's module, loaded when this command runs
    from scars.core.errors import UsageError
    from scars.tui.cli.commands.triage import resolve_feature

    if not 0 < args.port < 65536:
        raise UsageError(f"--port {args.port}: give a port between 1 and 65535")
    if args.as_user and not args.write:
        raise UsageError("--as records decisions: it needs --write")
    feature_dir = resolve_feature(args.feature_dir)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"scars serve: listening on {args.host}, not only on this machine: anyone who can reach it and has the "
            "token can see the feature" + (" and record decisions" if args.write else ""),
            file=sys.stderr,
        )
    token = secrets.token_urlsafe(24)
    mode = "records decisions (--write)" if args.write else "read-only (--write to record)"
    command = app_command(feature_dir, write=args.write, user=args.as_user)
    server = make_server(command, host=args.host, port=args.port, token=token, title=f"{feature_dir.name}, {mode}")
    server.serve()
    return 0
