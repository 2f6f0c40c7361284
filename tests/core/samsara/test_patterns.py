"""Possible patterns (near-duplicate items across reports): the terms, the score, every
threshold at its boundary, the candidate search's limits, the clusters and their reason."""

from __future__ import annotations

import math

import pytest

from scars.core.model import ScarItem, odd_normal
from scars.core.samsara import patterns
from scars.core.samsara.feature import read_feature
from scars.core.samsara.patterns import identifiers, possible_patterns, similarity, stem, terms
from scars.core.text import normalize
from tests.factories import report, write_feature


def item(n: int, text: str, file: str | None = None) -> ScarItem:
    return ScarItem(
        id=f"i{n}",
        category="known_shortcuts",
        text=text,
        task_id=None,
        file=file or f"scar-reports/r{n}.yaml",
        line=None,
        form="gen1",
        odd_normal=odd_normal(text, normalize(text)),
    )


def found(*texts: str, files: list[str] | None = None) -> list[list[int]]:
    items = [item(n, t, files[n] if files else None) for n, t in enumerate(texts)]
    return [sorted(int(i[1:]) for i in p["ids"]) for p in possible_patterns(items, patterns.literal_patterns(items))]


# --------------------------------------------------------------------------- terms


def test_stem_folds_the_forms_of_one_word():
    assert stem("retries") == stem("retry") == stem("retried") == "retri"
    assert stem("blocks") == stem("block")
    assert stem("atomicity") == stem("atomic")
    assert stem("class") == "class"  # a double s is not a plural


def test_terms_are_stemmed_words_and_adjacent_pairs_broken_by_stop_words():
    t = terms("The retries of uploads are hard-coded in a code block")
    assert t.words == {"retri", "upload", "hard", "cod", "code", "block"}
    assert {"hard cod", "code block"} <= t.terms
    assert "retri upload" not in t.terms  # "of" breaks the run
    assert "upload hard" not in t.terms  # so does "are"


def test_terms_drop_numbers_and_one_letter_words_and_read_cjk_as_bigrams():
    t = terms("step 3 x 系統性 cache")
    assert t.words == {"step", "cach"}
    assert {"系統", "統性"} <= t.terms


def test_identifiers_keep_code_names_whole_and_skip_abbreviations():
    text = "e.g. shutil.move, i.e. hook.sh.j2 via _parse_frontmatter() and FormatsConfig; a.b"
    assert identifiers(text) == ["shutil.move", "hook.sh.j2", "_parse_frontmatter", "formatsconfig"]


# --------------------------------------------------------------------------- the score


def test_similarity_is_weighted_containment_of_the_lighter_text():
    short = "upload retries hard-coded three attempts"
    long = "upload retries hard-coded three attempts; the bucket throttles and the partial file stays"
    other = "ledger amounts overflow float cents"
    s = similarity([short, long, other])
    assert s[0][1] == s[1][0] == pytest.approx(1.0)  # every term of the short one is in the long one
    assert s[0][2] == 0.0  # fewer than MIN_SHARED shared words


def test_rare_terms_weigh_more_than_common_ones():
    # item 0 shares alpha, bravo and a rare word with item 1, alpha, bravo and a word all of
    # them have with item 2: the rare one links more
    texts = [
        "alpha bravo rare common x0a x0b",
        "alpha bravo rare y1a y1b",
        "alpha bravo common z2a z2b",
        "common w3a w3b w3c",
    ]
    s = similarity(texts)
    assert s[0][1] > s[0][2] > 0


# --------------------------------------------------------------------------- thresholds at their boundary


def _pair_score(a: str, b: str) -> float:
    return similarity([a, b])[0][1]


A = "export retries hard-coded three attempts uploader"
B = "uploader hard-codes export retries: three quick attempts, no backoff, partial files remain"


def test_similarity_threshold_is_inclusive(monkeypatch):
    s = _pair_score(A, B)
    monkeypatch.setattr(patterns, "SIMILARITY_THRESHOLD", s)
    assert found(A, B) == [[0, 1]]
    monkeypatch.setattr(patterns, "SIMILARITY_THRESHOLD", math.nextafter(s, math.inf))
    assert found(A, B) == []


def test_the_documented_pattern_thresholds():
    # README, "Cross-task patterns and possible patterns"
    assert (patterns.SIMILARITY_THRESHOLD, patterns.LINK_THRESHOLD, patterns.MIN_SHARED) == (0.2, 0.15, 3)


# Texts whose similarity is known exactly: words joined by a stop word (no adjacent pairs), every
# term of the lighter item in exactly two items (its own words also in a third item of its report,
# never compared with it), so each weighs the same and the score is shared / all of its terms.
_SYLLABLES = ["ka", "zu", "mo", "ri", "lo", "fa", "ni", "gu", "pe", "bo"]
_WORDS = ["".join((a, b, c)) for a in _SYLLABLES for b in _SYLLABLES for c in _SYLLABLES]


