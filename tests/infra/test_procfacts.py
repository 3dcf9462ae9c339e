"""The two process-facts implementations (``/proc`` and ``ps``/``lsof``) give the same
answers about a real pane, and the portable one says so when it cannot know."""

from __future__ import annotations

import os
import select
import shlex
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tmux_bridge.infra import procfs, procps
from tmux_bridge.infra.process import choose
from tmux_bridge.infra.procfacts import Unknown

from ..support.pane import TestPane, target_of

if TYPE_CHECKING:
    from tmux_bridge.infra.procfacts import ProcessFacts

BOTH: list[ProcessFacts] = [procfs, procps]


@pytest.fixture
def bash(make_bridge: Callable[[str], TestPane]) -> Iterator[TestPane]:
    b = make_bridge("bash")
    b.start()
    b.wait_for_prompt()
    yield b


def _pane(b: TestPane) -> tuple[int, str]:
    return int(b.pane("#{pane_pid}")), b.pane("#{pane_tty}")


@pytest.mark.parametrize("facts", BOTH, ids=lambda f: f.NAME)
def test_a_shell_at_its_prompt(bash: TestPane, facts: ProcessFacts) -> None:
    pid, tty = _pane(bash)
    stat = facts.proc_stat(pid)
    assert stat is not None and stat.pgrp == pid == stat.tpgid  # a session leader in front
    assert facts.shell_kind(pid) == "bash"
    assert os.path.basename(facts.shell_executable(pid)) == "bash"
    assert facts.working_dir(pid) == bash.pane("#{pane_current_path}")
    assert facts.has_open(pid, tty) is True
    assert facts.has_open(pid, "/nonexistent") is False
    assert facts.alive(pid) and facts.owner(pid) is not None
    assert facts.children(pid) == [] and facts.foreground_child(pid, pid) is None
    assert facts.waiting_for_input(pid, tty) is procfs.waiting_for_input(pid, tty)
    assert stat.start <= facts.ticks_now()


def test_a_program_in_front_and_one_reading_the_terminal(bash: TestPane) -> None:
    pid, tty = _pane(bash)
    bash.tmux("send-keys", "-t", bash.target, "sleep 300", "Enter")
    bash.wait_for(lambda: _front_name(pid) == "sleep", "sleep in front")
    child = procfs.foreground_child(pid, _tpgid(pid))
    for facts in BOTH:
        assert facts.children(pid) == [child]
        assert facts.foreground_child(pid, _tpgid(pid)) == child
        assert facts.command_name(child or 0) == "sleep"
        assert facts.command_line(child or 0) == ["sleep", "300"]
        assert facts.holds_terminal(pid, _tpgid(pid))
        assert facts.waiting_for_input(pid, tty) is False
    bash.tmux("send-keys", "-t", bash.target, "C-c")
    bash.wait_for_prompt()
    bash.tmux("send-keys", "-t", bash.target, "read x", "Enter")
    bash.wait_for(lambda: procfs.waiting_for_input(pid, tty) is True, "read x")
    bash.wait_for(lambda: procps.waiting_for_input(pid, tty) is True, "read x, seen by ps")


def test_a_socket_read_is_not_a_wait_for_the_person(bash: TestPane) -> None:
    """Linux names a socket's wait as a terminal's (``wait_woken``): the portable side
    tells them apart by the sockets the process holds, never answering yes."""
    pid, tty = _pane(bash)
    program = (
        'import socket; s = socket.create_server(("127.0.0.1", 0)); '
        "socket.create_connection(s.getsockname()).recv(1)"
    )
    bash.tmux("send-keys", "-t", bash.target, f"python3 -c '{program}'", "Enter")
    bash.wait_for(lambda: _wchan_of_child(pid) == "wait_woken", "python3 in recv")
    assert procfs.waiting_for_input(pid, tty) is False
    assert procps.waiting_for_input(pid, tty) is False


def _front_name(pid: int) -> str:
    """The name of the program in front, once the shell's child has exec'd it."""
    child = procfs.foreground_child(pid, _tpgid(pid))
    return procfs.command_name(child) if child is not None else ""


def _tpgid(pid: int) -> int:
    stat = procfs.proc_stat(pid)
    return stat.tpgid if stat else -1


def _wchan_of_child(pid: int) -> str:
    for child in procfs.children(pid):
        with open(f"/proc/{child}/wchan") as f:
            return f.read()
    return ""


@pytest.mark.parametrize("facts", BOTH, ids=lambda f: f.NAME)
def test_the_end_of_a_process_makes_its_descriptor_readable(facts: ProcessFacts) -> None:
    child = subprocess.Popen(["sleep", "60"])
    fd = facts.exit_fd(child.pid)
    try:
        assert fd >= 0 and select.select([fd], [], [], 0.2)[0] == []
        child.kill()
        child.wait()  # reaped: gone for kill(pid, 0) as for the pidfd
        assert select.select([fd], [], [], 5)[0] == [fd]
    finally:
        os.close(fd)
    stray = procps.exit_fd(os.getpid())  # closed by its reader: its watch ends
    os.close(stray)
    deadline = time.monotonic() + 5
    while procps._WATCHED and time.monotonic() < deadline:
        select.select([], [], [], 0.02)
    assert procps._WATCHED == {}


