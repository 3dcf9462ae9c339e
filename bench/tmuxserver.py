"""A private tmux server for the benchmark, and one bridge pane per shell on it.

Nothing here touches the user's own tmux server or bridge: the server lives under its own
short ``TMUX_TMPDIR``, the shells get their own ``HOME`` (rc files giving a plain ``$ ``
prompt), each bridge session its own ``TMUX_BRIDGE_DIR`` and ``TMUX_BRIDGE_SESSION``, and
``TMUX``/``TMUX_PANE`` are removed from every environment passed on. The server is killed
when the :func:`private_server` context ends, whatever the reason.

All times are in seconds unless a name says otherwise.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.support
from tests.support import tmuxserver as shared  # the private server the tests use too

BIN = Path(sys.executable).parent
TMUX_SEND = BIN / "tmux-send"
TMUX_BRIDGE = BIN / "tmux-bridge"

PROMPT_TIMEOUT = 15.0  # seconds a shell may take to show its prompt
TMUX_TIMEOUT = 10.0  # seconds any single tmux client call may take
POLL_INTERVAL = 0.005  # seconds between two looks at the pane

_channels = itertools.count()


class BenchError(Exception):
    """A benchmark step could not be carried out (not a missed target)."""


def fresh_channel() -> str:
    """A tmux wait-for channel name never used before in this process."""
    return f"tbb-{os.getpid()}-{next(_channels)}"


class PrivateServer:
    """One private tmux server (not started until the first pane is opened)."""

    def __init__(self, root: Path, bytecode_cache: bool = True) -> None:
        self.root = root
        self.home = root / "home"
        self.tmpdir = root / "tmux"
        env = shared.prepare(root)
        # Nothing is ever written next to the sources: either compiled modules go to a
        # private cache (as after a normal install, they are compiled once, not at every
        # start), or none are written at all.
        if bytecode_cache:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
        else:
            env.pop("PYTHONPYCACHEPREFIX", None)
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.env = env
        self.panes: list[Pane] = []
        self.pid: int | None = None  # the server's process, once a pane is open

    def open_pane(self, shell: str) -> Pane:
        """Create a bridge session running ``shell`` with the real ``tmux-bridge --detach``
        and wait for its prompt. Raises :class:`BenchError` when that fails."""
        path = shutil.which(shell)
        if path is None:
            raise BenchError(f"{shell} is not installed")
        session = f"tbb-{shell}"
        env = dict(self.env)
        env.update(
            SHELL=path,
            TMUX_BRIDGE_SESSION=session,
            TMUX_BRIDGE_DIR=str(self.root / f"run-{shell}"),
        )
        result = subprocess.run(
            [str(TMUX_BRIDGE), "--detach"],
            env=env,
            stdin=subprocess.DEVNULL,  # no terminal: tmux's default pane size, reproducible
            capture_output=True,
            text=True,
            timeout=PROMPT_TIMEOUT,
            check=False,
        )
        if result.returncode != 0 or result.stdout.strip() != session:
            raise BenchError(
                f"tmux-bridge --detach failed ({result.returncode}): {result.stderr.strip()}"
            )
        pane = Pane(shell, session, env)
        self.panes.append(pane)
        if self.pid is None:
            self.pid = int(pane.tmux("display-message", "-p", "#{pid}").strip())
        pane.wait_for_prompt()
        return pane

    def kill(self) -> None:
        """Kill the server (and every shell and command in it); quiet if none runs. A
        server still there after ``kill-server`` (seen once after a full run: its socket
        then goes with the directory, and nothing could reach it) gets SIGKILL."""
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            shared.run_tmux(self.env, ("kill-server",), TMUX_TIMEOUT)
        if self.pid is None:
            return
        deadline = time.monotonic() + TMUX_TIMEOUT
        while _alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # polling a process we cannot wait for (not our child)
        if _alive(self.pid):
            print(f"the tmux server {self.pid} outlived kill-server: SIGKILL", file=sys.stderr)
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` is there and not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rpartition(b")")[2].split()[0] != b"Z"
    except OSError:
        return False


@contextlib.contextmanager
def private_server(bytecode_cache: bool = True) -> Iterator[PrivateServer]:
    """A private server in a short temporary directory (Unix socket paths are limited to
    108 bytes); killed and removed on exit, also on error or Ctrl-C. With
    ``bytecode_cache``, Python processes started by the benchmark (tmux-send included)
    cache compiled modules in a private directory even if PYTHONDONTWRITEBYTECODE is set;
    without it, they write none (modules lacking a .pyc are compiled at every start)."""
    with shared.private_root("tbb-") as root:
        server = PrivateServer(root, bytecode_cache)
        try:
            yield server
        finally:
            server.kill()


class Pane:
    """One bridge session (one pane, one shell) on the private server."""

    def __init__(self, shell: str, session: str, env: Mapping[str, str]) -> None:
        self.shell = shell
        self.session = session
        self.env = dict(env)
        self.target = f"={session}:"
        self.broken = False  # set when the pane could not be brought back to its prompt

    # --- tmux ------------------------------------------------------------------------

    def tmux(self, *args: str, check: bool = True, timeout: float = TMUX_TIMEOUT) -> str:
        """Run ``tmux -L default ARGS`` on the private server; its stdout."""
        try:
            code, out, err = shared.run_tmux(self.env, args, timeout)
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"tmux {args[0]} took more than {timeout:g} s") from exc
        if check and code != 0:
            raise BenchError(f"tmux {' '.join(args)} failed: {err.strip()}")
        return out

    def screen(self) -> str:
        """The pane's visible screen as text."""
        return self.tmux("capture-pane", "-p", "-t", self.target, check=False)

    def size(self) -> str:
        """The pane's size as ``COLUMNSxROWS``."""
        fmt = "#{pane_width}x#{pane_height}"
        return self.tmux("display-message", "-p", "-t", self.target, fmt).strip()

    def at_prompt(self) -> bool:
        """Whether the last non-empty line on screen is the bare ``$`` prompt."""
        return shared.at_prompt(self.screen())

    def wait_for_prompt(self, timeout: float = PROMPT_TIMEOUT) -> None:
        """Poll the screen until the shell shows its prompt; :class:`BenchError` after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not self.at_prompt():
            if time.monotonic() > deadline:
                raise BenchError(
                    f"{self.shell}: no prompt after {timeout:g} s; the pane shows:\n"
                    + self.screen().rstrip()
                )
            time.sleep(POLL_INTERVAL)

    def round_trip(self, command: str, timeout: float = 120.0) -> float:
        """Seconds to type `` COMMAND; tmux wait-for -S CH`` + Enter into the pane and see
        the channel signalled: the pane's own cost of running ``command``, no tmux-send.

        The shell must be at its prompt. Works in bash, zsh and fish alike.
        """
        channel = fresh_channel()
        started = time.perf_counter()
        self.tmux(
            "send-keys", "-t", self.target, f" {command}; tmux wait-for -S {channel}", "Enter"
        )
        self.tmux("wait-for", channel, timeout=timeout)
        return time.perf_counter() - started

    def recover(self) -> None:
        """After a failed step: Ctrl-C whatever runs and wait for the prompt; marks the
        pane broken when the prompt does not come back."""
        try:
            self.tmux("send-keys", "-t", self.target, "C-c", check=False)
            self.wait_for_prompt(timeout=5.0)
        except BenchError:
            self.broken = True

    # --- tmux-send -------------------------------------------------------------------

    def send_argv(self, args: Sequence[str]) -> list[str]:
        """The argv of ``tmux-send ARGS``."""
        return [str(TMUX_SEND), *args]

    def send(
        self, *args: str, timeout: float = 120.0, data: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``tmux-send ARGS`` to completion, capturing stdout and stderr; ``data`` on
        its stdin (nothing when ``None``)."""
        try:
            return subprocess.run(
                self.send_argv(args),
                env=self.env,
                input=b"" if data is None else data,
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise BenchError(f"tmux-send {' '.join(args)} took more than {timeout:g} s") from exc

    def start_send(
        self, *args: str, stdout: int = subprocess.PIPE, stderr: int = subprocess.PIPE
    ) -> subprocess.Popen[bytes]:
        """Start ``tmux-send ARGS`` in the background."""
        return subprocess.Popen(
            self.send_argv(args),
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )


def timed_run(argv: Sequence[str], env: Mapping[str, str], timeout: float = 60.0) -> float:
    """Seconds of wall time to run ``argv`` to completion (output discarded); raises
    :class:`BenchError` unless it exits 0."""
    started = time.perf_counter()
    try:
        result = subprocess.run(
            list(argv),
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise BenchError(f"{argv[0]} took more than {timeout:g} s") from exc
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise BenchError(
            f"{' '.join(argv)} exited {result.returncode}: {result.stderr.decode().strip()}"
        )
    return elapsed


@contextlib.contextmanager
def reaped(procs: list[subprocess.Popen[bytes]]) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Kill and wait for every process still in ``procs`` when the block raises (error,
    Ctrl-C), so no tmux-send outlives the benchmark."""
    try:
        yield procs
    except BaseException:
        for proc in procs:
            if proc.returncode is None:
                with contextlib.suppress(OSError):
                    proc.kill()
        for proc in procs:
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                proc.communicate(timeout=5)
        raise
