"""The possible patterns made cheaper (issue 17) are exactly the patterns of the rule as it was
(tests/core/samsara/patterns_reference.py): the same clusters, similarities and reasons on the
upstream fixtures, the demo, the real-shaped fixtures, generated features of several seeds and
random texts over small vocabularies (many equally rare terms, many clusters), with the rule's
limits moved; and the same terms for every text."""

from __future__ import annotations

import random
import sys
import threading

import pytest

from scars.core.model import ScarItem, odd_normal
from scars.core.samsara import patterns
from scars.core.samsara.feature import find_features, read_feature
from scars.core.samsara.patterns import _Vocabulary, literal_patterns, possible_patterns, terms
from scars.core.text import normalize
from tests.core.samsara import patterns_reference as reference
from tests.factories import ROOT, samsara_corpus

sys.path.insert(0, str(ROOT / "bench"))


def _features():
    return samsara_corpus()


def _same(items: list[ScarItem]) -> list[dict]:
    literal = literal_patterns(items)
    got = possible_patterns(items, literal)
    assert got == reference.possible_patterns(items, literal)
    return got


@pytest.mark.parametrize("path", _features(), ids=lambda p: p.name)
def test_the_fixtures_give_the_patterns_of_the_rule_as_it_was(path):
    f = read_feature(path)
    items = [it for it in f.items if it.counted]
    assert _same(items) == list(f.possible_patterns)
    vocabulary = _Vocabulary()  # one for all the texts, as a run has it
    for it in (*f.items, *f.resolved):
        assert terms(it.text) == _decoded(vocabulary, it.text) == reference.terms(it.text), it.text


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_generated_features_give_the_patterns_of_the_rule_as_it_was(seed, tmp_path):
    import generate  # bench/generate.py

    generate.generate("small", tmp_path / "repo", seed=seed)
    (path,) = find_features(tmp_path / "repo")
    f = read_feature(path)
    assert _same([it for it in f.items if it.counted])  # the generator makes near duplicates


def _item(n: int, text: str, report: int) -> ScarItem:
    return ScarItem(
        id=f"i{n}",
        category="known_shortcuts",
        text=text,
        task_id=None,
        file=f"scar-reports/task-{report}-scar.yaml",
        line=None,
        form="gen1",
        odd_normal=odd_normal(text, normalize(text)),
    )


def _random_items(rng: random.Random) -> list[ScarItem]:
    """Texts over a small vocabulary with a long tail, stop words and numbers between them, some
    repeated word for word (literal patterns), some CJK, some citing other tasks, over a few
    reports (of tasks 1 to 5)."""
    vocab = [f"w{chr(97 + i % 26)}{i}" for i in range(rng.randrange(12, 80))]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    extra = ["the", "of", "7", "x", "retries", "retried", "parsing", "shutil.move", "snake_case", "缓存键", "値の"]
    extra += ["task-2", "(task-4 scar)", "Task 1/3", "系統性", "測試"]
    texts: list[str] = []
    for _ in range(rng.randrange(30, 160)):
        if texts and rng.random() < 0.1:
            texts.append(rng.choice(texts))
            continue
        words = rng.choices(vocab, weights, k=rng.randrange(1, 14))
        words += rng.sample(extra, rng.randrange(0, 3))
        rng.shuffle(words)
        texts.append(" ".join(words))
    return [_item(n, t, rng.randrange(1, 6)) for n, t in enumerate(texts)]


@pytest.mark.parametrize("seed", range(30))
def test_random_texts_give_the_patterns_of_the_rule_as_it_was(seed, monkeypatch):
    rng = random.Random(seed)
    items = _random_items(rng)
    _same(items)
    # the rule's limits moved: fewer probes and hits, a low block, easier links, small clusters
    monkeypatch.setattr(patterns, "PROBES", rng.choice([1, 2, 4, 16]))
    monkeypatch.setattr(patterns, "PROBE_HITS", rng.choice([1, 2, 3]))
    monkeypatch.setattr(patterns, "BLOCK_DF", rng.choice([2, 3, 8, 48]))
    monkeypatch.setattr(patterns, "SIMILARITY_THRESHOLD", rng.choice([0.0, 0.1, 0.2, 0.5]))
    monkeypatch.setattr(patterns, "LINK_THRESHOLD", rng.choice([0.0, 0.05, 0.15, 0.3, 1.0]))
    monkeypatch.setattr(patterns, "MAX_LINK_CHECKS", rng.choice([1, 4, 100]))
    monkeypatch.setattr(patterns, "MIN_SHARED", rng.choice([1, 2, 3]))
    monkeypatch.setattr(patterns, "CROSS_MIN_SHARED", rng.choice([1, 3, 4]))
    monkeypatch.setattr(patterns, "CITED_THRESHOLD", rng.choice([0.0, 0.05, 0.1, 0.3]))
    monkeypatch.setattr(patterns, "CITED_MIN_SHARED", rng.choice([0, 1, 2]))
    monkeypatch.setattr(patterns, "CITE_LIMIT", rng.choice([0, 5, 200]))
    _same(items)


