"""Resolution across reports (formats.md §1.3, "Decided (from real repositories)").

A report's legacy ``resolved_items`` entry may name an item of *another* report: a later task
resolves an earlier task's item ("hook.sh.j2 was a structural stub (task-1 scar) …"), and an
iteration round's fix report (``iteration-fix-1-scar.yaml``) resolves the item it fixed, with
``original_section: known_shortcuts (task-6-scar.yaml item 2)`` and a paraphrased
``original_description``. Every entry that did not resolve an item of its own report by the exact
text (``reports.read_report``) is matched here against the remaining items of every report, with
THE matcher of iteration-log descriptions (``scars.core.samsara.matching``: exact → normalised →
similar, each with a confidence):

* an explicit pointer in ``original_section`` — a report file name (``task-6-scar.yaml``), a task
  id (``task-6``) — restricts the candidates to that report, and the section named to that
  section;
* a confident match resolves the item; the item carries a note naming the report and entry;
* an ambiguous or weak match resolves nothing: a warning of the feature, and a note on each
  candidate naming the entry — never silent either way;
* an item whose own text claims a resolution in free text (``FIXED (see resolved_items): …``,
  ``MITIGATED: …``, ``[RESOLVED] …``) without ``status: resolved`` stays counted unless an entry
  covers it, and is noted.

Everything that judges a resolution (status, the app, the reconciliation, ``log verify``, a
round's fixes applied) reads the items this pass gives back: one rule, here.
"""

from __future__ import annotations

import re

from scars.core.model import SECTION_OF, LogMatch, Problem, ScarItem, ScarReport, odd_normal
from scars.core.records import replace
from scars.core.samsara.items import claimed_resolution
from scars.core.samsara.matching import _TASK_MENTION, Matcher, Target, description_of
from scars.core.text import normalize

CONFIDENT = ("exact", "normalized", "similar")
# A paraphrase in a fix report's entry that names no report (no file, task id, "(task-N …)") is
# taken from this much of its weight (the matcher's SIMILAR, 0.5, otherwise): on generated
# features random sentences of one vocabulary reach 0.5; real fix entries paraphrase at 0.7–0.8.
UNPOINTED_SIMILAR = 0.6
SECTIONS = ("known_shortcuts", "silent_failure_conditions", "assumptions_made")

# "known_shortcuts (task-6-scar.yaml item 2)": a report file, a task id, an item number.
_FILE = re.compile(r"(?P<file>[\w.\-]+\.ya?ml)\b", re.I)
_TASK = re.compile(r"\b(?P<task>task-\d+)\b", re.I)
_ITEM = re.compile(r"\bitem\s*#?\s*(?P<n>\d+)\b", re.I)


def pointer_of(original_section: str) -> tuple[str | None, str | None, str | None, int | None]:
    """(section, report file name, task id, item number) that ``original_section`` names."""
    text = original_section or ""
    low = text.casefold()
    section = next((s for s in SECTIONS if low.strip().startswith(s)), None)
    if section is None:
        section = next((s for s in SECTIONS if s in low), None)
    f = _FILE.search(text)
    t = _TASK.search(text) if f is None else None
    n = _ITEM.search(text)
    return (
        section,
        (f.group("file") if f else None),
        (t.group("task") if t else None),
        (int(n.group("n")) if n else None),
    )


def _excluded(it: ScarItem) -> bool:
    return it.resolved or (it.category == "unverified_assumptions" and it.verified is True)


def _label(it: ScarItem, index: int) -> str:
    return f"{SECTION_OF[it.category]}[{index}]"


