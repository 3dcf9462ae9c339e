"""What the person sees of calls in a far shell (through ssh, ``su -``, a nested shell),
bash, POSIX sh (dash) and, over ssh, zsh and fish: as in a local shell, the header, the
command's output exactly, and a status line only after a failure or an interrupt; no
typed line, no probe, no helper definitions, no line that fetches the status after an
interrupt, no ``^C``, no piece of a long command, no call id, no marker (issue 29);
over ssh, a command that catches Ctrl-C and exits by itself shows its interrupt as the
others do. The same for a python and a node REPL started in a far shell.

One far session per far kind and shell, all the calls in it; the whole pane history is
captured (``capture-pane -p -J -S -``) and compared without trailing spaces (erased
cells keep their place in tmux's grid).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator

import pytest

from ..support.pane import TestPane, enter_nested, private_pane, shell_path, transcript
from ..support.sshd import USERS, Sshd, ensure_user, running_sshd, ssh_pane

pytestmark = pytest.mark.tmux

# A command too long for one typed line: read in pieces, which do not show; its header
# is cut after 360 characters, saying how many more there are (docs/far-shells.md).
LONG = "echo " + "y" * 3990
LONG_HEADER = LONG[: 360 - len("[tmux-send] ")] + f" ... ({len(LONG) + 12 - 360} more characters)"
# (tmux-send's arguments, the header's command, the lines the call leaves after it)
CALLS = [
    (["--", "echo out; echo err >&2"], "echo out; echo err >&2", ["out", "err"]),
    (["--", "sh -c 'echo no; exit 3'"], "sh -c 'echo no; exit 3'", ["no", "[exit 3]"]),
    (["--", "true"], "true", []),
    (["--", "printf no-newline"], "printf no-newline", ["no-newline"]),
    (["--", "printf a"], "printf a", ["a"]),  # (not erased by what starts a line)
    (
        ["--", r"printf '\033[1mbold\033[0m \033[31mred\033[0m\n'"],
        r"printf '\033[1mbold\033[0m \033[31mred\033[0m\n'",
        ["bold red"],
    ),
    (["-t", "0.5", "--", "echo before; sleep 30"], "echo before; sleep 30",
     ["before", "", "[interrupted: idle timeout]"]),
    (["--", LONG], LONG_HEADER, ["y" * 3990]),
]  # fmt: skip
# a command that catches Ctrl-C and exits by itself: the far shell goes on with the line
TRAPS = "sh -c 'trap \"echo caught; exit 3\" INT; echo before; sleep 30'"
CAUGHT = (["-t", "0.5", "--", TRAPS], TRAPS, ["before", "caught", "[interrupted: idle timeout]"])
# what each call gives the agent: (status, stdout, stderr)
RESULTS = [
    (0, "out\n", "err\n"),
    (3, "no\n", ""),
    (0, "", ""),
    (0, "no-newline", ""),
    (0, "a", ""),
    (0, "\x1b[1mbold\x1b[0m \x1b[31mred\x1b[0m\n", ""),
    (130, "before\n", ""),
    (0, "y" * 3990 + "\n", ""),
]
CAUGHT_RESULT = (3, "before\ncaught\n", "")
FAR = [
    "ssh-bash",
    "ssh-dash",
    "ssh-zsh",
    "ssh-fish",
    "su-bash",
    "su-dash",
    "nested-bash",
    "nested-dash",
    "nested-fish",
]


@pytest.fixture(scope="module")
def sshd() -> Iterator[Sshd]:
    with running_sshd() as server:
        yield server


def enter(b: TestPane, request: pytest.FixtureRequest, way: str, shell: str) -> None:
    """The person opens the far shell in the bridge's bash; the first call (``true``,
    from :meth:`TestPane.wait_until_ready`) is let in."""
    if way == "ssh":
        ssh_pane(b, request.getfixturevalue("sshd"), shell)
        return
    if way == "su":
        user = ensure_user(shell)
        b.start()
        b.tmux("send-keys", "-t", b.target, f"su - {user}", "Enter")
        # (su's bash is "bash" in front too: its prompt, on the line after su's, tells)
        b.wait_for(lambda: b.screen().rstrip().endswith(f"su - {user}\n$"), "su's prompt")
        b.wait_until_ready()
        return
    b.env["ENV"] = str(b.home / ".shrc")  # dash's rc file when interactive
    (b.home / ".shrc").write_text("PS1='$ '\n")
    b.start()
    enter_nested(b, shell, f"{shell} -i" if shell == "dash" else shell)


def far_prompt(b: TestPane, way: str, shell: str) -> str:
    """The far prompt (trailing spaces off): ``$`` as the test users' rc files (and the
    test pane's, for a nested shell) set it, the fish user's own (``user@host ~>``) read
    from the first call's header line."""
    if shell != "fish" or way == "nested":
        return "$"
    first = transcript(b)[0]
    assert first.endswith(" [tmux-send] true"), first
    prompt = first.removesuffix(" [tmux-send] true")
    assert re.fullmatch(r"[\w.-]+@[\w.-]+ ~>", prompt), prompt
    return prompt


