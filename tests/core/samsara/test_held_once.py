"""What a read feature holds (issue 17, memory): each item's text once — its normalised form is
computed from it, held only when the text does not give it — and the log matcher and the literal
rule hold what they look for, not a second index of every text; their results are unchanged."""

from __future__ import annotations

import random
import sys
from collections import defaultdict

import pytest

from scars.core.samsara import matching, patterns
from scars.core.samsara.feature import find_features, read_feature
from scars.core.samsara.matching import Matcher, Target, targets_of
from scars.core.text import normalize
from tests.factories import ROOT, samsara_corpus

sys.path.insert(0, str(ROOT / "bench"))


def _corpus():
    return samsara_corpus()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    import generate  # bench/generate.py

    root = tmp_path_factory.mktemp("gen") / "repo"
    generate.generate("small", root, seed=3)
    (path,) = find_features(root)
    return read_feature(path)


def _unrecognised(item) -> bool:
    """An item of a shape no era defines (a parse failure of its report): it has no literal key."""
    return item.odd_normal == "" and normalize(item.text) != ""


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_an_item_holds_its_normalised_text_only_when_its_text_does_not_give_it(path):
    f = read_feature(path)
    items = [*f.items, *f.resolved]
    assert items or not f.reports
    for it in items:
        if _unrecognised(it):
            assert it.normalized == "" and not it.counted
            continue
        assert it.normalized == normalize(it.text)
        assert (it.odd_normal is None) == (normalize(it.text) == it.text.casefold()), it.text


def test_a_generated_feature_holds_few_normalised_texts(generated):
    items = [*generated.items, *generated.resolved]
    held = [it for it in items if it.odd_normal is not None]
    assert all(it.normalized == normalize(it.text) for it in items)
    # the texts with runs of whitespace (folded block scalars) and nothing else
    assert held and all(normalize(it.text) != it.text.casefold() for it in held)
    assert len(held) < len(items) // 5


@pytest.mark.parametrize("path", _corpus(), ids=lambda p: p.name)
def test_a_target_holds_its_normalised_text_only_when_its_text_does_not_give_it(path):
    for t in targets_of(read_feature(path)):
        assert t.normalized == normalize(t.text)
        assert (t.normal is None) == (normalize(t.text) == t.text.casefold()), t.text


def _literal_by_key(items) -> list[tuple[str, ...]]:
    """The literal rule as written before: a dictionary of every key."""
    by_key = defaultdict(list)
    for it in items:
        if it.systemic_ref:
            by_key["ref:" + it.systemic_ref].append(it)
        elif it.normalized:
            by_key["text:" + it.normalized].append(it)
    out = [tuple(i.id for i in g) for g in by_key.values() if len({i.file for i in g}) >= 2]
    return sorted(out, key=lambda ids: (-len(ids), ids))


@pytest.mark.parametrize("collide", [False, True], ids=["hash", "every-hash-equal"])
def test_the_literal_rule_groups_by_the_key_not_its_hash(collide, generated, monkeypatch):
    if collide:  # every key in one bucket: the items are told apart by their keys
        monkeypatch.setattr(patterns, "hash", lambda _key: 0, raising=False)
    features = [generated, *(read_feature(p) for p in _corpus())]
    found = 0
    for f in features:
        counted = [it for it in f.items if it.counted]
        got = patterns.literal_patterns(counted)
        assert got == _literal_by_key(counted), f.name
        found += len(got)
    assert found >= 5


def _texts(rnd: random.Random) -> list[str]:
    words = ["cache", "entry", "written", "twice", "測試", "文件存在", "the", "lock", "é", "…", "...", ".", ":"]
    texts = [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 14))) for _ in range(300)]
    return texts + [t + "." for t in texts[:30]] + [t + " …" for t in texts[30:60]] + ["", "   "]