def resolve_across(reports: list[ScarReport], *, summary: bool = False) -> tuple[list[ScarReport], list[Problem]]:
    """``reports`` with the items their ``resolved_items`` entries cover across reports resolved
    (and noted), and the warnings said (none for a ``summary`` read, whose counts are the same)."""
    warnings: list[Problem] = []
    entries = [
        (r, n, section, desc, resolution)
        for r in reports
        for n, (section, desc, resolution) in enumerate(r.resolved_entries)
        if not _covers_own(r, section, desc)
    ]
    # Each remaining item, with its position in its report's section (for labels and pointers).
    position: dict[str, int] = {}
    for r in reports:
        seen: dict[str, int] = {}
        for it in sorted(r.items, key=lambda i: i.line or 0):
            k = SECTION_OF[it.category]
            position[it.id] = seen.get(k, 0)
            seen[k] = seen.get(k, 0) + 1
    updates: dict[str, ScarItem] = {}
    entry_items: dict[tuple[str, int], str] = {}
    if entries:
        remaining = [it for r in reports for it in r.items if not _excluded(it)]
        # Per entry only what its section text names: the pool and the pointer are the same for
        # every entry of one section text, and each pool's matcher is told of all its entries
        # first, so that it reads its targets once for them all (not once per entry: quadratic
        # at tens of thousands of items).
        pools: dict[str, tuple[tuple, list[ScarItem]]] = {}
        pointers: dict[str, tuple[ScarItem | None, str]] = {}
        matchers: dict[tuple, Matcher] = {}
        for _r, _n, section, desc, _res in entries:
            if section not in pools:
                pools[section] = _pool(reports, remaining, section)
            pool_key, pool = pools[section]
            if pool_key not in matchers:
                matchers[pool_key] = _matcher(pool, position)
            matchers[pool_key].expect([desc])
        taken: list[str] = []
        results: list[tuple[ScarReport, int, str, LogMatch, str | None, str | None]] = []
        for r, n, section, desc, _res in entries:
            m = matchers[pools[section][0]]
            # A task report's own item, removed from its section, lives in the entry alone: only
            # the same text (or a copy of it) names another report's item (_may_paraphrase).
            match = m.match(desc, taken=taken, similar=_may_paraphrase(r, section, desc))
            if match.confidence == "similar" and match.score < UNPOINTED_SIMILAR and not _points(section, desc):
                # A fix report's entry that names no report: a paraphrase needs more of its weight.
                match = replace(
                    match,
                    target=None,
                    confidence="weak",
                    reason=f"{match.reason}; an entry that names no report needs {UNPOINTED_SIMILAR}",
                )
            if section not in pointers:
                pointers[section] = _pointed(reports, section, position)
            pointed, said = pointers[section]
            picked = None
            if pointed is not None and pointed.id != match.target and not _excluded(pointed):
                if match.confidence in CONFIDENT and match.target:
                    if not summary:  # the text names another item than the number: the text wins, said
                        warnings.append(
                            Problem(
                                r.file,
                                None,
                                f"resolved_items[{n}] points at {said} ({pointed.id}) but its text names "
                                f"{match.target} ({match.confidence}, {match.score:.2f}): the text is taken",
                                "warning",
                            )
                        )
                elif any(cid == pointed.id for cid, _sc in match.candidates):
                    picked = said  # the text is related but not confident alone: its pointer picks
            elif pointed is None and said and not summary:
                warnings.append(Problem(r.file, None, f"resolved_items[{n}] points at {said}: no such item", "warning"))
            picked_id = pointed.id if picked and pointed is not None else None
            results.append((r, n, section, match, picked, picked_id))
            target = picked_id or (match.target if match.confidence in CONFIDENT else None)
            if target:
                taken.append(target)
        by_id = {it.id: it for r in reports for it in r.items}
        for r, n, _section, match, picked, picked_id in results:
            res = r.resolved_entries[n][2]
            where = f"{r.file} resolved_items[{n}]"
            chosen = picked_id or (match.target if match.confidence in CONFIDENT else None)
            if chosen:
                it = updates.get(chosen, by_id[chosen])
                if it.resolved:  # another entry took it first: the second resolves nothing more
                    continue
                if picked_id is not None:
                    note = (
                        f"resolved by {where}: its pointer names {picked} (the text alone is "
                        f"{match.confidence}: {match.reason})"
                    )
                else:
                    note = f"resolved by {where} ({match.confidence}, {match.score:.2f}: {match.reason})"
                updates[it.id] = replace(
                    it, resolved=True, resolution=res or None, notes=() if summary else (*it.notes, note)
                )
                entry_items[(r.file, n)] = it.id
            elif match.confidence in ("ambiguous", "weak") and match.candidates:
                names = ", ".join(f"{cid} ({sc:.2f})" for cid, sc in match.candidates)
                if not summary:  # listed; an ambiguous one also noted on its candidates
                    warnings.append(
                        Problem(
                            r.file,
                            None,
                            f"resolved_items[{n}] ({_quote(r.resolved_entries[n][1])}) matches no item "
                            f"confidently ({match.confidence}: {match.reason}); candidates {names}: it resolves "
                            "nothing, they stay counted",
                            "warning",
                        )
                    )
                    for cid, _sc in match.candidates if match.confidence == "ambiguous" else ():
                        cand = updates.get(cid, by_id.get(cid))
                        if cand is None or cand.resolved:
                            continue
                        note = (
                            f"{where} may name this item ({match.confidence} match); not confident, "
                            "so the item is still counted"
                        )
                        updates[cid] = replace(cand, notes=(*cand.notes, note))
    if not summary:
        _odd_deferral_lists(reports, position, updates, warnings)
    out: list[ScarReport] = []
    for r in reports:
        items = tuple(updates.get(it.id, it) for it in r.items)
        if not summary:
            items = tuple(_claim(it, position.get(it.id, 0), warnings) for it in items)
        used = tuple(entry_items.get((r.file, n)) for n in range(len(r.resolved_entries)))
        out.append(replace(r, items=items, entry_items=used if any(used) else ()))
    return out, warnings


