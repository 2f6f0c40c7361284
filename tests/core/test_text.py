"""scars.core.text: the one meaningful-text judge (the refusal list itself is the contract in
tests/test_contract_text.py; here: its edges, the gate-reason rules and what it must keep)."""

from __future__ import annotations

import pytest

from scars.core.loops.registry import GATES
from scars.core.text import MIN_REASON_WIDTH, is_meaningful, text_problem

ROUND = GATES["round-continue"]


@pytest.mark.parametrize(
    "reason",
    ["ok", "OK.", "approved", "Looks good!", "continue", "yes", "  lgtm ", "stop", "B", "ship it", "", "   ", "no"],
)
def test_generic_reasons_are_refused_at_a_gate(reason):
    assert text_problem(reason, question=ROUND) is not None


def test_a_specific_reason_is_taken_at_a_gate():
    assert text_problem("the 4 remaining items are 1 accept and 3 defers with owners", question=ROUND) is None


@pytest.mark.parametrize(
    "reason,refused",
    [
        ("繼續", True),
        ("没问题", True),
        ("同意继续", True),
        ("已修復", False),
        ("ok!", True),
        ("vendor SDK missing", False),
    ],
)
def test_generic_reasons_in_either_language(reason, refused):
    assert (text_problem(reason, question=ROUND) is not None) is refused


def test_the_questions_own_answers_are_refused_as_its_reason():
    for answer in ROUND.answers:
        for text in (answer.value, answer.key, answer.label, *answer.aliases):
            assert text_problem(text, question=ROUND) is not None, text
    # The spec gate's labels are its own: "Re-open SPEC/DISCUSS" repeats an answer there only.
    assert "only repeats an answer" in str(text_problem("Re-open SPEC/DISCUSS.", question=GATES["spec"]))
    assert text_problem("Re-open SPEC/DISCUSS", question=ROUND) is None
    assert text_problem("re-open: the spec never defines offline", question=GATES["spec"]) is None


def test_reason_width_boundary_ascii_and_cjk():
    assert MIN_REASON_WIDTH == 4
    assert "too short" in str(text_problem("abc", question=ROUND))  # 3 columns
    assert text_problem("abcd", question=ROUND) is None  # 4 columns
    assert "too short" in str(text_problem("修", question=ROUND))  # one CJK character: 2 columns
    assert text_problem("已修", question=ROUND) is None  # two: 4 columns
    assert text_problem("abc", specific=True) is not None
    # A decision field is not a reason: "Q3" is a fine revisit-when.
    assert text_problem("Q3") is None


@pytest.mark.parametrize(
    "text",
    ["<name of the person>", "{{owner}}", "${OWNER}", "TODO(bob): write it", "TBD - later", "FIXME: x", "todo fill"],
)
def test_template_blanks_and_todo_markers_are_placeholders(text):
    assert "placeholder" in str(text_problem(text))


@pytest.mark.parametrize(
    "text",
    [
        "todo list migration owner",  # a marker word that is not a marker
        "yes: the vendor fixed the SDK in 4.2",
        "none of the exporters writes concurrently today",
        "Q3 planning",
        "王",  # a name may be one character
        "bob",
        "no fix-class items remain",
        "[see PR 12] the retry count moves to config",
        "all decided",  # every item has its decision: a reason to stop
    ],
)
def test_texts_that_say_something_are_kept(text):
    assert text_problem(text) is None, text_problem(text)


@pytest.mark.parametrize("text", ["yes, thanks", "OK了", "ok ok", "done for now", "TBD, later", "👍", "!!!"])
def test_texts_made_only_of_generic_words_or_symbols_are_refused(text):
    assert not is_meaningful(text)


def test_missing_empty_and_non_text():
    assert text_problem(None) == "it is missing"
    assert text_problem(" \t") == "it is empty"
    assert text_problem(42) == "it must be text, not int"
    assert text_problem(None, question=ROUND) == "a reason is required"
    assert text_problem("", specific=True) == "a reason is required"


def test_the_refused_value_is_quoted_in_the_message_and_cut_at_60_characters():
    long = "tbd " * 30
    msg = str(text_problem(long))
    assert repr(long.strip()[:60] + "…") in msg


def test_natural_key_orders_numbers_by_value():
    from scars.core.text import natural_key

    names = ["task-10", "task-2", "Task-1", "task-1b", "", "iteration-r1-blank", "task-02"]
    assert sorted(names, key=natural_key) == [
        "",
        "iteration-r1-blank",
        "Task-1",
        "task-1b",
        "task-2",
        "task-02",
        "task-10",
    ]


def test_join_clauses_drops_a_clause_s_own_full_stop_before_the_separator():
    from scars.core.text import join_clauses

    assert join_clauses(["Fixes touch the same files — potential conflicts.", "2/3 rounds"]) == (
        "Fixes touch the same files — potential conflicts; 2/3 rounds"
    )
    assert join_clauses(["one.", "two."]) == "one; two."  # the last keeps its own
    assert join_clauses(["wait...", "", "  go "]) == "wait...; go"


def test_normalize_is_the_whitespace_rule_it_was():
    """normalize splits on str.split()'s whitespace; it was re.sub(r"\\s+", " ", t).strip(): the same
    characters (every code point), the same result on odd texts and on every fixture text."""
    import re

    from scars.core.text import normalize
    from tests.factories import ROOT

    ws = re.compile(r"\s+")

    def before(t: str) -> str:
        return ws.sub(" ", t).strip().casefold()

    spaces = [chr(i) for i in range(0x110000) if chr(i).isspace()]
    assert [c for c in spaces if not re.fullmatch(r"\s", c)] == []
    assert [chr(i) for i in range(0x110000) if re.fullmatch(r"\s", chr(i)) and not chr(i).isspace()] == []
    odd = ["", " ", "a", "  A  b\tC\n", "".join(spaces), "x" + "".join(spaces) + "Y", "ß İ ﬁ Σσς", "\x1c\x1d\x1e\x1fz"]
    odd += [f"{c}word{c}{c}Word{c}" for c in spaces]
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / "tests" / "fixtures").rglob("*.y*ml")]
    for t in odd + texts + [line for text in texts for line in text.splitlines()]:
        assert normalize(t) == before(t), repr(t)
