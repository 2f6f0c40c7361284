"""Property: random sequences of decisions, batches, undos and rounds, replayed from the
journal, equal the in-memory state and a simple model; the written logs read back equal. The
model holds the one rule of when a round opens: a decision while none is open opens one (refused
after a stop), and an undo that leaves such a round holding nothing takes its start back."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from scars.core.errors import IterationStopped
from scars.core.samsara.decisions import replay
from scars.core.samsara.session import FeatureSession
from scars.core.storage.journal import journal_path, read_journal
from tests.factories import ACCEPT, csv_feature
from tests.hypothesis_profiles import examples

FIELDS = {"fix": {}, "accept": ACCEPT, "defer": {"reason": "next quarter"}}

op = st.one_of(
    st.tuples(st.just("decide"), st.integers(0, 3), st.sampled_from(["fix", "accept", "defer"])),
    st.tuples(
        st.just("batch"),
        st.sets(st.integers(0, 3), min_size=1, max_size=4),
        st.sampled_from(["fix", "accept", "defer"]),
    ),
    st.tuples(st.just("undo")),
    st.tuples(st.just("start")),
    st.tuples(st.just("close"), st.sampled_from(["continue", "stop"])),
    st.tuples(st.just("reopen")),
)


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, min_size=1, max_size=25))
# a round started explicitly stays open when its only decision is undone; one a decision opened does not
@example([("start",), ("decide", 0, "fix"), ("undo",), ("reopen",)])
@example([("decide", 0, "fix"), ("batch", {1, 2}, "defer"), ("undo",), ("undo",), ("reopen",), ("decide", 3, "fix")])
# after a stop a decision is refused until a round is started explicitly
@example([("decide", 0, "fix"), ("close", "stop"), ("decide", 1, "fix"), ("start",), ("decide", 1, "fix")])
def test_journal_replay_equals_state_and_model(ops):
    root = Path(tempfile.mkdtemp(prefix="scars-prop-"))
    try:
        feature = csv_feature(root)
        s = FeatureSession.open(feature)
        ids = [i.id for i in s.feature.items]
        model: dict[str, str] = {}
        undo: list[dict[str, str]] = []  # model snapshots before each undoable change of this round
        is_open = False
        by_decision = False  # the open round was opened by a decision (an undo that empties it takes it back)
        closed: list[dict] = []
        # a fourth round passes the max-rounds valve (3): started with the override it asks for
        past = "the property test runs past the valve"

        def decided(record, *args, **fields) -> bool:
            """One decision (or batch), recorded (True) or refused after a stop (False, nothing
            written); it opens a round when none is open."""
            nonlocal is_open, by_decision
            override = past if len(closed) >= 3 else None
            if not is_open and closed and closed[-1]["decision"] == "stop":
                with pytest.raises(IterationStopped):
                    record(*args, override_max_rounds=override, **fields)
                return False
            undo.append(dict(model))
            record(*args, override_max_rounds=override, **fields)
            if not is_open:
                is_open, by_decision = True, True
            return True

        for o in ops:
            if o[0] == "decide":
                if decided(s.decide, ids[o[1]], o[2], **FIELDS[o[2]]):
                    model[ids[o[1]]] = o[2]
            elif o[0] == "batch":
                batch = [ids[i] for i in sorted(o[1])]
                if decided(s.decide_many, batch, o[2], **FIELDS[o[2]]):
                    for i in batch:
                        model[i] = o[2]
            elif o[0] == "undo":
                reverted = s.undo()
                if undo:
                    before = undo.pop()
                    changed = {k for k in set(before) | set(model) if before.get(k) != model.get(k)}
                    assert changed <= set(reverted)
                    model = before
                    if not undo and by_decision:  # the round held nothing more: its start went with the undo
                        is_open = by_decision = False
                else:
                    assert reverted == []
                assert (s.current_round() is not None) == is_open
            elif o[0] == "start" and not is_open:
                s.start_round(override_max_rounds=past if len(closed) >= 3 else None)
                is_open, by_decision = True, False
            elif o[0] == "close" and is_open:
                closed.append(s.close_round(o[1], "the property test decided so"))
                is_open = False
                undo.clear()
            elif o[0] == "reopen":
                s.close()
                s = FeatureSession.open(feature)
            assert {k: d.action for k, d in s.decisions.items()} == model
            assert (s.current_round() is not None) == is_open
        s.close()
        # replay from disk equals the state, reopening gives it back
        replayed = replay(read_journal(journal_path(feature)).records)
        assert {k: d.action for k, d in replayed.decisions.items()} == model
        with FeatureSession.open(feature, read_only=True) as ro:
            assert {k: d.action for k, d in ro.decisions.items()} == model
            assert (ro.current_round() is not None) == is_open
        # the written iteration-log.yaml reads back as the rounds closed
        log = feature / "iteration-log.yaml"
        if closed:
            data = yaml.safe_load(log.read_text(encoding="utf-8"))
            assert data["rounds"] == closed
        else:
            assert not log.exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)
