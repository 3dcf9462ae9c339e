"""What the person sees of a call in each shell: the header (the command, marked as
tmux-send's), the command's output exactly, and a status line only after a failure or an
interrupt; no typed line, no runtime path, no call id, no marker (issue 29).

The whole pane history is captured (``capture-pane -p -J -S -``). Erased cells keep
their place in tmux's grid, so ``-J`` shows spaces after a header shorter than the typed
line it replaced: lines are compared without trailing spaces.
"""

from __future__ import annotations

import json

import pytest

from tests.support.pane import MakeBridge, TestPane, dash_bridge, transcript

pytestmark = pytest.mark.tmux

SHELLS = ["bash", "zsh", "fish", "dash"]

# (tmux-send's arguments, the command's lines in the pane)
CALLS = [
    (["--", "echo out; echo err >&2"], ["out", "err"]),
    (["--", "sh -c 'echo failing; exit 3'"], ["failing", "[exit 3]"]),
    (["--", "true"], []),
    (["--", "printf no-newline"], ["no-newline"]),
    (["--", r"printf '\033[1mbold\033[0m \033[31mred\033[0m\n'"], ["bold red"]),
]
HEADERS = [
    "echo out; echo err >&2",
    "sh -c 'echo failing; exit 3'",
    "true",
    "printf no-newline",
    r"printf '\033[1mbold\033[0m \033[31mred\033[0m\n'",
]
# After an interrupt, bash, zsh and dash end the line the killed command was on (as for
# Ctrl-C); dash has no prompt hook, so its prompt is back before tmux-send could print a
# status line: it prints none there.
INTERRUPTED = {
    "bash": ["", "[interrupted: idle timeout]"],
    "zsh": ["", "[interrupted: idle timeout]"],
    "fish": ["[interrupted: idle timeout]"],
    "dash": [""],
}


def started(make_bridge: MakeBridge, shell: str) -> TestPane:
    b = dash_bridge(make_bridge) if shell == "dash" else make_bridge(shell)
    b.start()
    return b


@pytest.mark.parametrize("shell", SHELLS)
def test_the_transcript_is_the_command_its_output_and_a_status(
    make_bridge: MakeBridge, shell: str
) -> None:
    b = started(make_bridge, shell)
    ids = []
    for args, _ in CALLS:
        result = b.send("--json", *args)
        ids.append(json.loads(result.stdout)["id"])
    result = b.send("--json", "-t", "1", "--", "sleep 30")
    assert result.returncode == 124, result.stderr
    ids.append(json.loads(result.stdout)["id"])
    expected: list[str] = []
    for header, (_, lines) in zip(HEADERS, CALLS, strict=True):
        expected += ["$ [tmux-send] " + header.replace("\033", "^["), *lines]
    expected += ["$ [tmux-send] sleep 30", *INTERRUPTED[shell], "$"]
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")
    everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
    for plumbing in ("TMUXSEND", str(b.runtime), ".run", *ids):
        assert plumbing not in everything, everything


@pytest.mark.parametrize("shell", ["bash", "fish"])
def test_verbose_transcript_shows_the_plumbing(make_bridge: MakeBridge, shell: str) -> None:
    b = started(make_bridge, shell)
    result = b.send("--json", "--verbose-transcript", "--", "echo hi")
    call_id = json.loads(result.stdout)["id"]
    b.wait_for_text(f"___TMUXSEND_END_{call_id} 0___")
    history = b.history()
    assert f"___TMUXSEND_START_{call_id}___\nhi\n" in history
    assert f"{call_id}.run" in history  # the typed line


def transcript_status(b: TestPane) -> tuple[str, str | None]:
    document = json.loads(b.bridge_cli("status", "--json").stdout)
    return document["transcript"], document["transcript_note"]


def test_the_person_can_ask_for_the_plumbing_with_a_tmux_option(make_bridge: MakeBridge) -> None:
    """The setting that turns the clean transcript off: the calls fall back to visible
    markers, and ``tmux-bridge status`` says so and why."""
    b = started(make_bridge, "bash")
    assert transcript_status(b) == ("clean", None)
    b.tmux("set-option", "-g", "@tmux-bridge-transcript", "verbose")
    result = b.send("--json", "--", "echo hi")
    call_id = json.loads(result.stdout)["id"]
    b.wait_for_text(f"___TMUXSEND_END_{call_id} 0___")
    mode, note = transcript_status(b)
    assert mode == "verbose" and note is not None and "@tmux-bridge-transcript" in note, note
    text = b.bridge_cli("status").stdout
    assert "transcript verbose: the tmux option @tmux-bridge-transcript" in text, text


