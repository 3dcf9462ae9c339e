"""Shells inside shells: commands run in a shell the pane's shell started (a nested
bash, zsh, fish or dash; `su - user`; `sudo -i`), through the pane alone.

Expected values come from running the same command directly (``<shell> -c CMD``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from ..support.files import backups_of
from ..support.pane import (
    MakeBridge,
    TestPane,
    enter_nested,
    private_pane,
    shell_path,
    stream_stopped,
)
from ..support.sshd import USERS, Sshd, ensure_user, running_sshd, slow_link, ssh_pane

pytestmark = pytest.mark.tmux  # private tmux servers, some started without the fixtures
FAR_SHELLS = ["bash", "zsh", "fish", "dash"]


def far_err_files(user: str) -> set[Path]:
    """The far stderr files of ``user`` that exist now: in the private directories
    (``mktemp -d``) their far shells made in /tmp."""
    uid = int(subprocess.run(["id", "-u", user], capture_output=True, text=True).stdout)
    found = set()
    for directory in Path("/tmp").glob("tmux-send.*"):
        try:  # (another test's far shell may remove its directory meanwhile)
            found |= {p for p in directory.glob("err.*") if p.stat().st_uid == uid}
        except FileNotFoundError:
            continue
    return found


@pytest.fixture(scope="module", params=FAR_SHELLS)
def nested(request: pytest.FixtureRequest) -> Iterator[TestPane]:
    """A bash pane in which the person started another shell (prompt `$ `)."""
    shell: str = request.param
    shell_path(shell)
    with private_pane("bash") as b:
        b.env["ENV"] = str(b.home / ".shrc")  # dash's rc file when interactive
        (b.home / ".shrc").write_text("PS1='$ '\n")
        b.start()
        enter_nested(b, shell, f"{shell} -i" if shell == "dash" else shell)
        b.far_shell = shell  # type: ignore[attr-defined]
        yield b


class Case(NamedTuple):
    test_id: str
    command: str


CORPUS = [
    Case("plain", "echo hello"),
    Case("no-newline", "printf 'no newline'"),
    Case("quotes", """printf '%s\\n' "it's" 'say "hi"' '$HOME' '!x' '#no'"""),
    Case("percent-backslash", r"printf '%s\n' '100% \n done'"),
    Case("crlf", r"printf 'a\r\nb\r\n'"),
    Case("progress", r"printf '10%%\r50%%\r100%%\n'"),
    Case("unicode", "echo 'héllo → 世界'"),
    Case("tabs-long", "printf 'a\\tb\\n'; printf '%0300d\\n' 0"),
    Case("multiline", "for i in 1 2 3\ndo echo line $i\ndone"),
    Case("blank-lines", "printf '\\n\\nx\\n\\n'"),
]


def _direct(shell: str, command: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([shell_path(shell), "-c", command], capture_output=True, timeout=30)


@pytest.mark.parametrize("case", CORPUS, ids=[c.test_id for c in CORPUS])
def test_output_exact_in_far_shell(nested: TestPane, case: Case) -> None:
    shell = nested.far_shell  # type: ignore[attr-defined]
    if shell == "fish" and case.test_id == "multiline":
        command = "for i in 1 2 3\necho line $i\nend"
    else:
        command = case.command
    expected = _direct(shell, command)
    result = nested.send("--raw", "--", command)
    assert (result.returncode, result.stdout, result.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    ), nested.screen()


def test_status_stderr_and_state(nested: TestPane, tmp_path: Path) -> None:
    shell = nested.far_shell  # type: ignore[attr-defined]
    command = "echo out; echo err >&2; false"
    expected = _direct(shell, command)
    result = nested.send("--json", "--", command)
    doc = json.loads(result.stdout)
    assert (doc["stdout"], doc["stderr"], doc["status"]) == ("out\n", "err\n", 1)
    assert doc["stdout"].encode() == expected.stdout
    assert doc["stderr"].encode() == expected.stderr
    assert doc["shell"] == ("posix" if shell == "dash" else shell)
    assert doc["far"]["via"] == shell
    assert doc["stderr_merged"] is False
    # state persists: cd and a variable
    assert nested.send_text("--", f"cd {tmp_path}")[0] == 0
    var = "set -gx TB_X 42" if shell == "fish" else "export TB_X=42"
    assert nested.send_text("--", var)[0] == 0
    assert nested.send_text("--", "pwd; echo $TB_X") == (0, f"{tmp_path}\n42\n", "")
    # killed by a signal: 128+N, as the shell itself reports it
    status = "$status" if shell == "fish" else "$?"
    killed = _direct(shell, f"sh -c 'kill -TERM $$'; echo {status}").stdout
    assert nested.send("--", "sh -c 'kill -TERM $$'").returncode == int(killed) == 143


def test_large_command_and_control_characters(nested: TestPane) -> None:
    """A 100 KB command reaches the far shell unchanged (in pieces of at most 3000
    characters: a POSIX sh reads in canonical mode), control characters too."""
    shell = nested.far_shell  # type: ignore[attr-defined]
    if shell == "zsh":
        pytest.skip("zsh's line editor takes ~8 s for 100 KB typed; the others show it")
    command = f"printf '%s' '{'x' * 100_000}' | wc -c; printf '\x01\x1b[1m\x7f\t' | od -An -c"
    expected = _direct(shell, command)
    result = nested.send("--", command)
    assert (result.returncode, result.stdout) == (0, expected.stdout)
    assert b"100000" in result.stdout


class Gate(NamedTuple):
    test_id: str
    line: str  # what the person runs in the pane
    shell: str  # the far shell's kind


GATES = [
    Gate("su", "su - tbfar-zsh", "zsh"),
    Gate("sudo-i", "sudo -i -u tbfar-fish", "fish"),
]


@pytest.mark.parametrize("gate", GATES, ids=[g.test_id for g in GATES])
def test_su_and_sudo(gate: Gate) -> None:
    user = ensure_user(gate.shell)
    with private_pane("bash") as b:
        b.start()
        b.tmux("send-keys", "-t", b.target, gate.line, "Enter")
        b.wait_for(lambda: b.foreground() != "bash", f"{gate.line} to start")
        b.wait_until_ready()
        doc = json.loads(b.send("--json", "--", "id -un; echo oops >&2; false").stdout)
        assert (doc["stdout"], doc["stderr"], doc["status"]) == (f"{user}\n", "oops\n", 1)
        assert (doc["shell"], doc["far"]["user"]) == (gate.shell, user)
        assert b.send_text("--", "exit 4")[0] == 4
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")


# --- through a real ssh connection -----------------------------------------------------------


@pytest.fixture(scope="module")
def sshd() -> Iterator[Sshd]:
    with running_sshd() as server:
        yield server


@pytest.fixture
def far_bash(sshd: Sshd) -> Iterator[TestPane]:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        yield b


@pytest.mark.parametrize("shell", FAR_SHELLS)
def test_ssh_results_state_and_exit(sshd: Sshd, shell: str) -> None:
    """Through ssh: stdout, stderr and the status apart, the far host's facts, state kept
    between calls, and `exit 3` ending the far shell with 3, the pane back at home."""
    with private_pane("bash") as b:
        ssh_pane(b, sshd, shell)
        command = "echo out; echo 'é err' >&2; sh -c 'exit 7'"
        expected = _direct(shell, command)
        doc = json.loads(b.send("--json", "--", command).stdout)
        assert (doc["stdout"].encode(), doc["stderr"].encode(), doc["status"]) == (
            expected.stdout,
            expected.stderr,
            expected.returncode,
        )
        assert doc["exit_status"] == 7
        # the stderr file is private while it exists
        mode = b.send_text("--", "echo x >&2; stat -c %a $__tmux_send_err")
        assert mode[1] == "600\n", mode
        assert doc["far"]["user"] == USERS[shell]
        assert doc["far"]["via"] == "ssh"
        assert doc["far"]["os"] == os.uname().sysname
        assert doc["shell"] == ("posix" if shell == "dash" else shell)
        assert b.send_text("--", "cd /tmp") == (0, "", "")
        assert b.send_text("--", "pwd") == (0, "/tmp\n", "")
        if shell == "bash":  # HISTCONTROL=ignoreboth: the lines typed start with a space
            assert b.send_text("--", "history | grep -c tmux_send") == (1, "0\n", "")
        if shell == "zsh":  # no histignorespace: a zshaddhistory hook keeps them out once
            # defined (the first probe and the line defining it went in before it existed)
            count = "fc -ln 1 | grep -c TMUXSEND_PROBE"
            assert b.send_text("--", count) == b.send_text("--", count) == (0, "2\n", "")
        info = json.loads(b.send("--info", "--json").stdout)["info"]
        assert (info["user"], info["cwd"], info["via"]) == (USERS[shell], "/tmp", "ssh")
        assert info["shell"] == doc["shell"]
        (entry,) = json.loads(b.bridge_cli("panes", "--json").stdout)
        assert (entry["far"]["user"], entry["far"]["via"]) == (USERS[shell], "ssh")
        code, out, err = b.send_text("--", "echo bye; exit 3")
        assert (code, out) == (3, "bye\n")
        assert "ended the far shell" in err
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")
        (entry,) = json.loads(b.bridge_cli("panes", "--json").stdout)
        assert entry["far"] is None
        assert f"ssh to {USERS[shell]}@" in entry["far_left"]
        assert b.send_text("--", "echo $HOME") == (0, f"{b.home}\n", "")


def test_ssh_large_output_exact(far_bash: TestPane) -> None:
    expected = subprocess.run(["seq", "1", "100000"], capture_output=True).stdout
    result = far_bash.send("--", "seq 1 100000")
    assert result.returncode == 0
    assert result.stdout == expected


def test_ssh_idle_timeout_interrupts_through_the_pane(far_bash: TestPane) -> None:
    result = far_bash.send("--json", "-t", "1", "--", "echo started; sleep 30; echo never")
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["status"], doc["timed_out"]) == (124, 130, "idle")
    assert doc["stdout"] == "started\n"
    assert doc["signals_sent"] == ["SIGINT"]
    assert far_bash.send_text("--", "echo still here") == (0, "still here\n", "")


def test_ssh_person_presses_ctrl_c(far_bash: TestPane) -> None:
    proc = far_bash.start_send("--", "echo started; sleep 30")
    far_bash.wait_for_call_start(proc)
    started = time.monotonic()
    far_bash.tmux("send-keys", "-t", far_bash.target, "C-c")  # the person's Ctrl-C
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 3
    assert far_bash.send_text("--", "echo ok") == (0, "ok\n", "")


def test_ssh_call_cancelled_by_a_signal(far_bash: TestPane) -> None:
    """tmux-send itself gets SIGINT (an agent's Ctrl-C): Ctrl-C goes through the pane,
    the call ends with 130 and the far shell takes the next command."""
    proc = far_bash.start_send("--", "echo started; sleep 30")
    far_bash.wait_for_call_start(proc)
    (entry,) = json.loads(far_bash.bridge_cli("panes", "--json").stdout)
    assert entry["in_flight"]["command"] == "echo started; sleep 30"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert far_bash.send_text("--", "echo ok") == (0, "ok\n", "")


def test_ssh_waiting_for_input_is_seen_on_the_screen(far_bash: TestPane) -> None:
    proc = far_bash.start_send("--json", "-t", "1", "--", "printf 'Name: '; read x; echo got $x")

    # (the last line that shows: the clean transcript leaves empty rows below it)
    def asked() -> bool:
        return "Name:" in far_bash.screen().rstrip().splitlines()[-1]

    far_bash.wait_for(asked, "the question")
    time.sleep(2)  # longer than the idle timeout: waiting for input holds it
    far_bash.tmux("send-keys", "-t", far_bash.target, "-l", "Ann")
    far_bash.tmux("send-keys", "-t", far_bash.target, "Enter")
    out, _ = proc.communicate(timeout=15)
    doc = json.loads(out)
    # the far terminal echoes what the person types: it is in the stream (a limit)
    assert (doc["status"], doc["stdout"]) == (0, "Name: Ann\ngot Ann\n")
    assert (doc["waited_for_input"], doc["input_detected_by"]) == (True, "screen")


def test_the_screen_ahead_of_the_stream_ends_no_far_command_early(far_bash: TestPane) -> None:
    """tmux draws what the call's stream (the pane's pipe) has not brought yet: the far
    prompt back on the screen, the end marker still on its way, is not a command killed
    by Ctrl-C (its unfinished last line, "got Ann", was dropped then, and a recovery line
    typed). The pipe's writer is stopped while the person answers."""
    b = far_bash
    proc = b.start_send("--", "printf 'Name: '; read x; printf 'got %s' \"$x\"")
    assert proc.stderr is not None
    notice = b.read_line_from(proc.stderr)
    assert b"seems to wait for input" in notice, notice
    with stream_stopped(b):
        b.tmux("send-keys", "-t", b.target, "-l", "Ann")
        b.tmux("send-keys", "-t", b.target, "Enter")

        def prompt_back() -> bool:
            lines = [line.rstrip() for line in b.screen().splitlines()]
            at = lines.index("got Ann") if "got Ann" in lines else -1
            return 0 <= at < len(lines) - 1 and lines[at + 1].startswith("$")

        b.wait_for(prompt_back, "the far prompt ($) back")
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=2)  # silence, and the prompt on the screen: looked at
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, b"Name: Ann\ngot Ann"), err


