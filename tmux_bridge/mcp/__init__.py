"""``tmux-bridge mcp``: the bridge as an MCP server (the official Python SDK's ``MCPServer``).

A thin face like ``tmux_bridge.server``: every tool is one call of
:class:`tmux_bridge.api.Bridge` on a worker thread with its own
:class:`~tmux_bridge.cancel.Cancel`, and its structured content is the document
``tmux-send --json`` prints. Modules: ``texts`` (the tool table, descriptions and advice
for a model, no SDK), ``cap`` (output that fits a model, no SDK), ``live`` (worker
threads, cancellation and progress), ``schemas`` (output schemas), ``tools`` (the tools),
``server`` (building the server, stdio). Imported only by ``tmux-bridge mcp`` and
``tmux-bridge serve``.
"""

from __future__ import annotations
