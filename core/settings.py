"""Every environment variable scars reads, and its config file, read once, in one place (docs/configuration.md
lists them).

:func:`load` reads the environment into a frozen :class:`Settings`; :func:`current` returns that
snapshot (taking it on first use). The command line takes it once at the start of each command
(``scars.tui.cli.main``), so one command sees one environment from start to end, and nothing else
in ``scars`` reads ``os.environ``:

* ``SCARS_USER`` — who decides, before git's ``user.name`` and the login name (``LOGNAME``,
  ``USER``, ``LNAME``, ``USERNAME``, else the password database, as ``getpass`` looks);
* ``SCARS_NO_CACHE`` (1 / true / yes), ``SCARS_CACHE_DIR``, ``XDG_CACHE_HOME`` — the feature cache;
* ``SCARS_STATE_DIR``, ``XDG_STATE_HOME`` — this user's own state: the intents of gate records
  a kill interrupted (``storage.intent``), kept out of every repository;
* ``SCARS_WORKERS`` — worker processes for parallel reading (digits; else automatic);
* ``SCARS_DEBUG`` — show the traceback of an internal error;
* ``SCARS_ANSWER_<GATE>`` / ``SCARS_REASON_<GATE>`` — answer a gate without a terminal;
* ``XDG_CONFIG_HOME`` — where the app's keymap and ``config.toml`` are read from;
* ``TERM`` — ``dumb`` cannot draw the full-screen app (the app does not start);
* ``VISUAL``, ``EDITOR`` — the editor the app's `e` opens an item's location in (``VISUAL`` first);
* ``TEXTUAL_DRIVER`` — textual-serve's web driver: the app runs in a browser (`scars serve`), so
  its stdin and stdout are pipes, not a terminal, and it may start;
* ``NO_COLOR`` (set, not empty) — plain text, no colour and no bold; ``FORCE_COLOR`` (set, not empty)
  — colour even into a pipe (``NO_COLOR`` wins when both are set);
* loop-spec's own ``LOOP_SPEC_BACKLOG_FILE``, ``LOOP_SPEC_NON_INTERACTIVE`` and
  ``LOOP_SPEC_ANSWER_ITERATE_SPEC`` (4.x–6.x), ``LOOP_SPEC_HOME`` and ``LOOP_SPEC_REWIND_BUDGET``
  (7.x: its state home, else ``~/.loop-spec``; the rewind budget's limit), honoured as loop-spec does;
* the agent session a command runs in (``scars.core.provenance``): Claude Code's ``CLAUDECODE=1``
  (``CLAUDE_CODE_SESSION_ID``, ``CLAUDE_CODE_ENTRYPOINT``), Codex CLI's ``CODEX_THREAD_ID`` (codex-rs
  ``core/src/exec_env.rs``; its sandbox's ``CODEX_SANDBOX``, ``CODEX_SANDBOX_NETWORK_DISABLED=1``),
  Gemini CLI's ``GEMINI_CLI=1`` (gemini-cli ``packages/core/src/services/shellExecutionService.ts``);
* ``SCARS_ALLOW_AGENT_ANSWERS`` (1 / true / yes) — an agent's answer at a human-in-the-loop gate is
  recorded as the agent's instead of refused (also ``allow_agent_answers = true`` in config.toml);
* ``GIT_*`` — left out of the environment of every git command scars runs, but where the user's
  git configuration lives (``GIT_CONFIG_GLOBAL``, ``GIT_CONFIG_SYSTEM``, ``GIT_CONFIG_NOSYSTEM``).
"""

from __future__ import annotations

import os
import pwd
import stat
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

from scars.core.records import field, record, replace

# The GIT_* variables a git command of scars keeps: where the user's own configuration lives
# (user.name is read from it). Every other GIT_* (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE … a hook
# runs with) would point git at another repository than the one scars names.
GIT_KEPT = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")

_GATE_PREFIXES = ("SCARS_ANSWER_", "SCARS_REASON_")


