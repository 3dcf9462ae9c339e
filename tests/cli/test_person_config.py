"""The person's own shell configuration: what broke tmux-send when a new user tried it.

Each test starts a bridge whose rc file carries one piece of a real configuration (a
DEBUG trap, vi editing, a status-showing prompt, ...) and checks both sides: the agent
gets exact results, and the person's shell behaves as before (their traps, hooks, history
and line editor). The broader matrix of whole configurations is in test_shell_configs.py.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from ..support.pane import BIN, TestPane

# What a shell prints when tmux-send's plumbing went wrong in it.
_JUNK = re.compile(
    r"command not found|invalid signal|no such file|does not exist|redirecting|parse error",
    re.I,
)

_RC = {"bash": ".bashrc", "zsh": ".zshrc", "fish": ".config/fish/config.fish"}


def _configured(
    make_bridge: Callable[[str], TestPane],
    shell: str,
    rc_text: str,
    ready: Callable[[str], bool] | None = None,
) -> TestPane:
    """A started bridge whose rc file has ``rc_text`` appended; ``ready`` tells from the
    screen that the prompt is drawn (default: the last line is ``$``)."""
    b = make_bridge(shell)
    rc = b.home / _RC[shell]
    rc.write_text(rc.read_text() + rc_text)
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "--detach"], env=b.env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    if ready is None:
        b.wait_for_prompt()
    else:
        b.wait_for(lambda: ready(b.screen()), "the shell's prompt")
    return b


def _run(b: TestPane, command: str) -> tuple[int, str, str]:
    result = b.send("--json", "--max-time", "20", "--", command)
    assert result.stdout, result.stderr
    document = json.loads(result.stdout)
    return result.returncode, document["stdout"], document["stderr"]


def _no_junk(b: TestPane) -> None:
    junk = [line for line in b.history().split("\n") if _JUNK.search(line)]
    assert not junk, f"the pane shows:\n{b.history()}"


def _cursor_line(b: TestPane) -> str:
    row = int(b.pane("#{cursor_y}"))
    return b.screen().split("\n")[row].rstrip()


# --- bash: a DEBUG trap with functrace, the person's EXIT trap ------------------------

_TITLE_TRAP = """set -o functrace
trap 'printf "\\033]0;%s\\007" "$BASH_COMMAND"' DEBUG
trap 'echo "bye $?" >> ~/exit.log' EXIT
"""


def test_a_debug_trap_with_functrace_prints_nothing_and_keeps_the_exit_trap(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = _configured(make_bridge, "bash", _TITLE_TRAP)
    assert _run(b, "echo one") == (0, "one\n", "")
    assert _run(b, "echo two; false") == (1, "two\n", "")
    _no_junk(b)
    # the person's EXIT trap is still theirs: it runs when they end the shell
    b.tmux("send-keys", "-t", b.target, "exit 7", "Enter")
    log = b.home / "exit.log"
    b.wait_for(lambda: log.exists() and log.read_text() == "bye 7\n", "the EXIT trap to run")


# --- zsh: a subshell that exits is not the shell exiting ------------------------------


def test_a_zsh_subshell_that_exits_is_not_the_shell_exiting(
    make_bridge: Callable[[str], TestPane],
) -> None:
    b = _configured(make_bridge, "zsh", "")
    shell_pid = b.pane("#{pane_pid}")
    assert _run(b, "(exit 3); echo more") == (0, "more\n", "")
    assert _run(b, "(exit 4)") == (4, "", "")
    assert _run(b, "echo $(exit 5) $?") == (0, "5\n", "")
    assert b.pane("#{pane_pid}") == shell_pid  # the shell was not restarted
    _no_junk(b)


# --- vi editing after the person pressed Escape ---------------------------------------

# Each shows its editing mode in the prompt, so the test can wait for normal mode.
_VI = {
    "bash": (
        "set -o vi\nbind 'set show-mode-in-prompt on'\n"
        "bind 'set vi-cmd-mode-string [N]'\nbind 'set vi-ins-mode-string [I]'\n"
    ),
    "zsh": (
        "bindkey -v\nKEYTIMEOUT=1\n"
        "zle-keymap-select() { PS1=${${KEYMAP/vicmd/[N]}/(main|viins)/[I]}'$ '; "
        "zle reset-prompt; }\nzle -N zle-keymap-select\nPS1='[I]$ '\n"
    ),
    "fish": "fish_vi_key_bindings\n",
}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_vi_normal_mode_is_left_before_typing(
    make_bridge: Callable[[str], TestPane], shell: str
) -> None:
    b = _configured(make_bridge, shell, _VI[shell], ready=lambda s: "[I]" in s)
    assert _run(b, "echo first") == (0, "first\n", "")
    b.wait_for(lambda: _cursor_line(b).rstrip().endswith("$"), "the prompt")
    b.tmux("send-keys", "-t", b.target, "Escape")
    b.wait_for(lambda: "[N]" in _cursor_line(b), "vi normal mode")
    assert _run(b, "echo hi") == (0, "hi\n", "")
    assert _run(b, "echo again") == (0, "again\n", "")
    _no_junk(b)
    # the person's line editor still edits: what they type runs
    b.wait_for(lambda: "[I]" in _cursor_line(b), "insert mode")
    b.tmux("send-keys", "-t", b.target, "-l", "echo typed-by-person")
    b.tmux("send-keys", "-t", b.target, "Enter")
    b.wait_for_text("\ntyped-by-person\n")


# --- Up-arrow after a call recalls the person's command -------------------------------

_HISTORY = {
    "bash": "HISTCONTROL=ignorespace\n",
    "zsh": "setopt hist_ignore_space\nHISTFILE=~/.zhistory\nSAVEHIST=100\nHISTSIZE=100\n",
    "fish": "",
}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_up_arrow_after_a_call_recalls_the_persons_last_command(
    make_bridge: Callable[[str], TestPane], shell: str
) -> None:
    b = _configured(make_bridge, shell, _HISTORY[shell])
    b.tmux("send-keys", "-t", b.target, "-l", "echo mine")
    b.tmux("send-keys", "-t", b.target, "Enter")
    b.wait_for_text("\nmine\n")
    b.wait_for(lambda: _cursor_line(b) == "$", "the prompt")
    assert _run(b, "echo agent") == (0, "agent\n", "")
    b.wait_for(lambda: _cursor_line(b) == "$", "the prompt after the call")
    b.tmux("send-keys", "-t", b.target, "Up")
    b.wait_for(lambda: _cursor_line(b) != "$", "Up to recall a line")
    assert _cursor_line(b) == "$ echo mine"
    b.tmux("send-keys", "-t", b.target, "C-u")
    b.wait_for(lambda: _cursor_line(b) == "$", "the line cleared")
    if shell == "zsh":  # the history saved at exit holds the person's line once, ours never
        b.tmux("send-keys", "-t", b.target, "-l", "exit")
        b.tmux("send-keys", "-t", b.target, "Enter")
        saved = b.home / ".zhistory"
        b.wait_for(lambda: "exit" in (saved.read_text() if saved.exists() else ""), "history")
        assert saved.read_text() == "echo mine\nexit\n"


# --- prompts that take their time --------------------------------------------------------

_SLOW = {
    "bash": "PS1='$(sleep 0.8)$ '\n",
    "zsh": "precmd() { sleep 0.8 }\n",
    "fish": "function fish_prompt; sleep 0.8; echo -n '$ '; end\n",
}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_a_slow_prompt_is_waited_for_not_taken_for_a_program(
    make_bridge: Callable[[str], TestPane], shell: str
) -> None:
    """The prompt's own programs (a command substitution, a hook running `git`) are the
    shell drawing its prompt after our call, not the person's program."""
    b = _configured(make_bridge, shell, _SLOW[shell])
    assert _run(b, "echo one") == (0, "one\n", "")
    assert _run(b, "echo two") == (0, "two\n", "")  # typed while the prompt still draws
    # calls queued behind each other find the prompt being drawn too
    procs = [b.start_send("--", f"echo queued-{n}") for n in range(2)]
    results = sorted(proc.communicate(timeout=60)[0] for proc in procs)
    assert results == [b"queued-0\n", b"queued-1\n"]
    assert [proc.returncode for proc in procs] == [0, 0]
    _no_junk(b)