def test_a_typed_line_that_wraps_is_erased_whole(make_bridge: MakeBridge) -> None:
    b = started(make_bridge, "bash")
    b.tmux("resize-window", "-t", b.target, "-x", "30", "-y", "10")
    b.wait_for(lambda: b.pane("#{pane_width}") == "30", "the narrow pane")
    assert b.send("--", "echo one; false").returncode == 1
    expected = ["$ [tmux-send] echo one; false", "one", "[exit 1]", "$"]
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")


def test_a_prompt_the_call_changed_is_not_taken_for_typed_text(make_bridge: MakeBridge) -> None:
    """After a call, the next call knows the line at the cursor is the shell's new
    prompt (nothing ran since), with no end marker on the screen to tell it: here the
    new prompt is the old one plus more, which would otherwise read as typed text."""
    b = make_bridge("bash", {".bashrc": "PS1='$ ${X-}'\n"})
    b.start()
    assert b.send_text("--", "X=abc") == (0, "", "")
    assert b.send_text("--", "echo here") == (0, "here\n", "")


def test_the_header_names_the_calling_agent(make_bridge: MakeBridge) -> None:
    """tmux-send's caller names itself with TMUX_BRIDGE_AGENT; a value that is no name
    (here with an escape) is left out rather than shown."""
    b = started(make_bridge, "bash")
    b.env["TMUX_BRIDGE_AGENT"] = "claude-1"
    assert b.send("--", "echo hi").returncode == 0
    b.env["TMUX_BRIDGE_AGENT"] = "bad\033[2Jname"
    assert b.send("--", "echo two").returncode == 0
    b.env["TMUX_BRIDGE_AGENT"] = "claude-1"
    assert b.send("--background", "--", "echo job").returncode == 0  # a job's header too
    expected = ["$ [tmux-send: claude-1] echo hi", "hi", "$ [tmux-send] echo two", "two"]
    expected += ["$ [tmux-send: claude-1] echo job", "job", "$"]
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")


def _job_id(b: TestPane, *args: str) -> str:
    code, out, err = b.send_when_ready(*args)
    assert code == 0, err
    return out.strip()


@pytest.mark.parametrize("shell", ["bash", "dash"])
def test_a_jobs_transcript_is_the_same_clean_form(make_bridge: MakeBridge, shell: str) -> None:
    """A job (``--background``) and a call detached on its timeout leave what a command
    leaves: the header, the output, a status line only after a failure or a kill."""
    b = started(make_bridge, shell)
    gate = b.root / "go"
    job = _job_id(b, "--background", "--", "echo one; echo two >&2")
    assert b.send_text("--wait", job)[0] == 0
    job = _job_id(b, "--background", "--", "sh -c 'echo bad; exit 3'")
    assert b.send_text("--wait", job)[0] == 3
    job = _job_id(b, "--background", "--", "echo long; sleep 30")
    b.wait_for(lambda: "long" in b.history(), "the job's output")
    assert b.send_text("--kill", job)[0] in (124, 130)
    gated = f"echo early; while [ ! -e {gate} ]; do sleep 0.05; done; echo late"
    result = b.send("--json", "--timeout", "0.5", "--on-timeout", "detach", "--", gated)
    job = json.loads(result.stdout)["job"]
    gate.write_text("")
    assert b.send_text("--wait", job)[0] == 0
    expected = ["$ [tmux-send] echo one; echo two >&2", "one", "two"]
    expected += ["$ [tmux-send] sh -c 'echo bad; exit 3'", "bad", "[exit 3]"]
    killed = [line.replace("idle timeout", "job killed") for line in INTERRUPTED[shell]]
    expected += ["$ [tmux-send] echo long; sleep 30", "long", *killed]
    expected += [f"$ [tmux-send] {gated}", "early", "late", "$"]
    b.wait_for(lambda: transcript(b) == expected, f"the transcript {expected}")
    everything = b.tmux("capture-pane", "-p", "-e", "-J", "-S", "-", "-t", b.target)
    for plumbing in ("TMUXSEND", str(b.runtime), ".run", job):
        assert plumbing not in everything, everything


