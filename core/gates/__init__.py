"""Step-mode gates: every human gate of the loops, read from the loop's files, answered once.

The dispatch over every loop: ``recording`` (the one record path: gather / record / replay),
``inbox`` (which gate answers a listed loop), ``requests`` (gate requests), ``outcome`` and
``verify`` (`scars log verify`, against the catalog). What every gate shares is
``scars.core.gatekit`` (Gate and Answer, evidence, answers files, state files); each loop's gates
are its folder's (``scars.core.loops.<name>``: ``catalog``, its gates as data, and its gathering
and recording), gathered by ``scars.core.loops.registry`` (``GATES``, ``DECISION_POINTS``).
The public face is ``__all__`` below, imported on first use (PEP 562): ``scars gate --help``
loads the loops' catalogs and no reader.
"""

from __future__ import annotations

from scars.core.lazy import public_face

# public name -> module that defines it
_PUBLIC = {
    "GATES": "scars.core.loops.registry",
    "Answer": "scars.core.gatekit.catalog",
    "Gate": "scars.core.gatekit.catalog",
    "answers_hint": "scars.core.gatekit.catalog",
    "answer_hint": "scars.core.gatekit.evidence",
    "get_gate": "scars.core.loops.registry",
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
    "DECISION_POINTS": "scars.core.loops.registry",
    "point_of": "scars.core.loops.registry",
    "verify_feature": "scars.core.gates.verify",
    "GateCall": "scars.core.gates.inbox",
    "gate_call": "scars.core.gates.inbox",
}

__all__ = sorted(_PUBLIC)


__getattr__, __dir__ = public_face(__name__, globals(), _PUBLIC)