def test_a_program_the_person_started_is_still_refused_quickly(
    make_bridge: Callable[[str], TestPane], tmp_path: Path
) -> None:
    """The patience for slow prompts is only for the prompt after our own call."""
    b = _configured(make_bridge, "bash", _SLOW["bash"])
    assert _run(b, "echo one") == (0, "one\n", "")
    b.wait_for(lambda: _cursor_line(b) == "$", "the prompt")
    go = tmp_path / "go"
    b.person_types(f"sh -c 'while [ ! -e {go} ]; do sleep 0.05; done'\r")
    b.wait_for(lambda: b.foreground() == "sh", "the person's program")
    code, _, err = b.send_text("--", "echo no")
    assert code == 125 and "`sh`" in err, err
    go.touch()


# --- prompts that show the last status -----------------------------------------------------

_STATUS = {
    "zsh": "RPROMPT='%(?..%? ↵)'\n",
    "fish": (
        'function fish_right_prompt; set -l s $status; test $s -ne 0; and echo -n "[$s]"; end\n'
    ),
}


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_a_right_prompt_showing_the_status_is_not_typed_text(
    make_bridge: Callable[[str], TestPane], shell: str
) -> None:
    b = _configured(make_bridge, shell, _STATUS[shell])
    assert _run(b, "false") == (1, "", "")
    assert _run(b, "echo after-failure") == (0, "after-failure\n", "")  # right after ours
    assert _run(b, "(exit 2)" if shell == "zsh" else "false") == (
        2 if shell == "zsh" else 1,
        "",
        "",
    )
    # the person ran a failing command of their own: the line is read afresh
    b.wait_for(lambda: _cursor_line(b).startswith("$"), "the prompt")
    b.person_types("false\r")
    b.wait_for(lambda: _cursor_line(b).startswith("$") and "false" not in _cursor_line(b), "it")
    assert _run(b, "echo mine-failed") == (0, "mine-failed\n", "")
    # and what the person types is still seen, without the right prompt
    b.wait_for(lambda: _cursor_line(b).startswith("$"), "the prompt")
    b.person_types("false\r")
    b.wait_for(lambda: "↵" in _cursor_line(b) or "[1]" in _cursor_line(b), "the status")
    b.person_types("git sta")
    b.wait_for(lambda: "git sta" in _cursor_line(b), "the typing")
    code, _, err = b.send_text("--", "echo no")
    assert code == 125
    assert "typed `git sta`" in err, err


def test_a_left_prompt_showing_the_status_after_our_call(
    make_bridge: Callable[[str], TestPane],
) -> None:
    """Right after our own call nothing can have been typed, so a prompt that grew a
    status is learnt, not refused."""
    rc = "PS1='$ $(s=$?; [ $s = 0 ] || printf \"[%s] \" $s)'\n"
    b = _configured(make_bridge, "bash", rc)
    assert _run(b, "true") == (0, "", "")
    assert _run(b, "(exit 3)") == (3, "", "")
    assert _run(b, "echo next") == (0, "next\n", "")
    assert _run(b, "(exit 4)") == (4, "", "")
    assert _run(b, "echo again") == (0, "again\n", "")
