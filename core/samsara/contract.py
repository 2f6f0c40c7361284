"""The ``## Evaluation Contract`` of pre-thinking.md and its execution mode (formats.md §1.10)."""

from __future__ import annotations

import re

from scars.core.model import EvaluationContract

_CONTRACT_LABELS = {
    "primary evaluator": "primary_evaluator",
    "agent can perform it by": "agent_can_perform_it_by",
    "pass signal": "pass_signal",
    "fail signal": "fail_signal",
    "feedback loop": "feedback_loop",
    "out of scope validation": "out_of_scope_validation",
}


_LABEL = re.compile(r"^\s*\*\*([^*]+?):?\*\*:?\s*(.*)$")


_EXEC_MODE = re.compile(r"^\s*(?:\*\*)?Execution mode:?(?:\*\*)?:?\s*`?([A-Za-z-]+)`?", re.IGNORECASE)


def parse_contract(text: str, file: str) -> EvaluationContract | None:
    """The ``## Evaluation Contract`` block, label to next label (formats.md §1.10)."""
    execution_mode = None
    for line in text.splitlines():
        m = _EXEC_MODE.match(line)
        if m:
            execution_mode = m.group(1).lower()
            break
    lines = text.splitlines()
    start = None
    for i, line in enumerate(lines):
        if re.match(r"^#{1,6}\s+Evaluation Contract\b", line.strip(), re.IGNORECASE):
            start = i + 1
            break
    values: dict[str, list[str]] = {}
    if start is not None:
        current: str | None = None
        for line in lines[start:]:
            if line.lstrip().startswith("#"):
                break  # next heading ends the block
            m = _LABEL.match(line)
            if m:
                label = m.group(1).strip().rstrip(":").lower()
                current = _CONTRACT_LABELS.get(label)
                if current is not None:
                    values[current] = [m.group(2)]
                continue
            if current is not None:
                values[current].append(line)
    if start is None and execution_mode is None:
        return None
    fields = {k: "\n".join(v).strip() or None for k, v in values.items()}
    return EvaluationContract(file=file, execution_mode=execution_mode, **fields)
