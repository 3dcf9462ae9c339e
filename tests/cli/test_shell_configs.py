"""A matrix of realistic shell configurations: the prompt themes, plugins and hooks people
keep in their rc files, from the Debian packages that ``.ci/deps`` installs.

Each configuration is one small rc file. Its scenario runs once per module, through the
real tmux-send (the agent) and keys typed into the pane (the person), and one test per
check reads the record. Its calls wait until the prompt is drawn (and are repeated while
the pane is busy): that is when tmux-send sees the whole prompt line, and a call during
a slow prompt is a check of its own.

- ``exact``: ``echo out; echo err >&2; <fails>`` gives exact stdout, stderr and status
  (bash and zsh fail with ``(exit 3)``, fish with ``false``);
- ``second-call``: the call after ``false`` is let in (a prompt that shows the last
  status must not lock the agent out);
- ``clean-pane``: no line of the pane's history reads as a shell error;
- ``hooks``: the person's own hooks ran once per prompt and saw each command's status;
- ``exit-trap``: after the calls, the person's ``trap`` listing still shows their EXIT
  trap, and it runs when they end the shell.

Configurations with vi editing also check a call made while the person left the line
editor in normal mode (``vi-normal-mode``), and those that keep lines typed with a
leading space out of history check that Up recalls the person's own last command
(``up-arrow``); a prompt that takes long to draw checks a call made meanwhile
(``slow-prompt``).

The person types through a tmux client attached to the session, as a person does, so
tmux counts their keys as the session's activity.
"""

from __future__ import annotations

import functools
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ..support.pane import WAIT, MakeBridge, TestPane

_RC_PATH = {"bash": ".bashrc", "zsh": ".zshrc", "fish": ".config/fish/config.fish"}

# --- the person's own hooks and EXIT trap, in every configuration of a shell ----------
# The hooks append to ~/hooks.log: bash's prompt hook the status it sees (`$?`), zsh's
# and fish's `preexec` before each command line and the status after it.

_BASH_PERSON = """ulimit -c 0
__person_hook() { local s=$?; echo "$s" >> ~/hooks.log; return "$s"; }
trap 'echo "exit trap $?" >> ~/exit.log' EXIT
"""
# First in PROMPT_COMMAND, where it sees the command's status (zoxide's hook clobbers it).
_BASH_HOOK_FIRST = 'PROMPT_COMMAND="__person_hook${PROMPT_COMMAND:+;$PROMPT_COMMAND}"\n'

_ZSH_PERSON = """ulimit -c 0
HISTFILE=~/.zsh_history HISTSIZE=1000 SAVEHIST=1000
autoload -Uz add-zsh-hook
__person_precmd() { print -r -- $? >> ~/hooks.log }
__person_preexec() { print -r -- preexec >> ~/hooks.log }
add-zsh-hook precmd __person_precmd
add-zsh-hook preexec __person_preexec
trap 'echo "exit trap $?" >> ~/exit.log' EXIT
"""

_FISH_PERSON = """ulimit -c 0
set -g fish_greeting ''
function __person_preexec --on-event fish_preexec
    echo preexec >> ~/hooks.log
end
function __person_postexec --on-event fish_postexec
    echo $status >> ~/hooks.log
end
trap 'echo "exit trap" >> ~/exit.log' EXIT
"""

# --- the configurations ---------------------------------------------------------------

_LIQUIDPROMPT = "/usr/share/liquidprompt/liquidprompt"
_POWERLINE = "/usr/share/powerline/bindings/bash/powerline.sh"
_BASH_COMPLETION = "/usr/share/bash-completion/bash_completion"
_FZF_BINDINGS = "/usr/share/doc/fzf/examples/key-bindings.bash"
_P9K = "/usr/share/powerlevel9k/powerlevel9k.zsh-theme"
_AUTOSUGGEST = "/usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh"
_HIGHLIGHT = "/usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh"
_TOOLS = ("/usr/bin/zoxide", "/usr/bin/direnv")

# bash-completion, fzf's key bindings, zoxide's and direnv's prompt hooks; the person's
# hook is added after them, as a string or (bash >= 5.1) an array PROMPT_COMMAND.
_BASH_TOOLS = f"""PS1='\\u@\\h:\\w\\$ '
HISTCONTROL=ignoreboth
. {_BASH_COMPLETION}
. {_FZF_BINDINGS}
eval "$(zoxide init bash)"
eval "$(direnv hook bash)"
"""

