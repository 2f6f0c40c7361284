"""What a read feature holds (issue 17, memory): each item's text once — its normalised form is
computed from it, held only when the text does not give it — and the log matcher and the literal
rule hold what they look for, not a second index of every text; their results are unchanged."""

from __future__ import annotations

import sys
from collections import defaultdict

import pytest

from scars.core.samsara import patterns
from scars.core.samsara.feature import find_features, read_feature
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
