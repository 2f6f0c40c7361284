"""Records (scars.core.records) behave as dataclasses of the same declaration do.

Each declaration below is made twice, once by ``dataclasses.dataclass`` and once by
``records.record`` with the same flags, and both are held to the same answers: construction
(defaults, factories, ``__post_init__``, argument errors), ``==`` (``compare=False`` fields left
out), ``hash``, ``repr`` (``repr=False`` fields left out), frozen assignment, pickling, copying,
``replace``, ``fields``, slots. A record's ``__init__`` binds its arguments itself for its first
constructions and is compiled after :data:`records.COMPILE_AFTER`: every test runs both ways.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
import pkgutil
import weakref
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from scars.core import records
from scars.core.records import FrozenInstanceError, field, fields, record, replace
from tests.hypothesis_profiles import examples

# The flags of the scars classes: frozen + slots (most), + weakref_slot (Feature), frozen only
# (Decision, Settings), mutable + slots (the view model's), mutable (JournalState, Evidence).
FLAGS = [
    dict(frozen=True, slots=True),
    dict(frozen=True, slots=True, weakref_slot=True),
    dict(frozen=True),
    dict(frozen=False, slots=True),
    dict(frozen=False),
]


@pytest.fixture(params=["bound", "compiled"])
def init_mode(request, monkeypatch):
    """Every record constructed by its first ``__init__`` (binding the arguments itself) or by the
    compiled one (what a class gets after COMPILE_AFTER constructions)."""
    monkeypatch.setattr(records, "COMPILE_AFTER", 10**9 if request.param == "bound" else 0)
    return request.param


def declare(decorator: Any, make_field: Any, **flags: Any) -> type:
    """The same declaration made by ``decorator`` (dataclass or record) with ``make_field``."""

    @decorator(**flags)
    class Item:
        id: str
        line: int | None
        text: str = "t"
        tags: list[str] = make_field(default_factory=list)
        extra: dict[str, Any] | None = make_field(default=None, compare=False, repr=False)
        hidden: int = make_field(default=0, repr=False)
        loose: int = make_field(default=0, compare=False)

    return Item


def pair(**flags: Any) -> tuple[type, type]:
    return declare(dataclasses.dataclass, dataclasses.field, **flags), declare(record, field, **flags)


def values(obj: Any) -> list[Any]:
    return (
        [getattr(obj, f.name) for f in dataclasses.fields(obj)]
        if dataclasses.is_dataclass(obj)
        else [getattr(obj, name) for name in fields(obj)]
    )


CALLS = [
    ((), dict(id="a", line=1)),
    (("a", None), {}),
    (("a", 2, "x", ["p"]), dict(extra={"k": 1}, hidden=3, loose=4)),
    ((), dict(id="a", line=1, tags=["q"], text="y")),
]


@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize(("args", "kwargs"), CALLS)
def test_construction_as_a_dataclass(flags, args, kwargs, init_mode):
    dc, rc = pair(**flags)
    for _ in range(2):  # the compiled __init__ is put on the class at the first call; call it again
        d, r = dc(*args, **kwargs), rc(*args, **kwargs)
        assert values(r) == values(d)
        assert repr(r) == repr(d)
    if "tags" not in kwargs and len(args) < 4:
        assert rc(*args, **kwargs).tags is not rc(*args, **kwargs).tags  # a factory's value per instance


@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((), {}),  # missing
        (("a",), {}),  # one missing
        (("a", 1), dict(nope=1)),  # unknown
        (("a", 1), dict(id="b")),  # twice
        (("a", 1, "x", [], None, 0, 0, "too many"), {}),
    ],
)
def test_wrong_arguments_are_a_type_error_as_for_a_dataclass(flags, args, kwargs, init_mode):
    dc, rc = pair(**flags)
    with pytest.raises(TypeError):
        dc(*args, **kwargs)
    with pytest.raises(TypeError):
        rc(*args, **kwargs)


@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_equality_and_hash_as_a_dataclass(flags, init_mode):
    dc, rc = pair(**flags)
    a = dict(id="a", line=1, tags=())  # a tuple: hashable
    b = {**a, "extra": {"x": 1}, "loose": 9}  # differs in compare=False fields only
    assert (rc(**a) == rc(**b)) is (dc(**a) == dc(**b)) is True
    assert (
        (rc(**a) == rc(**{**a, "hidden": 1})) is (dc(**a) == dc(**{**a, "hidden": 1})) is False
    )  # repr=False compares
    assert (rc(**a) == rc(**{**a, "tags": ("t",)})) is False
    assert rc(**a) != dc(**a) and rc(**a).__eq__(dc(**a)) is NotImplemented  # another class is never equal
    if flags.get("frozen"):
        assert hash(rc(**a)) == hash(dc(**a)) == hash(rc(**b))  # of the compared fields, as a dataclass
        with pytest.raises(TypeError):  # a list field: unhashable, as the dataclass
            hash(dc(**{**a, "tags": ["t"]}))
    else:
        assert rc.__hash__ is None is dc.__hash__  # mutable and eq: unhashable
        with pytest.raises(TypeError):
            hash(rc(**a))


def test_the_hash_leaves_out_compare_false_fields_and_takes_repr_false_ones():
    @record(slots=True)
    class Point:
        x: int
        label: str = field(default="", compare=False)
        weight: int = field(default=0, repr=False)

    assert hash(Point(1, "a", 2)) == hash(Point(1, "b", 2)) == hash((1, 2))
    assert hash(Point(1, weight=2)) != hash(Point(1, weight=3))


@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_frozen_assignment_raises_as_a_dataclass(flags, init_mode):
    dc, rc = pair(**flags)
    d, r = dc("a", 1), rc("a", 1)
    if not flags.get("frozen"):
        r.text = d.text = "changed"
        del r.hidden, d.hidden
        return
    for action in (lambda o: setattr(o, "text", "x"), lambda o: delattr(o, "id")):
        with pytest.raises(dataclasses.FrozenInstanceError) as dc_error:
            action(d)
        with pytest.raises(FrozenInstanceError) as rc_error:
            action(r)
        assert str(rc_error.value) == str(dc_error.value) and isinstance(rc_error.value, AttributeError)
    # a name that is no field: refused too (a slotted dataclass of 3.11 raises a TypeError here, its
    # __setattr__ naming the class from before the slots were added; an unslotted one refuses it)
    with pytest.raises(FrozenInstanceError):
        r.new = 1
    assert r.text == "t"


@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_slots_and_weakref_slot_as_a_dataclass(flags):
    dc, rc = pair(**flags)
    d, r = dc("a", 1), rc("a", 1)
    assert hasattr(r, "__dict__") is hasattr(d, "__dict__") is not flags.get("slots", False)
    assert set(getattr(rc, "__slots__", ())) == set(getattr(dc, "__slots__", ()))
    if flags.get("slots") and not flags.get("weakref_slot"):
        with pytest.raises(TypeError):
            weakref.ref(r)
    else:
        assert weakref.ref(r)() is r


@pytest.mark.parametrize("flags", FLAGS, ids=str)
def test_fields_and_replace_as_a_dataclass(flags, init_mode):
    dc, rc = pair(**flags)
    assert fields(rc) == fields(rc("a", 1)) == tuple(f.name for f in dataclasses.fields(dc))
    d, r = dc("a", 1, tags=["x"]), rc("a", 1, tags=["x"])
    assert values(replace(r, text="new", loose=2)) == values(dataclasses.replace(d, text="new", loose=2))
    assert replace(r) == r and replace(r) is not r and replace(r).tags is r.tags  # values taken, not copied
    with pytest.raises(TypeError):
        replace(r, nope=1)


def test_replace_and_construction_run_post_init(init_mode):
    seen: list[int] = []

    @record(slots=True)
    class Checked:
        n: int

        def __post_init__(self) -> None:
            if self.n < 0:
                raise ValueError("negative")
            seen.append(self.n)

    c = Checked(1)
    assert replace(c, n=2).n == 2 and seen == [1, 2]
    with pytest.raises(ValueError):
        replace(c, n=-1)


def test_asdict_as_a_dataclass():
    @record
    class Inner:
        a: int
        b: list[Any] = field(default_factory=list)

    @dataclasses.dataclass(frozen=True)
    class InnerDc:
        a: int
        b: list[Any] = dataclasses.field(default_factory=list)

    value = {"w": [1, {"k": (2, 3)}]}
    got = records.asdict(Inner(1, [Inner(2), value]))
    assert got == dataclasses.asdict(InnerDc(1, [InnerDc(2), value])) == {"a": 1, "b": [{"a": 2, "b": []}, value]}
    assert got["b"][1] is not value and got["b"][1]["w"] is not value["w"]  # containers copied


def test_inheritance_as_a_dataclass(init_mode):
    @dataclasses.dataclass
    class BaseDc:
        a: int
        b: str = "b"

    @dataclasses.dataclass
    class ChildDc(BaseDc):
        c: list[int] = dataclasses.field(default_factory=list)
        a: int = 5  # redeclared: keeps its place, gains a default

    @record(frozen=False)
    class Base:
        a: int
        b: str = "b"

    @record(frozen=False)
    class Child(Base):
        c: list[int] = field(default_factory=list)
        a: int = 5

    assert fields(Child) == tuple(f.name for f in dataclasses.fields(ChildDc)) == ("a", "b", "c")
    assert values(Child()) == values(ChildDc()) and values(Child(1, "x", [2])) == values(ChildDc(1, "x", [2]))
    assert repr(Child()) == repr(ChildDc()).replace("ChildDc", "Child")
    assert Child() != Base(5)  # another class


def test_a_plain_subclass_keeps_the_record_s_methods():
    """What LazyFeature does: a subclass (no record itself) constructed through the record's init."""

    @record(slots=True)
    class Parent:
        a: int

    class Sub(Parent):
        __slots__ = ("extra",)

    s = Sub(1)
    assert (
        s.a == 1 and s != Parent(1) and repr(s) == "test_a_plain_subclass_keeps_the_record_s_methods.<locals>.Sub(a=1)"
    )
    with pytest.raises(FrozenInstanceError):
        s.a = 2
    object.__setattr__(s, "extra", 3)
    assert s.extra == 3