def test_ssh_connection_dropped_mid_command(sshd: Sshd) -> None:
    """The sshd serving the session is killed mid-command: the call ends at once with
    exit 125 (far_shell_lost) and the output until then; the local shell takes commands."""
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "dash")
        before = far_err_files(USERS["dash"])
        proc = b.start_send("--json", "--", "echo started; sleep 30")
        # (the output's own line: the header above it shows the word already)
        b.wait_for(
            lambda: "started" in [line.strip() for line in b.screen().splitlines()],
            "the command to start",
        )
        killed = time.monotonic()
        for pid in sshd.connections(USERS["dash"]):
            os.kill(pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=15)
        assert proc.returncode == 125
        assert time.monotonic() - killed < 2
        doc = json.loads(out)
        assert (doc["error_code"], doc["stdout"]) == ("far_shell_lost", "started\n")
        assert "went away" in doc["error"]
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")
        assert b.send_text("--", "echo local") == (0, "local\n", "")
        # the far side was killed before it could remove its stderr file (docs/far-shells.md)
        for left in far_err_files(USERS["dash"]) - before:
            left.unlink()


def _stream_cat(b: TestPane) -> int | None:
    """The ``cat`` tmux started for a far call's pipe: the server's child whose stdout is
    a FIFO named ``stream`` in a ``tmux-send-far-`` directory."""
    server = int(b.tmux("display-message", "-p", "#{pid}").strip())
    try:
        with open(f"/proc/{server}/task/{server}/children") as f:
            children = [int(pid) for pid in f.read().split()]
    except OSError:
        return None
    for pid in children:
        try:
            target = os.readlink(f"/proc/{pid}/fd/1")
        except OSError:
            continue
        if "/tmux-send-far-" in target and target.endswith("/stream"):
            return pid
    return None