# powerlevel9k without its right prompt, which the person's RPROMPT shows the failed
# status in; a transient prompt (earlier prompts redrawn as `%#`), vi editing.
_ZSH_FULL = f"""setopt hist_ignore_space
bindkey -v
POWERLEVEL9K_LEFT_PROMPT_ELEMENTS=(dir vi_mode)
POWERLEVEL9K_DISABLE_RPROMPT=true
source {_P9K}
RPROMPT='%(?..%? ↵)'
__person_transient_prompt() {{
    local prompt=$PROMPT rprompt=$RPROMPT
    PROMPT='%# ' RPROMPT=''
    zle .reset-prompt && zle -R
    PROMPT=$prompt RPROMPT=$rprompt
}}
zle -N zle-line-finish __person_transient_prompt
source {_AUTOSUGGEST}
source {_HIGHLIGHT}
"""

# fish's own default prompts show `[status]` only after a failure, as this one does.
_FISH_VI = """fish_vi_key_bindings
function fish_prompt
    echo -n (prompt_pwd) '> '
end
function fish_right_prompt
    set -l last $status
    test $last -ne 0; and echo -n "[$last]"
end
"""

# A prompt that takes a while: the command drawing it stands in for a slow `git status`.
# bash waits for it as for any command; fish's main thread mostly polls meanwhile, so
# whether a call is refused during fish's depends on the machine's load, and only bash's
# is checked with a call made while it is drawn (fish's gets the other checks).
_BASH_SLOW = "PS1='\\w \\$ '\nPROMPT_COMMAND='__person_hook; sleep 1'\n"

_FISH_SLOW = """function fish_prompt
    sleep 0.8
    echo -n (prompt_pwd) '> '
end
"""


class Config(NamedTuple):
    test_id: str
    shell: str
    rc: str  # the shell's whole rc file
    needs: tuple[str, ...] = ()  # files of the packages it uses (skipped without them)
    vi: tuple[str, str] | None = None  # what the prompt shows in insert and normal mode
    ignores_space: bool = False  # lines typed with a leading space stay out of history
    slow_prompt: str = ""  # the program the prompt runs for a second
    bash_5_1: bool = False  # PROMPT_COMMAND as an array


CONFIGS = [
    Config(
        "bash-liquidprompt",
        "bash",
        _BASH_PERSON + f"[[ $- = *i* ]] && source {_LIQUIDPROMPT}\n" + _BASH_HOOK_FIRST,
        needs=(_LIQUIDPROMPT,),
    ),
    Config(
        "bash-powerline",
        "bash",
        _BASH_PERSON
        + f"POWERLINE_BASH_CONTINUATION=1\nPOWERLINE_BASH_SELECT=1\n. {_POWERLINE}\n"
        + _BASH_HOOK_FIRST,
        needs=(_POWERLINE,),
    ),
    Config(
        "bash-tools-string",
        "bash",
        _BASH_PERSON + _BASH_TOOLS + _BASH_HOOK_FIRST,
        needs=(_BASH_COMPLETION, _FZF_BINDINGS, *_TOOLS),
        ignores_space=True,
    ),
    Config(
        "bash-tools-array",
        "bash",
        _BASH_PERSON
        + _BASH_TOOLS
        + "PROMPT_COMMAND=(__person_hook \"$PROMPT_COMMAND\" 'history -a')\n",
        needs=(_BASH_COMPLETION, _FZF_BINDINGS, *_TOOLS),
        ignores_space=True,
        bash_5_1=True,
    ),
    Config(
        "bash-strict-vi",
        "bash",
        _BASH_PERSON
        + "set -o vi\nbind 'set show-mode-in-prompt on'\n"
        + "bind 'set enable-bracketed-paste on'\n"
        + "PS1='\\w \\$ '\nPS0='started \\t\\n'\nPROMPT_COMMAND=__person_hook\nset -u\n",
        vi=("(ins)", "(cmd)"),
    ),
    Config(
        "bash-debug-trap",
        "bash",
        _BASH_PERSON
        # the window title follows the running command: a common DEBUG trap
        + "PS1='\\w \\$ '\nset -o functrace\n"
        + 'trap \'printf "\\033]0;%s\\007" "$BASH_COMMAND"\' DEBUG\n'
        + "PROMPT_COMMAND=__person_hook\n",
    ),
    Config("bash-slow-prompt", "bash", _BASH_PERSON + _BASH_SLOW, slow_prompt="sleep"),
    Config(
        "zsh-p9k-vi",
        "zsh",
        _ZSH_PERSON + _ZSH_FULL,
        needs=(_P9K, _AUTOSUGGEST, _HIGHLIGHT),
        vi=("INSERT", "NORMAL"),
        ignores_space=True,
    ),
    Config("fish-vi", "fish", _FISH_PERSON + _FISH_VI, vi=("[I]", "[N]"), ignores_space=True),
    Config(
        "fish-slow-prompt",
        "fish",
        _FISH_PERSON + _FISH_SLOW,
        ignores_space=True,
    ),
]


