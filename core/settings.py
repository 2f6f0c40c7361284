"""Every environment variable scars reads, in one place (the README lists them).

Each is read when it is asked for (a test or a caller may set it just before), never cached:

* ``SCARS_USER`` — who decides, before git's ``user.name`` and the login name;
* ``SCARS_NO_CACHE`` (1 / true / yes), ``SCARS_CACHE_DIR``, ``XDG_CACHE_HOME`` — the feature cache;
* ``SCARS_WORKERS`` — worker processes for parallel reading (digits; else automatic);
* ``SCARS_DEBUG`` — show the traceback of an internal error;
* ``SCARS_ANSWER_<GATE>`` / ``SCARS_REASON_<GATE>`` — answer a gate without a terminal;
* ``XDG_CONFIG_HOME`` — where the app's keymap is read from;
* loop-spec's own ``LOOP_SPEC_BACKLOG_FILE``, ``LOOP_SPEC_NON_INTERACTIVE`` and
  ``LOOP_SPEC_ANSWER_ITERATE_SPEC``, honoured as loop-spec does;
* ``GIT_*`` — left out of the environment of every git command scars runs, but where the user's
  git configuration lives (``GIT_CONFIG_GLOBAL``, ``GIT_CONFIG_SYSTEM``, ``GIT_CONFIG_NOSYSTEM``).
"""

from __future__ import annotations

import os
from pathlib import Path


def _get(name: str) -> str | None:
    return os.environ.get(name)


def user() -> str | None:
    """``SCARS_USER`` (None when unset)."""
    return _get("SCARS_USER")


def cache_enabled() -> bool:
    """False when ``SCARS_NO_CACHE`` is 1, true or yes."""
    return (_get("SCARS_NO_CACHE") or "").strip() not in ("1", "true", "yes")


def cache_dir() -> Path:
    """``$SCARS_CACHE_DIR``, else ``$XDG_CACHE_HOME/scars`` (absolute only), else ``~/.cache/scars``."""
    explicit = _get("SCARS_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = _get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "scars"


def workers() -> int | None:
    """``SCARS_WORKERS`` when it is digits, else None (automatic)."""
    env = (_get("SCARS_WORKERS") or "").strip()
    return int(env) if env.isdigit() else None


def debug() -> bool:
    """``SCARS_DEBUG`` set to anything non-empty."""
    return bool(_get("SCARS_DEBUG"))


def config_home() -> Path:
    """``$XDG_CONFIG_HOME``, else ``~/.config``."""
    return Path(_get("XDG_CONFIG_HOME") or str(Path.home() / ".config"))


def env_var(gate_id: str, what: str = "ANSWER") -> str:
    """`SCARS_ANSWER_<GATE>` / `SCARS_REASON_<GATE>` for a gate id."""
    return f"SCARS_{what}_" + gate_id.upper().replace("-", "_")


def gate_answer(gate_id: str) -> str | None:
    """``SCARS_ANSWER_<GATE>`` (None when unset)."""
    return _get(env_var(gate_id))


def gate_reason(gate_id: str) -> str | None:
    """``SCARS_REASON_<GATE>`` (None when unset)."""
    return _get(env_var(gate_id, "REASON"))


def loop_spec_backlog_file() -> str | None:
    """loop-spec's ``LOOP_SPEC_BACKLOG_FILE`` (None when unset)."""
    return _get("LOOP_SPEC_BACKLOG_FILE")


def loop_spec_non_interactive() -> bool:
    """loop-spec's ``LOOP_SPEC_NON_INTERACTIVE``: set and not ``0``."""
    return (_get("LOOP_SPEC_NON_INTERACTIVE") or "") not in ("", "0")


def loop_spec_iterate_spec_answer() -> str:
    """loop-spec's ``LOOP_SPEC_ANSWER_ITERATE_SPEC`` ("" when unset)."""
    return _get("LOOP_SPEC_ANSWER_ITERATE_SPEC") or ""


# The GIT_* variables a git command of scars keeps: where the user's own configuration lives
# (user.name is read from it). Every other GIT_* (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE … a hook
# runs with) would point git at another repository than the one scars names.
GIT_KEPT = ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_NOSYSTEM")


def git_env() -> dict[str, str]:
    """The environment of a git command: ours without ``GIT_*`` (but ``GIT_KEPT``), no prompt,
    the C locale."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in GIT_KEPT}
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env
