"""Step-mode gates: every human gate of the loops, read from the loop's files, answered once.

``catalog`` (the gates and decision points as data), ``evidence`` (what a gate shows; the one
entry builder), ``answers`` (answers files), ``state_io`` (the loops' own state files), one
module per loop (``samsara``, ``loopspec``, ``review``, ``bkit``, ``dag``), ``recording`` (the one
record path: gather / record / replay), ``inbox`` (which gate answers a listed loop) and
``verify`` (`scars log verify`, against the catalog).
The public face is ``__all__`` below, imported on first use (PEP 562): ``scars gate --help``
loads the catalog alone.
"""

from __future__ import annotations

from scars.core.lazy import public_face

# public name -> module that defines it
_PUBLIC = {
    "GATES": "scars.core.gates.catalog",
    "Answer": "scars.core.gates.catalog",
    "Gate": "scars.core.gates.catalog",
    "answers_hint": "scars.core.gates.catalog",
    "answer_hint": "scars.core.gates.evidence",
    "get_gate": "scars.core.gates.catalog",
    "Evidence": "scars.core.gates.evidence",
    "GateResult": "scars.core.gates.evidence",
    "build_entry": "scars.core.gates.evidence",
    "validate_answer": "scars.core.gates.evidence",
    "AnswersFile": "scars.core.gates.answers",
    "load_answers": "scars.core.gates.answers",
    "apply_answer": "scars.core.gates.recording",
    "gather": "scars.core.gates.recording",
    "record": "scars.core.gates.recording",
    "record_triage": "scars.core.gates.recording",
    "replay_answers_file": "scars.core.gates.recording",
    "close_round": "scars.core.gates.samsara",
    "close_round_result": "scars.core.gates.samsara",
    "round_fields": "scars.core.gates.samsara",
    "record_blocked": "scars.core.gates.samsara",
    "record_triage_decided": "scars.core.gates.samsara",
    "reopen_fired": "scars.core.gates.samsara",
    "entries_wanted": "scars.core.gates.samsara",
    "DECISION_POINTS": "scars.core.gates.catalog",
    "point_of": "scars.core.gates.catalog",
    "verify_feature": "scars.core.gates.verify",
    "GateCall": "scars.core.gates.inbox",
    "gate_call": "scars.core.gates.inbox",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)