def _failing(shell: str) -> tuple[str, int]:
    """A command printing `out` and `err` that fails, and its status."""
    if shell == "fish":
        return "echo out; echo err >&2; false", 1
    return "echo out; echo err >&2; (exit 3)", 3


def _cases(configs: Sequence[Config] = CONFIGS) -> list[Any]:
    return [pytest.param(config, id=config.test_id) for config in configs]


@functools.cache
def _bash_version() -> tuple[int, int]:
    result = subprocess.run(
        ["bash", "-c", 'echo "${BASH_VERSINFO[0]} ${BASH_VERSINFO[1]}"'],
        capture_output=True,
        text=True,
    )
    major, minor = result.stdout.split()
    return int(major), int(minor)


def _started(make_bridge: MakeBridge, config: Config) -> TestPane:
    """A running bridge with ``config``'s rc file, after one ``tmux-send -- true``."""
    missing = [path for path in config.needs if not Path(path).exists()]
    if missing:
        pytest.skip(f"not installed: {', '.join(missing)} (`bash .ci/deps` installs them)")
    if config.bash_5_1 and _bash_version() < (5, 1):
        pytest.skip("PROMPT_COMMAND is an array from bash 5.1 on")
    files = {_RC_PATH[config.shell]: config.rc}
    if config.shell == "fish":
        # A person's fish has its completions from the man pages already: at its first
        # start fish spends a minute of CPU making them, in its own process group.
        files[".local/share/fish/generated_completions/README"] = "made at fish's first start\n"
    b = make_bridge(config.shell, files)
    b.start()
    return b


# --- looking at the pane, typing as the person ----------------------------------------

# What shells print when something typed into them or run at the prompt went wrong.
_ERRORS = re.compile(
    r"command not found|invalid signal specification|No such file or directory"
    r"|unbound variable|bad substitution|parse error|syntax error|Unknown command"
)

# A call here takes well under a second; one made where it cannot work is stopped after
# this many seconds.
_HUNG = 4.0


def _errors(b: TestPane) -> list[str]:
    return [line for line in b.history().split("\n") if _ERRORS.search(line)]


def _tail(b: TestPane) -> str:
    return "the pane ends with:\n" + "\n".join(b.history().rstrip("\n").split("\n")[-25:])


def _cursor_line(b: TestPane) -> str:
    """The screen line the cursor is on (wrapped lines not joined, so rows match)."""
    row = int(b.pane("#{cursor_y}") or 0)
    lines = b.tmux("capture-pane", "-p", "-t", b.target, check=False).split("\n")
    return lines[row].rstrip() if row < len(lines) else ""


def _type_line(b: TestPane, text: str) -> None:
    """Type ``text`` and Enter, as the person does."""
    b.person_types(text + "\r")


def _call(b: TestPane, command: str, limit: float = WAIT) -> tuple[int, str, str]:
    """``tmux-send -- COMMAND``; one still running after ``limit`` seconds is killed (its
    own timeouts would take minutes), with a note on its stderr."""
    proc = b.start_send("--", command)
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate(timeout=WAIT)
        err += f"(the test killed tmux-send after {limit} s)".encode()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _refused(call: tuple[int, str, str]) -> bool:
    return call[0] == 125 and "is not ready" in call[2]


def _busy(call: tuple[int, str, str]) -> bool:
    """Refused because something runs in the pane, such as a prompt still being drawn
    (every refusal but a half-typed line's)."""
    return _refused(call) and "has typed" not in call[2]


def _prompt_drawn(b: TestPane) -> bool:
    """Whether the shell shows its prompt: something on the cursor's line (the line
    after a call is empty until then) and no program of the prompt's still running."""
    return _cursor_line(b) != "" and not _foreground_children(int(b.pane("#{pane_pid}") or 0))


