#!/usr/bin/env python3
"""The options issue 31 names for the possible patterns' CPU, each timed against today's code in one run.

    python bench/patterns_options.py [--data DIR] [--repeat N] [--json]

On the counted items of the generated ``large`` feature (``bench/generate.py``, seed 0; kept in
``--data`` when given), CPU seconds (best of ``--repeat``), each option beside the part of
``possible_patterns`` it would replace, in the same process:

* ``scipy sparse scoring`` — the containment similarity of the candidate pairs (the pairs
  ``candidates`` yields, of different reports, same script) as a sparse row product
  (``scipy.sparse``: items × terms, IDF-weighted, and items × words for the shared-word count),
  its import included in the first run. The sum is not ``math.fsum``'s, so to give today's
  results every pair it does not rule out (score ≥ threshold − 1e-9) is scored again exactly;
  the option's result is checked to agree with today's on every pair. Skipped when numpy or
  scipy is not installed (neither is a dependency of scars).
* ``analysis in the read workers`` — the tokenising and stemming (``_Vocabulary.analyse``) moved
  into the processes that parse the reports (which already run in parallel): what it costs to
  hand the analysed terms back (each half of the texts pickled as a worker would, then loaded
  and renumbered in one vocabulary) against the analysis it would move off the serial path.

Neither is used by scars: docs/performance.md gives the figures and why.
"""

from __future__ import annotations

import argparse
import gc
import json
import pickle
import sys
import tempfile
import time
from array import array
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import generate  # noqa: E402  (bench/generate.py)

from scars.core.samsara import aggregate, patterns  # noqa: E402
from scars.core.samsara.feature import read_feature  # noqa: E402


def counted_items(data: Path) -> list[Any]:
    repo = data / "large"
    manifest = repo / generate.MANIFEST
    if not manifest.is_file():
        generate.generate("large", repo, seed=0)
    m = json.loads(manifest.read_text(encoding="utf-8"))
    real = aggregate.possible_patterns
    aggregate.possible_patterns = lambda items, literal: []  # the read computes no patterns
    try:
        f = read_feature(repo / m["features"][0]["path"])
    finally:
        aggregate.possible_patterns = real
    return [it for it in f.items if it.counted]


def cpu(fn: Any) -> tuple[float, Any]:
    t = time.process_time()
    got = fn()
    return time.process_time() - t, got


class Analysed:
    """What possible_patterns computes before it scores: the analysed texts, index, candidates."""

    def __init__(self, items: list[Any]) -> None:
        patterns._local.vocabulary = None
        self.vocabulary = v = patterns._vocabulary()
        by_text: dict[str, Any] = {}
        self.analysed = []
        for it in items:
            t = by_text.get(it.normalized)
            if t is None:
                t = by_text[it.normalized] = v.analyse(it.text)
            self.analysed.append(t)
        self.texts = list(by_text)
        self.distinct = list(by_text.values())
        latin = {n: t.latin for n, t in enumerate(self.analysed) if t.latin is not None}
        self.index = patterns._Index(self.analysed, latin)
        few = [len(t.words) < patterns.MIN_TOKENS for t in self.analysed]
        files = [it.file for it in items]
        self.pairs = [
            (n, m)
            for n, m in patterns.candidates(self.analysed, self.index.df, v.text)
            if files[n] != files[m] and not few[n] and not few[m] and (n in latin) == (m in latin)
        ]


def score_python(a: Analysed) -> dict[tuple[int, int], float]:
    """Today's scoring of the candidate pairs (possible_patterns' ``sim``, same script)."""
    out = {}
    idx, an = a.index, a.analysed
    for n, m in a.pairs:
        ta, tb = an[n], an[m]
        out[(n, m)] = idx.score(n, m, ta, tb) if len(ta.words & tb.words) >= patterns.MIN_SHARED else 0.0
    return out