def test_output_still_on_its_way_when_the_connection_drops_is_kept(sshd: Sshd) -> None:
    """What the far command printed before the connection dropped is returned even when
    it is still on its way to tmux-send (the pipe's reader is late, as on a loaded
    machine): here the reader is stopped until the call has closed the pane's pipe."""
    folder = Path(tempfile.mkdtemp(prefix="tb-flag-"))  # the far user can look in it
    folder.chmod(0o755)
    flag = folder / "go"
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "dash")
        before = far_err_files(USERS["dash"])
        command = f"until [ -e {flag} ]; do sleep 0.05; done; echo started; sleep 30"
        proc = b.start_send("--json", "--", command)
        # the command's banner shows once the far shell has read the line: the probe's
        # answer came through the pipe before it (a reader stopped earlier fails the probe)
        b.wait_for(lambda: "[tmux-send] until [ -e" in b.screen(), "the command's banner")
        b.wait_for(lambda: _stream_cat(b) is not None, "the pipe's cat")
        cat = _stream_cat(b)
        assert cat is not None
        os.kill(cat, signal.SIGSTOP)  # what tmux copies now waits in its pipe
        try:
            flag.touch()
            b.wait_for(lambda: "started" in b.screen().splitlines(), "the output shown")
            for pid in sshd.connections(USERS["dash"]):
                os.kill(pid, signal.SIGKILL)
            b.wait_for(lambda: b.pane("#{pane_pipe}") == "0", "the call to close the pipe")
        finally:
            os.kill(cat, signal.SIGCONT)
            shutil.rmtree(folder)
        out, _ = proc.communicate(timeout=15)
        doc = json.loads(out)
        assert (doc["error_code"], doc["stdout"]) == ("far_shell_lost", "started\n"), doc
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")
        for left in far_err_files(USERS["dash"]) - before:
            left.unlink()