# The item list's optional columns, in their order on screen (the text is always shown).
COLUMNS: tuple[str, ...] = ("decision", "category", "task")
# The app's themes: Textual's built-in ones (textual is pinned exactly; a test checks this list
# against the app's ``available_themes``), so `scars config` can check a theme without Textual.
DEFAULT_THEME = "textual-dark"
THEMES: tuple[str, ...] = (
    "ansi-dark",
    "ansi-light",
    "atom-one-dark",
    "atom-one-light",
    "catppuccin-frappe",
    "catppuccin-latte",
    "catppuccin-macchiato",
    "catppuccin-mocha",
    "dracula",
    "flexoki",
    "gruvbox",
    "monokai",
    "nord",
    "rose-pine",
    "rose-pine-dawn",
    "rose-pine-moon",
    "solarized-dark",
    "solarized-light",
    "textual-dark",
    "textual-light",
    "tokyo-night",
)
CONFIG_MAX_BYTES = 64 * 1024


def config_path(config_home: Path) -> Path:
    return config_home / "scars" / "config.toml"


def read_config(path: Path) -> dict:
    """The values of ``config.toml`` as :class:`Settings` fields, and ``config_problems``. A missing
    file is no problem; a bad one is one problem and no value (nothing here is ever fatal)."""
    problems: list[str] = []
    try:
        st = path.stat()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        return {"config_problems": (f"{path}: cannot read ({exc.strerror})",)}
    if not stat.S_ISREG(st.st_mode) or st.st_size > CONFIG_MAX_BYTES:
        return {"config_problems": (f"{path}: not a regular file of at most {CONFIG_MAX_BYTES} bytes",)}
    # lazy: tomllib (~3 ms) only when a config file exists; every start-up reads the settings
    import tomllib

    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {"config_problems": (f"{path}: not valid TOML ({exc})",)}
    out: dict = {}
    for key, value in data.items():
        if key == "user" and isinstance(value, str) and value.strip():
            out["config_user"] = value.strip()
        elif key == "theme" and isinstance(value, str) and value.strip():
            out["theme"] = value.strip()
            if out["theme"] not in THEMES:
                problems.append(
                    f"{path}: unknown theme '{out['theme']}': the app uses {DEFAULT_THEME} "
                    f"(themes: {', '.join(THEMES)})"
                )
        elif key == "columns" and isinstance(value, list) and all(v in COLUMNS for v in value):
            out["columns"] = tuple(c for c in COLUMNS if c in value)
        elif key == "allow_agent_answers" and isinstance(value, bool):
            out["config_allow_agent_answers"] = value
        elif key in ("user", "theme", "columns", "allow_agent_answers"):
            want = {
                "user": "a name",
                "theme": "a theme name",
                "columns": f"a list of {', '.join(COLUMNS)}",
                "allow_agent_answers": "true or false",
            }[key]
            problems.append(f"{path}: '{key}' must be {want}")
        else:
            problems.append(f"{path}: unknown key '{key}' (known: user, theme, columns, allow_agent_answers)")
    if problems:
        out["config_problems"] = tuple(problems)
    return out


def env_var(gate_id: str, what: str = "ANSWER") -> str:
    """The name ``SCARS_ANSWER_<GATE>`` / ``SCARS_REASON_<GATE>`` of a gate id (nothing is read)."""
    return f"SCARS_{what}_" + gate_id.upper().replace("-", "_")


