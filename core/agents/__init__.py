"""The agents that run the loops (Claude Code, Codex CLI, Gemini CLI): what `scars init` wires into a
repository for them (``wiring``, ``instructions``, ``jsonedit``) and the guard their shell calls pass
(``guard``: the PreToolUse hook's rule). Pure core: no terminal library."""
