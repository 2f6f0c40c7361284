"""PEP 562 public faces: a package's ``__getattr__`` / ``__dir__`` that import a public name's
module on first use, so importing the package itself stays cheap (``scars --help``)."""

from __future__ import annotations

import importlib

# `import scars.core` (every command, `scars --help` too) imports no typing: names for annotations only
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any


def public_face(
    package: str, namespace: dict[str, Any], public: Mapping[str, str | tuple[str, str]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``public`` maps each public name to the module
    that defines it, or to ``(module, attribute)`` where the public name is another (two modules
    define a ``fingerprint``); a name that is itself a module (``public[name] ==
    f"{package}.{name}"``) is that module. A loaded name is kept in ``namespace`` (the package's
    globals)."""

    def getattr_(name: str) -> Any:
        where = public.get(name)
        if where is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attribute = where if isinstance(where, tuple) else (where, name)
        loaded = importlib.import_module(module)
        value = loaded if module == f"{package}.{name}" else getattr(loaded, attribute)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(public))

    return getattr_, dir_