def test_far_programs_are_refused(far_bash: TestPane) -> None:
    """A REPL's prompt, a full-screen program, a password prompt and a program that
    shows nothing (cat) on the far side."""
    b = far_bash
    for start, shown, leave in [
        ("cat", "empty line", "C-d"),
        ("python3 -q", "`>>>", "exit()"),
        ("less /etc/passwd", "full-screen", "q"),
        ("sudo -k true", "password", "C-c"),
    ]:
        b.tmux("send-keys", "-t", b.target, start, "Enter")
        b.wait_for(lambda: b.screen().rstrip().splitlines()[-1:] != ["$"], start)
        if start == "cat":
            b.wait_for(lambda: b.pane("#{cursor_x}") == "0", "cat")
        if "sudo" in start:
            b.wait_for(lambda: "password" in b.screen(), "sudo's question")
        if "less" in start:
            b.wait_for(lambda: b.pane("#{alternate_on}") == "1", "less")
        if "python" in start:
            b.wait_for(lambda: b.screen().rstrip().endswith(">>>"), "python")
        before = b.screen()
        code, out, err = b.send_text("--", "echo should-not-run")
        assert (code, out) == (125, ""), err
        assert shown in err
        assert "should-not-run" not in b.screen()
        assert b.screen() == before
        if leave in ("C-c", "q", "C-d"):
            b.tmux("send-keys", "-t", b.target, leave)
        else:
            b.tmux("send-keys", "-t", b.target, leave, "Enter")
        b.wait_until_ready()