def _contained(shared: int, total: int) -> tuple[float, list[list[int]]]:
    own = _WORDS[100 : 100 + total - shared]
    a = " the ".join(_WORDS[:shared] + own)
    b = " the ".join(_WORDS[:shared] + _WORDS[300:330])  # heavier: its own words are in it alone
    texts = [a, b, " the ".join(own)]
    assert len(terms(a).terms) == total
    files = ["scar-reports/a.yaml", "scar-reports/b.yaml", "scar-reports/a.yaml"]
    return similarity(texts)[0][1], found(*texts, files=files)


@pytest.mark.parametrize(
    ("total", "score", "paired"), [(21, 4 / 21, False), (20, 0.2, True), (19, 4 / 19, True)], ids=str
)
def test_a_pair_is_similar_from_a_fifth_of_the_lighter_items_weight(total, score, paired):
    s, got = _contained(4, total)
    assert s == pytest.approx(score, abs=1e-12) and got == ([[0, 1]] if paired else [])
    if total == 20:
        assert s == 0.2  # exactly at SIMILARITY_THRESHOLD


@pytest.mark.parametrize(("second", "joined"), [(math.nextafter(0.3, 0), False), (0.3, True), (0.31, True)], ids=repr)
def test_a_third_item_joins_when_the_mean_across_the_clusters_is_fifteen_hundredths(monkeypatch, second, joined):
    # The link rule with the scores given: items 0 and 1 pair first (0.9); item 2 is similar to
    # item 1 (``second``) and shares nothing with item 0 (0.0), so the mean across is second / 2.
    table = {(0, 1): 0.9, (1, 2): second, (0, 2): 0.0}
    monkeypatch.setattr(patterns._Index, "score", lambda self, a, b, ta, tb: table[min(a, b), max(a, b)])
    got = found("alpha bravo charlie delta", "alpha bravo charlie echo", "alpha bravo charlie foxtrot")
    assert got == ([[0, 1, 2]] if joined else [[0, 1]])


def test_the_default_threshold_keeps_a_paraphrase_and_drops_a_neighbour():
    assert found(
        "Retry count for uploads is hard-coded to 3",
        "Upload retries are hard-coded to three attempts with no backoff",
    ) == [[0, 1]]
    assert (
        found(
            "Upload retries are hard-coded to three attempts with no backoff",
            "A timeout on the last retry is raised, but a partial upload stays in the bucket",
        )
        == []
    )


def test_three_shared_words_are_enough_and_two_are_not():
    assert len(terms("alpha bravo charlie delta").words & terms("alpha bravo charlie echo").words) == 3
    assert found("alpha bravo charlie delta", "alpha bravo charlie echo") == [[0, 1]]
    assert found("alpha bravo delta", "alpha bravo echo") == []  # 2 shared words, containment 0.5


def test_items_need_three_words_to_be_compared():
    assert found("alpha bravo", "bravo alpha!") == []  # identical terms, but 2 words
    assert found("alpha bravo charlie", "charlie bravo alpha!") == [[0, 1]]


def test_items_of_one_report_or_one_literal_pattern_are_never_paired():
    assert found(A, B, files=["scar-reports/a.yaml", "scar-reports/a.yaml"]) == []
    items = [item(0, A, "scar-reports/a.yaml"), item(1, A, "scar-reports/b.yaml")]
    literal = patterns.literal_patterns(items)
    assert literal and possible_patterns(items, literal) == []


# --------------------------------------------------------------------------- the candidate search's limits


def cands(*texts: str) -> list[tuple[int, int]]:
    analysed = [terms(t) for t in texts]
    df: dict[str, int] = {}
    for t in analysed:
        for k in t.terms:
            df[k] = df.get(k, 0) + 1
    return sorted(patterns.candidates(analysed, df))


def test_a_term_in_more_than_block_df_items_is_not_a_key(monkeypatch):
    monkeypatch.setattr(patterns, "PROBE_HITS", 1)
    texts = ["alpha bravo charlie uniqa", "alpha bravo charlie uniqb", "alpha bravo charlie uniqc"]
    monkeypatch.setattr(patterns, "BLOCK_DF", 3)  # the shared terms are in exactly 3 items: keys
    assert cands(*texts) == [(0, 1), (0, 2), (1, 2)]
    monkeypatch.setattr(patterns, "BLOCK_DF", 2)  # in one item more than BLOCK_DF: no key at all
    assert cands(*texts) == []


def test_only_an_items_probes_rarest_terms_find_candidates(monkeypatch):
    monkeypatch.setattr(patterns, "PROBE_HITS", 1)
    # a's usable terms, rarest first: "delta", "delta echo" (in a, b), then "echo" (in a, b, c);
    # c's own probes (hotel, "hotel india", india: in c, d) never reach a
    a, b, c, d = "delta echo foxtrot", "delta echo golf", "echo hotel india", "hotel india kilo"
    monkeypatch.setattr(patterns, "PROBES", 3)
    assert (0, 2) in cands(a, b, c, d)
    monkeypatch.setattr(patterns, "PROBES", 2)
    pairs = cands(a, b, c, d)
    assert (0, 1) in pairs and (0, 2) not in pairs


