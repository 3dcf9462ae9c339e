"""``tmux-bridge serve``: the HTTP contract v1 (and its stub mode) over the facade.

A thin face: requests are validated here (:mod:`.contract`), every action that touches
tmux goes through :class:`tmux_bridge.api.Bridge` (:mod:`.actions`), the security gates
run before any of it (:mod:`.security`), and :mod:`.serve` runs the Starlette app
(:mod:`.app`) under uvicorn. Nothing here is imported by tmux-send or by tmux-bridge's
other subcommands: the server's dependencies load only for ``serve``.
"""

from __future__ import annotations