@pytest.mark.parametrize("far", FAR)
def test_a_far_shell_leaves_the_clean_transcript(request: pytest.FixtureRequest, far: str) -> None:
    way, shell = far.split("-")
    shell_path(shell)
    with private_pane("bash") as b:
        enter(b, request, way, shell)
        ids = []
        calls, results = CALLS, RESULTS
        if way == "ssh":  # (once per far shell is enough)
            calls, results = [*CALLS, CAUGHT], [*RESULTS, CAUGHT_RESULT]
        for (args, _, _), expected in zip(calls, results, strict=True):
            result = b.send("--json", "--raw", *args)
            doc = json.loads(result.stdout)
            assert (doc["status"], doc["stdout"], doc["stderr"]) == expected, doc
            assert doc["far"] is not None and doc["shell"] == (
                "posix" if shell == "dash" else shell
            )
            ids.append(doc["id"])
        prompt = far_prompt(b, way, shell)
        lines = [f"{prompt} [tmux-send] true"]
        for _, header, shown in calls:
            lines += [f"{prompt} [tmux-send] " + header, *shown]
        lines.append(prompt)
        b.wait_for(lambda: transcript(b) == lines, f"the transcript {lines}")
        everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
        for plumbing in ("TMUXSEND", "__tmux_send", "\\137", str(b.runtime), *ids):
            assert plumbing not in everything, everything
        if way != "nested":
            assert USERS[shell] in json.dumps(doc["far"])
        status = json.loads(b.bridge_cli("status", "--json").stdout)  # and says so
        assert (status["transcript"], status["transcript_note"]) == ("clean", None)


# a far shell slow between a line's end and its next prompt (a git status in the prompt):
# zsh's precmd, bash's PROMPT_COMMAND, a fish_prompt that takes its time
SLOW_PROMPTS = {
    "zsh": "precmd() { sleep 0.5; }",
    "bash": "PROMPT_COMMAND='sleep 0.5'",
    "fish": "function fish_prompt; sleep 0.5; printf '$ '; end",
}