def test_declaration_errors_as_a_dataclass():
    with pytest.raises(ValueError):

        @record
        class MutableDefault:
            a: list[int] = []  # the error under test

    with pytest.raises(TypeError):

        @record
        class DefaultFirst:
            a: int = 0
            b: int  # type: ignore[misc]

    with pytest.raises(ValueError):
        field(default=1, default_factory=int)
    with pytest.raises(TypeError):
        record(weakref_slot=True)(type("W", (), {"__annotations__": {"a": "int"}}))


def test_a_recursive_repr_is_cut_as_a_dataclass():
    @record(frozen=False)
    class Node:
        children: list[Any] = field(default_factory=list)

    n = Node()
    n.children.append(n)
    assert repr(n).endswith("Node(children=[...])")


# Module level: pickle finds a class by its module and name.
ItemDc = declare(dataclasses.dataclass, dataclasses.field, frozen=True, slots=True)
ItemDc.__qualname__ = ItemDc.__name__ = "ItemDc"
ItemRec = declare(record, field, frozen=True, slots=True, weakref_slot=True)
ItemRec.__qualname__ = ItemRec.__name__ = "ItemRec"
PlainRec = declare(record, field, frozen=True)
PlainRec.__qualname__ = PlainRec.__name__ = "PlainRec"
MutableRec = declare(record, field, frozen=False, slots=True)
MutableRec.__qualname__ = MutableRec.__name__ = "MutableRec"


