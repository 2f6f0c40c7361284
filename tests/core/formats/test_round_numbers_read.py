"""The round numbers of iteration-log.yaml, without a second parse (issue 31: the app's header shows
the next round's number; it loaded PyYAML to parse the file the cached feature was read from):
the numbers kept from the read are the numbers a parse of the same text gives, on every log of the
corpus and on odd shapes; they are taken only for the file in the state it was read in."""

from __future__ import annotations

import os

import pytest

from scars.core.formats.iteration_log import (
    LOG_NAME,
    IterationLogFile,
    read_iteration_log,
    round_numbers,
    round_numbers_read,
    safe_load,
)
from scars.core.storage.cache import fingerprint
from tests.factories import samsara_corpus

ODD = {
    "plain": "rounds:\n  - round: 1\n  - round: 2\n",
    "not a mapping entry": "rounds:\n  - 3\n  - round: 2\n  - [round, 4]\n",
    "no number": "rounds:\n  - decision: continue\n  - round: 5\n",
    "a string number": "rounds:\n  - round: '7'\n  - round: 8\n",
    "a boolean number": "rounds:\n  - round: true\n  - round: 2\n",
    "a float number": "rounds:\n  - round: 2.0\n",
    "rounds not a list": "rounds: 5\n",
    "rounds a mapping": "rounds:\n  round: 1\n",
    "rounds null": "rounds:\n",
    "no rounds": "feature: x\n",
    "out of order": "rounds:\n  - round: 3\n  - round: 1\n  - round: 3\n",
}


def _logs() -> list[tuple[str, str]]:
    out = [(name, text) for name, text in ODD.items()]
    for feature in samsara_corpus():
        log = feature / LOG_NAME
        if log.is_file():
            out.append((str(log), log.read_text(encoding="utf-8")))
    return out


@pytest.mark.parametrize(("name", "text"), _logs(), ids=[n for n, _ in _logs()])
def test_the_numbers_kept_from_the_read_are_the_numbers_of_a_parse(tmp_path, name, text):
    path = tmp_path / LOG_NAME
    path.write_text(text, encoding="utf-8")
    assert round_numbers_read(read_iteration_log(path)) == round_numbers(safe_load(text))


def test_rounds_that_are_not_a_list_hold_no_round():
    # the reader says "rounds is not a list; no rounds read": the rule says the same (it raised)
    assert round_numbers(safe_load("rounds: 5\n")) == []


def _feature(tmp_path, text: str):
    feature = tmp_path / "changes" / "2026-01-01_x"
    feature.mkdir(parents=True)
    (feature / LOG_NAME).write_text(text, encoding="utf-8")
    return feature


def test_the_read_is_taken_only_for_the_file_in_the_state_it_was_read_in(tmp_path):
    feature = _feature(tmp_path, "rounds:\n  - round: 1\n")
    stamp = fingerprint(feature, tmp_path)["files"][LOG_NAME]
    other = read_iteration_log(_feature(tmp_path / "other", "rounds:\n  - round: 7\n") / LOG_NAME)

    log = IterationLogFile(feature)
    log.assume_read(other, stamp)  # told the file read in its state now: its numbers are taken
    assert log.rounds_on_disk() == [7]  # (a log of other numbers: which path answered)

    log = IterationLogFile(feature)
    (feature / LOG_NAME).write_text("rounds:\n  - round: 1\n  - round: 2\n", encoding="utf-8")
    os.utime(feature / LOG_NAME, ns=(1, 1))  # a state of the file the stamp does not describe
    log.reload()
    log.assume_read(other, stamp)
    assert log.rounds_on_disk() == [1, 2]  # parsed: the file changed since that read

    log.assume_read(other, None)  # no stamp (the cache off): parsed
    assert log.rounds_on_disk() == [1, 2]


def test_the_numbers_are_parsed_once_per_text(tmp_path, monkeypatch):
    from scars.core.formats import iteration_log as module

    feature = _feature(tmp_path, "rounds:\n  - round: 1\n")
    parses = []
    real = module._plain
    monkeypatch.setattr(module, "_plain", lambda text: parses.append(text) or real(text))
    log = IterationLogFile(feature)
    assert log.rounds_on_disk() == log.rounds_on_disk() == [1]
    assert len(parses) == 1
    (feature / LOG_NAME).write_text("rounds:\n  - round: 1\n  - round: 2\n", encoding="utf-8")
    log.reload()
    assert log.rounds_on_disk() == [1, 2]
    assert len(parses) == 2
