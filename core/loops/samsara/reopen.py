"""The watch reopen: a fired re-review watch sends the accepted item back to triage — scars' own
decision (the watch's rule), always one auto-decisions.md entry, never refused as an agent's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.formats.auto_decisions import DecisionEntry
from scars.core.gatekit.evidence import Evidence, build_entry
from scars.core.loops.samsara.catalog import WATCH_REOPEN
from scars.core.model import Feature
from scars.core.provenance import Provenance
from scars.core.samsara.session import FeatureSession
from scars.core.samsara.watches import WatchResult, _append, already_reopened, read_watch_log


def _reopen_entry(r: WatchResult, feature: Feature, user: str, prov: Provenance | None) -> DecisionEntry:
    prompt = WATCH_REOPEN.prompt.format(watch=r.watch, text=r.text, item=r.item_id, feature=feature.name, cause=r.cause)
    ev = Evidence(
        gate=WATCH_REOPEN,
        target=Path(feature.path),
        state_file=None,
        workflow_prompt=prompt,
        warnings=[f"the accept came from the {r.origin}"],
        files_read=[f"scars watch check: {r.cause}"],
        uncertainty=("low", "evaluated by scars watch check; a person decides the item again"),
    )
    if prov is not None:
        ev.context["provenance"] = prov  # said in the entry's "decided by" line, as a decision's
    return build_entry(
        ev,
        WATCH_REOPEN.answers[0],
        f"{r.item_id}: its re-review watch fired ({r.cause})",
        user=user,
        rationale=(
            "The accept held only until its re-review signal; the machine-checkable watch "
            f'"{r.watch}" fired, so the accepted risk goes back to triage.'
        ),
    )


def reopen_fired(
    feature_dir: str | os.PathLike,
    results: list[WatchResult],
    *,
    user: str | None = None,
    source: Provenance | None = None,
) -> list[dict[str, Any]]:
    """Reopen the items of fired watches that are not reopened yet.

    Under the feature lock (raises LockHeld when another writer holds it): per item one
    ``reopen`` journal record, one auto-decisions.md entry (``iteration.watch-reopen``,
    decision ``revise``) and one ``fired`` record in watches.jsonl. ``source``: where the check
    ran from (the command's provenance), kept in each of the three as a decision's is; a reopen
    is scars' own (the watch's rule), so it is never refused as an agent's answer. Returns one
    outcome per fired result: ``{item_id, watch, reopened: bool, auto_decision, at | already}``.
    """
    fired = [r for r in results if r.state == "fired" and r.item_id]
    if not fired:
        return []
    outcomes: list[dict[str, Any]] = []
    with FeatureSession.open(feature_dir, user=user, provenance=source) as s:
        log = read_watch_log(feature_dir)
        for r in fired:
            prior = already_reopened(r, log)
            if prior is not None:
                outcomes.append(
                    {
                        "item_id": r.item_id,
                        "watch": r.watch,
                        "reopened": False,
                        "already": prior.get("at"),
                        "auto_decision": prior.get("auto_decision"),
                    }
                )
                continue
            assert r.item_id is not None  # `fired` keeps only results with an item
            journal = r.item_id in s.journal_decisions
            if journal:  # an accept only iteration-log.yaml holds has no journal decision to supersede
                s.reopen(r.item_id, cause=r.cause, watch=r.watch)
            number = s.append_auto_decision(
                _reopen_entry(r, s.feature, s.user, source), source="scars watch check", scars_own=True
            )
            fired_rec: dict[str, Any] = {
                "type": "fired",
                "item_id": r.item_id,
                "watch": r.watch,
                "cause": r.cause,
                "text": r.text,
                "origin": r.origin,
                "by": s.user,
                "auto_decision": number,
                "journal": journal,
            }
            if source is not None:
                fired_rec["provenance"] = source.to_record()
            rec = _append(feature_dir, root=s.root, record=fired_rec)
            log.append(rec)
            outcomes.append(
                {"item_id": r.item_id, "watch": r.watch, "reopened": True, "at": rec["at"], "auto_decision": number}
            )
    return outcomes
