"""The log matcher does only what is left to match (issue 17) and matches exactly as the brute-force
matcher did (tests/core/samsara/matching_reference.py): the same target, confidence, score, reason
and candidates for every description of the upstream logs, the demo, the real-shaped fixtures,
generated features, and descriptions made from their items in every form the stages handle."""

from __future__ import annotations

import random
import sys
from collections import Counter

import pytest

from scars.core.model import ScarItem
from scars.core.samsara import matching, patterns
from scars.core.samsara.feature import find_features, read_feature
from scars.core.samsara.matching import Matcher, Target, description_of, match_log, targets_of
from scars.core.samsara.patterns import WordSets, _word, possible_patterns, terms
from scars.core.text import normalize
from tests.core.samsara.matching_reference import ReferenceMatcher
from tests.factories import REAL_SHAPED, ROOT, samsara_corpus

sys.path.insert(0, str(ROOT / "bench"))


def _features():
    return samsara_corpus(upstream_with_log_only=True)


def _reference_log(feature, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(matching, "Matcher", ReferenceMatcher)
        return match_log(feature)


def _descriptions(feature, seed: int, n: int = 60) -> list:
    """Descriptions of the feature's items as a person writes them: the text, cut short, behind a
    reference, with commentary, quoted, its words shuffled or thinned, two items mixed, a mapping."""
    rng = random.Random(seed)
    targets = [t for t in targets_of(feature) if t.text.strip()]
    if not targets:
        return []
    out: list = []
    for _ in range(n):
        t = rng.choice(targets)
        words = t.text.split()
        kind = rng.randrange(11)
        if kind == 0:
            out.append("  " + t.text.upper() + " ")
        elif kind == 1:
            out.append(" ".join(words[: max(1, len(words) * 2 // 3)]) + " …")
        elif kind == 2:
            out.append(f"{t.task_id or 'task-1'} {t.section}[{t.index or 0}] (verified: false): {t.text[:50]}...")
        elif kind == 3:
            out.append(f"'{t.text}' — fixed in abc123 → see the round")
        elif kind == 4:
            rng.shuffle(words)
            out.append(" ".join(words[: max(2, len(words) * 3 // 4)]))
        elif kind == 5:
            other = rng.choice(targets).text.split()
            out.append(" ".join(words[: len(words) // 2] + other[len(other) // 2 :]))
        elif kind == 6:
            out.append({"description": " ".join(w for w in words if rng.random() < 0.6), "rationale": "x"})
        elif kind == 7:
            out.append("Known: " + t.text + " (task-1 defer)")
        elif kind == 8:
            out.append(" ".join(words[len(words) // 3 :]))
        elif kind == 9:
            out.append(rng.choice(["", "ok", "the a an", "zzz qqq yyy xxx", "完全に 別の 文"]))
        else:
            out.append(f"{t.task_id} {t.section}[{rng.randrange(4)}]: " + " ".join(words[::2]))
    return out


def _match_all(cls, feature, entries) -> list:
    m = cls(targets_of(feature))
    m.expect(entries)
    taken: list[str] = []
    out = []
    for e in entries:
        r = m.match(e, taken=taken)
        if r.target:
            taken.append(r.target)
        out.append(r)
    return out


@pytest.mark.parametrize("path", _features(), ids=lambda p: p.name)
def test_the_logs_match_as_the_brute_force_matcher(path, monkeypatch):
    f = read_feature(path)
    assert f.log_matches == _reference_log(f, monkeypatch)


@pytest.mark.parametrize("path", _features(), ids=lambda p: p.name)
def test_descriptions_made_from_the_items_match_as_the_brute_force_matcher(path):
    f = read_feature(path)
    entries = _descriptions(f, seed=len(path.name))
    assert _match_all(Matcher, f, entries) == _match_all(ReferenceMatcher, f, entries)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_generated_features_match_as_the_brute_force_matcher(seed, tmp_path, monkeypatch):
    import generate  # bench/generate.py

    generate.generate("small", tmp_path / "repo", seed=seed)
    (path,) = find_features(tmp_path / "repo")
    f = read_feature(path)
    assert f.log_matches == _reference_log(f, monkeypatch)
    entries = _descriptions(f, seed=seed, n=120)
    got = _match_all(Matcher, f, entries)
    assert got == _match_all(ReferenceMatcher, f, entries)
    # every stage is reached, so each is compared
    assert {"exact", "normalized", "similar", "none"} <= {m.confidence for m in got}


def test_a_description_without_similarity_reads_no_target_words(tmp_path):
    # Exact and near-copy descriptions never analyse the targets' words: the cost of a read is
    # what is left to match, not the size of the feature.
    f = read_feature(sorted(REAL_SHAPED.iterdir())[0])
    texts = [t.text for t in targets_of(f) if len(t.text) > 40]
    m = Matcher(targets_of(f))
    m.expect([texts[0], texts[1][:30] + "…"])
    assert m.match(texts[0]).confidence == "exact"
    assert m.match(texts[1][: len(texts[1]) - 5] + "…").confidence == "normalized"
    assert m._total is None and not m._postings  # the word index was never built
    m.match("entirely unrelated words about nothing in particular")
    assert m._total is not None


@pytest.mark.parametrize(
    "text",
    [
        "Retries blocked: 2 ports_x 缓存键没有包含用户区域设置 abcの値",
        "Straße STRASSE é ß",
        "ー・テスト",
        "・ 1 22 a",
        "ab1 x_y __init__ shutil.move",
        "",
    ],
)
def test_word_sets_are_the_words_of_terms(text):
    folded = text.casefold()
    ws = WordSets()
    words = ws.words(folded)
    assert words == terms(text).words
    assert ws.any_terms(folded, words) == bool(terms(text).terms)


def test_word_sets_on_every_fixture_text():
    ws = WordSets()
    for path in _features():
        f = read_feature(path)
        for t in targets_of(f):
            folded = t.normalized
            assert ws.words(folded) == terms(t.text).words, t.text
            assert ws.any_terms(folded, ws.words(folded)) == bool(terms(t.text).terms)
        for m in f.log_matches:
            d = description_of(m.entry)
            assert ws.words(d.casefold()) == terms(d).words


def _random_targets(rng: random.Random) -> list[Target]:
    """Texts over a small vocabulary with a long tail (common words weigh little, rare ones much),
    many texts repeated (the best and the runner-up then lie far apart in the ranking), indexes
    and sections as references name them."""
    vocab = [f"w{i}" for i in range(60)]
    weights = [1 / (i + 1) for i in range(60)]
    out: list[Target] = []
    for n in range(rng.randrange(20, 400)):
        if out and rng.random() < 0.3:
            text = rng.choice(out).text
        else:
            text = " ".join(rng.choices(vocab, weights, k=rng.randrange(3, 12)))
        section = rng.choice(["known_shortcuts", "silent_failure_conditions"])
        out.append(Target(f"t{n}", text, normalize(text), f"task-{rng.randrange(3)}", section, "r", rng.randrange(5)))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_rankings_match_as_the_brute_force_matcher(seed):
    rng = random.Random(seed)
    targets = _random_targets(rng)
    entries = []
    for _ in range(40):
        words = rng.choice(targets).text.split()
        words = [w for w in words if rng.random() < 0.7] + [f"w{rng.randrange(80)}" for _ in range(rng.randrange(3))]
        text = " ".join(words)
        ref = rng.random()
        if ref < 0.2:  # a section no target has: the pool stays whole, the index still names an item
            text = f"task-9 assumptions_made[{rng.randrange(5)}]: {text}"
        elif ref < 0.4:
            text = f"task-{rng.randrange(3)} known_shortcuts[{rng.randrange(5)}]: {text}"
        entries.append(text)
    fast, brute = Matcher(targets), ReferenceMatcher(targets)
    fast.expect(entries)
    for e in entries:
        assert fast.match(e) == brute.match(e), e


@pytest.mark.parametrize(
    ("token", "word"),
    [("a", ""), ("ab", "ab"), ("7", ""), ("12", ""), ("a1", "a1"), ("the", ""), ("retries", "retri"), ("x_y", "x_y")],
)
def test_word_of_at_its_bounds(token, word):
    # one letter / two letters, a number / letters and digits, a stop word, a stemmed word
    assert _word(token) == word


@pytest.mark.parametrize(
    ("item", "near"),
    [
        ("config_loader_cache_invalidation", False),  # 32 characters, one word: too few words to be copied
        ("config loader cache invalidation", True),  # the same length in four words: a near copy
    ],
)
def test_a_long_text_of_few_words_is_no_near_copy_inside_a_description(item, near):
    targets = [Target("t0", item, normalize(item), "task-1", "known_shortcuts", "r", 0)]
    targets += [
        Target(f"t{n}", f"other text number {n} here", f"other text number {n} here", None, "x", "r", n)
        for n in range(1, 4)
    ]
    description = f"fixed: {item} now retries twice"
    got = Matcher(targets).match(description)
    assert got == ReferenceMatcher(targets).match(description)
    assert (got.confidence == "normalized") is near


def test_each_description_is_cleaned_and_each_text_analysed_once(monkeypatch):
    # expect(), match(), the ranking and its head all ask for a description's cleaned form and its
    # words: each is computed once per matcher
    cleaned: Counter = Counter()
    analysed: Counter = Counter()
    real_clean, real_terms = matching.clean, matching.terms
    monkeypatch.setattr(matching, "clean", lambda d: cleaned.update([d]) or real_clean(d))
    monkeypatch.setattr(matching, "terms", lambda t: analysed.update([t]) or real_terms(t))
    f = read_feature(sorted(REAL_SHAPED.iterdir())[0])
    entries = _descriptions(f, seed=3)
    _match_all(Matcher, f, entries)
    assert cleaned and analysed
    assert max(cleaned.values()) == 1 and max(analysed.values()) == 1


def test_word_sets_reuse_the_words_the_possible_patterns_judged(monkeypatch):
    texts = ["Retries blocked behind the upload queue", "the parser drops folded scalars silently"]
    items = [ScarItem(f"i{n}", "known_shortcuts", t, None, f"r{n}", None, "gen1") for n, t in enumerate(texts)]
    monkeypatch.setattr(patterns._local, "vocabulary", None, raising=False)  # a thread that judged nothing yet
    possible_patterns(items, [])
    judged: list[str] = []
    real_word = patterns._word
    monkeypatch.setattr(patterns, "_word", lambda run: judged.append(run) or real_word(run))
    ws = WordSets()
    assert ws.words(texts[0].casefold()) == terms(texts[0]).words
    assert judged == []  # every run was judged by the possible patterns of this thread
    ws.words("unseen tokens here")
    assert sorted(judged) == ["here", "tokens", "unseen"]


def test_the_near_copy_index_finds_what_a_scan_of_every_target_finds():
    """The near index (the copy forms held as lengths of the normalised texts, ASCII and other
    forms in two haystacks, forms by hash) against near_copy / equality over every target."""
    rnd = random.Random(7)
    words = ["cache", "entry", "written", "twice", "測試", "文件存在", "the", "lock", "é", "…", "...", ".", ":"]
    texts = [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 14))) for _ in range(400)]
    texts += [t + "." for t in texts[:40]] + [t + " …" for t in texts[40:80]] + ["", "   "]
    targets = [Target(f"t{n}", t, normalize(t), None, "known_shortcuts", "r.yaml", n) for n, t in enumerate(texts)]
    m = Matcher(targets)
    heads = [normalize(t) for t in texts[:150]] + [normalize(t)[3:40] for t in texts[150:300]]
    heads += [normalize(a + " " + b) for a, b in zip(texts[300:350], texts[350:400], strict=True)]
    for head in filter(None, heads):  # clean() gives no empty head
        scan = {n for n, t in enumerate(targets) if t.normalized == head or matching.near_copy(head, t.normalized)}
        assert m._near_copies(head) == scan, head
