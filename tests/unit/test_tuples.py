"""The package's NamedTuple base builds the class typing.NamedTuple builds, only faster.

Each record class is written twice, once on :class:`typing.NamedTuple` and once on ours,
and every behaviour a caller can see is compared; the source of the package is checked to
build its record classes on ours (tmux-send's start-up made about thirty of them with
typing's checks, about 4 ms).
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path
from typing import Any

import pytest

import tmux_bridge
from tmux_bridge import tuples

PACKAGE = Path(tmux_bridge.__file__).resolve().parent


def _pair(source: str) -> tuple[Any, Any]:
    """The class in ``source`` (named ``Record``) made on typing's base and on ours."""
    made = []
    for base in (typing.NamedTuple, tuples.NamedTuple):
        space: dict[str, Any] = {"Base": base, "__name__": __name__}
        code = "from __future__ import annotations\n" + source
        exec(compile(code, "<record>", "exec"), space)
        made.append(space["Record"])
    return made[0], made[1]


RECORD = '''
class Record(Base):
    """A record of two fields."""

    pane: str
    count: int | None = None
    tags: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return f"{self.pane}:{self.count}"

    def doubled(self) -> int:
        return 2 * (self.count or 0)

    LIMIT = 5
'''


def test_a_record_behaves_as_typings() -> None:
    theirs, ours = _pair(RECORD)
    for cls in (theirs, ours):
        assert issubclass(cls, tuple)
    assert ours._fields == theirs._fields == ("pane", "count", "tags")
    assert ours._field_defaults == theirs._field_defaults
    assert ours.__doc__ == theirs.__doc__ == "A record of two fields."
    assert ours.__name__ == theirs.__name__ and ours.__module__ == theirs.__module__
    assert ours.LIMIT == theirs.LIMIT == 5
    a, b = theirs("%1", 3), ours("%1", 3)
    assert repr(a) == repr(b) == "Record(pane='%1', count=3, tags=())"
    assert tuple(a) == tuple(b) and a == b and hash(a) == hash(b)
    assert a.label == b.label == "%1:3" and a.doubled() == b.doubled() == 6
    assert b._replace(count=4) == ours("%1", 4) and b._asdict() == a._asdict()
    assert ours._make(["%2", None, ("x",)]) == ours("%2", None, ("x",))
    with pytest.raises(TypeError):
        ours()  # a field without a default
    with pytest.raises(TypeError):
        ours("%1", 1, (), "more")


def test_type_hints_read_the_same() -> None:
    theirs, ours = _pair(RECORD)
    space = {"int": int, "str": str}
    assert typing.get_type_hints(ours, space) == typing.get_type_hints(theirs, space)


@pytest.mark.parametrize(
    "source",
    [
        "class Record(Base):\n    a: int = 1\n    b: int\n",  # a default, then none
        "class Record(Base):\n    a: int\n    def _replace(self): ...\n",
        "class Record(Base):\n    a: int\n    __slots__ = ()\n",
        "class Record(Base):\n    a: int\n    _fields = ()\n",
    ],
)
def test_what_typing_refuses_is_refused(source: str) -> None:
    for base in (typing.NamedTuple, tuples.NamedTuple):
        space: dict[str, Any] = {"Base": base, "__name__": __name__}
        with pytest.raises((TypeError, AttributeError)):
            exec(compile("from __future__ import annotations\n" + source, "<r>", "exec"), space)


def test_another_base_is_refused() -> None:
    class Mixin:
        pass

    with pytest.raises(TypeError):

        class Record(tuples.NamedTuple, Mixin):  # type: ignore[misc]
            a: int


def test_the_package_builds_its_records_on_its_own_base() -> None:
    """No module of ours takes NamedTuple from typing (tuples.py re-exports it only for
    type checkers)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "tuples.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            taken = (
                isinstance(node, ast.ImportFrom)
                and node.module == "typing"
                and any(alias.name == "NamedTuple" for alias in node.names)
            )
            if taken or (isinstance(node, ast.Attribute) and node.attr == "NamedTuple"):
                found.append(str(path.relative_to(PACKAGE)))
    assert found == []


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        (("%1",), {}),
        ((), {"pane": "%1"}),
        (("%1",), {"tags": ("a",)}),
        ((), {"tags": ("a",), "pane": "%2", "count": 0}),
        (("%1", 2, ("b",)), {}),
        (("%1", 2), {"count": 3}),  # a field given twice
        ((), {"count": 3}),  # a field without a default left out
        (("%1",), {"colour": "red"}),  # no such field
        (("%1", 2, (), 4), {}),  # one too many
    ],
)
def test_arguments_bind_as_typings(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Each class is made with one shared ``__new__`` that binds by the class's fields:
    what it makes, and what it refuses, is what typing's class makes and refuses."""
    theirs, ours = _pair(RECORD)
    try:
        expected: Any = tuple(theirs(*args, **kwargs))
    except TypeError:
        expected = TypeError
    if expected is TypeError:
        with pytest.raises(TypeError):
            ours(*args, **kwargs)
    else:
        assert tuple(ours(*args, **kwargs)) == expected


def test_records_copy_pickle_and_match_as_typings() -> None:
    import copy
    import pickle

    theirs, ours = _pair(RECORD)
    record = ours("%1", 2, ("x",))
    assert copy.copy(record) == record and copy.deepcopy(record) == record
    assert ours.__match_args__ == theirs.__match_args__ == ("pane", "count", "tags")
    assert ours.pane.__doc__ == theirs.pane.__doc__
    assert record._fields == theirs._fields
    with pytest.raises(ValueError):
        record._replace(colour="red")
    with pytest.raises(TypeError):
        ours._make(["%1"])
    match record:
        case ours(pane, count, tags):
            assert (pane, count, tags) == ("%1", 2, ("x",))
        case _:
            pytest.fail("the record did not match its own class")
    # a record of the package, pickled and read back (its class is found by its module)
    from tmux_bridge.infra.tmux import TmuxResult

    result = TmuxResult(("tmux",), 0, "out", "")
    assert pickle.loads(pickle.dumps(result)) == result
    assert type(pickle.loads(pickle.dumps(result))) is TmuxResult


def test_a_field_name_with_an_underscore_is_refused() -> None:
    for base in (typing.NamedTuple, tuples.NamedTuple):
        space: dict[str, Any] = {"Base": base, "__name__": __name__}
        with pytest.raises(ValueError):
            exec(
                compile("class Record(Base):\n    _a: int\n", "<r>", "exec"),
                space,
            )
