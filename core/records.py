"""Value classes declared as dataclasses are, made without generating code at import.

``@record`` takes a class declared as for ``@dataclasses.dataclass`` (annotated fields, defaults,
:func:`field`) and gives it what a dataclass of the same declaration has: ``__init__`` (defaults,
``default_factory``, ``__post_init__``), ``__eq__`` (same class only, the compared fields),
``__hash__`` (frozen: of the compared fields; mutable: unhashable), ``__repr__`` (``repr=False``
fields left out), frozen ``__setattr__`` / ``__delattr__`` (:class:`FrozenInstanceError`),
``__slots__`` (``slots=True``, ``weakref_slot=True``) and ``__match_args__``; a slotted record
pickles and copies as its class called with its field values (``__reduce__``). :func:`fields`,
:func:`replace` and :func:`asdict` are dataclasses' own, for records.

Why (issue 31): ``dataclasses`` compiles each generated method with an ``exec`` of its own, about
six per class, and imports ``inspect`` and ``ast``: 28 dataclasses cost ``scars status`` ~27 ms of
its ~80. Here ``__eq__``, ``__hash__``, ``__repr__``, the frozen setters and ``__reduce__`` are
closures over ``operator.attrgetter`` getters of the fields, made per class without compiling
anything. ``__init__`` binds its arguments itself for a class's first :data:`COMPILE_AFTER`
constructions; then the class's own is compiled from source (one ``exec``) and put on the class.
A class built a few times per command (the settings, a feature, its log: every class on the path
of ``scars status`` and of the app's first paint over the demo) never compiles; one built thousands
of times (an item: 50,000 on a cold read, and unpickled on a warm one) gets an ``__init__`` that
sets each slot through the slot's own descriptor, about twice as fast as a dataclass's
``object.__setattr__`` per field. ``tests/core/test_records.py`` holds records against dataclasses
on the same declarations, both ways of construction.

What ``dataclasses`` has and records do not (none is used here): ``order``, ``unsafe_hash``,
``eq=False``, ``init=False`` fields, ``kw_only``, ``InitVar``, a generated ``__doc__``.
"""

from __future__ import annotations

from _thread import get_ident
from collections.abc import Callable
from operator import attrgetter
from typing import Any, TypeVar, dataclass_transform, overload

__all__ = ["FrozenInstanceError", "asdict", "field", "fields", "record", "replace"]

_T = TypeVar("_T")


class FrozenInstanceError(AttributeError):
    """A field of a frozen record assigned or deleted (as ``dataclasses.FrozenInstanceError``)."""


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class Field:
    """One field of a record: its name, its default or default factory, whether ``__eq__`` and
    ``__hash__`` compare it and whether ``__repr__`` shows it."""

    __slots__ = ("name", "default", "default_factory", "compare", "repr")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, compare: bool = True, repr: bool = True):
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.repr = repr

    def __repr__(self) -> str:
        return (
            f"Field(name={self.name!r}, default={self.default!r}, default_factory={self.default_factory!r}, "
            f"compare={self.compare!r}, repr={self.repr!r})"
        )


def field(
    *, default: Any = MISSING, default_factory: Callable[[], Any] = MISSING, compare: bool = True, repr: bool = True
) -> Any:
    """A field with a default or a default factory, left out of ``__eq__`` / ``__hash__``
    (``compare=False``) or of ``__repr__`` (``repr=False``): ``dataclasses.field``'s arguments."""
    return Field(default, default_factory, compare, repr)


_MemberDescriptor = type(Field.__dict__["name"])  # what a slot is on its class