def test_a_pane_with_its_own_pipe_is_refused(far_bash: TestPane, tmp_path: Path) -> None:
    """The person's own pipe-pane (a logging plugin) is left alone, not replaced."""
    b = far_bash
    log = tmp_path / "log"
    b.tmux("pipe-pane", "-t", b.target, f"cat >> {log}")
    code, _, err = b.send_text("--", "echo should-not-run")
    assert code == 125 and "pipe-pane" in err
    assert b.pane("#{pane_pipe}") == "1"
    b.tmux("pipe-pane", "-t", b.target)


def test_ssh_half_typed_far_line_is_refused(far_bash: TestPane) -> None:
    b = far_bash
    assert b.send_text("--", "true")[0] == 0  # the far prompt is known from here on
    b.tmux("send-keys", "-t", b.target, "-l", "git sta")
    b.wait_for(lambda: b.screen().rstrip().endswith("git sta"), "the typed text")
    code, out, err = b.send_text("--", "echo should-not-run")
    assert (code, out) == (125, ""), err
    assert "typed `git sta`" in err
    b.tmux("send-keys", "-t", b.target, "C-u")
    assert b.send_text("--", "echo ok") == (0, "ok\n", "")


def test_ssh_overall_timeout_and_raw(far_bash: TestPane) -> None:
    result = far_bash.send("--max-time", "2", "--", "while :; do echo tick; sleep 0.2; done")
    assert result.returncode == 124
    assert result.stdout.startswith(b"tick\n")
    assert b"overall timeout" in result.stderr
    raw = far_bash.send("--raw", "--", r"printf '\033[1mbold\033[0m\n'")
    assert raw.stdout == b"\x1b[1mbold\x1b[0m\n"


@pytest.mark.parametrize("case", CORPUS[:6], ids=[c.test_id for c in CORPUS[:6]])
def test_ssh_output_exact(far_bash: TestPane, case: Case) -> None:
    expected = _direct("bash", case.command)
    result = far_bash.send("--raw", "--", case.command)
    assert (result.returncode, result.stdout, result.stderr) == (
        expected.returncode,
        expected.stdout,
        expected.stderr,
    )


