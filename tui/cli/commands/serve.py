"""`scars serve [FEATURE_DIR]`: the triage app in a browser, for a pairing partner (textual-serve).

Each browser connection runs its own `scars triage` process behind a websocket (textual-serve's
web driver). Three guards, all on by default:

* it listens on 127.0.0.1 only (``--host`` to choose another address, said loudly);
* it answers only to its own names (a Host header naming an IP address, ``localhost``, this
  machine's name or the ``--host`` name): a name that merely resolves here (DNS rebinding) is
  refused; the page's websocket URL is built from the Host the browser used, and a websocket is
  accepted only from the origin of that same host;
* every request but the page's static files needs the random token printed at start (in the URL
  once, then in a same-site cookie the page's websocket carries), compared in constant time; the
  token is printed once, on the line that gives the URL, and never logged (the access log names
  the path without its query and no Referer);
* the app is read-only (``--write`` to record: decisions then go through the same lock and
  journal as at a terminal, and a second writer is refused as usual).

textual-serve (and aiohttp, Jinja2 … which only it needs) is the optional ``serve`` extra: without
it the command says how to install it (:data:`INSTALL_HINT`, exit 2) before anything else.
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import re
import secrets
import shlex
import socket
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import NamedTuple

DESCRIPTION = (
    "Serve the triage app of FEATURE_DIR (default: as `scars triage` picks it) to a web browser through "
    "textual-serve, e.g. for a pairing partner. Listens on 127.0.0.1 only unless --host says otherwise; every "
    "request needs the random token of the printed URL; the app is read-only unless --write. Stop with Ctrl-C. "
    "Needs the optional serve extra: pip install 'scars[serve]'."
)
# The modules make_server imports: textual-serve and the two of its requirements used directly.
NEEDS = ("textual_serve", "aiohttp", "aiohttp_jinja2")
INSTALL_HINT = (
    "serve needs textual-serve (the optional serve extra), which is not installed; install scars with it: "
    "pip install 'scars[serve]' (or pipx install --force 'scars[serve]', uv tool install 'scars[serve]'; "
    "from a checkout, '.[serve]' in place of 'scars[serve]')"
)
COOKIE = "scars_serve_token"
WILDCARDS = ("0.0.0.0", "::", "")  # listen on every address: the URL printed names the machine instead
_HOST = re.compile(r"(?:\[(?P<v6>[0-9A-Fa-f:.]+)\]|(?P<name>[A-Za-z0-9.-]{1,253}))(?::(?P<port>[0-9]{1,5}))?")
_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("feature_dir", nargs="?", metavar="FEATURE_DIR", help="the feature directory")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1 only)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: 8000)")
    parser.add_argument("--write", action="store_true", help="let the browser record decisions (default: read-only)")
    parser.add_argument("--as", dest="as_user", metavar="NAME", help="with --write: record decisions as NAME")


def token_ok(given: str | None, token: str) -> bool:
    return bool(given) and hmac.compare_digest(str(given).encode(), token.encode())


class PageHost(NamedTuple):
    """The host a browser reached this server by: an address or one of its names, and the port."""

    host: str  # lower case; an IPv6 address without its brackets
    port: int

    @property
    def netloc(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == 80 else f"{host}:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.netloc}"


def parse_host(text: str | None) -> PageHost | None:
    """``HOST[:PORT]`` as a Host header or an origin's authority carries it; None when malformed."""
    found = _HOST.fullmatch(text or "")
    if not found:
        return None
    port = int(found["port"]) if found["port"] else 80
    if not 0 < port < 65536:
        return None
    if found["v6"]:
        try:
            return PageHost(str(ipaddress.IPv6Address(found["v6"])), port)
        except ValueError:
            return None
    name = found["name"].lower()
    if all(_LABEL.fullmatch(label) for label in name.split(".")):
        return PageHost(name, port)
    return None


def is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def own_names(listen: str) -> frozenset[str]:
    """The names this server answers to besides IP addresses: a name no one here chose (one that
    only resolves to this machine, as DNS rebinding arranges) is not among them."""
    names = {"localhost", socket.gethostname(), socket.getfqdn()}
    if listen not in WILDCARDS and not is_address(listen):
        names.add(listen)
    return frozenset(name.lower() for name in names if name)


def page_host(host_header: str | None, names: frozenset[str]) -> PageHost | None:
    """The host a request reached this server by, when it is an IP address or one of ``names``."""
    found = parse_host(host_header)
    if found is None or not (is_address(found.host) or found.host in names):
        return None
    return found