class _Spec:
    """What the shared methods of one record class read: its fields in order, their names, and
    getters of the values (all, compared, shown), each giving a tuple."""

    __slots__ = ("fields", "frozen", "post_init", "names", "index", "values", "compared", "shown", "shown_names")

    def __init__(self, all_fields: tuple[Field, ...], frozen: bool, post_init: bool):
        self.fields = all_fields
        self.frozen = frozen
        self.post_init = post_init
        self.names = tuple(f.name for f in all_fields)
        self.index = {name: at for at, name in enumerate(self.names)}
        self.values = _getter(self.names)
        self.compared = _getter(tuple(f.name for f in all_fields if f.compare))
        self.shown_names = tuple(f.name for f in all_fields if f.repr)
        self.shown = _getter(self.shown_names)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``attrgetter(*names)``, giving a tuple for one name and for none too."""
    if len(names) > 1:
        return attrgetter(*names)
    if not names:
        return lambda obj: ()
    one = attrgetter(names[0])
    return lambda obj: (one(obj),)


@overload
def record(cls: type[_T], /) -> type[_T]: ...
@overload
def record(
    *, frozen: bool = True, slots: bool = False, weakref_slot: bool = False
) -> Callable[[type[_T]], type[_T]]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(field, Field))
def record(
    cls: type[_T] | None = None, /, *, frozen: bool = True, slots: bool = False, weakref_slot: bool = False
) -> Any:
    """The class declared (annotated fields, defaults, :func:`field`) made a record: what
    ``@dataclasses.dataclass(frozen=frozen, slots=slots, weakref_slot=weakref_slot)`` makes of it."""

    def wrap(cls: type[_T]) -> type[_T]:
        return _build(cls, frozen, slots, weakref_slot)

    return wrap if cls is None else wrap(cls)


def _build(cls: type[_T], frozen: bool, slots: bool, weakref_slot: bool) -> type[_T]:
    if weakref_slot and not slots:
        raise TypeError("weakref_slot is True but slots is False")
    own = cls.__dict__
    by_name: dict[str, Field] = {}
    for base in cls.__mro__[-1:0:-1]:
        spec = base.__dict__.get("__record__")
        if spec is not None:
            for f in spec.fields:
                by_name[f.name] = f
    for name, annotation in own.get("__annotations__", {}).items():
        if isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        default = own.get(name, MISSING)
        f = default if isinstance(default, Field) else Field(default)
        f.name = name
        if f.default is not MISSING and f.default.__class__.__hash__ is None:
            raise ValueError(f"mutable default {type(f.default)} for field {name} is not allowed: use default_factory")
        by_name[name] = f
    spec = _Spec(tuple(by_name.values()), frozen, hasattr(cls, "__post_init__"))
    seen_default = False
    for f in spec.fields:
        if f.default is MISSING and f.default_factory is MISSING:
            if seen_default:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
        else:
            seen_default = True

    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    methods: dict[str, Any] = {
        "__record__": spec,
        "__match_args__": spec.names,
        "__repr__": _repr(spec),
        "__eq__": _eq(spec),
    }
    if slots:
        methods["__reduce__"] = _reduce(spec)
    new = {k: v for k, v in methods.items() if k not in own}
    if not explicit_hash:
        new["__hash__"] = _hash(spec) if frozen else None
    for k, v in new.items():
        if callable(v) and k != "__record__":
            v.__qualname__ = f"{cls.__qualname__}.{k}"
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"cannot overwrite __setattr__ or __delattr__ in frozen record {cls.__name__}")

    if slots:
        cls = _slotted(cls, spec, new, weakref_slot)
    else:
        for f in spec.fields:  # as a dataclass: a field's default is the class attribute
            if isinstance(own.get(f.name), Field):
                if f.default is MISSING:
                    delattr(cls, f.name)
                else:
                    setattr(cls, f.name, f.default)
        for k, v in new.items():
            setattr(cls, k, v)
    if "__init__" not in own:  # made for the class as it is now (with slots: made again)
        cls.__init__ = _lazy_init(cls, spec)  # type: ignore[method-assign]
    if frozen:
        cls.__setattr__, cls.__delattr__ = _frozen(cls, frozenset(spec.names))  # type: ignore[method-assign]
    return cls


def _slotted(cls: type[_T], spec: _Spec, new: dict[str, Any], weakref_slot: bool) -> type[_T]:
    """``cls`` made again with ``__slots__`` for its own fields (a class's slots are fixed when it
    is made), as ``dataclasses`` does."""
    if "__slots__" in cls.__dict__:
        raise TypeError(f"{cls.__name__} already specifies __slots__")
    namespace = dict(cls.__dict__)
    inherited = {s for base in cls.__mro__[1:-1] for s in _slots_of(base)}
    names = tuple(n for n in spec.names if n not in inherited)
    if weakref_slot and "__weakref__" not in inherited:
        names += ("__weakref__",)
    for name in (*spec.names, "__dict__", "__weakref__"):
        namespace.pop(name, None)
    namespace.update(new)
    namespace["__slots__"] = names
    meta: Any = type(cls)
    made: type[_T] = meta(cls.__name__, cls.__bases__, namespace)
    made.__qualname__ = cls.__qualname__
    return made


def _slots_of(cls: type) -> tuple[str, ...]:
    slots = cls.__dict__.get("__slots__", ())
    return (slots,) if isinstance(slots, str) else tuple(slots)


# How many times a record class is constructed before its own ``__init__`` is compiled: a class
# built a few times per command (the settings, a feature, its log) is never compiled, one built
# thousands of times (an item) is, after these few.
COMPILE_AFTER = 64


def _lazy_init(cls: type, spec: _Spec) -> Callable[..., None]:
    """The first ``__init__`` of ``cls``: for its first :data:`COMPILE_AFTER` constructions it binds
    the arguments itself (:func:`_bind`) and sets the fields one by one; then it compiles the
    class's own (:func:`_compile_init`), puts it on the class and calls it from then on."""
    calls = 0
    setters: list[Callable[[Any, Any], None]] = []
    compiled: Callable[..., None] | None = None

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal calls, compiled
        if compiled is not None:
            return compiled(self, *args, **kwargs)
        calls += 1
        if calls > COMPILE_AFTER:
            compiled = _compile_init(cls, spec)
            cls.__init__ = compiled  # type: ignore[misc]
            return compiled(self, *args, **kwargs)
        if not setters:
            setters[:] = _setters(cls, spec)
        for setter, value in zip(setters, _bind(spec, args, kwargs)):
            setter(self, value)
        if spec.post_init:
            self.__post_init__()
        return None

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _bind(spec: _Spec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The field values ``__init__(*args, **kwargs)`` gives, defaults and factories taken; a
    TypeError as Python's own binding raises it."""
    names, n = spec.names, len(spec.names)
    if len(args) > n:
        raise TypeError(f"__init__() takes {n + 1} positional arguments but {len(args) + 1} were given")
    values = [*args, *(MISSING for _ in range(n - len(args)))]
    for name, value in kwargs.items():
        at = spec.index.get(name)
        if at is None:
            raise TypeError(f"__init__() got an unexpected keyword argument {name!r}")
        if values[at] is not MISSING:
            raise TypeError(f"__init__() got multiple values for argument {name!r}")
        values[at] = value
    missing = []
    for at in range(len(args), n):
        if values[at] is MISSING:
            f = spec.fields[at]
            if f.default_factory is not MISSING:
                values[at] = f.default_factory()
            elif f.default is not MISSING:
                values[at] = f.default
            else:
                missing.append(names[at])
    if missing:
        raise TypeError(f"__init__() missing {len(missing)} required argument(s): {', '.join(map(repr, missing))}")
    return values


def _setters(cls: type, spec: _Spec) -> list[Callable[[Any, Any], None]]:
    """How each field is set on an instance of ``cls``: through its slot's descriptor; a frozen
    class without slots: ``object.__setattr__``; a mutable one: ``setattr``."""
    out: list[Callable[[Any, Any], None]] = []
    for name in spec.names:
        slot = _slot(cls, name)
        if slot is not None:
            out.append(slot.__set__)
        else:
            out.append(_setting(name, object.__setattr__ if spec.frozen else setattr))
    return out


def _setting(name: str, put: Callable[[Any, str, Any], None]) -> Callable[[Any, Any], None]:
    def setter(obj: Any, value: Any) -> None:
        put(obj, name, value)

    return setter


def _slot(cls: type, name: str) -> Any:
    """The descriptor of slot ``name`` on ``cls`` (None when the field is no slot)."""
    found = next((k.__dict__[name] for k in cls.__mro__ if name in k.__dict__), None)
    return found if isinstance(found, _MemberDescriptor) else None


_HAS_FACTORY: Any = _Missing()


def _compile_init(cls: type, spec: _Spec) -> Callable[..., None]:
    """The ``__init__`` of ``cls``: each field set through its slot's descriptor (a frozen class
    without slots: ``object.__setattr__``; a mutable one: plain assignment), defaults taken,
    factories called, then ``__post_init__`` when the class has one."""
    self_name = "self" if "self" not in spec.names else "__record_self__"
    ns: dict[str, Any] = {"_HAS_FACTORY": _HAS_FACTORY, "_osa": object.__setattr__}
    params, body = [self_name], []
    for f in spec.fields:
        name = f.name
        if f.default_factory is not MISSING:
            params.append(f"{name}=_HAS_FACTORY")
            ns[f"_f_{name}"] = f.default_factory
            body.append(f"if {name} is _HAS_FACTORY: {name} = _f_{name}()")
        elif f.default is not MISSING:
            params.append(f"{name}=_d_{name}")
            ns[f"_d_{name}"] = f.default
        else:
            params.append(name)
        slot = _slot(cls, name)
        if slot is not None:
            ns[f"_s_{name}"] = slot.__set__
            body.append(f"_s_{name}({self_name}, {name})")
        elif spec.frozen:
            body.append(f"_osa({self_name}, {name!r}, {name})")
        else:
            body.append(f"{self_name}.{name} = {name}")
    if spec.post_init:
        body.append(f"{self_name}.__post_init__()")
    lines = "\n".join(f"    {line}" for line in body or ["pass"])
    source = f"def __init__({', '.join(params)}):\n{lines}\n"
    exec(compile(source, f"<record {cls.__qualname__}>", "exec"), ns)
    init = ns["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


_repr_running: set[tuple[int, int]] = set()


def _repr(spec: _Spec) -> Callable[[Any], str]:
    names, shown = spec.shown_names, spec.shown
    pair = "{}={!r}".format

    def __repr__(self: Any) -> str:
        key = (id(self), get_ident())
        if key in _repr_running:
            return "..."
        _repr_running.add(key)
        try:
            return f"{self.__class__.__qualname__}({', '.join(map(pair, names, shown(self)))})"
        finally:
            _repr_running.discard(key)

    return __repr__


def _eq(spec: _Spec) -> Callable[[Any, object], Any]:
    compared = spec.compared

    def __eq__(self: Any, other: object) -> Any:
        if other.__class__ is self.__class__:
            return compared(self) == compared(other)
        return NotImplemented

    return __eq__


def _hash(spec: _Spec) -> Callable[[Any], int]:
    compared = spec.compared

    def __hash__(self: Any) -> int:
        return hash(compared(self))

    return __hash__


def _reduce(spec: _Spec) -> Callable[[Any], tuple[Any, ...]]:
    values = spec.values

    def __reduce__(self: Any) -> tuple[Any, ...]:
        return (self.__class__, values(self))

    return __reduce__


def _frozen(cls: Any, names: frozenset[str]) -> tuple[Callable[..., None], Callable[..., None]]:
    """``__setattr__`` and ``__delattr__`` refusing every field (and everything on the class
    itself), as a frozen dataclass's do."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return __setattr__, __delattr__


def _spec(obj: Any) -> _Spec:
    spec = getattr(obj, "__record__", None)
    if not isinstance(spec, _Spec):
        raise TypeError(f"{obj!r} is not a record class or instance")
    return spec


def fields(class_or_instance: Any) -> tuple[str, ...]:
    """The names of a record's fields, in order (``dataclasses.fields``' names)."""
    return _spec(class_or_instance).names


def replace(obj: _T, /, **changes: Any) -> _T:
    """A new record of ``obj``'s class with ``changes`` and ``obj``'s other field values, made by
    its ``__init__`` (``__post_init__`` runs; an unknown name is a TypeError), as
    ``dataclasses.replace``."""
    spec = _spec(obj)
    values = dict(zip(spec.names, spec.values(obj)))
    values.update(changes)
    return obj.__class__(**values)


def asdict(obj: Any) -> dict[str, Any]:
    """A record's fields as a dict, records inside made dicts and lists, tuples and dicts inside
    copied (``dataclasses.asdict``; other values are taken as they are, not deep-copied)."""
    spec = _spec(obj)
    return {name: _plain(value) for name, value in zip(spec.names, spec.values(obj))}


def _plain(value: Any) -> Any:
    if isinstance(getattr(value, "__record__", None), _Spec) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*map(_plain, value))
    if isinstance(value, (list, tuple)):
        return type(value)(map(_plain, value))
    if isinstance(value, dict):
        return type(value)((_plain(k), _plain(v)) for k, v in value.items())
    return value
