"""The test pane: a private tmux server per test, real shells with predictable prompts.

Nothing here touches the user's own tmux server or bridge: every test gets its own
``TMUX_TMPDIR`` (so its own server socket), ``HOME``, runtime directory and session name,
and the server is killed at teardown. ``$TMUX`` is removed so a developer running the
tests inside tmux is not targeting their own session.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Protocol

import pexpect
import pytest

from tmux_bridge import Target, Tmux

from .tmuxserver import at_prompt, prepare, private_root, run_tmux

BIN = Path(sys.executable).parent
SHELLS = ["bash", "zsh", "fish"]
WAIT = float(os.environ.get("TMUX_BRIDGE_TEST_WAIT", "15"))  # seconds for any condition
# seconds for one tmux command or `tmux-bridge --detach`: a hung tmux fails the test
TMUX_TIMEOUT = 30.0


def shell_path(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.skip(f"{name} is not installed")
    return path


class TestPane:
    """One private tmux server with one bridge session, and ways to poke at it.

    ``rc_files`` (paths under ``HOME`` -> text) replace or add to the default rc files,
    for a test that brings its own prompt and hooks; the prompt is then no longer `$ `,
    so :meth:`wait_for_prompt` asks tmux-send itself instead.
    """

    __test__ = False  # a helper, not a test class for pytest to collect

    def __init__(self, root: Path, shell: str, rc_files: dict[str, str] | None = None) -> None:
        self.root = root
        self.shell = shell
        self.own_rc_files = rc_files is not None
        self.home = root / "home"
        self.runtime = root / "run"
        self.tmpdir = root / "tmux"
        self.session = "tb-test"
        env = prepare(root, rc_files)
        env.update(
            TMUX_BRIDGE_DIR=str(self.runtime),
            TMUX_BRIDGE_SESSION=self.session,
            SHELL=shell_path(shell) if shell else env.get("SHELL", "/bin/sh"),
        )
        self.env = env
        self.client: pexpect.spawn | None = None  # the person's terminal, once attached
        self.started: list[subprocess.Popen[bytes]] = []  # start_send's, ended by kill()

    # --- processes -------------------------------------------------------------------

    def tmux(self, *args: str, check: bool = True) -> str:
        """Run one tmux command on this server; fail the test if it takes longer than
        ``TMUX_TIMEOUT`` seconds (or, with ``check``, if it fails)."""
        try:
            code, out, err = run_tmux(self.env, args, TMUX_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"tmux {' '.join(args)} did not finish within {TMUX_TIMEOUT} s")
        if check and code != 0:
            raise AssertionError(f"tmux {' '.join(args)} failed: {err}")
        return out

    def send(
        self, *args: str, input: bytes | None = None, timeout: float = 60
    ) -> subprocess.CompletedProcess[bytes]:
        """Run ``tmux-send ARGS`` to completion."""
        return subprocess.run(
            [str(BIN / "tmux-send"), *args],
            env=self.env,
            input=input if input is not None else b"",
            capture_output=True,
            timeout=timeout,
        )

    def send_text(self, *args: str, timeout: float = 60) -> tuple[int, str, str]:
        result = self.send(*args, timeout=timeout)
        return (
            result.returncode,
            result.stdout.decode("utf-8", "replace"),
            result.stderr.decode("utf-8", "replace"),
        )

    def bridge_cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``tmux-bridge ARGS`` to completion (text output)."""
        return subprocess.run(
            [str(BIN / "tmux-bridge"), *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def start_send(self, *args: str) -> subprocess.Popen[bytes]:
        """Start ``tmux-send ARGS`` in the background (ended with the server, if a failed
        test left it running: its pipes would otherwise be found open by a later test's
        garbage collection, a ``ResourceWarning`` that fails that test)."""
        proc = subprocess.Popen(
            [str(BIN / "tmux-send"), *args],
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.started.append(proc)
        return proc

    def start(self) -> None:
        """``tmux-bridge --detach``, then wait for the shell's prompt."""
        result = subprocess.run(
            [str(BIN / "tmux-bridge"), "--detach"],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=TMUX_TIMEOUT,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == self.session
        self.wait_for_prompt()

    # --- looking at the pane ---------------------------------------------------------

    @property
    def target(self) -> str:
        return f"={self.session}:"

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", self.target, check=False)

    def history(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.target, check=False)

    def pane(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.target, fmt, check=False).strip()

    def wait_for(self, predicate: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
        """Poll ``predicate`` until true; on timeout fail showing the pane."""
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                pytest.fail(f"timed out waiting for {what}; the pane shows:\n{self.screen()}")
            time.sleep(0.02)

    def wait_for_own_size(self) -> None:
        """Wait until the window has the session's ``default-size`` again: a browser's
        size is given back once its connection is gone (nobody attached)."""
        own = self.tmux("show-options", "-A", "-v", "-t", self.session, "default-size").strip()
        size = "#{window_width}x#{window_height}"
        self.wait_for(lambda: self.pane(size) == own, f"the page's size given back ({own})")

    def wait_for_text(self, text: str, timeout: float = WAIT) -> None:
        self.wait_for(lambda: text in self.history(), repr(text), timeout)

    def wait_for_prompt(self) -> None:
        """Wait until the shell is at its prompt: the prompt `$ ` on screen, or with the
        test's own rc files (any prompt) until :meth:`wait_until_ready` succeeds."""
        if self.own_rc_files:
            self.wait_until_ready()
            return

        self.wait_for(lambda: at_prompt(self.screen()), "the shell's prompt")

    def send_when_ready(self, *args: str, timeout: float = WAIT) -> tuple[int, str, str]:
        """``tmux-send ARGS``, repeated while it refuses because the terminal is not ready
        (nothing was typed then: the shell still starting or drawing its prompt), until it
        is let in; fail after ``timeout`` seconds of refusals. Returns the call that got in."""
        calls: list[tuple[int, str, str]] = []

        def let_in() -> bool:
            calls.append(self.send_text(*args))
            code, _, err = calls[-1]
            return not (code == 125 and "is not ready" in err)

        self.wait_for(let_in, f"tmux-send {' '.join(args)} to be let in", timeout)
        return calls[-1]

    def wait_until_ready(self, timeout: float = WAIT) -> None:
        """Wait until ``tmux-send -- true`` is let in and succeeds (one call in all):
        works with any prompt."""
        code, out, err = self.send_when_ready("--", "true", timeout=timeout)
        if (code, out) != (0, ""):
            pytest.fail(
                f"`tmux-send -- true` gave {code}, {out!r}, {err!r}; the pane shows:\n"
                + self.screen()
            )

    def read_line(self, proc: subprocess.Popen[bytes], timeout: float = WAIT) -> bytes:
        """The next line of a background tmux-send's stdout, waiting at most ``timeout``."""
        assert proc.stdout is not None
        return self.read_line_from(proc.stdout, timeout)

    def read_line_from(self, stream: IO[bytes], timeout: float = WAIT) -> bytes:
        """The next line from a pipe of a background tmux-send, waiting at most ``timeout``."""
        return read_line(stream, timeout, lambda: f"the pane shows:\n{self.screen()}")

    def wait_for_call_start(self, proc: subprocess.Popen[bytes]) -> None:
        """Wait until a background ``tmux-send -- 'echo started; ...'`` runs its command."""
        assert self.read_line(proc) == b"started\n"

    def foreground(self) -> str:
        return self.pane("#{pane_current_command}")

    def runtime_files(self) -> set[str]:
        """Every path in the runtime directory, relative to it (directories too)."""
        return {str(path.relative_to(self.runtime)) for path in self.runtime.rglob("*")}

    def pane_dir(self) -> str:
        """The bridge pane's directory in the runtime directory: ``pane-N`` for pane
        ``%N`` of this (default-named) server, as tmux_bridge/pane/records.py documents."""
        pane_id = self.pane("#{pane_id}")
        assert pane_id.startswith("%"), pane_id
        return "pane-" + pane_id[1:]

    def between_calls(self, pane_dir: str | None = None) -> set[str]:
        """What the runtime directory holds once calls to the one pane have ended: the
        audit log, the panes' context (last command), and the pane's directory with the
        prompt line learnt there and the tmux server it belongs to. A call's
        own files (the runner, the command, the in-flight record) are gone."""
        pane = pane_dir or self.pane_dir()
        return {"log.jsonl", "context.json", pane, f"{pane}/prompt", f"{pane}/server"}

    def learnt_at_start(self) -> set[str]:
        """What ``tmux-bridge --detach`` leaves in the runtime directory besides itself:
        the bridge pane's directory (named for the default socket) with the new shell's
        prompt learnt there, the tmux server it belongs to, and the panes' context
        naming that server."""
        pane = self.pane_dir()
        return {pane, f"{pane}/prompt", f"{pane}/server", "context.json"}

    def person_types(self, text: str) -> None:
        """Type ``text`` as the person does: through a tmux client attached to the
        session (started on first use), whose keys tmux counts as the session's activity.
        ``tmux send-keys`` does not count, and tmux-send trusts a line no key reached
        since its last call. Control characters are keys (``\x15`` is C-u, ``\r``
        Enter)."""
        if self.client is None:
            self.client = pexpect.spawn(
                "tmux",
                ["-L", "default", "attach-session", "-t", f"={self.session}"],
                env=self.env,
                dimensions=(24, 80),
            )
            self.wait_for(lambda: self.people() == 1, "the client")
        self.client.send(text)

    def people(self) -> int:
        """How many people's clients are attached to the session: control-mode clients
        (a resident tmux-bridge's channel and lifecycle client) are not people, though
        ``#{session_attached}`` counts them."""
        listed = self.tmux("list-clients", "-t", f"={self.session}", "-F", "#{client_control_mode}")
        return listed.split().count("0")

    def kill(self) -> None:
        """Kill the server and everything its panes started (a REPL stuck computing
        would otherwise outlive the hang-up)."""
        if self.client is not None:
            self.client.close(force=True)
        for proc in self.started:
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.communicate(timeout=5)  # reaped, its pipes closed
        sessions = self._tmux_quietly("list-panes", "-a", "-F", "#{pane_pid}").split()
        self._tmux_quietly("kill-server")
        for pid in _session_members({int(p) for p in sessions if p.isdigit()}):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    def _tmux_quietly(self, *args: str) -> str:
        """For teardown: tmux's stdout, or "" when it fails or hangs."""
        try:
            return run_tmux(self.env, args, 10)[1]
        except (OSError, subprocess.SubprocessError):
            return ""


def read_line(stream: IO[bytes], timeout: float, context: Callable[[], str]) -> bytes:
    """The next line from ``stream`` (a pipe), waiting at most ``timeout`` seconds; on
    timeout or end of file, fail the test with what was read and ``context()``."""
    fd = stream.fileno()
    line = b""
    deadline = time.monotonic() + timeout
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0))
        if not ready:
            pytest.fail(f"no line within {timeout} s; got {line!r}; {context()}")
        byte = os.read(fd, 1)
        if not byte:
            pytest.fail(f"the pipe was closed after {line!r}; {context()}")
        line += byte
    return line


def _session_members(leaders: set[int]) -> list[int]:
    """Processes whose session is led by one of ``leaders`` (a pane's shell)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) in leaders:
            members.append(int(entry))
    return members


@contextlib.contextmanager
def private_pane(shell: str, rc_files: dict[str, str] | None = None) -> Iterator[TestPane]:
    """A :class:`TestPane` (not started) in a new private directory; its server killed and
    the directory removed on exit."""
    with private_root("tb-") as root:
        pane = TestPane(root, shell, rc_files)
        try:
            yield pane
        finally:
            pane.kill()


def dash_bridge(make: Callable[[str], TestPane]) -> TestPane:
    """A bridge (not started) whose pane runs dash with the prompt `$ `: dash reads its
    rc file from $ENV when interactive, and nothing from the clean HOME otherwise."""
    shell_path("dash")
    b = make("dash")
    b.env["ENV"] = str(b.home / ".shrc")
    (b.home / ".shrc").write_text("PS1='$ '\n")
    (b.home / ".profile").write_text("")
    return b


def target_of(bridge: TestPane, pane: str | None = None) -> Target:
    """The test bridge's terminal, named explicitly (nothing from the environment)."""
    socket = bridge.tmpdir / f"tmux-{os.getuid()}" / "default"
    return Target(Tmux(socket_path=str(socket)), bridge.session, pane, str(bridge.runtime))


def transcript(b: TestPane) -> list[str]:
    """The pane's history from the first call's header on, without trailing spaces or
    trailing empty lines: what the person's transcript shows of tmux-send's calls."""
    lines = [line.rstrip() for line in b.history().split("\n")]
    first = next(i for i, line in enumerate(lines) if "[tmux-send" in line)
    lines = lines[first:]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def enter_nested(b: TestPane, shell: str, line: str | None = None) -> None:
    """The person starts ``line`` (default: ``shell``) in the pane; wait for its prompt
    to let tmux-send in."""
    comm = "sh" if shell == "dash" else shell
    b.tmux("send-keys", "-t", b.target, line or shell, "Enter")
    b.wait_for(lambda: b.foreground() == comm or comm in b.foreground(), f"{shell} to start")
    b.wait_until_ready()


class MakeBridge(Protocol):
    """The type of the `make_bridge` factory."""

    def __call__(self, shell: str, rc_files: dict[str, str] | None = None) -> TestPane: ...


def _stream_writers(b: TestPane) -> list[int]:
    """The ``cat`` the pane's tmux server started for the pane's pipe into a call's
    stream (a FIFO of ours: a far call's, a REPL's): its child ``cat`` with that FIFO
    open. Stopped, it makes the screen run ahead of the stream."""
    server = b.pane("#{pid}")
    found = []
    for entry in os.listdir("/proc"):
        try:
            if not entry.isdigit() or Path("/proc", entry, "comm").read_text() != "cat\n":
                continue
            status = Path("/proc", entry, "status").read_text()
            if f"\nPPid:\t{server}\n" not in status:
                continue
            fds = Path("/proc", entry, "fd")
            if any("tmux-send-far-" in os.readlink(fds / fd) for fd in os.listdir(fds)):
                found.append(int(entry))
        except OSError:  # gone meanwhile
            continue
    return found


@contextlib.contextmanager
def stream_stopped(b: TestPane) -> Iterator[None]:
    """The pane's pipe writer (a call's stream) stopped for the block, then let go: the
    screen runs ahead of what the call reads meanwhile."""
    writers = _stream_writers(b)
    assert writers, "no process writes the call's stream"
    for pid in writers:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in writers:
            os.kill(pid, signal.SIGCONT)
