"""Shells inside shells: commands run in a shell the pane's shell started (a nested
bash, zsh, fish or dash; `su - user`; `sudo -i`), through the pane alone.

Expected values come from running the same command directly (``<shell> -c CMD``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from .conftest import Bridge, _bridge, shell_path

FAR_SHELLS = ["bash", "zsh", "fish", "dash"]


def enter_nested(b: Bridge, shell: str, line: str | None = None) -> None:
    """The person starts ``line`` (default: ``shell``) in the pane; wait for its prompt
    to let tmux-send in."""
    comm = "sh" if shell == "dash" else shell
    b.tmux("send-keys", "-t", b.target, line or shell, "Enter")
    b.wait_for(lambda: b.foreground() == comm or comm in b.foreground(), f"{shell} to start")
    b.wait_until_ready()


@pytest.fixture(scope="module", params=FAR_SHELLS)
def nested(request: pytest.FixtureRequest) -> Iterator[Bridge]:
    """A bash pane in which the person started another shell (prompt `$ `)."""
    shell: str = request.param
    shell_path(shell)
    with _bridge("bash") as b:
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
def test_output_exact_in_far_shell(nested: Bridge, case: Case) -> None:
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


def test_status_stderr_and_state(nested: Bridge, tmp_path: Path) -> None:
    shell = nested.far_shell  # type: ignore[attr-defined]
    command = "echo out; echo err >&2; false"
    expected = _direct(shell, command)
    result = nested.send("--json", "--", command)
    doc = json.loads(result.stdout)
    assert (doc["stdout"], doc["stderr"], doc["status"]) == ("out\n", "err\n", 1)
    assert doc["stdout"].encode() == expected.stdout
    assert doc["stderr"].encode() == expected.stderr
    assert doc["shell"] == ("posix" if shell == "dash" else shell)
    assert doc["far"]["via"] == shell if shell != "dash" else "sh"
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