_FIX_REPORT = re.compile(r"^(?:iter|iteration|fix)\b|^iter-|^iteration-", re.I)


def _points(original_section: str, desc: str) -> bool:
    """The entry names a report or task (in ``original_section``, or "(task-N …)" in its text)."""
    _section, file, task, _n = pointer_of(original_section)
    return bool(file or task or _TASK_MENTION.search(desc))


def _may_paraphrase(r: ScarReport, original_section: str, desc: str) -> bool:
    """An entry whose text may paraphrase an item of another report (a similar match counts):
    it points at a report or task (``original_section`` names one, or its text says
    "(task-1 scar)"), or its report is an iteration round's fix report (``iteration-fix-1``,
    ``iter-fix-C``: its entries name the items the round fixed, never items of its own). A task
    report's entry without a pointer is its own item removed from its section (the legacy form):
    it resolves another report's item only by the same text, or a copy of it cut short."""
    if _points(original_section, desc):
        return True
    name = r.file.rsplit("/", 1)[-1]
    return bool(_FIX_REPORT.match(name) or _FIX_REPORT.match(r.task_id or ""))


ODD_DEFERRAL_KEY = "deferred_to_feature_iteration"  # as a top-level list: a key of no era


def _matcher(items: list[ScarItem], position: dict[str, int]) -> Matcher:
    """The one matcher over ``items`` (each with its position in its report's section)."""
    return Matcher(
        [
            Target(it.id, it.text, odd_normal(it.text, normalize(it.text)), it.task_id,
                   SECTION_OF[it.category], it.file, position.get(it.id))
            for it in items
        ]
    )  # fmt: skip


