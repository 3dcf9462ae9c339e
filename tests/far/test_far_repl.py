"""REPL mode in a far shell: python3 (and node) started through a real ssh connection
to the test sshd (tests/support/sshd.py), driven through the pane alone.

Expected values come from the same code run by a local interpreter, or are plain text.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator

import pytest

from ..support.pane import MakeBridge, TestPane, private_pane, stream_stopped
from ..support.sshd import USERS, Sshd, ensure_user, running_sshd, slow_link, ssh_pane

pytestmark = pytest.mark.tmux


@pytest.fixture(scope="module")
def sshd() -> Iterator[Sshd]:
    with running_sshd() as server:
        yield server


def repl(b: TestPane, code: str, *options: str, name: str = "python") -> tuple[int, str, str]:
    return b.send_text(*options, "--repl", name, "--", code)


def start_python(b: TestPane) -> None:
    code, out, err = b.send_text("--repl", "python", "--", "python3 -q")
    assert (code, out) == (0, ""), (err, b.screen())


@pytest.fixture(scope="module")
def far_python(sshd: Sshd) -> Iterator[TestPane]:
    """A pane logged in over ssh as the bash user, python3 started there by tmux-send
    (one for the module: the tests that end it come last, in their own panes)."""
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        yield b


def test_start_is_recorded_with_the_far_facts(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        doc = json.loads(b.send("--json", "--repl", "python", "--", "python3").stdout)
        assert (doc["status"], doc["mode"], doc["repl"]) == (0, "repl_start", "python")
        assert "Python 3" in doc["stdout"]
        assert ">>>" not in doc["stdout"]  # the prompt is no output
        assert (doc["far"]["via"], doc["far"]["user"]) == ("ssh", USERS["bash"])
        uid = b.send("--json", "--repl", "python", "--", "import os; os.getuid()")
        doc = json.loads(uid.stdout)
        assert doc["status"] == 0
        assert doc["stdout"] == f"{_uid(USERS['bash'])}\n"
        assert (doc["far"]["via"], doc["far"]["user"]) == ("ssh", USERS["bash"])
        # the start made no stderr file (one would outlive a dropped connection): the
        # far shell's private directory holds only the file of the call that looks
        assert b.send_text("--close")[0] == 0
        others = 'for f in "$__tmux_send_d"/*; do [ "$f" = "$__tmux_send_err" ] || echo "$f"; done'
        assert b.send_text("--", others) == (0, "", "")


def _uid(user: str) -> int:
    return int(subprocess.run(["id", "-u", user], capture_output=True, text=True).stdout)


def test_values_statements_and_state(far_python: TestPane) -> None:
    b = far_python
    assert repl(b, "6 * 7") == (0, "42\n", "")
    assert repl(b, "data = [1, 2, 3]") == (0, "", "")
    assert repl(b, "sum(data)") == (0, "6\n", "")
    assert repl(b, "'text'") == (0, "'text'\n", "")
    assert repl(b, "print('no newline', end='')") == (0, "no newline", "")
    assert repl(b, "None") == (0, "", "")


def test_multi_line_block(far_python: TestPane) -> None:
    block = "\n".join(
        [
            "def f(n):",
            "    total = 0",
            "",
            "    for i in range(n):",
            "        total += i",
            "",
            "    return total",
            "",
            "class C:",
            "    x = f(4)",
            "",
            "print(C.x)",
            "C.x + 1",
        ]
    )
    assert repl(far_python, block) == (0, "6\n7\n", "")
    assert repl(far_python, "f(5)") == (0, "10\n", "")


def test_exception_gives_status_1_and_the_traceback(far_python: TestPane) -> None:
    code, out, err = repl(far_python, "x = 1\n1 / 0")
    assert (code, err) == (1, "")
    assert re.fullmatch(
        r'Traceback \(most recent call last\):\n  File "<tmux-send>", line 2, in <module>\n'
        r"ZeroDivisionError: division by zero\n",
        out,
    ), out
    code, out, _ = repl(far_python, "def broken(:")
    assert code == 1 and "SyntaxError" in out
    assert repl(far_python, "x") == (0, "1\n", "")


SPECIAL = 'it\'s "q" \\ é → 世界 😀 !x $HOME `ls` %s \t| \x01'


def test_quotes_backslashes_unicode_and_tabs_arrive_intact(far_python: TestPane) -> None:
    code = f"s = {SPECIAL!r}\nprint(s)\nprint(len(s), ascii(s))"
    expected = subprocess.run(["python3", "-c", code], capture_output=True).stdout.decode()
    assert repl(far_python, code) == (0, expected, "")
    tabbed = "if True:\n\tprint('tab\\tindented')"
    assert repl(far_python, tabbed) == (0, "tab\tindented\n", "")


def test_a_hundred_kilobytes_of_code(far_python: TestPane) -> None:
    code = "\n".join(f"v{i} = {i}  # é'\"\\" for i in range(4000)) + "\nprint(v3999 + 1)"
    code += "\nlen('" + "x" * 40_000 + "')"
    assert len(code.encode()) > 100_000
    assert repl(far_python, code, "--timeout", "60") == (0, "4000\n40000\n", "")


def test_a_hundred_thousand_lines_of_output(far_python: TestPane) -> None:
    result = far_python.send("--repl", "python", "--", "for i in range(1, 100001): print(i)")
    expected = subprocess.run(["seq", "1", "100000"], capture_output=True).stdout
    assert (result.returncode, result.stdout) == (0, expected), result.stderr


def test_timeout_interrupts_and_the_repl_stays_open(far_python: TestPane) -> None:
    endless = ("--repl", "python", "--", "while True: pass")
    result = far_python.send("--json", "--timeout", "1", *endless)
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["status"]) == (124, None), doc  # as locally
    assert (doc["timed_out"], doc["signals_sent"]) == ("idle", ["SIGINT"])
    assert "KeyboardInterrupt" in doc["stdout"]
    assert "^C" not in doc["stdout"]
    assert any("back at its prompt" in note for note in doc["notes"]), doc["notes"]
    assert repl(far_python, "'still open'") == (0, "'still open'\n", "")


def test_the_person_answers_input(far_python: TestPane) -> None:
    """Waiting for input is seen on the screen (an unfinished line, silence), and holds
    the idle timeout; the far terminal's echo of the answer is in stdout (a far limit)."""
    b = far_python
    proc = b.start_send(
        "--timeout", "1.5", "--repl", "python", "--", "print('hi', input('Name? '))"
    )
    assert proc.stderr is not None
    notice = b.read_line_from(proc.stderr)
    assert b"the REPL seems to wait for input" in notice and b"Name?" in notice, notice
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=2)  # longer than the idle timeout
    b.tmux("send-keys", "-t", b.target, "-l", "Ada")
    b.tmux("send-keys", "-t", b.target, "Enter")
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, b"Name? Ada\nhi Ada\n"), err


