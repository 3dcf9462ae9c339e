"""The pytest plugin of the suite: the tmux tier marks and the private-server fixtures.

Registered once by tests/conftest.py. Every fixture here that starts a tmux server
gives the test its own (see :mod:`tests.support.pane`); none touches the user's own.
"""

from __future__ import annotations

import compileall
import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator

import pytest

from .pane import SHELLS, MakeBridge, TestPane, private_pane
from .postgres import postgres  # noqa: F401  (a fixture: psql's server)
from .serve import Server, running

# Fixtures that start a private tmux server, directly or through other fixtures.
TMUX_FIXTURES = frozenset({"bridge", "shared_bridge", "make_bridge"})
# The test files of the portable pass (docs/development.md): those that exercise process
# facts (the shell, the program in front, input waits, busy panes, half-typed lines,
# interrupts, REPLs, far shells, agents, jobs), run again with TMUX_BRIDGE_PROCESS=portable.
PROCESS_FACT_FILES = frozenset(
    {
        "test_procfacts.py", "test_send.py", "test_interrupts.py", "test_refusals.py",
        "test_agents.py", "test_repl.py", "test_posix_sh.py", "test_far_transcript.py",
        "test_jobs.py",
    }
)  # fmt: skip
PORTABLE_PASS = os.environ.get("TMUX_BRIDGE_PROCESS") == "portable"


def pytest_configure(config: pytest.Config) -> None:
    """Bytecode, where ``PYTHONDONTWRITEBYTECODE`` is set (this machine image sets it).
    An editable install then never writes any, and every tmux-send, serve and mcp the
    tests start would compile the modules it imports again (``tmux-send -- true``: 175 ms
    of CPU against 50 ms); a regular install is compiled by pip, so compiling tmux_bridge
    once tests what a user runs. The xdist controller compiles it (a worker has
    ``workerinput``; modules compiled and unchanged are left alone), and each pytest
    process keeps the test modules it rewrites (13 s of collection against 4)."""
    sys.dont_write_bytecode = False
    if not hasattr(config, "workerinput"):
        spec = importlib.util.find_spec("tmux_bridge")
        for package in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(package, quiet=1)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the tiers, so ``-m "not tmux"`` runs the pure tests alone: ``tmux`` for every
    test using a bridge fixture (``fixturenames`` includes fixtures' own fixtures),
    ``repl`` for the REPL tests, ``process_facts`` for the portable pass's files. In that
    pass (``TMUX_BRIDGE_PROCESS=portable``), a test marked ``linux_facts(reason)`` is
    skipped with its reason."""
    for item in items:
        if item.path.name in PROCESS_FACT_FILES:
            item.add_marker(pytest.mark.process_facts)
        linux_only = item.get_closest_marker("linux_facts")
        if PORTABLE_PASS and linux_only is not None:
            item.add_marker(pytest.mark.skip(reason=f"a Linux-only fact: {linux_only.args[0]}"))
        known = item.get_closest_marker("portable_bug")
        if PORTABLE_PASS and known is not None:
            item.add_marker(pytest.mark.xfail(reason=f"portable path: {known.args[0]}"))
        if TMUX_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.tmux)
        if item.path.name == "test_repl.py":
            item.add_marker(pytest.mark.repl)


@pytest.fixture(autouse=True)
def _no_outer_tmux(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer running the tests inside tmux must not target their own session."""
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.delenv("TMUX_PANE", raising=False)


@pytest.fixture
def make_bridge() -> Iterator[MakeBridge]:
    """A factory: a private server (not started) for the given shell, optionally with
    the test's own rc files (see :class:`TestPane`)."""
    with contextlib.ExitStack() as stack:

        def make(shell: str, rc_files: dict[str, str] | None = None) -> TestPane:
            return stack.enter_context(private_pane(shell, rc_files))

        yield make


@pytest.fixture(params=SHELLS)
def bridge(request: pytest.FixtureRequest) -> Iterator[TestPane]:
    """A running bridge session with a bash, zsh or fish pane, at its prompt."""
    with private_pane(request.param) as b:
        b.start()
        yield b


@pytest.fixture(scope="module", params=SHELLS)
def shared_bridge(request: pytest.FixtureRequest) -> Iterator[TestPane]:
    """One bridge per shell for a whole module of stateless cases (faster)."""
    with private_pane(request.param) as b:
        b.start()
        yield b


@pytest.fixture(scope="module")
def pane() -> Iterator[TestPane]:
    """One running bash bridge session for a whole module (the servers' tests); a module
    may define its own ``pane`` instead."""
    with private_pane("bash") as b:
        b.start()
        yield b


@pytest.fixture(scope="module")
def server(pane: TestPane) -> Iterator[Server]:
    """``tmux-bridge serve`` on the module's :func:`pane`, for the whole module; a module
    may define its own ``server`` (other options) instead."""
    with running(pane.env) as started:
        yield started
