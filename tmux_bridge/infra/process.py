"""The process facts this machine gives: ``/proc`` where there is one, else POSIX tools.

``TMUX_BRIDGE_PROCESS=linux`` or ``portable`` forces the choice (the tests run a pass
with ``portable`` on Linux). Only the chosen implementation is imported: on Linux
tmux-send's start-up pays for one environment lookup and one ``stat``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .procfacts import ProcessFacts

CHOICES = ("linux", "portable")


def choose(forced: str | None = None) -> ProcessFacts:
    """The implementation: ``forced`` (else ``TMUX_BRIDGE_PROCESS``), else ``linux``
    when ``/proc`` shows this process, else ``portable``."""
    wanted = forced if forced is not None else os.environ.get("TMUX_BRIDGE_PROCESS", "")
    if wanted == "portable" or (wanted != "linux" and not os.path.exists("/proc/self/stat")):
        from . import procps

        portable: ProcessFacts = procps
        return portable
    from . import procfs

    linux: ProcessFacts = procfs
    return linux


proc: ProcessFacts = choose()