# What a command prints, as the pane must show it: rows that scroll into the history,
# empty rows, tabs, a progress line redrawn, colours, wide characters, rows that wrap
# and one that fills the row exactly, a newline inside a control sequence and inside a
# title, a carriage return before a newline, and every byte but ESC, SO and SI (which
# change the terminal's state for what follows) between two letters. It starts on a
# cleared screen, at its top left corner in both panes.
SHOWN = b"".join(
    [
        b"\x1b[H\x1b[2JBEGIN\n",
        *(b"row %d\n" % n for n in range(40)),
        b"\n\n",
        b"a\tb\tc\n\tindented\n",
        b"10%\r50%\r100%\n",
        b"\x1b[31mred\x1b[0m \x1b[1mbold\x1b[0m\n",
        "日本語のテキスト\n".encode(),
        b"w" * 200 + b"\n",
        b"x" * 80 + b"\n",
        b"in\x1b[3\n1mside\x1b[0m\n",
        b"\x1b]2;tit\nle\x07titled\n",
        b"crlf\r\n",
        b"back\x08\x08CK\n",
        *(b"X" + bytes([n]) + b"Y\n" for n in range(256) if n not in (0x1B, 0x0E, 0x0F)),
        b"END\n",
    ]
)


def _shown_rows(b: TestPane, pane: str) -> list[str]:
    """The rows of ``pane`` (history too) from BEGIN to END, with their attributes (the
    first row without the codes that end the attributes of the row above it)."""
    rows = b.tmux("capture-pane", "-p", "-e", "-S", "-", "-t", pane).split("\n")
    first = next(n for n, row in enumerate(rows) if row.endswith("BEGIN"))
    last = next(n for n in range(first, len(rows)) if rows[n].endswith("END"))
    return ["BEGIN", *rows[first + 1 : last + 1]]


@pytest.mark.parametrize("modes", ["sane", "-onlcr", "ocrnl", "onlret onocr", "tab3", "-opost"])
def test_the_pane_shows_the_output_as_it_shows_the_same_bytes_written_there(
    make_bridge: MakeBridge, modes: str
) -> None:
    """What a call's output looks like in the pane is what the same bytes written to the
    pane's terminal look like (here by `cat` in a window of the same size), whatever
    the terminal's output modes (the mirror writes each newline itself where the
    terminal would turn it into CR LF): one byte of difference in the grid fails."""
    b = started(make_bridge, "bash")
    data = b.root / "shown"
    data.write_bytes(SHOWN)
    assert b.send("--", f"stty {modes}").returncode == 0
    assert b.send("--raw", "--", f"cat {data}").stdout == SHOWN
    window = b.tmux("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", b.target, "sh").strip()
    b.wait_for(lambda: b.tmux("capture-pane", "-p", "-t", window).strip() != "", "sh's prompt")
    b.tmux("send-keys", "-t", window, f"stty {modes}; cat {data}; tmux wait-for -S shown", "Enter")
    b.tmux("wait-for", "shown")
    assert _shown_rows(b, b.target) == _shown_rows(b, window)


def test_a_pane_the_person_logs_gets_the_newlines_its_terminal_writes(
    make_bridge: MakeBridge,
) -> None:
    """With a `pipe-pane` of the person's open (a logging plugin), the mirror leaves
    newlines to the terminal: the log has CR LF, as for anything else the pane shows."""
    b = started(make_bridge, "bash")
    log = b.root / "pane.log"
    b.tmux("pipe-pane", "-t", b.target, f"cat >> {log}")
    b.wait_for(lambda: b.pane("#{pane_pipe}") == "1", "the log's pipe")
    assert b.send("--", "printf 'one\\ntwo\\n'").stdout == b"one\ntwo\n"
    b.tmux("pipe-pane", "-t", b.target)
    b.wait_for(lambda: b"one\r\ntwo\r\n" in log.read_bytes(), "the output in the log")
    assert b"\v" not in log.read_bytes()