@pytest.mark.parametrize("chunk", [1, 3, 64, matching._CHUNK])
@pytest.mark.parametrize("announced", [False, True])
def test_near_copies_are_found_across_the_haystack_chunks(chunk, announced, monkeypatch):
    """The targets are searched a chunk of haystack at a time: a head held by a target at either
    end of a chunk, or by the first / last target, is found as by a scan of every target."""
    monkeypatch.setattr(matching, "_CHUNK", chunk)
    rnd = random.Random(chunk)
    texts = _texts(rnd)
    targets = [Target(f"t{n}", t, normalize(t), None, "known_shortcuts", "r.yaml", n) for n, t in enumerate(texts)]
    heads = [normalize(t) for t in texts[:100]] + [normalize(t)[3:40] for t in texts[100:200]]
    heads += [normalize(a + " " + b) for a, b in zip(texts[200:250], texts[250:300], strict=True)]
    heads = [h for h in heads if h]
    m = Matcher(targets)
    if announced:  # all heads in one pass over the targets
        m._wanted_heads.update(heads)
    for head in heads:
        scan = {n for n, t in enumerate(targets) if t.normalized == head or matching.near_copy(head, t.normalized)}
        assert m._near_copies(head) == scan, head


def test_the_matcher_keeps_only_the_texts_it_looks_for(generated):
    """No index of every target's text: the exact and near-copy stages keep the descriptions'
    texts and the targets found for them."""
    log = generated.iteration_log
    assert log is not None
    entries = [e for r in log.rounds for e in (*r.fix, *r.accept, *r.defer)]
    m = Matcher(targets_of(generated))
    m.expect(entries)
    for e in entries:
        m.match(e)
    described = {normalize(matching.description_of(e)) for e in entries}
    heads = {h for e in entries for h in matching.clean(matching.description_of(e)).heads}
    assert set(m._exact) <= described | heads
    assert set(m._near) <= heads
    assert len(m._exact) < len(m.targets) // 10


@pytest.mark.parametrize("memo", [0, 7, patterns.FIND_MEMO])
def test_the_similarity_stage_remembers_few_runs_and_ranks_the_same(memo, generated, monkeypatch):
    """WordSets.find forgets the runs it judged beyond FIND_MEMO (judged again when met): the
    postings, the words each target has and the count of targets with a term are unchanged."""
    from tests.core.samsara.matching_reference import ReferenceMatcher
    from tests.core.samsara.test_matching_fast import _descriptions, _match_all

    entries = _descriptions(generated, seed=memo, n=80)
    want = _match_all(ReferenceMatcher, generated, entries)
    monkeypatch.setattr(patterns, "FIND_MEMO", memo)
    texts = [t.normalized for t in targets_of(generated)]
    texts[100:100] = texts[200:300] = ["the a 12", "of to in 7 b", "", "測試 the"] * 5  # no word but a CJK one
    need = {"cach", "retri", "lock", "writer", "fil", "zzzz"}
    full = patterns.WordSets().find(texts, need)
    monkeypatch.setattr(patterns, "FIND_MEMO", 1 << 30)
    assert full == patterns.WordSets().find(texts, need)
    monkeypatch.setattr(patterns, "FIND_MEMO", memo)
    assert _match_all(Matcher, generated, entries) == want


@pytest.mark.parametrize("workers", [1, 2])
def test_the_short_fields_items_repeat_are_held_once(workers, tmp_path, monkeypatch):
    """A status, a bites_when, an SC-N … that many items repeat is one string per reader process,
    and one per chunk of reports a reader process hands back (pickled together)."""
    import generate  # bench/generate.py

    from scars.core import settings
    from scars.core.samsara import reports
    from scars.core.storage import parallel

    generate.generate("small", tmp_path / "repo", seed=4)
    (path,) = find_features(tmp_path / "repo")
    monkeypatch.setenv("SCARS_WORKERS", str(workers))
    settings.load()
    f = read_feature(path)
    items = [*f.items, *f.resolved]
    copies = 1 if workers == 1 else workers * parallel.CHUNKS_PER_WORKER
    repeated = 0
    for name in reports._SHARED_FIELDS:
        values = [getattr(it, name) for it in items if isinstance(getattr(it, name), str)]
        assert len({id(v) for v in values}) <= copies * len(set(values)), name
        repeated += len(values) - len(set(values))
    assert repeated > len(items) // 4