def test_a_candidate_holds_probe_hits_of_the_items_probes(monkeypatch):
    monkeypatch.setattr(patterns, "PROBES", 2)
    # a's probes: "delta echo", "echo" (in a, b); c's: "golf" (c, d), "delta" (a, b, c), of which
    # a holds one
    a, b, c, d = "alpha delta echo", "bravo delta echo", "charlie delta golf", "golf kilo lima"
    monkeypatch.setattr(patterns, "PROBE_HITS", 2)
    assert (0, 2) not in cands(a, b, c, d) and (0, 1) in cands(a, b, c, d)
    monkeypatch.setattr(patterns, "PROBE_HITS", 1)
    assert (0, 2) in cands(a, b, c, d)


def test_an_item_of_fewer_than_three_words_is_never_a_candidate(monkeypatch):
    monkeypatch.setattr(patterns, "PROBE_HITS", 1)
    assert cands("uniq zulu", "alpha bravo uniq") == []
    assert cands("uniq zulu yankee", "alpha bravo uniq") == [(0, 1)]


# --------------------------------------------------------------------------- clusters


# Three texts: x~y and y~z similar, x and z much less (y is a long text that resembles both).
X = "alpha bravo charlie delta echo"
Y = "alpha bravo charlie delta echo kilo lima mike november oscar"
Z = "kilo lima mike november oscar"


def test_clusters_join_at_the_link_threshold_and_not_below(monkeypatch):
    s = similarity([X, Y, Z])
    assert s[0][1] >= patterns.SIMILARITY_THRESHOLD and s[1][2] >= patterns.SIMILARITY_THRESHOLD
    # the first edge makes a pair; the second joins the third item when the mean of its cross
    # pairs with the pair reaches LINK_THRESHOLD
    mean = (s[0][2] + s[1][2]) / 2 if s[0][1] >= s[1][2] else (s[0][1] + s[0][2]) / 2
    monkeypatch.setattr(patterns, "LINK_THRESHOLD", mean)
    assert found(X, Y, Z) == [[0, 1, 2]]
    monkeypatch.setattr(patterns, "LINK_THRESHOLD", math.nextafter(mean, math.inf))
    assert sorted(map(len, found(X, Y, Z))) == [2]  # the pair stays, the third is left out


def test_clusters_larger_than_max_link_checks_stay_apart(monkeypatch):
    monkeypatch.setattr(patterns, "LINK_THRESHOLD", 0.0)
    monkeypatch.setattr(patterns, "MAX_LINK_CHECKS", 2)  # a pair (2) and a single item: 2 checks
    assert found(X, Y, Z) == [[0, 1, 2]]
    monkeypatch.setattr(patterns, "MAX_LINK_CHECKS", 1)
    assert sorted(map(len, found(X, Y, Z))) == [2]


def test_a_pattern_says_which_identifiers_and_words_the_items_share():
    a = (
        "tempfile.mkdtemp + shutil.move is atomic enough for all-or-nothing semantics on the "
        "same filesystem; across filesystems shutil.move copies and deletes"
    )
    b = (
        "The temp directory created by tempfile.mkdtemp is on the same filesystem as the "
        "output directory, making shutil.move atomic enough for test purposes"
    )
    items = [item(0, a), item(1, b), item(2, "ledger amounts overflow a float without losing cents")]
    (p,) = possible_patterns(items, [])
    assert p["ids"] == ["i0", "i1"]
    assert 0.2 <= p["similarity"] <= 1
    assert "shared identifiers: tempfile.mkdtemp, shutil.move" in p["reason"]
    assert "atomic" in p["reason"] and "“atomic enough”" in p["reason"]


def test_possible_patterns_are_a_pure_function_of_the_items():
    texts = [X, Y, Z, A, B]
    items = [item(n, t) for n, t in enumerate(texts)]
    first = possible_patterns(items, [])
    assert possible_patterns(list(items), []) == first
    assert possible_patterns(items, []) == first


def test_the_demo_groups_its_three_upload_retry_shortcuts():
    from tests.factories import ROOT

    f = read_feature(ROOT / "core" / "demo" / "repo" / "changes" / "2026-11-02_csv-export")
    texts = [[f.item(i).text for i in p["ids"]] for p in f.possible_patterns]
    retry = [t for t in texts if any("Retry count for uploads" in x for x in t)]
    assert len(retry) == 1 and len(retry[0]) == 3
    assert all("retr" in x.casefold() for x in retry[0])
    assert f.cross_task_patterns  # the literal rule is separate and unchanged


def test_possible_patterns_of_a_feature_are_not_counted(tmp_path):
    feat = write_feature(
        tmp_path,
        {
            "a.yaml": report("a", ks=['"Export retries are hard-coded to three attempts in the uploader"']),
            "b.yaml": report("b", sf=['"The uploader hard-codes export retries at three attempts"']),
        },
    )
    f = read_feature(feat)
    assert len(f.possible_patterns) == 1
    assert f.cross_task_patterns == () and f.groups["cross_task_patterns"] == ()
    assert f.entry is not None and f.entry.verdict == "skip"  # 2 items, no literal pattern
