"""``scars_app(node)``: a widget's or screen's ``app`` typed as the :class:`ScarsApp` it runs in
(Textual types ``self.app`` as ``App[Any]``; Posting's ``cast("Posting", self.app)`` pattern, once).
Imports nothing of the app at run time: a screen module stays cheap to import."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from textual.dom import DOMNode

    from scars.tui.app.app import ScarsApp


def scars_app(node: DOMNode) -> ScarsApp:
    """``node.app``, the running ScarsApp."""
    return cast("ScarsApp", node.app)