def test_the_screen_ahead_of_the_stream_ends_nothing_early(far_python: TestPane) -> None:
    """tmux draws what the call's stream (the pane's pipe) has not brought yet: the
    REPL's prompt back on the screen, the end marker still on its way, is not a prompt
    back without one (the call ended then, dropping the unfinished line "Name? "). The
    pipe's writer is stopped while the person answers, so the screen runs ahead."""
    b = far_python
    proc = b.start_send("--repl", "python", "--", "print('hi', input('Name? '))")
    assert proc.stderr is not None
    notice = b.read_line_from(proc.stderr)
    assert b"seems to wait for input" in notice, notice
    with stream_stopped(b):
        b.tmux("send-keys", "-t", b.target, "-l", "Ada")
        b.tmux("send-keys", "-t", b.target, "Enter")
        b.wait_for(lambda: b.screen().rstrip().endswith("hi Ada\n>>>"), "the prompt back")
        with pytest.raises(subprocess.TimeoutExpired):
            proc.wait(timeout=2)  # silence, and the prompt on the screen: looked at
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, out) == (0, b"Name? Ada\nhi Ada\n"), err


def test_the_persons_ctrl_c_gives_status_1(far_python: TestPane) -> None:
    b = far_python
    code = "import time\nprint('started', flush=True)\ntime.sleep(30)"
    proc = b.start_send("--repl", "python", "--", code)
    assert b.read_line(proc) == b"started\n"
    b.tmux("send-keys", "-t", b.target, "C-c")
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 1, err
    assert out.decode().endswith("KeyboardInterrupt\n")
    assert repl(b, "'open'") == (0, "'open'\n", "")