@pytest.mark.parametrize("rc", [ItemRec, PlainRec, MutableRec], ids=lambda c: c.__name__)
def test_pickle_and_copy_round_trip(rc, init_mode):
    r = rc("a", 1, "x", ["p"], extra={"k": 1}, hidden=3, loose=4)
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(r, protocol=protocol))
        assert type(back) is rc and values(back) == values(r)
    assert values(copy.copy(r)) == values(r) and copy.copy(r).tags is r.tags
    deep = copy.deepcopy(r)
    assert values(deep) == values(r) and deep.tags is not r.tags


def test_a_slotted_record_pickles_as_its_class_called_with_its_values():
    """The cache's form (storage/cache.FORMAT): ``(cls, values)``, nothing per field by name."""
    r = ItemRec("a", 1)
    assert r.__reduce__() == (ItemRec, tuple(values(r)))
    assert pickle.loads(pickle.dumps([r, r])) == [r, r]


def test_the_first_constructions_bind_then_the_class_compiles_its_own(monkeypatch):
    monkeypatch.setattr(records, "COMPILE_AFTER", 3)
    _dc, rc = pair(frozen=True, slots=True)
    first = rc.__init__
    built = [rc("a", n) for n in range(3)]
    assert rc.__init__ is first  # not compiled yet
    built.append(rc("a", 3))
    assert rc.__init__ is not first and rc.__init__.__qualname__.endswith("Item.__init__")
    assert [b.line for b in built] == [0, 1, 2, 3]
    assert first(object.__new__(rc), "b", 4) is None  # a reference kept to the first one calls the compiled one