def origin_ok(origin: str | None, page: PageHost) -> bool:
    """A websocket's Origin (when its client sends one) is exactly the page's: http, same host and
    port as the Host the request reached."""
    if origin is None:
        return True  # not a browser (a browser always sends one on a websocket): the token still guards
    if not origin.startswith("http://"):
        return False
    return parse_host(origin[len("http://") :]) == page


def printed_url(listen: str, port: int) -> str:
    """The address to open: the machine's name when it listens on every address."""
    host = socket.gethostname() if listen in WILDCARDS else listen
    return PageHost(host, port).origin


def app_command(feature_dir: Path, *, write: bool, user: str | None) -> str:
    """The shell command textual-serve starts for each browser connection."""
    words = [sys.executable, "-m", "scars.tui", "triage", str(feature_dir)]
    if not write:
        words.append("--read-only")
    if user:
        words += ["--as", user]
    return shlex.join(words)


def missing_modules() -> list[str]:
    """The modules of :data:`NEEDS` this environment lacks (looked up, not imported)."""
    return [name for name in NEEDS if find_spec(name) is None]


def make_server(command: str, *, host: str, port: int, token: str, title: str):  # textual-serve
    # lazy: textual-serve (aiohttp) loads only for this command
    import asyncio
    import signal

    import aiohttp_jinja2
    from aiohttp import web
    from aiohttp.abc import AbstractAccessLogger
    from textual_serve.server import Server, to_int

    from scars.core.sanitize import one_line

    names = own_names(host)
    page_key = "scars_page_host"  # the PageHost the guard accepted, for the page it serves

    class PathOnlyAccessLog(AbstractAccessLogger):
        """Who asked for which path, and the answer: never the query (the URL's token) nor the
        Referer (the page's URL, token included); the path shown inert."""

        def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
            path = one_line(request.path)
            self.logger.info('%s "%s %s" %s', request.remote, request.method, path, response.status)

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(self.guard)
            return app

        @web.middleware
        async def guard(self, request: web.Request, handler):  # aiohttp
            page = page_host(request.headers.get("Host"), names)
            if page is None:
                raise web.HTTPForbidden(
                    text="scars serve: this server answers to its address, localhost or its own name only\n"
                )
            if request.path.startswith("/static/"):  # the page's scripts and fonts: public files
                return await handler(request)
            given = request.query.get("token") or request.cookies.get(COOKIE)
            if not token_ok(given, token):
                raise web.HTTPForbidden(text="scars serve: this URL needs the token printed when the server started\n")
            if request.path == "/ws" and not origin_ok(request.headers.get("Origin"), page):
                raise web.HTTPForbidden(text="scars serve: a websocket from another site is refused\n")
            request[page_key] = page
            response = await handler(request)
            if request.query.get("token") and isinstance(response, web.Response):
                response.set_cookie(COOKIE, token, httponly=True, samesite="Strict")
            return response

        @aiohttp_jinja2.template("app_index.html")
        async def handle_index(self, request: web.Request) -> dict:
            """textual-serve's page, its URLs on the host the browser used (textual-serve builds
            them from the listening address, which is no address for a browser when it is 0.0.0.0)."""
            base = request[page_key].origin
            return {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": "ws:"
                + base.removeprefix("http:")
                + str(request.app.router["websocket"].url_for()),
                "config": {"static": {"url": f"{base}/static/"}},
                "application": {"name": self.title},
            }

        async def on_startup(self, app: web.Application) -> None:
            print(f"scars serve: {title}", flush=True)
            print(f"scars serve: open {self.public_url}/?token={token}", flush=True)
            print("scars serve: Ctrl-C stops the server", flush=True)

        def serve(self, debug: bool = False) -> None:
            """textual-serve's serve with the access log that never names the token."""
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            loop.add_signal_handler(signal.SIGINT, self.request_exit)
            loop.add_signal_handler(signal.SIGTERM, self.request_exit)
            web.run_app(
                self._make_app(),
                host=self.host,
                port=self.port,
                handle_signals=False,
                loop=loop,
                print=lambda *args: None,
                access_log_class=PathOnlyAccessLog,
            )

    return GuardedServer(command, host=host, port=port, title=title, public_url=printed_url(host, port))


def run(args: argparse.Namespace) -> int:
    # lazy: another command's module, loaded when this command runs
    from scars.core.errors import UsageError
    from scars.tui.cli.commands.triage import resolve_feature

    if missing_modules():
        raise UsageError(INSTALL_HINT)
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
