"""``NamedTuple`` for the package's record classes, built without ``typing``'s checks.

``class Point(NamedTuple): x: int`` gives the class :func:`collections.namedtuple` would,
with the body's methods, properties and docstring, exactly as :class:`typing.NamedTuple`
does, but without checking each field's annotation: with ``from __future__ import
annotations`` every annotation is a string, and ``typing`` compiles each one into a
``ForwardRef`` when the class is made. A plain command of tmux-send makes about thirty
such classes on its way (about 4 ms of its start-up, measured); this makes them in a
quarter of that. Type checkers see :class:`typing.NamedTuple` itself.

The annotations stay the strings they were written as (``__annotations__``), which
:func:`typing.get_type_hints` reads as it reads any class's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import NamedTuple as NamedTuple
else:
    import collections

    # what typing's own NamedTuple refuses, or sets itself (Python 3.10-3.13)
    _REFUSED = frozenset(
        {"__new__", "__init__", "__slots__", "__getnewargs__", "_fields", "_field_defaults",
         "_make", "_replace", "_asdict", "_source"}
    )  # fmt: skip
    _OWN = frozenset(
        {"__module__", "__name__", "__annotations__", "__qualname__", "__orig_bases__",
         "__static_attributes__", "__firstlineno__"}
    )  # fmt: skip

    class _Maker(type):
        def __new__(cls, typename: str, bases: tuple[type, ...], ns: dict[str, Any]) -> type:
            if not bases:  # the base itself
                return type.__new__(cls, typename, bases, ns)
            if bases != (NamedTuple,):
                raise TypeError(f"{typename}: a NamedTuple class takes no other base")
            fields = ns.get("__annotations__", {})
            defaults = [ns[name] for name in fields if name in ns]
            if any(name not in ns for name in list(fields)[len(fields) - len(defaults) :]):
                raise TypeError(f"{typename}: a field without a default follows one with")
            made = collections.namedtuple(
                typename, list(fields), defaults=defaults, module=ns["__module__"]
            )
            made.__annotations__ = dict(fields)
            for key, value in ns.items():
                if key in _REFUSED:
                    raise AttributeError(f"{typename}: cannot set {key} on a NamedTuple")
                if key not in _OWN and key not in fields:
                    setattr(made, key, value)
            return made

    class NamedTuple(metaclass=_Maker):
        """The base of a record class (see the module's docstring)."""
