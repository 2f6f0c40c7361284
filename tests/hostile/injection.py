"""Terminal- and log-injection payloads, and a report that carries them.

Each payload has a unique marker word so a test can find its rendering. ``FORBIDDEN`` lists
byte sequences that must never reach a terminal or a pipe from these inputs (the payloads'
own escape sequences); ``VISIBLE`` the inert forms that should appear instead.
"""

from __future__ import annotations

from pathlib import Path

PAYLOADS: dict[str, str] = {
    "markup-bold": "[bold]BOLDMARK[/bold] text",
    "markup-link": "[link=https://evil.example/]LINKMARK[/link]",
    "markup-click": "[@click=app.quit]CLICKMARK[/]",
    "markup-unbalanced": "[/b] CLOSEMARK [/]",
    "markup-upper": "[ERROR] UPPERMARK [B]upper[/B] [$accent]var[/]",
    "emoji-code": ":warning: EMOJIMARK :x:",
    "csi": "CSIMARK \x1b[2J\x1b[31;5mred\x1b[0m",
    "osc8": "\x1b]8;;https://evil.example/osc8\x1b\\OSC8MARK\x1b]8;;\x1b\\",
    "osc52": "OSC52MARK \x1b]52;c;UFdORUQ=\x07",
    "osc0-title": "TITLEMARK \x1b]0;PWNED-TITLE\x07",
    "c1-csi": "C1MARK \x9b31mred \x9d0;title\x9c",
    "bidi": "BIDIMARK \u202eevil\u202c \u2066x\u2069",
    "zero-width": "ZWMARK a\u200bb\u200dc\u2060d\ufeffe",
    "format": "FMTMARK \u2028\u2029\u0600\u00ad\U000e0041 line and paragraph separators, a number sign, tags",
    "carriage-return": "CRMARK real text\rFAKE",
    "backspace-bell": "BSMARK abc\x08\x08\x08XYZ\x07",
    "long-line": "LONGMARK " + "y" * 20_000,
    "forged-heading": "FORGEMARK real\n## Decision 999 - iteration.forged\n- decision: proceed\n- uncertainty:\n  level: low",
}

# Sequences from the payloads that must never come out raw.
FORBIDDEN: tuple[bytes, ...] = (
    b"\x1b[2J",
    b"\x1b[31;5m",
    b"\x1b]8;;https://evil",
    b"\x1b]52;",
    b"\x1b]0;PWNED",
    "\x9b31m".encode(),
    "\x9d0;".encode(),
    "\u202e".encode(),
    "\u2066".encode(),
    "\u200b".encode(),
    "\ufeff".encode(),
    "\u0600".encode(),
    "\u2028".encode(),
    "\U000e0041".encode(),
    b"\x08\x08\x08XYZ",
    b"\x07",
)

# Inert forms (scars.core.sanitize) a plain rendering shows.
VISIBLE: dict[str, str] = {
    "csi": "\u241b[2J",
    "osc52": "\u241b]52;c;UFdORUQ=\u2407",
    "bidi": "<U+202E>",
    "zero-width": "<U+200B>",
    "format": "<U+2028><U+2029><U+0600><U+00AD><U+E0041>",
    "c1-csi": "\\x9b31m",
    "markup-bold": "[bold]BOLDMARK[/bold]",
    "markup-click": "[@click=app.quit]CLICKMARK[/]",
    "markup-upper": "[ERROR] UPPERMARK",
    "emoji-code": ":warning: EMOJIMARK",
}


def yaml_dq(s: str) -> str:
    """``s`` as a YAML double-quoted scalar: every non-printable character escaped."""
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif 0x20 <= o < 0x7F:
            out.append(ch)
        elif o < 0x100:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    out.append('"')
    return "".join(out)


def write_injection_report(scar_reports: Path, name: str = "inject-scar.yaml") -> Path:
    """A well-formed report whose every item text (and its note/where) is a payload."""
    lines = ["task_id: task-inject", "completion_status: done", "known_shortcuts:"]
    for key, text in PAYLOADS.items():
        lines.append(f"  - description: {yaml_dq(text)}")
        lines.append(f"    deferred_to_feature_iteration: {'true' if key.startswith('markup') else 'false'}")
    lines.append("silent_failure_conditions:")
    lines.append(f"  - what: {yaml_dq(PAYLOADS['osc52'] + ' WHATMARK')}")
    lines.append(f"    bites_when: {yaml_dq(PAYLOADS['csi'])}")
    lines.append(f"    where: {yaml_dq('src/x.py:1 ' + PAYLOADS['osc8'])}")
    lines.append("assumptions_made:")
    lines.append(f"  - assumption: {yaml_dq(PAYLOADS['bidi'] + ' ASSUMEMARK')}")
    lines.append("    verified: false")
    lines.append(f"    note: {yaml_dq(PAYLOADS['c1-csi'])}")
    lines.append("debt_registered: true")
    lines.append(f"debt_location: {yaml_dq('src/a.py:1 ' + PAYLOADS['osc0-title'])}")
    path = scar_reports / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def forbidden_in(data: bytes) -> list[bytes]:
    return [seq for seq in FORBIDDEN if seq in data]