def score_scipy(a: Analysed) -> dict[tuple[int, int], float]:
    import numpy as np
    import scipy.sparse as sps

    size = len(a.vocabulary.names)
    idf = np.zeros(size)
    for k, w in a.index._idf.items():
        idf[k] = w

    def csr(sets: list[frozenset[int]]) -> Any:
        lens = np.fromiter((len(s) for s in sets), dtype=np.int64, count=len(sets))
        indptr = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum(lens, out=indptr[1:])
        ind = np.fromiter((k for s in sets for k in s), dtype=np.int64, count=int(indptr[-1]))
        return sps.csr_matrix((np.ones(len(ind)), ind, indptr), shape=(len(sets), size))

    terms = csr([t.terms for t in a.analysed])
    words = csr([t.words for t in a.analysed])
    weighted = terms.multiply(idf).tocsr()
    x = np.array([p[0] for p in a.pairs])
    y = np.array([p[1] for p in a.pairs])
    shared = np.asarray(weighted[x].multiply(terms[y]).sum(axis=1)).ravel()
    common = np.asarray(words[x].multiply(words[y]).sum(axis=1)).ravel()
    mass = np.array(a.index.mass)
    low = np.minimum(mass[x], mass[y])
    approx = np.where((common >= patterns.MIN_SHARED) & (low > 0), shared / np.where(low > 0, low, 1), 0.0)
    maybe = approx >= patterns.SIMILARITY_THRESHOLD - 1e-9
    out = {}
    idx, an = a.index, a.analysed
    for n, m, again in zip(x.tolist(), y.tolist(), maybe.tolist()):
        out[(n, m)] = idx.score(n, m, an[n], an[m]) if again else 0.0
    return out


def agree(today: dict, option: dict) -> bool:
    t = patterns.SIMILARITY_THRESHOLD
    return today.keys() == option.keys() and all(
        (today[k] >= t) == (option[k] >= t) and (today[k] < t or today[k] == option[k]) for k in today
    )


def analyse_fresh(texts: list[str]) -> list[Any]:
    v = patterns._Vocabulary()
    return [v.analyse(x) for x in texts]


def hand_back(a: Analysed) -> float:
    """CPU of handing the analysed texts back from two workers: pickled in each (in parallel: the
    slower half counts) plus loaded and renumbered in the one vocabulary (serial)."""
    names = a.vocabulary.names
    halves = (a.distinct[: len(a.distinct) // 2], a.distinct[len(a.distinct) // 2 :])
    blobs, dumped = [], []
    for half in halves:
        t = time.process_time()
        blobs.append(
            pickle.dumps(
                (names, [(array("i", x.words).tobytes(), array("i", x.terms).tobytes()) for x in half]), protocol=5
            )
        )
        dumped.append(time.process_time() - t)
    t = time.process_time()
    into = patterns._Vocabulary()
    for blob in blobs:
        got, rows = pickle.loads(blob)
        renumber = list(map(into._id, got))
        for w, x in rows:
            frozenset(map(renumber.__getitem__, array("i", w)))
            frozenset(map(renumber.__getitem__, array("i", x)))
    return max(dumped) + (time.process_time() - t)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", type=Path, help="directory of the generated repositories (kept and reused)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="scars-options-") as tmp:
        items = counted_items(args.data or Path(tmp))
    gc.disable()  # as in the patterns' child
    a = Analysed(items)
    rows: list[dict[str, Any]] = []
    try:
        import numpy  # noqa: F401
        import scipy.sparse  # noqa: F401

        has_scipy = True
    except ImportError:
        has_scipy = False
    base_s, opt_s, first, same = [], [], None, True
    for n in range(args.repeat):
        t, today = cpu(lambda: score_python(a))
        base_s.append(t)
        if has_scipy:
            t, got = cpu(lambda: score_scipy(a))
            first = t if n == 0 else first
            opt_s.append(t)
            same = same and agree(today, got)
    rows.append(
        {
            "option": "scipy sparse scoring of the candidate pairs",
            "pairs": len(a.pairs),
            "today_s": min(base_s),
            "option_s": min(opt_s) if opt_s else None,
            "ratio": min(opt_s) / min(base_s) if opt_s else None,
            "note": "skipped: numpy / scipy not installed"
            if not has_scipy
            else f"first run (import included) {first:.3f} s; same results: {same}",
        }
    )
    an = [cpu(lambda: analyse_fresh(a.texts))[0] for _ in range(args.repeat)]
    back = [hand_back(a) for _ in range(args.repeat)]
    rows.append(
        {
            "option": "analysis in the read workers (hand-back cost vs the analysis moved)",
            "texts": len(a.texts),
            "today_s": min(an),
            "option_s": min(back),
            "ratio": min(back) / min(an),
            "note": "option_s: pickling in a worker (the slower half) + loading and renumbering; the "
            "analysis itself would then run in the workers, in parallel with the parse",
        }
    )
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            opt = "–" if r["option_s"] is None else f"{r['option_s']:.3f} s"
            ratio = "–" if r["ratio"] is None else f"{r['ratio']:.2f}"
            print(f"{r['option']}: today {r['today_s']:.3f} s, option {opt}, ratio {ratio} ({r['note']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