def test_the_call_cancelled_by_a_signal(far_python: TestPane) -> None:
    """tmux-send itself gets SIGINT: Ctrl-C goes through the pane, the call ends with
    130 and the REPL stays open."""
    b = far_python
    proc = b.start_send(
        "--repl", "python", "--", "import time\nprint('started', flush=True)\ntime.sleep(30)"
    )
    assert b.read_line(proc) == b"started\n"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=15)
    assert proc.returncode == 130, err
    assert repl(b, "'open'") == (0, "'open'\n", "")


def test_plain_command_and_other_repl_are_refused(far_python: TestPane) -> None:
    code, _, err = far_python.send_text("--", "echo no")
    assert code == 125 and "--repl python" in err, err
    code, _, err = repl(far_python, "1", name="node")
    assert code == 125 and "the open REPL is python" in err


def test_unsupported_preset_is_refused(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        before = b.screen()
        result = b.send("--json", "--repl", "sqlite", "--", "sqlite3")
        doc = json.loads(result.stdout)
        assert (result.returncode, doc["error_code"]) == (125, "far_repl_unsupported")
        assert "python" in doc["error"]
        assert b.screen() == before  # nothing typed
        prompt = ("--prompt", r"^calc> ?$")
        result = b.send("--json", "--repl", "calc", *prompt, "--", "python3")
        assert json.loads(result.stdout)["error_code"] == "far_repl_unsupported"
        assert b.send_text("--", "echo far") == (0, "far\n", "")


def test_close_brings_the_far_prompt_back(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        assert repl(b, "x = 5") == (0, "", "")
        code, out, err = b.send_text("--close")
        assert (code, out) == (0, ""), err
        assert "Closed the python REPL" in err
        assert b.send_text("--", "id -un; echo $0") == (0, f"{USERS['bash']}\n-bash\n", "")
        assert b.foreground() == "ssh"
        code, _, err = b.send_text("--close")
        assert code == 0 and "No REPL is open" in err


def test_the_person_quitting_the_repl_is_noticed(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        (entry,) = json.loads(b.bridge_cli("panes", "--json").stdout)
        assert entry["front"] == {"kind": "repl", "program": "python"}
        b.tmux("send-keys", "-t", b.target, "exit()", "Enter")
        b.wait_for(lambda: b.screen().rstrip().endswith("$"), "the far shell's prompt")
        (entry,) = json.loads(b.bridge_cli("panes", "--json").stdout)
        assert entry["front"] == {"kind": "remote_shell", "program": "ssh"}
        result = b.send("--json", "--repl", "python", "--", "1")
        doc = json.loads(result.stdout)
        assert (result.returncode, doc["error_code"]) == (125, "repl_not_open"), doc
        assert "no longer running" in doc["error"]
        assert b.send_text("--", "echo fine") == (0, "fine\n", "")


def test_exit_evaluated_ends_the_repl(sshd: Sshd) -> None:
    """exit() as code: status 0 (as locally), then the REPL is gone and the far shell
    takes commands."""
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        assert repl(b, "print('bye')\nexit()") == (0, "bye\n", "")
        code, _, err = repl(b, "1")
        assert code == 125 and "no longer running" in err, (err, b.screen())
        assert b.send_text("--", "echo far") == (0, "far\n", "")


def test_a_half_typed_repl_line_is_refused(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        b.tmux("send-keys", "-t", b.target, "-l", "impo")
        b.wait_for(lambda: b.screen().rstrip().endswith(">>> impo"), "the typed text")
        code, _, err = repl(b, "1")
        assert code == 125 and "impo" in err, err
        b.tmux("send-keys", "-t", b.target, "Home")  # the cursor back to the prompt's end
        b.wait_for(lambda: b.pane("#{cursor_x}") == "4", "the cursor after the prompt")
        code, _, err = repl(b, "1")
        assert code == 125 and "impo" in err, err
        b.tmux("send-keys", "-t", b.target, "End", "C-u")
        b.wait_for(lambda: b.screen().rstrip().endswith(">>>"), "the line cleared")
        assert repl(b, "2") == (0, "2\n", "")
        b.tmux("send-keys", "-t", b.target, "for i in range(2):", "Enter")  # a block begun
        b.wait_for(lambda: b.screen().rstrip().endswith("..."), "the continuation prompt")
        code, _, err = repl(b, "3")
        assert code == 125 and "begun a block" in err, err
        b.tmux("send-keys", "-t", b.target, "  print(i)", "Enter", "Enter")
        b.wait_for(lambda: b.screen().rstrip().endswith("1\n>>>"), "the block run")
        assert repl(b, "4") == (0, "4\n", "")


def test_python_failing_to_start_reports_its_status(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        code, out, err = b.send_text("--repl", "python", "--", "tb-no-such-python")
        assert code == 127, (out, err)
        assert "tb-no-such-python" in out + err
        assert b.send_text("--", "echo far") == (0, "far\n", "")


def test_repl_exiting_mid_evaluation(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        code, out, err = repl(b, "import os\nprint('bye', flush=True)\nos._exit(3)")
        assert (code, out) == (125, "bye\n"), err
        assert "exited during the evaluation" in err
        assert b.send_text("--", "echo far") == (0, "far\n", "")


def test_connection_dropped_mid_evaluation(sshd: Sshd) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "dash")
        start_python(b)
        proc = b.start_send(
            "--json", "--repl", "python", "--", "import time\nprint('started')\ntime.sleep(30)"
        )
        b.wait_for(lambda: "started" in b.screen().splitlines(), "the code to start")
        for pid in sshd.connections(USERS["dash"]):
            os.kill(pid, signal.SIGKILL)
        out, _ = proc.communicate(timeout=15)
        assert proc.returncode == 125
        doc = json.loads(out)
        assert (doc["error_code"], doc["stdout"]) == ("far_shell_lost", "started\n")
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")
        code, _, err = repl(b, "1")
        assert code == 125 and "no longer running" in err, err
        assert b.send_text("--", "echo local") == (0, "local\n", "")


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_other_far_login_shells(sshd: Sshd, shell: str) -> None:
    with private_pane("bash") as b:
        ssh_pane(b, sshd, shell)
        start_python(b)
        assert repl(b, "import os; os.environ['SHELL'].rsplit('/', 1)[1]") == (
            0,
            f"'{shell}'\n",
            "",
        )
        code, _, err = b.send_text("--close")
        assert code == 0, err
        assert b.send_text("--", "echo back") == (0, "back\n", "")


def test_node(sshd: Sshd) -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        code, out, err = b.send_text("--repl", "node", "--", "node")
        assert code == 0, (out, err, b.screen())
        assert repl(b, "let total = 6\ntotal * 7", name="node") == (0, "42\n", "")
        assert repl(b, "total + 1", name="node") == (0, "7\n", "")
        code, out, _ = repl(b, "nope()", name="node")
        assert code == 1 and out.startswith("Uncaught ReferenceError: nope is not defined")
        special = "console.log('it\\'s \"q\" \\\\ é 😀 !x \\t|')"
        assert repl(b, special, name="node") == (0, 'it\'s "q" \\ é 😀 !x \t|\n', "")
        big = "'" + "x" * 100_000 + "'.length"
        assert repl(b, big, "--timeout", "60", name="node") == (0, "100000\n", "")
        code, _, err = repl(b, "while (true) {}", "--timeout", "1", name="node")
        assert code == 124, err
        assert repl(b, "'still ' + 'open'", name="node") == (0, "'still open'\n", "")
        code, _, err = b.send_text("--close")
        assert code == 0, err
        assert b.send_text("--", "echo back") == (0, "back\n", "")


def test_a_repl_the_person_started_anew_is_not_taken_for_ours(sshd: Sshd) -> None:
    """The person quits the REPL and starts another python: its prompt shows, but it has
    no helper; the call says so instead of waiting for its timeout."""
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        start_python(b)
        b.tmux("send-keys", "-t", b.target, "exit()", "Enter")
        b.wait_for(lambda: b.screen().rstrip().endswith("$"), "the far shell's prompt")
        b.tmux("send-keys", "-t", b.target, "python3 -q", "Enter")
        b.wait_for(lambda: b.screen().rstrip().endswith(">>>"), "the person's python")
        # long code: its literal's lines stay on the main screen, where the person looks
        code, out, err = repl(b, "1 + " * 1000 + "1", "--timeout", "20")
        assert (code, out) == (125, ""), err
        assert "not the one tmux-send started" in err
        assert b.pane("#{alternate_on}") == "0"


@pytest.mark.parametrize(
    ("line", "via"), [("bash --norc", "bash"), ("su - tbfar-zsh", "zsh")], ids=["bash", "su"]
)
def test_far_shells_on_the_panes_own_terminal(make_bridge: MakeBridge, line: str, via: str) -> None:
    """A nested shell and `su -` run the REPL on the pane's own terminal, which then
    holds the REPL's job, not the gateway's: the REPL is still theirs."""
    if line.startswith("su"):
        ensure_user("zsh")
    b = make_bridge("bash")
    b.start()
    b.tmux("send-keys", "-t", b.target, line, "Enter")
    b.wait_for(lambda: b.foreground() != "bash" or line.startswith("bash"), "the far shell")
    b.wait_until_ready()
    doc = json.loads(b.send("--json", "--repl", "python", "--", "python3 -q").stdout)
    assert (doc["status"], doc["far"]["via"]) == (0, via), doc  # su's shell is in front
    assert repl(b, "import os; os.getppid() != 0") == (0, "True\n", "")
    code, _, err = b.send_text("--", "echo refused")
    assert code == 125 and "--repl python" in err
    assert b.send_text("--close")[0] == 0
    assert b.send_text("--", "echo closed") == (0, "closed\n", "")


def test_over_a_slow_link(sshd: Sshd) -> None:
    """100 ms each way between ssh and sshd: the REPL starts, results stay exact (a long
    block too), and a timeout's Ctrl-C still brings the REPL back."""
    with slow_link(sshd.port, 0.1) as port, private_pane("bash") as b:
        ssh_pane(b, sshd._replace(port=port), "bash")
        start_python(b)
        assert repl(b, "6 * 7") == (0, "42\n", "")
        code = "s = '" + "é" * 3000 + "'\nlen(s)"
        assert repl(b, code, "--timeout", "30") == (0, "3000\n", "")
        result = b.send("--json", "--timeout", "1", "--repl", "python", "--", "while 1: pass")
        notes = "\n".join(json.loads(result.stdout)["notes"])
        assert result.returncode == 124 and "back at its prompt" in notes, notes
        assert repl(b, "'open'") == (0, "'open'\n", "")