def test_two_ssh_panes_at_once(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        second = b.tmux("split-window", "-t", b.target, "-P", "-F", "#{pane_id}").strip()
        b.wait_for(lambda: b.send_text("-p", second, "--", "true")[0] == 0, "the second pane")
        b.tmux("send-keys", "-t", second, sshd.command("zsh"), "Enter")
        b.wait_for(lambda: b.pane("#{pane_current_command}") == "ssh", "ssh")
        b.wait_for(lambda: b.send_text("-p", second, "--", "true")[0] == 0, "ssh in pane 2")
        started = time.monotonic()
        one = b.start_send("--", "sleep 1; id -un")
        two = b.start_send("-p", second, "--", "sleep 1; id -un")
        assert one.communicate(timeout=20)[0] == b"tbfar-bash\n"
        assert two.communicate(timeout=20)[0] == b"tbfar-zsh\n"
        assert time.monotonic() - started < 3.5  # in parallel, not one after the other


def test_far_shell_with_set_e_a_long_prompt_and_a_narrow_pane(sshd: Sshd) -> None:
    """`set -e` in the far shell, a two-line coloured prompt, a 30-column pane: a failing
    command ends that shell (as it would for the person), and says so."""
    with private_pane("bash") as b:
        b.start()
        b.tmux("resize-window", "-t", b.target, "-x", "30", "-y", "20")
        b.tmux("send-keys", "-t", b.target, sshd.command("bash"), "Enter")
        b.wait_for(lambda: b.foreground() == "ssh", "ssh")
        b.wait_until_ready()
        prompt = "PS1='\\[\\e[32m\\]\\u@\\h \\w\\[\\e[0m\\]\\n>> '"
        assert b.send_text("--", prompt)[0] == 0
        assert b.send_text("--", "set -e")[0] == 0
        expected = "x" * 200 + "\n"
        assert b.send_text("--", "printf '%0200d\\n' 0 | tr 0 x") == (0, expected, "")
        code, _, err = b.send_text("--", "false")
        assert code == 1
        assert "ended the far shell" in err
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")


def test_right_prompt_with_a_clock(make_bridge: MakeBridge) -> None:
    """A nested zsh whose right prompt is a clock: seen the first time, after a call,
    and after an interrupt brings the prompt back (the clock has moved on)."""
    shell_path("zsh")
    b = make_bridge("bash")
    b.start()
    b.tmux("send-keys", "-t", b.target, "zsh", "Enter")
    b.wait_for(lambda: b.foreground() == "zsh", "zsh to start")
    b.wait_until_ready()
    assert b.send_text("--", "RPROMPT='[%D{%H:%M:%S.%.}]'")[0] == 0
    b.wait_for(lambda: b.screen().rstrip().endswith("]"), "the right prompt")
    assert b.send_text("--", "echo hi") == (0, "hi\n", "")
    result = b.send("--json", "-t", "1", "--", "sleep 30")
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["status"], doc["stdout"]) == (124, 130, "")


def test_ssh_files_write_read_edit(far_bash: TestPane) -> None:
    """--write, --read and --edit through the far shell: the far host here is this
    machine, so the file is checked on disk as the test user's."""
    b = far_bash
    data = bytes(range(256)) * 20 + "héllo\n".encode()
    name = _own_name("tb-far", ".bin")
    on_disk = Path("/home/tbfar-bash") / name
    on_disk.unlink(missing_ok=True)
    doc = json.loads(b.send("--json", "--write", name, input=data).stdout)
    assert (doc["exit_status"], doc["file"]["abs_path"]) == (0, str(on_disk))
    assert on_disk.read_bytes() == data
    assert on_disk.stat().st_uid != 0  # written by the far shell's user
    assert b.send("--read", name).stdout == data
    assert b.send("--edit", name, "--old", "héllo", "--new", "bye").returncode == 0
    assert on_disk.read_bytes() == data.replace("héllo".encode(), b"bye")
    code, _, err = b.send_text("--read", "/nope")
    assert code == 125 and "does not exist" in err
    big = on_disk.parent / _own_name("tb-far-big", ".txt")  # more than fits in a command
    written = b.send("--write", str(big), input=b"x" * 130_000)
    assert (written.returncode, big.read_bytes()) == (0, b"x" * 130_000), written.stderr
    big.unlink()
    assert [p.read_bytes() for p in backups_of(on_disk.parent, on_disk)][-1:] == [data]
    on_disk.unlink()


def _own_name(prefix: str, suffix: str) -> str:
    """A file name in a far user's home that no other run of the suite on this machine
    uses at the same time (the far users are the machine's: another session's run
    would write and remove the same file under this one)."""
    return f"{prefix}-{os.getpid()}-{time.monotonic_ns()}{suffix}"


@pytest.mark.parametrize("shell", FAR_SHELLS)
def test_ssh_files_dash_names_and_umask(sshd: Sshd, shell: str) -> None:
    """Files through each far shell kind: names that start with `-` (read, edit, write
    over, backups), data that starts with `-`, and a new file's mode from the far
    shell's umask (027: 0640), an existing one's kept, as in a local pane."""
    from ..support.files import check_dash_names

    home = Path(f"/home/{USERS[shell]}")
    work = Path(tempfile.mkdtemp(prefix="tb-dash-names-", dir=home))  # this run's own
    shutil.chown(work, USERS[shell], USERS[shell])
    try:
        with private_pane("bash") as b:
            ssh_pane(b, sshd, shell)
            assert b.send_text("--", f"cd {work}; umask 027") == (0, "", "")
            check_dash_names(b, work, USERS[shell], home)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_ssh_edit_in_fish_right_after_its_read(sshd: Sshd) -> None:
    """An edit reads, then writes at once: fish draws its prompt a moment after the
    read's end marker, and the write waits for it (it was refused as not ready)."""
    target = Path(f"/home/{USERS['fish']}") / _own_name("tb-edit", ".txt")
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "fish")
        try:
            for number in range(1, 6):
                target.write_text(f"version {number}\n")
                shutil.chown(target, USERS["fish"], USERS["fish"])
                b.wait_for(lambda: b.pane("#{cursor_x}") != "0", "fish's prompt")
                edit = b.send("--edit", target.name, "--old", "version", "--new", "edit")
                assert edit.returncode == 0, (number, edit.stderr, b.screen())
                assert target.read_text() == f"edit {number}\n"
        finally:
            target.unlink(missing_ok=True)


