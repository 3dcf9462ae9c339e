"""``NamedTuple`` for the package's record classes, made without compiling anything.

``class Point(NamedTuple): x: int`` gives a class that behaves as the one
:class:`typing.NamedTuple` gives (a tuple subclass with the fields as properties,
``_fields``, ``_field_defaults``, ``_make``, ``_replace``, ``_asdict``, the same
``repr``, equality, hashing and pickling, the body's methods, properties and docstring),
refusing what typing refuses. It is made differently: ``typing`` compiles each field's
annotation (a string, under ``from __future__ import annotations``) into a ``ForwardRef``,
and :func:`collections.namedtuple` compiles a ``__new__`` for each class; here every
class shares one ``__new__`` that binds its arguments by the class's fields, and the
methods are shared too. A plain command of tmux-send makes about thirty such classes on
its way: typing's way took about 4 ms of its start-up, namedtuple's about 3 ms (both
measured), this a fraction of one. Type checkers see :class:`typing.NamedTuple` itself.

The annotations stay the strings they were written as (``__annotations__``), which
:func:`typing.get_type_hints` reads as it reads any class's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    import sys

    try:
        from _collections import _tuplegetter
    except ImportError:  # not CPython: a property does the same, slower
        from operator import itemgetter

        def _tuplegetter(index: int, doc: str) -> Any:
            return property(itemgetter(index), doc=doc)

    # what typing's own NamedTuple refuses, or sets itself (Python 3.10-3.13)
    _REFUSED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
         "_make", "_replace", "_asdict", "_source"}
    )  # fmt: skip
    _OWN = frozenset(
        {"__module__", "__name__", "__annotations__", "__qualname__", "__orig_bases__",
         "__static_attributes__", "__firstlineno__"}
    )  # fmt: skip
    _tuple_new = tuple.__new__

    def _new(cls: Any, *args: Any, **kwargs: Any) -> Any:
        """Every record class's ``__new__``: the fields by position, then by name, then
        their defaults, refused as a function with these parameters would refuse them."""
        fields: tuple[str, ...] = cls._fields
        if not kwargs and len(args) == len(fields):
            return _tuple_new(cls, args)
        if len(args) > len(fields):
            given = len(args)
            raise TypeError(f"{cls.__name__}() takes {len(fields)} arguments, {given} given")
        values = list(args)
        defaults: dict[str, Any] = cls._field_defaults
        for name in fields[len(args) :]:
            if name in kwargs:
                values.append(kwargs.pop(name))
            elif name in defaults:
                values.append(defaults[name])
            else:
                raise TypeError(f"{cls.__name__}() missing required argument {name!r}")
        for name in kwargs:
            if name in fields:
                raise TypeError(f"{cls.__name__}() got multiple values for argument {name!r}")
            raise TypeError(f"{cls.__name__}() got an unexpected keyword argument {name!r}")
        return _tuple_new(cls, values)

    def _make(cls: Any, iterable: Any) -> Any:
        """A record from a sequence or iterable of its fields' values."""
        made = _tuple_new(cls, iterable)
        if len(made) != len(cls._fields):
            raise TypeError(f"Expected {len(cls._fields)} arguments, got {len(made)}")
        return made

    def _replace(self: Any, /, **changes: Any) -> Any:
        """A new record with the named fields given new values."""
        made = self._make(map(changes.pop, self._fields, self))
        if changes:
            raise ValueError(f"Got unexpected field names: {list(changes)!r}")
        return made

    def _repr(self: Any) -> str:
        pairs = ", ".join(
            f"{name}={value!r}" for name, value in zip(self._fields, self, strict=True)
        )
        return f"{self.__class__.__name__}({pairs})"

    def _asdict(self: Any) -> dict[str, Any]:
        """A new dict of the field names and their values."""
        return dict(zip(self._fields, self, strict=True))

    def _getnewargs(self: Any) -> tuple[Any, ...]:
        """The record as a plain tuple, for copy and pickle."""
        return tuple(self)

    _repr.__name__ = "__repr__"
    _getnewargs.__name__ = "__getnewargs__"
    _SHARED = {
        "__slots__": (),
        "__new__": staticmethod(_new),
        "_make": classmethod(_make),
        "_replace": _replace,
        "__repr__": _repr,
        "_asdict": _asdict,
        "__getnewargs__": _getnewargs,
    }
    _DOCS: list[str] = []  # "Alias for field number N", made once per N

    def _field_doc(index: int) -> str:
        while len(_DOCS) <= index:
            _DOCS.append(sys.intern(f"Alias for field number {len(_DOCS)}"))
        return _DOCS[index]

    class _Maker(type):
        def __new__(cls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
            if not bases:  # the base itself
                return type.__new__(cls, typename, bases, ns)
            if bases != (NamedTuple,):
                raise TypeError(f"{typename}: a NamedTuple class takes no other base")
            annotations = ns.get("__annotations__", {})
            fields = tuple(annotations)
            defaults = {name: ns[name] for name in fields if name in ns}
            if any(name not in ns for name in fields[len(fields) - len(defaults) :]):
                raise TypeError(f"{typename}: a field without a default follows one with")
            if any(name.startswith("_") for name in fields):
                raise ValueError(f"{typename}: a field name cannot start with an underscore")
            space: dict[str, Any] = {
                **_SHARED,
                "__doc__": f"{typename}({', '.join(fields)})",
                "__module__": ns["__module__"],
                "__annotations__": dict(annotations),
                "_fields": fields,
                "_field_defaults": defaults,
                "__match_args__": fields,
            }
            for index, name in enumerate(fields):
                space[name] = _tuplegetter(index, _field_doc(index))
            for key, value in ns.items():
                if key in _REFUSED:
                    raise AttributeError(f"{typename}: cannot set {key} on a NamedTuple")
                if key not in _OWN and key not in fields:
                    space[key] = value
            return type(typename, (tuple,), space)

    class NamedTuple(metaclass=_Maker):
        """The base of a record class (see the module's docstring)."""