def test_an_exit_watch_is_carried_over_a_fork() -> None:
    """The portable exit watch is a thread: counted as fork-safe (a live call may be
    detached into a forked keeper), and restarted in the child, whose descriptor still
    becomes readable when the process ends."""
    child = subprocess.Popen(["sleep", "60"])
    before = procps.fork_safe_threads()
    fd = procps.exit_fd(child.pid)
    told_r, told_w = os.pipe()
    try:
        assert procps.fork_safe_threads() == before + 1
        forked = os.fork()
        if forked == 0:  # the child: is the end seen here?
            seen = select.select([fd], [], [], 10)[0] == [fd]
            os.write(told_w, b"seen" if seen else b"missed")
            os._exit(0)
        child.kill()
        child.wait()
        assert os.read(told_r, 16) == b"seen"
        os.waitpid(forked, 0)
    finally:
        for each in (fd, told_r, told_w):
            os.close(each)


def test_exit_kqueues_are_made_anew_in_a_forked_child(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bookkeeping of BSD and macOS exit descriptors (Linux has no kqueue: a stand-in
    whose descriptor is a pipe's): a fork does not pass kqueues on, so the child makes
    each on its number again; a number the child did get is not ours and is left alone."""
    made: list[tuple[int, int]] = []  # (pid, descriptor) of each kqueue made

    class Queue:
        def __init__(self) -> None:
            self.read_end, self.write_end = os.pipe()

        def control(self, events: list[tuple[int, ...]], *_: int) -> None:
            made.append((events[0][0], self.read_end))

        def fileno(self) -> int:
            return self.read_end

        def close(self) -> None:
            os.close(self.read_end)
            os.close(self.write_end)

    for name, value in {"kqueue": Queue, "kevent": lambda *a: a, "KQ_FILTER_PROC": 1,
                        "KQ_EV_ADD": 2, "KQ_NOTE_EXIT": 3}.items():  # fmt: skip
        monkeypatch.setattr(select, name, value, raising=False)
    monkeypatch.setattr(procps, "_KQUEUES", {})
    ours, theirs = procps.exit_fd(4242), procps.exit_fd(4343)
    assert {ours: 4242, theirs: 4343} == procps._KQUEUES
    os.close(ours)  # as a fork leaves a kqueue: not passed on
    os.close(theirs)
    other = os.open(os.devnull, os.O_RDONLY)
    reused, gone = os.dup2(other, ours), theirs  # a number another file got meanwhile
    os.close(other)
    procps._renew_kqueues()
    try:
        assert [pid for pid, _ in made[2:]] == [procps._KQUEUES[gone]]  # made anew
        assert os.fstat(gone) and os.path.samestat(os.fstat(reused), os.stat(os.devnull))
    finally:
        os.close(reused)
        os.close(gone)


def test_an_unknown_fact_has_no_truth_value() -> None:
    unknown = Unknown("lsof is not installed")
    with pytest.raises(TypeError, match="lsof is not installed"):
        bool(unknown)


def test_without_lsof_open_files_are_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    assert isinstance(procps.has_open(os.getpid(), "/dev/null"), Unknown)
    assert any("lsof" in limit for limit in procps.limits())
    assert procps.working_dir(os.getpid()) is None


NAMES = [b"plain dir", b"odd-\xff", b"back\\x41slash", b"caret^A", b"ctl\x01", b"tab\t", b"\xc3"]


@pytest.mark.parametrize("name", NAMES)
def test_a_working_dir_is_exact(tmp_path: Path, name: bytes) -> None:
    """lsof prints what is not printable in a name escaped (``\\xff``, ``\\t``, ``\\\\``,
    ``^A`` for a control character, while a ``^`` in a name stays as it is): the path
    read back is the directory itself, byte for byte."""
    where = os.path.join(os.fsencode(tmp_path), name)
    os.mkdir(where)
    child = subprocess.Popen(["sleep", "60"], cwd=where)
    try:
        assert procps.working_dir(child.pid) == os.fsdecode(where)
    finally:
        child.kill()
        child.wait()


def test_the_choice() -> None:
    assert choose("portable") is procps and choose("linux") is procfs
    assert choose("") is procfs  # this machine has /proc


def test_a_socket_pair_is_seen_by_lsof() -> None:
    a, b = socket.socketpair()
    try:
        assert procps.has_sockets(os.getpid()) is True
    finally:
        a.close()
        b.close()


def test_one_reading_answers_a_call_start_until_the_call_acts(
    bash: TestPane, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The portable facts of a call's start come from one ``ps``, until the call acts
    (its second tmux command, ``exit_fd``), while another thread reads for itself; a
    process that ended since is gone at once, one that started since is read anew."""
    monkeypatch.setattr(procps, "CALL_START", 60.0)  # time is not what this test is about
    monkeypatch.setattr(procps, "FRESH", 60.0)
    tmux = target_of(bash).tmux
    shell = int(bash.pane("#{pane_pid}"))
    started: list[subprocess.Popen[bytes]] = []

    def start() -> int:
        started.append(subprocess.Popen(["sleep", "60"]))
        return started[-1].pid

    def reading() -> float:
        return procps._MOMENT.taken  # when this thread's snapshot was read

    try:
        procps.begin_call()
        procps.proc_stat(os.getpid())  # the call's first question: its one reading
        first = reading()
        tmux.run("display-message", "-p", "finding the pane")  # the call's first command
        assert procps.proc_stat(shell) is not None and procps.shell_kind(shell) == "bash"
        assert reading() == first
        seen: list[float] = []

        def elsewhere() -> None:
            procps.proc_stat(shell)
            seen.append(reading())

        other = threading.Thread(target=elsewhere)
        other.start()
        other.join()
        assert seen != [first] and reading() == first  # another thread reads for itself
        tmux.run("display-message", "-p", "typing")  # the call acts: read anew
        procps.proc_stat(shell)
        second = reading()
        assert second != first
        later = start()
        assert procps.proc_stat(later) is not None  # started since: read anew
        third = reading()
        assert third != second
        started[0].kill()
        started[0].wait()
        assert procps.proc_stat(later) is None  # the reading had it: it ended since
        assert reading() == third
        os.close(procps.exit_fd(shell))  # a wait for an end: the call acts
        procps.proc_stat(shell)
        assert reading() != third
    finally:
        procps.forget()
        for process in started:
            process.kill()
            process.wait()


@pytest.fixture
def ps_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``ps`` on PATH through a script that notes each run in a log, then becomes the
    real ``ps``; a reading started ahead is fresh however slow this machine is."""
    real = shutil.which("ps")
    assert real is not None
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "ps.log"
    log.touch()
    script = bindir / "ps"
    script.write_text(f'#!/bin/sh\necho "$$" >> {shlex.quote(str(log))}\nexec {real} "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(procps, "AHEAD_FRESH", 60.0)
    procps.forget()
    yield log
    procps.forget()


def _runs(log: Path, besides: int = 0) -> int:
    """How many ``ps`` ran, not counting ``besides`` (one that was killed may not have
    noted itself)."""
    return len([pid for pid in log.read_text().split() if int(pid) != besides])


def test_a_call_start_takes_the_reading_started_ahead(ps_log: Path) -> None:
    """The ``ps`` a call starts ahead (while it imports its code) is its start's one
    reading: no other runs for the questions of its start."""
    procps.look_ahead()
    ahead = procps._MOMENT.ahead
    assert ahead is not None
    procps.begin_call()
    me = procps.proc_stat(os.getpid())
    assert me is not None and procps.process_name(os.getpid()) != ""
    assert procps.proc_stat(os.getppid()) is not None
    assert ps_log.read_text().split() == [str(ahead[0][0])]


def test_a_stale_reading_started_ahead_is_dropped(
    ps_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Older than AHEAD_FRESH when the call asks: read anew, and the one started ahead
    is ended and reaped (no zombie is left)."""
    monkeypatch.setattr(procps, "AHEAD_FRESH", 0.0)
    procps.look_ahead()
    ahead = procps._MOMENT.ahead
    assert ahead is not None
    procps.begin_call()
    assert procps.proc_stat(os.getpid()) is not None
    assert _runs(ps_log, besides=ahead[0][0]) == 1  # read anew
    with pytest.raises(ChildProcessError):
        os.waitpid(ahead[0][0], os.WNOHANG)


def test_forget_drops_a_reading_started_ahead(ps_log: Path) -> None:
    """A call that ends (or acts) before it asks: the ``ps`` started ahead is reaped and
    never answers a later question."""
    procps.look_ahead()
    ahead = procps._MOMENT.ahead
    assert ahead is not None
    procps.forget()
    with pytest.raises(ChildProcessError):
        os.waitpid(ahead[0][0], os.WNOHANG)
    procps.begin_call()
    assert procps.proc_stat(os.getpid()) is not None
    assert _runs(ps_log, besides=ahead[0][0]) == 1  # read anew


def test_a_forked_child_leaves_its_parents_reading_alone(ps_log: Path) -> None:
    """A child forked with a reading on its way (a job's keeper) neither takes nor ends
    its parent's ``ps``: the parent still takes it whole."""
    procps.look_ahead()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's end is its status)
        try:
            procps.forget()
            procps.begin_call()
            status = 0 if procps.proc_stat(os.getpid()) is not None else 2
        except BaseException:
            status = 1
        os._exit(status)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    procps.begin_call()
    assert procps.proc_stat(os.getpid()) is not None
    assert _runs(ps_log) == 2  # the parent's, taken, and the child's own