@record
class Settings:
    """The environment as scars uses it, read once by :func:`load`."""

    user: str | None = None  # SCARS_USER
    login: str | None = None  # the login name (getpass: LOGNAME, USER, LNAME, USERNAME, pwd)
    cache_enabled: bool = True  # not SCARS_NO_CACHE=1/true/yes
    cache_dir: Path = Path(".cache") / "scars"  # SCARS_CACHE_DIR, else $XDG_CACHE_HOME/scars, else ~/.cache/scars
    state_dir: Path = (
        Path(".local") / "state" / "scars"
    )  # SCARS_STATE_DIR, else $XDG_STATE_HOME/scars, else ~/.local/state/scars
    workers: int | None = None  # SCARS_WORKERS when digits
    debug: bool = False  # SCARS_DEBUG non-empty
    config_home: Path = Path(".config")  # XDG_CONFIG_HOME, else ~/.config
    gate_vars: Mapping[str, str] = field(default_factory=dict)  # every SCARS_ANSWER_* / SCARS_REASON_*
    loop_spec_backlog_file: str | None = None  # LOOP_SPEC_BACKLOG_FILE
    loop_spec_non_interactive: bool = False  # LOOP_SPEC_NON_INTERACTIVE set and not 0
    loop_spec_iterate_spec_answer: str = ""  # LOOP_SPEC_ANSWER_ITERATE_SPEC
    loop_spec_home: Path = Path(".loop-spec")  # LOOP_SPEC_HOME, else ~/.loop-spec (7.x's state home)
    loop_spec_rewind_budget: str | None = None  # LOOP_SPEC_REWIND_BUDGET (7.0–7.8: the rewind limit)
    git_env: Mapping[str, str] = field(default_factory=dict)  # the environment of a git command
    term: str = ""  # TERM ("dumb": no full-screen app)
    no_color: bool = False  # NO_COLOR set and not empty
    editor: str = ""  # VISUAL, else EDITOR
    # $XDG_CONFIG_HOME/scars/config.toml (read by :func:`load`; the environment wins over it)
    config_user: str | None = None  # user = "…": who decides after SCARS_USER, before git's user.name
    theme: str | None = None  # theme = "…": the app's Textual theme (kept when changed in the app)
    columns: tuple[str, ...] = COLUMNS  # columns = [...]: the item list's columns, of COLUMNS
    config_problems: tuple[str, ...] = ()  # what was wrong with config.toml (the rest is used)
    textual_driver: str = ""  # TEXTUAL_DRIVER (textual-serve's web driver under `scars serve`)
    force_color: bool = False  # FORCE_COLOR set and not empty
    agent: str | None = None  # the agent session detected (_agent): claude-code | codex | gemini-cli
    agent_session: str | None = None  # its session id, when it gives one
    env_allow_agent_answers: bool | None = None  # SCARS_ALLOW_AGENT_ANSWERS (None: unset)
    config_allow_agent_answers: bool = False  # allow_agent_answers = true in config.toml

    @property
    def allow_agent_answers(self) -> bool:
        """An agent's answer at a human-in-the-loop gate is recorded as the agent's (else refused):
        ``SCARS_ALLOW_AGENT_ANSWERS`` when set, else config.toml's ``allow_agent_answers``."""
        if self.env_allow_agent_answers is not None:
            return self.env_allow_agent_answers
        return self.config_allow_agent_answers

    def gate_answer(self, gate_id: str) -> str | None:
        """``SCARS_ANSWER_<GATE>`` (None when unset)."""
        return self.gate_vars.get(env_var(gate_id))

    def gate_reason(self, gate_id: str) -> str | None:
        """``SCARS_REASON_<GATE>`` (None when unset)."""
        return self.gate_vars.get(env_var(gate_id, "REASON"))


def _login(environ: Mapping[str, str]) -> str | None:
    """The login name as ``getpass.getuser`` finds it, from ``environ`` first."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if environ.get(name):
            return environ[name]
    try:
        return pwd.getpwuid(os.getuid()).pw_name or None
    except (KeyError, OSError):  # no password entry for this uid
        return None


# Every variable an agent sets in the shells it runs, as :func:`_agent` reads them (the test suite
# clears them all, tests/conftest.py).
AGENT_VARS: tuple[str, ...] = (
    "CLAUDECODE",
    "CLAUDE_CODE_SESSION_ID",
    "CLAUDE_CODE_ENTRYPOINT",
    "CODEX_THREAD_ID",
    "CODEX_SANDBOX",
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "GEMINI_CLI",
)


def _agent(environ: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(agent, session id) of the agent session ``environ`` is a shell of, or (None, None)."""
    get = environ.get
    if get("CLAUDECODE") == "1" or get("CLAUDE_CODE_SESSION_ID"):
        session = get("CLAUDE_CODE_SESSION_ID") or None
        entry = get("CLAUDE_CODE_ENTRYPOINT")
        return "claude-code", (f"{session}, {entry}" if session and entry else session or entry or None)
    if get("CODEX_THREAD_ID") or get("CODEX_SANDBOX") or get("CODEX_SANDBOX_NETWORK_DISABLED") == "1":
        return "codex", get("CODEX_THREAD_ID") or None
    if get("GEMINI_CLI") == "1":
        return "gemini-cli", None
    return None, None