# ----------------------------------------------------------------------------- generated specs
_SPEC = st.tuples(st.sampled_from(["none", "default", "factory"]), st.booleans(), st.booleans())


@hsettings(max_examples=examples(150), deadline=None)
@given(
    specs=st.lists(_SPEC, min_size=0, max_size=8),
    flags=st.sampled_from(FLAGS),
    data=st.data(),
    compiled=st.booleans(),
)
def test_generated_declarations_behave_as_dataclasses(specs, flags, data, compiled):
    """Any run of fields (required ones first), each with a default, a factory or neither, compared
    or not, shown or not: a record and a dataclass of it agree on init, ==, hash, repr and replace."""
    specs = sorted(specs, key=lambda s: s[0] != "none")  # required fields first
    old = records.COMPILE_AFTER
    records.COMPILE_AFTER = 0 if compiled else 10**9
    try:
        made = []
        for decorator, make_field in ((dataclasses.dataclass, dataclasses.field), (record, field)):
            namespace: dict[str, Any] = {"__annotations__": {}, "__module__": __name__, "__qualname__": "Gen"}
            for i, (kind, compare, shown) in enumerate(specs):
                name = f"f{i}"
                namespace["__annotations__"][name] = "Any"
                how: dict[str, Any] = {"default": -i} if kind == "default" else {}
                how.update({"default_factory": lambda i=i: [i]} if kind == "factory" else {})
                if kind != "none" or not compare or not shown:
                    namespace[name] = make_field(compare=compare, repr=shown, **how)
            made.append(decorator(**flags)(type("Gen", (), namespace)))
        dc, rc = made
        required = sum(kind == "none" for kind, _, _ in specs)
        args = data.draw(st.lists(st.integers(-3, 3), min_size=required, max_size=len(specs)))
        other = data.draw(st.lists(st.integers(-3, 3), min_size=required, max_size=len(specs)))
        d, r, d2, r2 = dc(*args), rc(*args), dc(*other), rc(*other)
        assert values(r) == values(d) and repr(r) == repr(d)
        assert (r == r2) is (d == d2) and (r != r2) is (d != d2)
        if flags.get("frozen"):
            hashable = all(not isinstance(v, list) for v, (_, compare, _) in zip(values(d), specs) if compare)
            if hashable:
                assert hash(r) == hash(d)
        else:
            assert rc.__hash__ is None
        if specs:
            change = {"f0": 99}
            assert values(replace(r, **change)) == values(dataclasses.replace(d, **change))
        assert values(copy.copy(r)) == values(r)
    finally:
        records.COMPILE_AFTER = old


# ----------------------------------------------------------------------------- scars' own records
def _modules() -> list[Any]:
    import scars.core
    import scars.tui

    out = []
    for package in (scars.core, scars.tui):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if ".demo" not in info.name and not info.name.endswith("__main__"):
                out.append(importlib.import_module(info.name))
    return out


def _scars_records() -> list[type]:
    found = {}
    for module in _modules():
        for value in vars(module).values():
            if isinstance(value, type) and "__record__" in value.__dict__ and value.__module__ == module.__name__:
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


SCARS_RECORDS = _scars_records()
# What a class checks in __post_init__: a valid value for it.
VALID = {"channel": "app"}


def test_every_scars_value_class_is_a_record():
    assert len(SCARS_RECORDS) >= 70
    made_by_dataclasses = [
        f"{m.__name__}.{v.__qualname__}"
        for m in _modules()
        for v in vars(m).values()
        if isinstance(v, type) and v.__module__ == m.__name__ and dataclasses.is_dataclass(v)
    ]
    assert made_by_dataclasses == []


@pytest.mark.parametrize("cls", SCARS_RECORDS, ids=lambda c: f"{c.__module__.removeprefix('scars.')}.{c.__qualname__}")
def test_each_scars_record_round_trips_through_pickle_and_replace(cls):
    names = fields(cls)
    obj = cls(**{name: VALID.get(name, f"{name}-value") for name in names})
    back = pickle.loads(pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(back) is cls and [getattr(back, n) for n in names] == [getattr(obj, n) for n in names]
    assert back == obj and copy.copy(obj) == obj
    last = names[-1]
    changed = replace(obj, **{last: VALID.get(last, "changed")})
    assert getattr(changed, last) == VALID.get(last, "changed")
    assert [getattr(changed, n) for n in names[:-1]] == [getattr(obj, n) for n in names[:-1]]
    assert repr(obj).startswith(f"{cls.__qualname__}(")