@pytest.mark.parametrize(
    "text",
    [
        "Retries blocked: 2 ports_x 缓存键没有包含用户区域设置 abcの値",
        "Straße STRASSE é ß naïve café",
        "ー・テスト",
        "・ 1 22 a",
        "ab1 x_y __init__ shutil.move",
        "the the retry retry retries of a 7 parsing parsing",
        "code code block block code",
        "",
    ],
)
def test_terms_of_a_run_are_the_terms_of_the_rule_as_it_was(text):
    vocabulary = _Vocabulary()
    assert terms(text) == _decoded(vocabulary, text) == reference.terms(text)
    assert _decoded(vocabulary, text.upper()) == reference.terms(text.upper())
    assert _decoded(vocabulary, text + " " + text) == reference.terms(text + " " + text)


def _decoded(vocabulary: _Vocabulary, text: str) -> patterns.Terms:
    """The terms of a text as a run's vocabulary numbers them, as text."""
    t = vocabulary.analyse(text)
    assert len({vocabulary.text(k) for k in t.terms}) == len(t.terms)  # one number per term
    return patterns.Terms(frozenset(map(vocabulary.text, t.words)), frozenset(map(vocabulary.text, t.terms)))


def test_a_vocabulary_shared_with_earlier_runs_gives_the_same_patterns(monkeypatch):
    # A thread's runs share one vocabulary: earlier runs numbered other terms first, so the numbers
    # differ from a fresh vocabulary's; the patterns do not.
    rng = random.Random(7)
    first, second = _random_items(rng), _random_items(rng)
    monkeypatch.setattr(patterns._local, "vocabulary", None, raising=False)
    fresh = possible_patterns(second, literal_patterns(second))
    numbered_fresh = dict(patterns._vocabulary().ids)
    monkeypatch.setattr(patterns._local, "vocabulary", None)
    possible_patterns(first, literal_patterns(first))
    assert possible_patterns(second, literal_patterns(second)) == fresh
    shared = patterns._vocabulary().ids
    assert any(shared[name] != n for name, n in numbered_fresh.items())
    assert fresh and fresh == reference.possible_patterns(second, literal_patterns(second))


def test_a_thread_vocabulary_starts_afresh_above_its_limit(monkeypatch):
    monkeypatch.setattr(patterns._local, "vocabulary", None, raising=False)
    v = patterns._vocabulary()
    v.analyse("alpha bravo charlie")  # 5 terms: 3 words, 2 pairs
    assert len(v.names) == 5
    monkeypatch.setattr(patterns, "VOCABULARY_LIMIT", 5)
    assert patterns._vocabulary() is v
    monkeypatch.setattr(patterns, "VOCABULARY_LIMIT", 4)
    fresh = patterns._vocabulary()
    assert fresh is not v and not fresh.names


def test_each_thread_has_its_own_vocabulary():
    got: list = []
    t = threading.Thread(target=lambda: got.append(patterns._vocabulary()))
    t.start()
    t.join()
    assert got[0] is not patterns._vocabulary()


def test_a_thread_vocabulary_starts_afresh_above_its_limit_of_judged_tokens(monkeypatch):
    # stop words are judged (the log matcher reads those judgements) but numbered as no term
    monkeypatch.setattr(patterns._local, "vocabulary", None, raising=False)
    v = patterns._vocabulary()
    v.analyse("the of and to")
    assert len(v.names) == 0 and len(v.judged) == 4
    monkeypatch.setattr(patterns, "VOCABULARY_LIMIT", 4)
    assert patterns._vocabulary() is v
    monkeypatch.setattr(patterns, "VOCABULARY_LIMIT", 3)
    assert patterns._vocabulary() is not v


IDENTIFIER_TEXTS = [
    "tempfile.mkdtemp + shutil.move is atomic enough; see hook.sh.j2 and skills/x",
    "3foo.bar 9-a.b -x.y x-.y a..b a.b. e.g. i.e. U.S.A. ::x a::b::c a:b",
    "__init__ x_y _private snake_case_name ab1_x 1_x é_x naïve_café",
    "camelCase getHTTPResponse HTTPServer XmlHttp aB Ab aBc ABc iPhone",
    "Straße.py 缓存.键 abcの値.x (paren.x) [list_y] {a.b} 'q.r' \"s_t\" <u/v>",
    "tab\tx.y\nnew_line\r\nw.z end.",
    "",
]


@pytest.mark.parametrize("text", IDENTIFIER_TEXTS)
def test_identifiers_are_those_of_the_rule_as_it_was(text):
    assert patterns.identifiers(text) == reference.identifiers(text)


def test_identifiers_of_random_texts_are_those_of_the_rule_as_it_was():
    rng = random.Random(17)
    alphabet = "aZb_9.-/: xY\t\né缓の" + "camelCase"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        assert patterns.identifiers(text) == reference.identifiers(text), text
