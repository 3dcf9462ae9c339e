"""Output that fits a model: the bounds of the tools' ``max_output``.

A tool's result document is cut to at most ``max_output`` bytes of JSON text (default
32 KiB: Claude Code keeps a result that size inline, and moves a larger one to a file of
which the model sees a 2 KB preview). stdout and stderr are cut by the one rule of every
face (:meth:`tmux_bridge.api.Bridge.fit_document_within`): head, one cut line, tail; the
whole stream saved (0600) in ``output`` in the runtime directory, its path in
``stdout_file`` (``stderr_file``), which comes before the texts in the document; the
``read_output`` tool pages through it. The exit status and the other fields are never cut.
"""

from __future__ import annotations

DEFAULT_CAP = 32 * 1024  # bytes of a result document's JSON text
MIN_CAP, MAX_CAP = 4 * 1024, 16 * 1024 * 1024
