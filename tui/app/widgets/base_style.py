"""The widget's own Rich style, computed once per repaint instead of once per line drawn."""

from __future__ import annotations

from typing import Any

from rich.style import Style


class BaseStyleCache:
    """A mixin for Line-API widgets, first in the bases (not a DOM node: Textual takes a widget's
    default CSS from its first base that is one, here the widget class): :meth:`base_style` is ``rich_style`` (a walk
    over every ancestor's styles, ~0.1 ms) kept until the widget is refreshed or its styles
    change — the same life as Textual's own cache of component styles."""

    _base_style: Style | None = None

    def base_style(self) -> Style:
        if self._base_style is None:
            self._base_style = self.rich_style  # type: ignore[attr-defined]
        return self._base_style

    def refresh(self, *regions: Any, **kwargs: Any) -> Any:
        self._base_style = None
        return super().refresh(*regions, **kwargs)  # type: ignore[misc]

    def notify_style_update(self) -> None:
        self._base_style = None
        super().notify_style_update()  # type: ignore[misc]