def _call_when_free(b: TestPane, command: str) -> tuple[int, str, str]:
    """:func:`_call` once the prompt is drawn, repeated while the pane is busy. A call
    while a prompt is still drawn (bash-powerline's takes 0.2-0.7 s here) is the
    ``slow-prompt`` check; the others see the whole prompt, as tmux-send does when the
    agent is slower than the prompt."""
    calls: list[tuple[int, str, str]] = []

    def free() -> bool:
        b.wait_for(lambda: _prompt_drawn(b), "the prompt")
        calls.append(_call(b, command))
        return not _busy(calls[-1])

    b.wait_for(free, f"tmux-send -- {command} to find the pane free")
    return calls[-1]


def _stat(path: Path) -> tuple[str, list[str]]:
    """A ``/proc/<pid>/stat``'s command name and the fields after it (state, ppid, pgrp,
    session, tty, tpgid, ...); empty once the process is gone."""
    try:
        head, tail = path.read_text().rsplit(")", 1)
    except (OSError, ValueError):
        return "", []
    return head.split("(", 1)[1], tail.split()


def _foreground_children(shell: int) -> list[str]:
    """The command names of the shell's children in the terminal's foreground process
    group: what the shell waits for (fish's own helpers run in its group too)."""
    fields = _stat(Path(f"/proc/{shell}/stat"))[1]
    if not fields:
        return []
    names = []
    for path in Path("/proc").glob("[0-9]*/stat"):
        name, child = _stat(path)
        if child and child[1] == str(shell) and child[2] == fields[5]:
            names.append(name)
    return names


def _settled(read: Callable[[], str], done: Callable[[str], bool], timeout: float) -> str:
    """``read()`` once ``done`` with it, or as it is after ``timeout`` seconds: for what a
    check compares after the scenario, where a deadline passing is no failure yet."""
    deadline = time.monotonic() + timeout
    while not done(value := read()) and time.monotonic() < deadline:
        time.sleep(0.02)
    return value


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


# --- the scenario ---------------------------------------------------------------------

# The person asks for their EXIT trap; the file appears whole, once the listing is done.
_TRAP_QUERY = {
    "bash": "trap -p EXIT > ~/trap.tmp; mv ~/trap.tmp ~/trap.txt",
    "zsh": "trap > ~/trap.tmp; mv ~/trap.tmp ~/trap.txt",  # zsh has no `trap -p`
    "fish": "trap -p EXIT > ~/trap.tmp; mv ~/trap.tmp ~/trap.txt",
}


class Scenario(NamedTuple):
    second: tuple[int, str, str]  # `echo again` right after `false`
    exact: tuple[int, str, str]  # the failing command that prints `out` and `err`
    hooks: list[str]  # ~/hooks.log at the end
    expected_hooks: list[str]  # one entry per prompt, with the status each command left
    trap: str  # the person's listing of their EXIT trap, after the calls
    exit_log: str  # what their EXIT trap wrote when they then ended the shell
    errors: list[str]  # lines of the pane's history that read as shell errors
    pane: str  # the end of the pane, for the failure messages


def _expected_hooks(shell: str, statuses: list[int]) -> list[str]:
    """What the person's hooks log for the command lines that ended with ``statuses``,
    after the shell's first prompt (bash and zsh run their prompt hook for it too)."""
    if shell == "bash":
        return ["0"] + [str(s) for s in statuses]
    per_line = [entry for s in statuses for entry in ("preexec", str(s))]
    return ["0", *per_line] if shell == "zsh" else per_line


def _run_scenario(b: TestPane, config: Config) -> Scenario:
    """`true` (from the start), `echo one`, `false`, `echo again`; the person lists their
    EXIT trap (which also brings back a prompt without a failed status); the command that
    prints `out` and `err` and fails; the person ends the shell. Each call waits for the
    prompt and is repeated while the pane is busy."""
    assert _call_when_free(b, "echo one") == (0, "one\n", ""), _tail(b)
    assert _call_when_free(b, "false")[0] == 1, _tail(b)
    second = _call_when_free(b, "echo again")
    statuses = [0, 0, 1] + ([] if _refused(second) else [0])
    _type_line(b, _TRAP_QUERY[config.shell])
    trap = b.home / "trap.txt"
    b.wait_for(trap.exists, "the person's listing of their EXIT trap")
    command, status = _failing(config.shell)
    exact = _call_when_free(b, command)
    expected = _expected_hooks(config.shell, [*statuses, 0, status])
    log = b.home / "hooks.log"
    hooks = _settled(lambda: _text(log), lambda text: text.split() == expected, 5).split()
    errors, pane = _errors(b), _tail(b)
    _type_line(b, "exit")
    exit_log = _settled(lambda: _text(b.home / "exit.log"), bool, 5)
    return Scenario(second, exact, hooks, expected, trap.read_text(), exit_log, errors, pane)