def test_ssh_over_a_slow_link(sshd: Sshd) -> None:
    """100 ms each way between ssh and sshd: results stay exact, an interrupt still
    brings the status back."""
    with slow_link(sshd.port, 0.1) as port, private_pane("bash") as b:
        ssh_pane(b, sshd._replace(port=port), "fish")
        command = "echo out; echo err >&2; sh -c 'exit 5'"
        expected = _direct("fish", command)
        result = b.send("--", command)
        assert (result.returncode, result.stdout, result.stderr) == (
            5,
            expected.stdout,
            expected.stderr,
        )
        doc = json.loads(b.send("--json", "-t", "1", "--", "echo started; sleep 30").stdout)
        assert (doc["exit_status"], doc["status"], doc["stdout"]) == (124, 130, "started\n")


# --- strict options in the far shell ---------------------------------------------------------


class Strict(NamedTuple):
    shell: str
    options: str  # what the person types
    errexit: bool  # a failing command ends the shell
    # what an unset variable does: "line" ends the command line, "ends" the shell (its
    # EXIT trap prints the status), "lost" the shell without a trap or hook (zsh
    # err_exit: tmux-send sees the shell go away, as when a connection drops)
    unset: str


STRICT = [
    Strict("bash", "set -u", False, "line"),
    Strict("bash", "set -euo pipefail", True, "ends"),
    Strict("zsh", "setopt nounset", False, "line"),
    Strict("zsh", "setopt nounset err_exit pipefail", True, "lost"),
    Strict("dash", "set -eu", True, "line"),
]


def _person_sets(b: TestPane, options: str) -> None:
    """The person types ``options`` at the far prompt (`$ `) before any call there."""
    b.wait_for(lambda: b.screen().rstrip().endswith("$"), "the far prompt")
    b.tmux("send-keys", "-t", b.target, options, "Enter")

    def back() -> bool:
        lines = [line.rstrip() for line in b.screen().splitlines() if line.strip()]
        return lines[-2:] == [f"$ {options}", "$"]

    b.wait_for(back, "the far prompt after " + options)


def _strict_calls(b: TestPane, case: Strict) -> None:
    """The first call (probe, helpers) and the next work under the options; an unset
    variable fails the command as it would for the person, and `-e` ends the shell."""
    doc = json.loads(b.send("--json", "--", "echo out; echo err >&2").stdout)
    assert (doc["status"], doc["stdout"], doc["stderr"]) == (0, "out\n", "err\n"), b.screen()
    assert doc["shell"] == ("posix" if case.shell == "dash" else case.shell)
    user = doc["far"]["user"]
    before = far_err_files(user)
    code, out, err = b.send_text("--", "echo before; echo $tb_not_set; echo after")
    assert out == "before\n", (code, out, err, b.screen())
    if case.unset == "lost":
        assert code == 125 and "went away" in err, (code, err)
        for left in far_err_files(user) - before:
            left.unlink()  # the far shell died before it could (docs/far-shells.md: limits)
    else:
        assert code not in (0, 125) and "tb_not_set" in err, (code, err)
        assert ("ended the far shell" in err) == (case.unset == "ends")
    if case.unset == "line":
        code, out, err = b.send_text("--", "false; echo $?")
        if not case.errexit:
            assert (code, out, err) == (0, "1\n", "")
            return
        assert (code, out) == (1, "") and "ended the far shell" in err
    b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")


@pytest.mark.parametrize("case", STRICT, ids=[f"{c.shell}-{c.options}" for c in STRICT])
def test_strict_options_in_a_nested_shell(case: Strict) -> None:
    shell = case.shell
    with private_pane("bash") as b:
        b.env["ENV"] = str(b.home / ".shrc")
        (b.home / ".shrc").write_text("PS1='$ '\n")
        b.start()
        b.tmux("send-keys", "-t", b.target, f"{shell} -i" if shell == "dash" else shell, "Enter")
        b.wait_for(lambda: b.foreground() in (shell, "sh"), f"{shell} to start")
        _person_sets(b, case.options)
        _strict_calls(b, case)


