"""Which terminal a call is for: the tmux server, the session, the pane, and the runtime
directory. Explicit, so that a server or a program can drive several panes (or several
tmux servers) from one process; the CLIs build it from the environment.

A face keeps its own private files in the runtime directory too (the server's token,
the MCP server's capped output): :func:`ensure_private_dir` and
:func:`write_private_file` are public here for that."""

from __future__ import annotations

from .infra.runtime import ensure_private_dir as ensure_private_dir
from .infra.runtime import runtime_dir, session_name
from .infra.runtime import write_private_file as write_private_file
from .infra.tmux import Tmux
from .tuples import NamedTuple


class Target(NamedTuple):
    """A terminal to drive.

    ``pane`` is ``None`` for the bridge pane of ``session`` (the one ``tmux-bridge``
    marked, else the active one), or a tmux target naming one pane: a pane id (``%3``),
    ``WINDOW.PANE`` inside ``session``, or ``SESSION:WINDOW.PANE``. ``runtime_dir`` is
    the private directory (mode 0700) for the files a call sources and what is
    remembered per pane.
    """

    tmux: Tmux
    session: str
    pane: str | None
    runtime_dir: str

    @classmethod
    def from_env(
        cls, pane: str | None = None, socket: str | None = None, timeout: float | None = None
    ) -> Target:
        """Today's defaults: the default tmux server of ``$TMUX_TMPDIR`` (or ``socket``,
        a name or a path), ``$TMUX_BRIDGE_SESSION``, ``$TMUX_BRIDGE_DIR``. ``timeout``
        bounds each tmux invocation (see :class:`Tmux`)."""
        path = socket if socket and "/" in socket else None
        server = Tmux(socket_name=None if path else socket, socket_path=path, timeout=timeout)
        return cls(server, session_name(), pane, runtime_dir())

    def with_pane(self, pane: str | None) -> Target:
        """The same server, session and runtime directory, another pane."""
        return self._replace(pane=pane)
