"""What is remembered about each pane between calls: its platform and its last command.

One file, ``context.json`` (mode 0600) in the runtime directory, maps a pane's key (the
name of its runtime directory, ``pane-3``) to its facts. Writers hold an ``flock`` on the
runtime directory itself and replace the file atomically, so parallel calls in
different panes never lose each other's facts and a reader never sees half a file.
Facts of panes that no longer exist are dropped by :func:`prune`. Each pane's facts name
the tmux server they were learnt on (``server``: its start time and pid, as
:attr:`~tmux_bridge.pane.info.PaneInfo.server`): a restarted server reuses pane ids, so
the first call in a pane of a new server drops what was known of the old one
(:func:`renew_pane`), and :func:`facts_of` gives nothing for facts of another server.
Live facts (what is in front, the directory) are never stored: they are read fresh.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from typing import Any

from ..infra.runtime import atomic_write, usable_private_dir

CONTEXT_FILE = "context.json"
# What is known of a host's tools (flavours, GNU variants, package manager: see
# tmux_bridge/text/facts.py) is kept under ``host:USER@HOSTNAME`` and probed again once it
# is older than this many seconds.
HOST_PREFIX = "host:"
TOOLS_MAX_AGE = 3600.0
MAX_COMMAND = 500  # characters of a last command kept

Facts = dict[str, Any]


def read_context(directory: str) -> dict[str, Facts]:
    """Every pane's facts; empty when there are none (or the file is unreadable)."""
    try:
        with open(os.path.join(directory, CONTEXT_FILE), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}


def update_pane(directory: str, key: str, facts: Facts) -> None:
    """Merge ``facts`` into pane ``key``'s. Never fails a call: a context that cannot be
    written, or whose directory is not our own private one, is skipped."""
    if "last_command" in facts and isinstance(facts["last_command"], dict):
        command = str(facts["last_command"].get("command", ""))
        if len(command) > MAX_COMMAND:
            facts["last_command"]["command"] = command[:MAX_COMMAND] + "..."
    if not usable_private_dir(directory):
        return
    with contextlib.suppress(OSError), _locked(directory):
        context = read_context(directory)
        context[key] = {**context.get(key, {}), **facts}
        _write(directory, context)


def renew_pane(directory: str, key: str, server: str) -> None:
    """Pane ``key`` is now a pane of ``server``: whatever was known of it is dropped."""
    if not usable_private_dir(directory):
        return
    with contextlib.suppress(OSError), _locked(directory):
        context = read_context(directory)
        context[key] = {"server": server}
        _write(directory, context)


def facts_of(context: dict[str, Facts], key: str, server: str) -> Facts:
    """Pane ``key``'s facts when they were learnt on ``server``; else none."""
    facts = context.get(key, {})
    return facts if facts.get("server") == server else {}


def fresh_hosts(context: dict[str, Facts], max_age: float, now: float) -> list[str]:
    """The hosts (``USER@HOSTNAME``) whose tools were probed less than ``max_age``
    seconds before ``now``."""
    found = []
    for key, facts in context.items():
        at = facts.get("at")
        if key.startswith(HOST_PREFIX) and isinstance(at, int | float) and now - at < max_age:
            found.append(key.removeprefix(HOST_PREFIX))
    return found


def prune(directory: str, alive: set[str]) -> None:
    """Drop the facts of panes whose key is not in ``alive`` (hosts' facts stay)."""
    if not usable_private_dir(directory):
        return
    with contextlib.suppress(OSError), _locked(directory):
        context = read_context(directory)
        kept = {k: v for k, v in context.items() if k in alive or k.startswith(HOST_PREFIX)}
        if kept != context:
            _write(directory, kept)


def _write(directory: str, context: dict[str, Facts]) -> None:
    data = json.dumps(context, ensure_ascii=False, sort_keys=True).encode("utf-8", "replace")
    atomic_write(os.path.join(directory, CONTEXT_FILE), data)


@contextlib.contextmanager
def _locked(directory: str) -> Iterator[None]:
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock
