"""The labelled set of possible patterns: its texts, read in place, and its pair labels.

``bench/patterns_labels.yaml`` names groups of texts (one group per feature) and labels pairs
of them. This module reads the texts a group names from where they live (the bundled demo,
``../shared/fixtures/upstream``, the real-shaped test fixtures or a checkout of the upstream
samsara repository), never from a copy, and resolves every label's text prefix to exactly one text (a label that matches none or
several is an error, so a label cannot silently stop measuring anything).

A group's texts are:

* the remaining scar items of its reports, as ``read_feature`` counts them (``items``);
* with ``extras: true``, also the real prose written about those items elsewhere: each
  iteration-log triage entry (fix / accept / defer, a string or its ``description``), each
  round's ``residual_risk``, and each report's ``residual_risk``, ``resolved_items``
  ``original_description`` and in-place resolved items. Each such text is its own source.

Two texts of the same report are never a pair (the possible-pattern rule compares items of
different reports only), and neither are two texts with the same normalised wording (the
literal rule's case, not a near-duplicate).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
LABELS = HERE / "patterns_labels.yaml"
UPSTREAM = ROOT.parent / "shared" / "fixtures" / "upstream"
DEMO = ROOT / "core" / "demo" / "repo"


class CorpusError(RuntimeError):
    pass


@dataclass(frozen=True)
class Text:
    ref: str  # "file: prefix…" for display
    file: str  # the report (or log) the text is in, relative to the group's directory
    source: str  # two texts of one source are never a pair: the report file, or the log entry
    text: str
    kind: str  # "item" or "extra"


@dataclass(frozen=True)
class Group:
    name: str
    split: str  # "tune" or "heldout"
    texts: tuple[Text, ...]
    same: frozenset[frozenset[int]]  # pairs of indexes into texts
    related: frozenset[frozenset[int]]
    labels: tuple[dict[str, Any], ...]

    def pairs(self) -> list[tuple[int, int]]:
        """Every pair the evaluation scores: different sources, different normalised text."""
        out = []
        for a, b in itertools.combinations(range(len(self.texts)), 2):
            ta, tb = self.texts[a], self.texts[b]
            if ta.source == tb.source or _norm(ta.text) == _norm(tb.text):
                continue
            out.append((a, b))
        return out


def _norm(s: str) -> str:
    return " ".join(s.split()).casefold()


def _text_of(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        for k in ("description", "what", "assumption", "original_description"):
            v = entry.get(k)
            if isinstance(v, str):
                return v
    return None


def resolve_root(spec: str, samsara: Path | None) -> Path | None:
    """``demo:PATH``, ``upstream:PATH``, ``ours:PATH`` (a path of this repository) or
    ``samsara:PATH`` (a checkout given with --samsara, else the same path under the upstream
    fixtures' samsara/ when it is there)."""
    kind, _, rel = spec.partition(":")
    if kind == "registry":
        return UPSTREAM / rel
    if kind == "demo":
        return DEMO / rel
    if kind == "upstream":
        return UPSTREAM / rel
    if kind == "ours":
        return ROOT / rel
    if kind == "samsara":
        for base in ([samsara] if samsara else []) + [UPSTREAM / "samsara"]:
            if (base / rel).is_dir():
                return base / rel
        return None
    raise CorpusError(f"unknown source {spec!r}: use demo:, upstream:, ours:, registry: or samsara:")


def _report_texts(root: Path) -> list[Text]:
    """Remaining items of the reports under root (a feature dir, or a dir of reports)."""
    from scars.core.samsara.feature import is_feature_dir, read_feature
    from scars.core.samsara.registry import read_registry
    from scars.core.samsara.reports import read_report

    out: list[Text] = []
    if is_feature_dir(root):
        for it in read_feature(root).items:
            if it.counted:
                out.append(Text("", it.file, it.file, it.text, "item"))
        return out
    registry = read_registry(None)
    for p in sorted(root.glob("*.y*ml")):
        report, _failures, _warnings, _dangling = read_report(p, p.name, registry)
        for it in report.items:
            if not it.resolved and not (it.category == "unverified_assumptions" and it.verified is True):
                out.append(Text("", p.name, p.name, it.text, "item"))
    return out


def _extra_texts(root: Path) -> list[Text]:
    out: list[Text] = []
    log = root / "iteration-log.yaml"
    if log.is_file():
        data = yaml.safe_load(log.read_text(encoding="utf-8")) or {}
        for r in data.get("rounds") or []:
            n = r.get("round")
            for kind, entries in (r.get("triage_result") or {}).items():
                for i, e in enumerate(entries or []):
                    t = _text_of(e)
                    if t:
                        out.append(Text("", "iteration-log.yaml", f"log:r{n}:{kind}[{i}]", t, "extra"))
            for i, t in enumerate(r.get("residual_risk") or []):
                if isinstance(t, str):
                    out.append(Text("", "iteration-log.yaml", f"log:r{n}:residual_risk[{i}]", t, "extra"))
    rdir = root / "scar-reports" if (root / "scar-reports").is_dir() else root
    for p in sorted(rdir.glob("*.y*ml")):
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue
        if not isinstance(data, dict) or "rounds" in data:
            continue
        rel = str(p.relative_to(root))
        for i, e in enumerate(data.get("resolved_items") or []):
            t = _text_of(e)
            if t:
                out.append(Text("", rel, f"{rel}:resolved_items[{i}]", t, "extra"))
        for i, t in enumerate(data.get("residual_risk") or []):
            if isinstance(t, str):
                out.append(Text("", rel, f"{rel}:residual_risk[{i}]", t, "extra"))
        for section in ("known_shortcuts", "silent_failure_conditions"):
            for i, e in enumerate(data.get(section) or []):
                if isinstance(e, dict) and e.get("status") == "resolved":
                    t = _text_of(e)
                    if t:
                        out.append(Text("", rel, f"{rel}:{section}[{i}]:resolved", t, "extra"))
    return out


def _registry_texts(path: Path) -> list[Text]:
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return [
        Text("", path.name, f"registry:{e.get('id')}", e["description"], "extra")
        for e in data.get("entries") or []
        if isinstance(e, dict) and isinstance(e.get("description"), str)
    ]


def _find(texts: list[Text], ref: str, group: str) -> int:
    file, sep, prefix = ref.partition(": ")
    if not sep:
        raise CorpusError(f"{group}: label {ref!r} is not 'FILE: text prefix'")
    want = _norm(prefix)
    hits = [
        i
        for i, t in enumerate(texts)
        if (t.file == file or t.file.endswith("/" + file)) and _norm(t.text).startswith(want)
    ]
    if len(hits) != 1:
        raise CorpusError(f"{group}: label {ref!r} matches {len(hits)} texts (needs exactly one)")
    return hits[0]


def load(samsara: Path | None = None, path: Path = LABELS) -> tuple[list[Group], list[str]]:
    """Every group whose files are present, and a note for each one that is not."""
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    groups: list[Group] = []
    missing: list[str] = []
    for g in spec["groups"]:
        roots = [resolve_root(s, samsara) for s in g["sources"]]
        if any(r is None or not r.exists() for r in roots):
            missing.append(f"{g['name']} ({g['split']}): not present here — {g.get('where', g['sources'])}")
            continue
        texts: list[Text] = []
        for s, r in zip(g["sources"], roots):
            assert r is not None
            if s.startswith("registry:"):
                texts += _registry_texts(r)
                continue
            texts += _report_texts(r)
            if g.get("extras"):
                texts += _extra_texts(r)
        texts = [Text(f"{t.file}: {' '.join(t.text.split())[:60]}", t.file, t.source, t.text, t.kind) for t in texts]
        same, related = set(), set()
        labels = g.get("labels") or []
        for lab in labels:
            if lab.get("label") not in ("same", "related", "different"):
                raise CorpusError(f"{g['name']}: unknown label {lab.get('label')!r}")
        # related, then different, then same: a pair labelled same inside a cluster counts as same
        for lab in sorted(labels, key=lambda lab: ("related", "different", "same").index(lab["label"])):
            if not str(lab.get("reason", "")).strip():
                raise CorpusError(f"{g['name']}: every label says why (no reason for {lab})")
            members = lab.get("members") or [lab["a"], lab["b"]]
            idx = [_find(texts, m, g["name"]) for m in members]
            keys = [frozenset((a, b)) for a, b in itertools.combinations(idx, 2) if texts[a].source != texts[b].source]
            if not keys:
                raise CorpusError(f"{g['name']}: {members} are all in one source; never a pair")
            for key in keys:
                same.discard(key)
                related.discard(key)
                {"same": same, "related": related, "different": set()}[lab["label"]].add(key)
        groups.append(
            Group(
                g["name"], g["split"], tuple(texts), frozenset(same), frozenset(related), tuple(g.get("labels") or [])
            )
        )
    return groups, missing