@pytest.mark.parametrize("shell", list(SLOW_PROMPTS))
def test_a_far_shell_slow_to_draw_its_prompt_is_not_typed_into_before_it(
    sshd: Sshd, shell: str
) -> None:
    """Between a line's end and its next prompt a shell reads the terminal with its echo
    on (zsh prints its PROMPT_SP mark before precmd runs): a line typed then shows twice,
    as the terminal echoes it and as the line editor draws it, and only the second is
    erased. A far shell whose helpers are not defined yet gets three lines in a row
    (probe, two helper lines), each typed once the prompt is back: none shows. The next
    call (and a dry run), made while the prompt is still coming, waits for it instead of
    refusing the empty line."""
    shell_path(shell)
    with private_pane("bash") as b:
        ssh_pane(b, sshd, shell)
        # the person starts a new shell there (no helpers) and makes its prompt slow
        for line in (shell, SLOW_PROMPTS[shell], "echo slow''ready"):
            b.tmux("send-keys", "-t", b.target, line, "Enter")
        b.wait_for(lambda: b.screen().rstrip().endswith("slowready\n$"), "the slow prompt")
        ids = []
        for command, out in (("echo out", "out\n"), ("sh -c 'exit 3'", "")):
            doc = json.loads(b.send("--json", "--raw", "--", command).stdout)
            assert doc["stdout"] == out and doc["far"] is not None, doc
            ids.append(doc["id"])
        # a dry run right after a call (its first word expands: nothing is looked up,
        # nothing typed) says what the call would do: wait for the prompt, then type
        dry = b.send("--check", "--json", "--", '"$SHELL" -c true')
        assert dry.returncode == 0 and json.loads(dry.stdout)["ready"] is True, dry.stdout
        expected = [
            "$ [tmux-send] echo out",
            "out",
            "$ [tmux-send] sh -c 'exit 3'",
            "[exit 3]",
            "$",
        ]
        b.wait_for(
            lambda: [line.rstrip() for line in b.history().rstrip().split("\n")][-5:] == expected,
            f"the transcript ending {expected}",
        )
        # an edit reads, then writes at once, while the prompt after its read is coming
        assert b.send("--", "echo old > tb-slow.txt").returncode == 0
        edit = b.send("--edit", "tb-slow.txt", "--old", "old", "--new", "new")
        assert edit.returncode == 0, (edit.stderr, b.screen())
        assert b.send("--", "cat tb-slow.txt; rm tb-slow.txt").stdout == b"new\n"
        after = b.history().split("slowready", 1)[1]  # (the person's own lines before)
        for plumbing in ("TMUXSEND", "__tmux_send", "\\137", str(b.runtime), *ids):
            assert plumbing not in after, b.history()


# (start command, its prompt, [(code, the lines it leaves after its header)]) in a far REPL
REPLS = {
    "python": ("python3 -q", ">>>", [
        ("print('hi')", ["hi"]),
        ("x = 41", []),
        ("x + 1", ["42"]),
        ("1/0", ["Traceback (most recent call last):",
                 '  File "<tmux-send>", line 1, in <module>',
                 "ZeroDivisionError: division by zero"]),
        ("print('a', end='')", ["a"]),  # the prompt starts a line of its own
        ("print(len('" + "y" * 3100 + "'))", ["3100"]),  # its literal built in pieces
    ], "exit()"),
    "node": ("node", ">", [
        ("console.log('hi')", ["hi"]),
        ("let x = 41", []),
        ("x + 1", ["42"]),
        ("process.stdout.write('a')", ["atrue"]),  # its value after it, as locally
        ("console.log('" + "y" * 3100 + "'.length)", ["3100"]),  # built in pieces
    ], ".exit"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(REPLS))
def test_a_far_repl_leaves_the_clean_transcript(sshd: Sshd, name: str) -> None:
    """A python or node REPL started by tmux-send over ssh: its start like a command's,
    each evaluation a header at the REPL's prompt and the output exactly; no typed line,
    no helper definition, no line that builds a long code's literal, no marker, no
    ``undefined``; its close brings the far prompt back."""
    start, prompt, calls, quit_ = REPLS[name]
    if shutil.which(start.split()[0]) is None:
        pytest.skip(f"{start.split()[0]} is not installed")
    with private_pane("bash") as b:
        ssh_pane(b, sshd, "bash")
        result = b.send("--json", "--timeout", "60", "--repl", name, "--", start)
        doc = json.loads(result.stdout)
        ids = [doc["id"]]
        lines = ["$ [tmux-send] true", "$ [tmux-send] " + start, *doc["stdout"].splitlines()]
        for code, shown in calls:
            result = b.send("--json", "--repl", name, "--", code)
            ids.append(json.loads(result.stdout)["id"])
            header = "[tmux-send] " + code  # cut after 400 characters
            header = header if len(header) <= 400 else header[:400] + " ..."
            lines += [f"{prompt} {header}", *shown]
        lines.append(prompt)
        b.wait_for(lambda: transcript(b) == lines, f"the transcript {lines}")
        status = json.loads(b.bridge_cli("status", "--json").stdout)
        assert (status["transcript"], status["transcript_note"]) == ("clean", None)
        closed, _, err = b.send_text("--close")
        assert closed == 0, err  # as if the person typed the quit command
        lines[-1:] = [f"{prompt} {quit_}", "$"]
        b.wait_for(lambda: transcript(b) == lines, f"the transcript {lines}")
        everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
        for plumbing in ("TMUXSEND", "__tmux_send", "\\137", "undefined", *ids):
            assert plumbing not in everything, everything
