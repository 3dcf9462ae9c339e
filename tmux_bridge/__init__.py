"""tmux-bridge: an agent runs commands in a terminal that a person watches and can type into.

The library API is :class:`Bridge` (the facade every face uses), :class:`Target` (which
tmux server, session, pane and runtime directory), :class:`RunOptions`,
:class:`CallResult`, :class:`Cancel`, :class:`Origin` (who sends a message), the
:class:`BridgeError` family, and :func:`to_document` (the JSON document of a result).
Names load on first use, so importing the package costs nothing on tmux-send's start-up
path.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

__all__ = [
    "Bridge",
    "BridgeError",
    "CallResult",
    "Cancel",
    "Origin",
    "RunOptions",
    "Target",
    "Tmux",
    "error_document",
    "to_document",
]

_WHERE = {
    "Bridge": "api",
    "BridgeError": "errors",
    "CallResult": "results",
    "Cancel": "cancel",
    "Origin": "api",
    "RunOptions": "results",
    "Target": "target",
    "Tmux": "infra.tmux",
    "error_document": "report",
    "to_document": "report",
}

if TYPE_CHECKING:
    from .api import Bridge, Origin
    from .cancel import Cancel
    from .errors import BridgeError
    from .infra.tmux import Tmux
    from .report import error_document, to_document
    from .results import CallResult, RunOptions
    from .target import Target


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'tmux_bridge' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{module}", __name__), name)