@pytest.fixture(scope="module")
def _scenarios() -> dict[str, Scenario]:
    return {}


@pytest.fixture
def scenario(config: Config, make_bridge: MakeBridge, _scenarios: dict[str, Scenario]) -> Scenario:
    """``config``'s scenario, run by the first test that asks for it."""
    if config.test_id not in _scenarios:
        _scenarios[config.test_id] = _run_scenario(_started(make_bridge, config), config)
    return _scenarios[config.test_id]


@pytest.mark.parametrize("config", _cases())
def test_exact_output_and_status(config: Config, scenario: Scenario) -> None:
    status = _failing(config.shell)[1]
    assert scenario.exact == (status, "out\n", "err\n"), f"{scenario.exact}\n{scenario.pane}"


@pytest.mark.parametrize("config", _cases())
def test_a_call_right_after_a_failure_is_let_in(config: Config, scenario: Scenario) -> None:
    assert scenario.second == (0, "again\n", ""), f"{scenario.second}\n{scenario.pane}"


@pytest.mark.parametrize("config", _cases())
def test_no_errors_in_the_pane(config: Config, scenario: Scenario) -> None:
    assert scenario.errors == [], scenario.pane


@pytest.mark.parametrize("config", _cases())
def test_the_persons_hooks_run_once_per_prompt_with_the_status(
    config: Config, scenario: Scenario
) -> None:
    assert scenario.hooks == scenario.expected_hooks, f"{scenario.hooks}\n{scenario.pane}"


@pytest.mark.parametrize("config", _cases())
def test_the_persons_exit_trap_survives_the_calls(config: Config, scenario: Scenario) -> None:
    assert "exit trap" in scenario.trap, f"their listing: {scenario.trap!r}\n{scenario.pane}"
    assert "__tmux_send" not in scenario.trap, scenario.trap
    assert "exit trap" in scenario.exit_log, "it did not run when the person ended the shell"


@pytest.mark.parametrize("config", _cases([c for c in CONFIGS if c.vi]))
def test_a_call_while_vi_normal_mode_is_on(config: Config, make_bridge: MakeBridge) -> None:
    assert config.vi is not None
    insert, normal = config.vi
    b = _started(make_bridge, config)
    b.wait_for(lambda: insert in _cursor_line(b), "the prompt in vi insert mode")
    b.person_types("\x1b")
    b.wait_for(lambda: normal in _cursor_line(b), "vi normal mode")
    call = _call(b, "echo hi", _HUNG)
    assert call == (0, "hi\n", ""), f"{call}\n{_tail(b)}"
    assert _errors(b) == [], _tail(b)


@pytest.mark.parametrize("config", _cases([c for c in CONFIGS if c.slow_prompt]))
def test_a_call_while_a_slow_prompt_is_drawn(config: Config, make_bridge: MakeBridge) -> None:
    b = _started(make_bridge, config)
    assert _call_when_free(b, "echo one") == (0, "one\n", ""), _tail(b)
    # the previous prompt's program ended before `echo one` ran: this one is the next's
    shell = int(b.pane("#{pane_pid}"))
    b.wait_for(lambda: config.slow_prompt in _foreground_children(shell), "the prompt to be drawn")
    call = _call(b, "echo two")
    assert call == (0, "two\n", ""), f"{call}\n{_tail(b)}"


@pytest.mark.parametrize("config", _cases([c for c in CONFIGS if c.ignores_space]))
def test_up_arrow_recalls_the_persons_command(config: Config, make_bridge: MakeBridge) -> None:
    b = _started(make_bridge, config)
    _type_line(b, "echo mine")
    b.wait_for_text("\nmine\n")
    assert _call_when_free(b, "echo agent") == (0, "agent\n", ""), _tail(b)
    b.tmux("send-keys", "-t", b.target, "Up")
    b.wait_for(lambda: re.search(r"echo|\.run", _cursor_line(b)) is not None, "Up to recall")
    line = _cursor_line(b)
    assert "echo mine" in line and ".run" not in line, line
