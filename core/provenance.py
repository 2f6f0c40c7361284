"""Where a decision or a gate answer came from (:class:`Provenance`), built in ONE place
(:func:`provenance`) from the settings snapshot and what the front end passes; and the one rule of
whether it may be recorded as a person's (:func:`decided_by`).

Every front end calls :func:`provenance`: the app (``app``), a terminal prompt of `scars gate`
(``prompt``), a flag (``flag``: ``--answer``, `scars decide`, `scars round start|close|flush`,
`scars watch check`), an environment variable (``env``: ``SCARS_ANSWER_<GATE>``), an answers file
(``answers-file``), a request answered in the app (``request-app``) or by `scars answer`
(``request-answer``), and later an MCP client (``mcp``). The front end says whether a person was at a terminal (``tty``: stdin and stdout are
terminals); the agent session is read from the environment (:mod:`scars.core.settings`):

* Claude Code sets ``CLAUDECODE=1`` in the shells it runs (with ``CLAUDE_CODE_SESSION_ID`` and
  ``CLAUDE_CODE_ENTRYPOINT`` when it has them);
* Codex CLI sets ``CODEX_THREAD_ID`` in every shell it spawns (codex-rs ``core/src/exec_env.rs``,
  ``CODEX_THREAD_ID_ENV_VAR``), and ``CODEX_SANDBOX`` / ``CODEX_SANDBOX_NETWORK_DISABLED=1`` in its
  sandbox;
* Gemini CLI sets ``GEMINI_CLI=1`` in the environment of every shell command
  (gemini-cli ``packages/core/src/services/shellExecutionService.ts``).

In human-in-the-loop mode an answer from a detected agent session without a terminal is refused
(:class:`~scars.core.errors.AgentAnswerRefused`, exit 7) unless the configuration allows agent
answers (``SCARS_ALLOW_AGENT_ANSWERS=1`` or ``allow_agent_answers = true`` in config.toml); then it
is recorded as the agent's (``claude-code (session …) for alice``). In auto mode the agent is the
gatekeeper the loop runs: its answer is recorded as today, with its provenance.
"""

from __future__ import annotations

from typing import Any

from scars.core import settings as settings_mod
from scars.core.errors import AgentAnswerRefused
from scars.core.records import record
from scars.core.settings import Settings

CHANNELS: tuple[str, ...] = ("app", "prompt", "flag", "env", "answers-file", "request-app", "request-answer", "mcp")
# Channels where a person answered in front of what scars showed (the app; a request answered
# there, or by `scars answer` — whose terminal is its own `tty`).
PERSON_CHANNELS = frozenset({"app", "request-app"})

# How a person answers a human gate when an agent asked it.
HOW_A_PERSON_ANSWERS = (
    "a person answers it: the loop asks with `scars gate … --wait` and the person answers in the scars app "
    "(the Loops inbox) or with `scars answer ID` in a terminal"
)


@record(slots=True)
class Provenance:
    """Where one decision or gate answer came from."""

    channel: str  # one of CHANNELS
    tty: bool  # a person was at a terminal (stdin and stdout are terminals), as the front end saw it
    agent: str | None = None  # claude-code | codex | gemini-cli: the agent session it ran in
    agent_session: str | None = None  # that session's id, when the agent gives one
    via: str = ""  # the front end's own words: "scars gate --answer", "answers file a.yaml", "request r-1 (app)"

    def __post_init__(self) -> None:
        if self.channel not in CHANNELS:
            raise ValueError(f"unknown provenance channel {self.channel!r} (known: {', '.join(CHANNELS)})")

    @property
    def agent_text(self) -> str | None:
        """``claude-code (session 1a2b)``, or None outside an agent session."""
        if self.agent is None:
            return None
        return f"{self.agent} (session {self.agent_session})" if self.agent_session else self.agent

    @property
    def by_a_person(self) -> bool:
        """Whether a person gave it, as far as the provenance can tell: no agent session, and a
        terminal or a channel where a person answers in front of the gate (the app)."""
        return self.agent is None and (self.tty or self.channel in PERSON_CHANNELS)

    def describe(self) -> str:
        """One line: ``flag, at a terminal, in claude-code (session 1a2b)``."""
        parts = [self.channel, "at a terminal" if self.tty else "no terminal"]
        if self.agent_text:
            parts.append(f"in {self.agent_text}")
        return ", ".join(parts)

    def with_via(self, via: str) -> Provenance:
        return Provenance(self.channel, self.tty, self.agent, self.agent_session, via)

    def to_record(self) -> dict[str, Any]:
        """The journal's (and iteration-log.yaml's, a request answer's) form: plain JSON."""
        out: dict[str, Any] = {"channel": self.channel, "tty": self.tty}
        if self.agent is not None:
            out["agent"] = self.agent
            if self.agent_session:
                out["agent_session"] = self.agent_session
        if self.via:
            out["via"] = self.via
        return out

    @classmethod
    def from_record(cls, data: Any) -> Provenance | None:
        """A record's provenance, or None when it holds none (or none usable: untrusted JSON)."""
        if not isinstance(data, dict) or data.get("channel") not in CHANNELS or not isinstance(data.get("tty"), bool):
            return None
        agent = data.get("agent") if isinstance(data.get("agent"), str) else None
        session = data.get("agent_session") if isinstance(data.get("agent_session"), str) else None
        via = data["via"] if isinstance(data.get("via"), str) else ""
        return cls(str(data["channel"]), bool(data["tty"]), agent, session, via)


def provenance(channel: str, *, tty: bool, via: str = "", env: Settings | None = None) -> Provenance:
    """THE provenance of an answer taken now by a front end: its ``channel``, whether a person was
    at a terminal (``tty``, which the front end sees), and the agent session the settings
    snapshot detects."""
    env = env if env is not None else settings_mod.current()
    return Provenance(channel, tty, env.agent, env.agent_session, via)


def as_provenance(source: Provenance | str | None, *, env: Settings | None = None) -> Provenance:
    """The provenance of an answer handed to the record path as ``source``: a :class:`Provenance`
    as it is; a bare label (a library caller, an older call) as the strictest reading — a flag
    given without a terminal (so the human-mode rule still applies), the label kept as ``via``."""
    if isinstance(source, Provenance):
        return source
    return provenance("flag", tty=False, via=source or "", env=env)


def decided_by(user: str, prov: Provenance | None, *, human_mode: bool, env: Settings | None = None) -> str:
    """Who a decision is recorded as, or :class:`AgentAnswerRefused`: in human mode an answer from
    an agent session without a terminal is the agent's, never the person's — refused unless the
    configuration allows agent answers, then recorded as ``<agent> (session …) for <user>``. Auto
    mode, a person at a terminal (in an agent's session or not) and no provenance: ``user``."""
    if prov is None or not human_mode or prov.agent is None or prov.tty:
        return user
    env = env if env is not None else settings_mod.current()
    if not env.allow_agent_answers:
        raise AgentAnswerRefused(
            f"refused: this answer comes from a {prov.agent_text} session without a terminal, and this loop runs "
            f"in human-in-the-loop mode — an agent's answer never passes for a person's. Nothing was recorded; "
            f"{HOW_A_PERSON_ANSWERS}. (To let agents answer here, set SCARS_ALLOW_AGENT_ANSWERS=1 or "
            "allow_agent_answers = true in config.toml: the answer is then recorded as the agent's.)"
        )
    return f"{prov.agent_text} for {user}"