def _flag(value: str | None) -> bool | None:
    return None if value is None or not value.strip() else value.strip().lower() in ("1", "true", "yes")


def from_environ(environ: Mapping[str, str]) -> Settings:
    """The settings ``environ`` gives (no global state touched)."""
    get = environ.get
    xdg_cache = get("XDG_CACHE_HOME")
    cache_base = Path(xdg_cache) if xdg_cache and os.path.isabs(xdg_cache) else Path.home() / ".cache"
    xdg_state = get("XDG_STATE_HOME")
    state_base = Path(xdg_state) if xdg_state and os.path.isabs(xdg_state) else Path.home() / ".local" / "state"
    workers = (get("SCARS_WORKERS") or "").strip()
    git_env = {k: v for k, v in environ.items() if not k.startswith("GIT_") or k in GIT_KEPT}
    git_env["GIT_TERMINAL_PROMPT"] = "0"
    git_env["LC_ALL"] = "C"
    agent, agent_session = _agent(environ)
    return Settings(
        user=get("SCARS_USER"),
        login=_login(environ),
        cache_enabled=(get("SCARS_NO_CACHE") or "").strip() not in ("1", "true", "yes"),
        cache_dir=Path(get("SCARS_CACHE_DIR") or cache_base / "scars"),
        state_dir=Path(state) if (state := get("SCARS_STATE_DIR")) and os.path.isabs(state) else state_base / "scars",
        workers=int(workers) if workers.isdigit() else None,
        debug=bool(get("SCARS_DEBUG")),
        config_home=Path(get("XDG_CONFIG_HOME") or str(Path.home() / ".config")),
        gate_vars=MappingProxyType({k: v for k, v in environ.items() if k.startswith(_GATE_PREFIXES)}),
        loop_spec_backlog_file=get("LOOP_SPEC_BACKLOG_FILE"),
        loop_spec_non_interactive=(get("LOOP_SPEC_NON_INTERACTIVE") or "") not in ("", "0"),
        loop_spec_iterate_spec_answer=get("LOOP_SPEC_ANSWER_ITERATE_SPEC") or "",
        loop_spec_home=Path(get("LOOP_SPEC_HOME") or Path.home() / ".loop-spec"),
        loop_spec_rewind_budget=get("LOOP_SPEC_REWIND_BUDGET"),
        git_env=MappingProxyType(git_env),
        term=get("TERM") or "",
        no_color=bool(get("NO_COLOR")),
        editor=get("VISUAL") or get("EDITOR") or "",
        textual_driver=get("TEXTUAL_DRIVER") or "",
        force_color=bool(get("FORCE_COLOR")),
        agent=agent,
        agent_session=agent_session,
        env_allow_agent_answers=_flag(get("SCARS_ALLOW_AGENT_ANSWERS")),
    )


_current: Settings | None = None


def load() -> Settings:
    """Read the environment now; the snapshot every later :func:`current` returns."""
    global _current
    env = from_environ(os.environ)
    _current = replace(env, **read_config(config_path(env.config_home)))
    return _current


def clear() -> None:
    """Forget the snapshot: the next :func:`current` reads the environment again."""
    global _current
    _current = None


def current() -> Settings:
    """The snapshot :func:`load` took (taken now when none was)."""
    return _current if _current is not None else load()