@pytest.mark.parametrize("case", STRICT, ids=[f"{c.shell}-{c.options}" for c in STRICT])
def test_strict_options_over_ssh(sshd: Sshd, case: Strict) -> None:
    with private_pane("bash") as b:
        b.start()
        b.tmux("send-keys", "-t", b.target, sshd.command(case.shell), "Enter")
        b.wait_for(lambda: b.foreground() == "ssh", "ssh to start")
        _person_sets(b, case.options)
        _strict_calls(b, case)


# --- dry runs in a far shell -----------------------------------------------------------------

FISH_LOOP = "for i in 1 2; echo $i; end"
POSIX_LOOP = "for i in 1 2; do echo $i; done"


def test_check_parses_with_the_far_shells_kind(nested: TestPane) -> None:
    """--check in a pane whose far shell is not the pane's own (bash): the syntax is
    checked by this machine's binary of the far shell's kind, the one the last call
    recorded (nothing typed to learn it), and the status a parse error gets there is
    the real call's."""
    b = nested
    shell = b.far_shell  # type: ignore[attr-defined]
    kind = "posix" if shell == "dash" else shell
    good, bad = (FISH_LOOP, POSIX_LOOP) if shell == "fish" else (POSIX_LOOP, FISH_LOOP)
    assert b.send_text("--", "true")[0] == 0  # the far shell's kind is recorded
    result = b.send("--check", "--json", "--", good)
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["shell"], doc["parses"]) == (0, kind, True), doc
    assert doc["far"] == {
        "via": shell,
        "gateway_pid": _gateway_pid(b),
        "shell": kind,
        "kind_from": "last_call",
    }
    assert Path(doc["parsed_by"]).name == ("sh" if kind == "posix" else shell)
    word = "builtin" if shell == "fish" else "keyword"  # fish's `type -t for`
    assert (doc["first_word"], doc["resolves_as"], doc["typed_lookup"]) == ("for", word, True)
    text = b.send_text("--check", "--", bad)
    doc = json.loads(b.send("--check", "--json", "--", bad).stdout)
    assert doc["parses"] is False and doc["typed_lookup"] is False
    assert f"the far shell behind `{shell}`" in text[1], text
    real = b.send("--", bad)
    assert doc["would_exit"] == real.returncode != 0, (doc, real)
    # a word that expands is not looked up: the far checks alone, nothing typed
    b.wait_for(lambda: b.pane("#{cursor_x}") != "0", "the far prompt drawn again")
    before = b.history()
    doc = json.loads(b.send("--check", "--json", "--", "$EDITOR x").stdout)
    assert (doc["ready"], doc["would_exit"], doc["typed_lookup"]) == (True, 0, False), doc
    assert b.history() == before


def _gateway_pid(b: TestPane) -> int:
    """The pid of the program in front of the pane's shell."""
    shell = Path(f"/proc/{b.pane('#{pane_pid}')}/stat").read_text()
    return int(shell.rsplit(")", 1)[1].split()[5])  # tpgid


def test_check_over_ssh_probes_a_far_shell_not_seen_yet(sshd: Sshd) -> None:
    """No call went through this ssh yet: the dry run types the probe and the lookup,
    and judges the command in the far shell's kind (fish), not the pane's (bash)."""
    with private_pane("bash") as b:
        b.start()
        b.tmux("send-keys", "-t", b.target, sshd.command("fish"), "Enter")
        b.wait_for(lambda: b.foreground() == "ssh", "ssh to start")
        b.wait_for(lambda: b.screen().rstrip().endswith(">"), "fish's prompt")
        doc = json.loads(b.send("--check", "--json", "--", FISH_LOOP).stdout)
        assert (doc["shell"], doc["parses"], doc["typed_lookup"]) == ("fish", True, True), doc
        assert (doc["far"]["kind_from"], doc["far"]["via"]) == ("probe", "ssh")
        doc = json.loads(b.send("--check", "--json", "--", POSIX_LOOP).stdout)
        assert (doc["parses"], doc["far"]["kind_from"]) == (False, "last_call")
        assert doc["would_exit"] == b.send("--", POSIX_LOOP).returncode != 0
