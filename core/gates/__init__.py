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
    "GATES": "scars.core.gatekit.catalog",
    "Answer": "scars.core.gatekit.catalog",
    "Gate": "scars.core.gatekit.catalog",
    "answers_hint": "scars.core.gatekit.catalog",
    "answer_hint": "scars.core.gatekit.evidence",
    "get_gate": "scars.core.gatekit.catalog",
    "Evidence": "scars.core.gatekit.evidence",
    "GateResult": "scars.core.gatekit.evidence",
    "build_entry": "scars.core.gatekit.evidence",
    "validate_answer": "scars.core.gatekit.evidence",
    "AnswersFile": "scars.core.gatekit.answers",
    "load_answers": "scars.core.gatekit.answers",
    "apply_answer": "scars.core.gates.recording",
    "gather": "scars.core.gates.recording",
    "record": "scars.core.gates.recording",
    "record_triage": "scars.core.loops.samsara.record",
    "replay_answers_file": "scars.core.gates.recording",
    "close_round": "scars.core.loops.samsara.record",
    "close_round_result": "scars.core.loops.samsara.record",
    "round_fields": "scars.core.loops.samsara.rule3",
    "record_blocked": "scars.core.loops.samsara.record",
    "record_triage_decided": "scars.core.loops.samsara.record",
    "reopen_fired": "scars.core.loops.samsara.reopen",
    "entries_wanted": "scars.core.loops.samsara.record",
    "DECISION_POINTS": "scars.core.gatekit.catalog",
    "point_of": "scars.core.gatekit.catalog",
    "verify_feature": "scars.core.gates.verify",
    "GateCall": "scars.core.gates.inbox",
    "gate_call": "scars.core.gates.inbox",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)
