#!/usr/bin/env python3
"""Possible patterns: precision / recall on the labelled set, the named pairs, and time at scale.

    python bench/patterns_quality.py                   # quality on the labelled set + time at 5k / 50k
    python bench/patterns_quality.py --samsara DIR     # also the groups read from a checkout of the
                                                       #   upstream samsara repository (roymondliao/samsara)
    python bench/patterns_quality.py --list            # print every text of every group (for labelling)
    python bench/patterns_quality.py --no-time         # quality only
    python bench/patterns_quality.py --json            # the same figures as JSON

Quality. For each group of ``bench/patterns_labels.yaml`` (read by ``patterns_corpus``), its
texts become items (one report per source) and ``possible_patterns`` runs on them exactly as
it runs on a feature; two texts are predicted alike when they end up in one cluster.
Precision = labelled-same pairs among the predicted pairs; recall = predicted pairs among
the labelled-same pairs; pairs labelled related are left out of both. The same is printed for
the method it replaced (token-set Jaccard ≥ 0.5 with ≥ 3 shared tokens, kept below as the
baseline), and for the two pairs issue 14 names.

How the method was chosen (scratch measurements on the tune split: fixtures plus
multi-platform-support, 3,646 pairs of which 31 same; pairwise, each method at its best
threshold with precision ≥ 0.8):

    method                                                   precision  recall
    the old rule (token-set Jaccard ≥ 0.5, ≥ 3 shared)            1.00    0.16
    token-set Jaccard, best threshold (0.18)                      0.83    0.61
    token-set Jaccard, stemmed words + identifiers                0.95    0.58
    plain containment |A∩B| / min(|A|, |B|)                       0.87    0.65
    character 4-gram Jaccard                                      0.92    0.35
    character 5-gram TF-IDF cosine                                0.89    0.52
    TF-IDF cosine (words / stemmed words + word pairs)       0.89 / 0.90  0.55 / 0.58
    IDF-weighted Jaccard / Dice / set cosine                 0.94 / 0.94 / 0.84   0.52
    IDF-weighted containment, stemmed words + word pairs,
      ≥ 3 shared words (chosen; threshold 0.2)                    0.85    0.71
    the same with identifiers as extra terms weighing ×2          0.81    0.71

Clusters of the chosen score: single linkage 0.77 / 0.65, complete linkage 0.82 / 0.58,
average linkage with mean ≥ 0.15 (chosen) 0.80 / 0.65. The split was first tune = the four
fixture groups: every method tuned there fell apart on multi-platform-support's long items
(held-out precision / recall then, e.g. Jaccard 0.35 / 0.54, plain containment 0.80 / 0.31),
so that feature moved to tune and
gemini-cli-integration, labelled before any method was scored on it, became the held-out one.

Issue 29 (target: precision ≥ 0.85 at recall ≥ 0.6 on the held-out split, printed as its own
line). Two shapes the wording misses were added, each decided from its shape and its tests, not
from the labelled figures: an item citing a task is paired with that task's closest item, and a
pair across scripts is scored on the CJK item's terms outside CJK. Without a checkout, the
held-out groups on disk held one same pair, so the three real-shaped features (ours) were
labelled in full and held out before any method was scored on them. Held out here (817 pairs,
31 same): the rule before issue 29 0.97 / 0.94, with the two shapes 0.97 / 1.00 (its two gains:
log entries that cite their task). Tune here unchanged (0.89 / 0.89). Seen but not changed: the
one held-out false positive, two Chinese log summaries sharing "failure budget review" (a
summary of several items pairs with one of them; a rule for that shape would have been chosen
after seeing its only held-out instance).

Time. ``possible_patterns`` on the first 5,000 and on all 50,000 item texts (remaining and
resolved) of the generated ``large`` feature (``bench/generate.py``, seed 0), and on as many
long items (four generated texts joined: multi-sentence prose like real reports), each
against the baseline in the same run (best of ``--repeat``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import patterns_corpus as corpus  # noqa: E402  (bench/patterns_corpus.py, next to this file)

from scars.core.model import ScarItem, odd_normal  # noqa: E402
from scars.core.samsara import patterns  # noqa: E402
from scars.core.text import normalize, tokens  # noqa: E402

TARGET_PRECISION = 0.85  # issue 29: on the held-out split, at recall ≥ TARGET_RECALL
TARGET_RECALL = 0.6

# The two pairs issue 14 names (multi-platform-support): group, two labels of the group.
NAMED = [
    (
        "mkdtemp + shutil.move in two tasks",
        "multi-platform-support",
        "task-7-scar.yaml: tempfile.mkdtemp + shutil.move is atomic",
        "task-10-scar.yaml: The temp directory created by tempfile.mkdtemp",
    ),
    (
        'accepted as "Same as above"',
        "multi-platform-support",
        "task-2-scar.yaml: Literal rules replace all occurrences",
        "task-3-scar.yaml: Code-block unawareness inherited",
    ),
]


# --- the method it replaced, verbatim in effect (token-set Jaccard, AllPairs-style blocking) ---


def baseline_patterns(items: list[ScarItem], literal: list[tuple[str, ...]]) -> list[dict[str, Any]]:
    """The possible-pattern rule before issue 14: Jaccard ≥ 0.5 with ≥ 3 shared tokens."""
    threshold, min_shared, min_tokens, prefix_cap, reps_cap = 0.5, 3, 3, 3, 4
    in_literal = {i: n for n, ids in enumerate(literal) for i in ids}
    toks = [tokens(it.text) for it in items]
    df: dict[str, int] = defaultdict(int)
    for ts in toks:
        for t in ts:
            df[t] += 1
    parent = list(range(len(items)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    best: dict[int, float] = {}
    reps: dict[str, list[int]] = defaultdict(list)
    files = [it.file for it in items]
    lits = [in_literal.get(it.id) for it in items]
    for n, ts in enumerate(toks):
        size = len(ts)
        if size < min_tokens:
            continue
        prefix = min(size - math.ceil(threshold * size) + 1, prefix_cap)
        order = sorted(ts, key=lambda t: (df[t], t))[:prefix] if size > prefix else ts
        seen: set[int] = set()
        for t in order:
            for m in reps[t]:
                if m in seen:
                    continue
                seen.add(m)
                if files[m] == files[n] or (lits[n] is not None and lits[n] == lits[m]):
                    continue
                inter = len(ts & toks[m])
                if inter < min_shared:
                    continue
                j = inter / (size + len(toks[m]) - inter)
                if j >= threshold:
                    best[n] = max(best.get(n, 0.0), j)
                    best[m] = max(best.get(m, 0.0), j)
                    ra, rb = find(n), find(m)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
            if len(reps[t]) < reps_cap:
                reps[t].append(n)
    clusters: dict[int, list[int]] = defaultdict(list)
    for n in best:
        clusters[find(n)].append(n)
    return [
        {"ids": [items[m].id for m in sorted(ms)], "similarity": round(max(best[m] for m in ms), 2), "reason": ""}
        for ms in clusters.values()
        if len({files[m] for m in ms}) >= 2
    ]


def jaccard(a: str, b: str) -> float:
    ta, tb = tokens(a), tokens(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


# --- quality ---------------------------------------------------------------------------------


def items_of(group: corpus.Group) -> list[ScarItem]:
    return [
        ScarItem(
            id=f"t{n}",
            category="known_shortcuts",
            text=t.text,
            task_id=None,
            file=t.source,
            line=None,
            form="gen1",
            odd_normal=odd_normal(t.text, normalize(t.text)),
        )
        for n, t in enumerate(group.texts)
    ]


def predicted_pairs(group: corpus.Group, method) -> set[frozenset[int]]:
    items = items_of(group)
    literal = patterns.literal_patterns(items)
    out: set[frozenset[int]] = set()
    for p in method(items, literal):
        idx = [int(i[1:]) for i in p["ids"]]
        out |= {frozenset(pair) for pair in itertools.combinations(idx, 2)}
    return out


def score(groups: list[corpus.Group], method) -> dict[str, Any]:
    tp = fp = fn = 0
    errors: list[str] = []
    for g in groups:
        scored = {frozenset(p) for p in g.pairs()} - g.related
        pred = predicted_pairs(g, method) & scored
        for key in sorted(pred | (g.same & scored), key=sorted):
            a, b = sorted(key)
            if key in pred and key in g.same:
                tp += 1
            elif key in pred:
                fp += 1
                errors.append(f"  false positive  {g.name}: {g.texts[a].ref}  ~  {g.texts[b].ref}")
            else:
                fn += 1
                errors.append(f"  missed          {g.name}: {g.texts[a].ref}  ~  {g.texts[b].ref}")
    p = tp / (tp + fp) if tp + fp else None
    r = tp / (tp + fn) if tp + fn else None
    return {"precision": p, "recall": r, "tp": tp, "fp": fp, "fn": fn, "errors": errors}


def named_scores(groups: list[corpus.Group]) -> list[dict[str, Any]]:
    out = []
    by_name = {g.name: g for g in groups}
    for title, gname, ra, rb in NAMED:
        g = by_name.get(gname)
        if g is None:
            out.append({"pair": title, "present": False})
            continue
        a, b = corpus._find(list(g.texts), ra, gname), corpus._find(list(g.texts), rb, gname)
        sims = patterns.similarity([t.text for t in g.texts])  # weights from the whole group
        found = frozenset((a, b)) in predicted_pairs(g, patterns.possible_patterns)
        out.append(
            {
                "pair": title,
                "present": True,
                "old_jaccard": round(jaccard(g.texts[a].text, g.texts[b].text), 2),
                "new_similarity": round(max(sims[a][b], sims[b][a]), 2),
                "threshold": patterns.SIMILARITY_THRESHOLD,
                "found": found,
            }
        )
    return out


def heldout_verdict(split: dict[str, Any], missing: list[str]) -> dict[str, Any]:
    """The held-out figures and whether they meet the target (precision ≥ TARGET_PRECISION at
    recall ≥ TARGET_RECALL), with the held-out groups that are not here."""
    new = split["new"]
    p, r = new["precision"], new["recall"]
    met = p is not None and r is not None and p >= TARGET_PRECISION and r >= TARGET_RECALL
    return {
        "precision": p,
        "recall": r,
        "same": new["tp"] + new["fn"],  # the labelled same pairs scored
        "groups": len(split["groups"]),
        "target": {"precision": TARGET_PRECISION, "recall": TARGET_RECALL},
        "met": met,
        "verdict": "met" if met else "NOT met",
        "skipped": [m.split(" (")[0] for m in missing if "(heldout)" in m],
    }


# --- time ---------------------------------------------------------------------------------


def timed(fn, *args, repeat: int = 3) -> float:
    best = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def time_at_scale(repeat: int) -> list[dict[str, Any]]:
    import generate  # bench/generate.py

    from scars.core.samsara.feature import read_feature

    with tempfile.TemporaryDirectory(prefix="scars-patterns-") as tmp:
        repo = Path(tmp) / "large"
        generate.generate("large", repo, seed=0)
        m = json.loads((repo / generate.MANIFEST).read_text(encoding="utf-8"))
        feature = read_feature(repo / m["features"][0]["path"])
        # every item text of the feature (remaining and resolved): 50,000 in `large`
        items = list(feature.items) + list(feature.resolved)
    joined = [" ".join(items[(n * 4 + k) % len(items)].text for k in range(4)) for n in range(len(items))]
    longs = [
        ScarItem(
            id=f"long{n}",
            category=it.category,
            text=joined[n],
            task_id=None,
            file=it.file,
            line=None,
            form=it.form,
            odd_normal=odd_normal(joined[n], normalize(joined[n])),
        )
        for n, it in enumerate(items)
    ]
    rows = []
    for label, pool in (("generated items", items), ("long items (4 texts joined)", longs)):
        for size in (5_000, 50_000):
            sub = pool[:size]
            literal = patterns.literal_patterns(sub)
            new = timed(patterns.possible_patterns, sub, literal, repeat=repeat)
            old = timed(baseline_patterns, sub, literal, repeat=repeat)
            rows.append(
                {
                    "items": label,
                    "n": len(sub),
                    "new_s": new,
                    "old_s": old,
                    "ratio": new / old if old else None,
                    "found_new": len(patterns.possible_patterns(sub, literal)),
                    "found_old": len(baseline_patterns(sub, literal)),
                }
            )
    return rows


# --- output ---------------------------------------------------------------------------------


def fmt(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--samsara", type=Path, help="a checkout of the upstream samsara repository")
    p.add_argument("--list", action="store_true", help="print every text of every group and exit")
    p.add_argument("--no-time", action="store_true", help="skip the timing at 5k / 50k items")
    p.add_argument("--errors", action="store_true", help="list every false positive and missed pair")
    p.add_argument("--repeat", type=int, default=3, help="timed runs per figure (the best is kept)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    groups, missing = corpus.load(args.samsara)
    if args.list:
        for g in groups:
            print(f"== {g.name} ({g.split}): {len(g.texts)} texts, {len(g.pairs())} pairs")
            for n, t in enumerate(g.texts):
                print(f"{n:3d} {t.source[:40]:40s} | {' '.join(t.text.split())}")
        return 0
    result: dict[str, Any] = {"missing": missing, "splits": {}}
    for split in ("tune", "heldout"):
        gs = [g for g in groups if g.split == split]
        result["splits"][split] = {
            "groups": [g.name for g in gs],
            "texts": sum(len(g.texts) for g in gs),
            "pairs": sum(len(g.pairs()) for g in gs),
            "same": sum(len(g.same) for g in gs),
            "related": sum(len(g.related) for g in gs),
            "new": score(gs, patterns.possible_patterns),
            "old": score(gs, baseline_patterns),
        }
    result["heldout"] = heldout_verdict(result["splits"]["heldout"], missing)
    result["named"] = named_scores(groups)
    if not args.no_time:
        result["time"] = time_at_scale(args.repeat)
    if args.json:
        for s in result["splits"].values():
            for k in ("new", "old"):
                s[k].pop("errors")
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return 0
    print("Possible patterns on the labelled set (bench/patterns_labels.yaml)")
    print(f"  target: precision ≥ {TARGET_PRECISION} at recall ≥ {TARGET_RECALL} on the held-out split\n")
    print(
        f"  {'split':8s} {'texts':>5s} {'pairs':>6s} {'same':>5s}   {'new P':>6s} {'new R':>6s}   {'old P':>6s} {'old R':>6s}"
    )
    for split, s in result["splits"].items():
        n, o = s["new"], s["old"]
        print(
            f"  {split:8s} {s['texts']:5d} {s['pairs']:6d} {s['same']:5d}   {fmt(n['precision']):>6s} {fmt(n['recall']):>6s}"
            f"   {fmt(o['precision']):>6s} {fmt(o['recall']):>6s}"
            f"   (new: {n['tp']} found, {n['fp']} false, {n['fn']} missed)"
        )
        print(f"           groups: {', '.join(s['groups'])}")
    for m in missing:
        print(f"  skipped: {m}")
    h = result["heldout"]
    print(
        f"\n  HELD OUT (never tuned on): precision {fmt(h['precision'])}, recall {fmt(h['recall'])}"
        f" on {h['same']} labelled same pair(s) of {h['groups']} group(s): target {h['verdict']}"
    )
    if h["skipped"]:
        print(f"  (held-out groups not here: {', '.join(h['skipped'])}; the figure covers the groups here only)")
    print("\nThe pairs issue 14 names")
    for nm in result["named"]:
        if not nm["present"]:
            print(f"  {nm['pair']}: its feature is not here (pass --samsara)")
        else:
            print(
                f"  {nm['pair']}: old Jaccard {nm['old_jaccard']:.2f} → similarity {nm['new_similarity']:.2f}"
                f" (threshold {nm['threshold']}): {'found' if nm['found'] else 'NOT found'}"
            )
    if args.errors:
        for split, s in result["splits"].items():
            print(f"\n{split}: errors of the new rule")
            print("\n".join(s["new"]["errors"]) or "  none")
    if "time" in result:
        print(f"\nTime of possible_patterns (best of {args.repeat}), the old rule in the same run")
        print(f"  {'items':30s} {'n':>7s} {'new s':>8s} {'old s':>8s} {'ratio':>6s} {'found new/old':>14s}")
        for r in result["time"]:
            print(
                f"  {r['items']:30s} {r['n']:7,d} {r['new_s']:8.3f} {r['old_s']:8.3f} {fmt(r['ratio']):>6s}"
                f" {r['found_new']:>7d}/{r['found_old']:<6d}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