def _odd_deferral_lists(
    reports: list[ScarReport], position: dict[str, int], updates: dict[str, ScarItem], warnings: list[Problem]
) -> None:
    """A report's top-level ``deferred_to_feature_iteration:`` list (a fix report's, in real
    features) is no Level-1 deferral (reports._odd_deferrals says so for the list): each entry is
    matched with the one matcher against the remaining items of every report, and said — the
    item it names gets a note (still not deferred: defer it in triage), an entry that names no
    item confidently is a warning with its candidates. Never a silent skip."""
    lists = [(r, v) for r in reports if isinstance(v := (r.extra or {}).get(ODD_DEFERRAL_KEY), list) and v]
    if not lists:
        return
    remaining = [updates.get(it.id, it) for r in reports for it in r.items]
    remaining = [it for it in remaining if not _excluded(it)]
    m = _matcher(remaining, position)
    for r, entries in lists:
        for n, entry in enumerate(entries):
            where = f"{r.file} top-level {ODD_DEFERRAL_KEY}[{n}]"
            match = m.match(entry)
            if match.confidence in CONFIDENT and match.target:
                it = updates.get(match.target) or next(i for i in remaining if i.id == match.target)
                note = (
                    f"named by {where} ({match.confidence}, {match.score:.2f}), a list no era defines: "
                    "not read as deferred (only an item's own `deferred_to_feature_iteration: true` is); "
                    "defer it in triage if that is meant"
                )
                updates[it.id] = replace(it, notes=(*it.notes, note))
                warnings.append(
                    Problem(r.file, None, f"{where} names {it.id}: not read as deferred (see its note)", "warning")
                )
            else:
                names = ", ".join(f"{cid} ({sc:.2f})" for cid, sc in match.candidates) or "none"
                warnings.append(
                    Problem(
                        r.file,
                        None,
                        f"{where} ({_quote(description_of(entry))}) names no item confidently "
                        f"({match.confidence}: {match.reason}); candidates {names}: nothing is deferred",
                        "warning",
                    )
                )


def _pointed(reports: list[ScarReport], original_section: str, position: dict[str, int]) -> tuple[ScarItem | None, str]:
    """The item an explicit ``(FILE item N)`` pointer names — item N (from 1, in the file's order)
    of that section of that report — and the pointer said ("task-6-scar.yaml known_shortcuts
    item 2"); (None, "") when it names no item number, report or section."""
    section, file, task, number = pointer_of(original_section)
    if number is None or section is None or not (file or task):
        return None, ""
    if file:
        named = [r for r in reports if r.file.rsplit("/", 1)[-1].casefold() == file.casefold()]
    else:
        named = [r for r in reports if (r.task_id or "").casefold() == (task or "").casefold()]
    said = f"{file or task} {section} item {number}"
    if len(named) != 1:
        return None, said if not named else ""
    for it in named[0].items:
        if SECTION_OF[it.category] == section and position.get(it.id) == number - 1:
            return it, said
    return None, said


def _covers_own(r: ScarReport, section: str, desc: str) -> bool:
    """The entry resolved an item of its own report by the exact text (reports.read_report)."""
    key = normalize(desc)
    return any(it.resolved and SECTION_OF[it.category] == section and it.normalized == key for it in r.items)


def _pool(reports: list[ScarReport], remaining: list[ScarItem], original_section: str) -> tuple[tuple, list[ScarItem]]:
    """(a key, the candidates): the report and section an explicit pointer names, else all."""
    section, file, task, _n = pointer_of(original_section)
    pool = remaining
    key: tuple = ("all",)
    named = None
    if file:
        named = [r for r in reports if r.file.rsplit("/", 1)[-1].casefold() == file.casefold()]
    elif task:
        named = [r for r in reports if (r.task_id or "").casefold() == task.casefold()]
    if named:
        files = {r.file for r in named}
        pool = [it for it in pool if it.file in files]
        key = ("report", *sorted(files))
    if section:
        in_section = [it for it in pool if SECTION_OF[it.category] == section]
        if in_section:
            pool = in_section
            key = (*key, section)
    return key, pool


def _claim(it: ScarItem, index: int, warnings: list[Problem]) -> ScarItem:
    """An item whose text claims a resolution but that nothing resolved: counted, and said."""
    if _excluded(it):
        return it
    word = claimed_resolution(it.text)
    if word is None:
        return it
    note = (
        f"its text is marked {word} but the item has no `status: resolved` (nor a resolved_items entry "
        "covering it): counted, as the seed's rule counts it"
    )
    warnings.append(Problem(it.file, it.line, f"{_label(it, index)}: {note}", "warning"))
    return replace(it, notes=(*it.notes, note))


def _quote(text: str, width: int = 60) -> str:
    one = " ".join(text.split())
    return repr(one if len(one) <= width else one[: width - 1] + "…")
