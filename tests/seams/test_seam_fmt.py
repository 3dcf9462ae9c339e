"""The tmux-format seam (``tmux_bridge/text/seams.py``, "tmux formats"): text we do not control
in an argument tmux expands as a format (a start directory, a pipe-pane command, a
notice) comes out exactly as it went in, runs nothing and styles nothing.

Expected values come from a real tmux 3.3a: what ``display-message -p`` prints, what a
pane's ``/proc/PID/cwd`` is, what a file a shell wrote holds, what an attached client's
terminal shows (an outer tmux is that terminal: its ``capture-pane -e`` gives the cells
and their colours). ``#(cd; touch NAME)`` in the payloads would make a file in the home
directory: that it never appears is checked once a later ``#()`` job of ours has run
(tmux runs such a job after the command that expanded it, and kills it when that
command's client goes: on today's code the payload ran in most runs, not all; the
start directory shows the expansion every time).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tmux_bridge.infra.tmux import Tmux
from tmux_bridge.text import seams

from ..support.pane import BIN, WAIT, MakeBridge, TestPane
from ..support.seam_fmt_scan import ALLOWED, PACKAGE, TMUX_COMMANDS, scan, scan_source
from ..support.serve import running

pytestmark = pytest.mark.tmux  # a private server of this module's own, besides the fixtures

SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def decoded(data: bytes) -> str:
    """Bytes as the str a path or an argument holds here (undecodable bytes escaped)."""
    return data.decode("utf-8", "surrogateescape")


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.01)


# Every byte a text can hold (NUL apart: no argument can), alone and inside text.
EVERY_BYTE = [decoded(bytes([b])) for b in range(1, 256)] + [
    decoded(b"a" + bytes([b]) + b"z#" + bytes([b]) + b"#[") for b in range(1, 256)
]
HOSTILE = [
    "x#(cd; touch pwned)",
    "#{pane_id}",
    "#{",
    "#}#,",
    "#[fg=red]red",
    "##[fg=red]",
    "###[fg=red]",
    "#",
    "##",
    "###x",
    "#H#S#D",
    "%z %H%%",
    "\x1b[201~",
    "\x1b]52;c;aGVsbG8=\x07",
    "\r\x1b[2K",
    "\udcff\udc80",
    "".join(chr(c) for c in range(0x80, 0xA0)),
    decoded(bytes(range(0x80, 0xA0))),
    "ends with;",
    "\\;",
    'it\'s "quoted" $(cd; touch pwned) `cd; touch pwned`',
    "\n\t\r",
    "~",
    "trailing space ",
]


class Server(NamedTuple):
    """A private tmux server for this module: one session ``s`` whose pane runs ``cat``."""

    tmux: Tmux
    root: Path
    home: Path

    def ran_no_job(self) -> bool:
        """Whether ``#(cd; touch pwned)`` never ran (see :func:`control_job`)."""
        self.tmux.run(*control_job())
        return not (self.home / "pwned").exists()


def control_job() -> list[str]:
    """tmux commands that start a ``#()`` job of the test's own and wait (``run-shell``,
    its client connected: tmux kills a client's jobs when it goes) until it has run; a
    job started before it has had its chance to run too."""
    control = f"control-{time.monotonic_ns()}"
    return [
        "display-message", "-p", f"#(cd; touch {control})", ";",
        "run-shell", f"cd; while ! [ -e {control} ]; do sleep 0.01; done",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    root = Path(tempfile.mkdtemp(prefix="tbf-"))
    home = root / "home"
    home.mkdir()
    socket = str(root / "sock")
    env = {**os.environ, "HOME": str(home), "LC_ALL": "C.UTF-8"}
    env.pop("TMUX", None)
    subprocess.run(
        ["tmux", "-S", socket, "-f", "/dev/null", "new-session", "-d", "-s", "s",
         "-x", "120", "-y", "20", "-c", str(home), "cat"],
        env=env, check=True, timeout=30,
    )  # fmt: skip
    try:
        yield Server(Tmux(socket_path=socket, timeout=30), root, home)
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, timeout=30)
        shutil.rmtree(root, ignore_errors=True)


# --- what tmux does with each seam's text --------------------------------------------


def printed(server: Server, text: str) -> str:
    """What ``display-message -p`` prints for the message ``format_text_timed(text)``."""
    shown = ["display-message", "-p", seams.format_text_timed(text)]
    return server.tmux.run_all(shown).stdout[:-1]


def expanded(server: Server, text: str) -> str:
    """The value ``set-option -F`` stores for ``format_text(text)``."""
    stored = ["set-option", "-gF", "@v", seams.format_text(text)]
    return server.tmux.run_all(stored, ["show-options", "-gv", "@v"]).stdout[:-1]


def parsed(server: Server, text: str) -> str:
    """The value an ``if-shell`` command string from ``command_line`` sets."""
    line = seams.command_line(["set-option", "-g", "@w", text])
    return server.tmux.run_all(["if-shell", "-F", "1", line], ["show-options", "-gv", "@w"]).stdout[
        :-1
    ]


def pipes_exactly(server: Server, word: str, name: str) -> None:
    """A ``pipe-pane`` command from ``pipe_command`` runs ``printf %s WORD`` into the
    file NAME of an empty directory: that file, and only it, comes to hold WORD."""
    folder = tempfile.mkdtemp(dir=server.root)
    path = os.path.join(folder, name)
    command = seams.pipe_command(["printf", "%s", word], stdout=path)
    server.tmux.run_all(["pipe-pane", "-t", "s", command])

    def written() -> bool:
        return os.listdir(folder) == [name] and Path(path).read_bytes() == os.fsencode(word)

    try:
        wait_for(written, f"{word!r} in {name!r}; the directory holds {os.listdir(folder)}")
    finally:
        server.tmux.run_all(["pipe-pane", "-t", "s"])
        shutil.rmtree(folder, ignore_errors=True)


def started_in(server: Server, how: str, path: str) -> tuple[str, str]:
    """Start a pane with ``-c start_directory(path)`` (``how``: new-session, split-window
    or respawn-pane); where tmux says it runs and where its process really runs."""
    arg = seams.start_directory(path)
    new = ["-P", "-F", "#{pane_id}", "sleep 300"]
    if how == "new-session":
        pane = server.tmux.run_all(["new-session", "-d", "-s", "n", "-c", arg, *new]).stdout
    elif how == "split-window":
        pane = server.tmux.run_all(["split-window", "-d", "-t", "s", "-c", arg, *new]).stdout
    else:
        pane = server.tmux.run_all(["split-window", "-d", "-t", "s", "-c", "/", *new]).stdout
        server.tmux.run_all(["respawn-pane", "-k", "-t", pane.strip(), "-c", arg, "sleep 300"])
    pane = pane.strip()
    try:
        pid = server.tmux.run("display-message", "-p", "-t", pane, "#{pane_pid}").stdout.strip()
        # tmux's child changes directory, then becomes the command
        wait_for(lambda: Path(f"/proc/{pid}/comm").read_text() == "sleep\n", "the pane's sleep")
        told = server.tmux.run("display-message", "-p", "-t", pane, "#{pane_current_path}")
        return told.stdout[:-1], os.readlink(f"/proc/{pid}/cwd")
    finally:
        server.tmux.run("kill-pane", "-t", pane, check=False)


def round_trips(server: Server, text: str) -> tuple[str, str, str]:
    return printed(server, text), expanded(server, text), parsed(server, text)


def test_every_byte_and_payload_comes_out_of_the_expansion_as_it_went_in(
    server: Server,
) -> None:
    results = {text: round_trips(server, text) for text in EVERY_BYTE + HOSTILE}
    assert {text: got for text, got in results.items() if got != (text,) * 3} == {}
    assert server.ran_no_job()


def test_a_nul_or_a_surrogate_of_no_byte_never_reaches_tmux_cut_short() -> None:
    for text in ("\0", "a\0b", "\ud800"):
        assert seams.format_text(text) == text  # kept, so that tmux refuses it whole
        with pytest.raises(ValueError):
            Tmux(socket_path="/nonexistent").run("display-message", "-p", text)
    for text in ("\0", "a\0b"):
        with pytest.raises(ValueError):
            seams.start_directory("/x" + text)
        with pytest.raises(ValueError):
            seams.pipe_command(["printf", text])
        with pytest.raises(ValueError):
            seams.pipe_command(["cat"], "/tmp/" + text)
        with pytest.raises(ValueError):
            seams.command_line(["set-option", "-g", "@v", text])


def test_a_start_directory_is_absolute_short_enough_and_encodable() -> None:
    longest = "/" + "d" * (seams.MAX_DIRECTORY_BYTES - 1)
    assert seams.start_directory(longest) == longest
    for path in ("relative", "~", "~/x", "", longest + "d", "/\ud800", "/é" * 2048):
        with pytest.raises(ValueError):
            seams.start_directory(path)


@pytest.mark.parametrize("how", ["new-session", "split-window", "respawn-pane"])
def test_a_pane_starts_in_every_directory_name_there_is(server: Server, how: str) -> None:
    top = server.root / f"names-{how}"
    # every byte for one of them (tmux's spawn code is the same for all three)
    every = [bytes([b]) for b in range(1, 256) if b not in b"/."] if how == "split-window" else []
    names = [
        *every, b"\n", b"\x01", b"\x1b", b"\x7f", b"\x9b", b"\xff", b"#", b"%", b";",
        b"x#(cd; touch pwned)", b"a#{pane_id}b", b"#[fg=red]", b"a##[x", b"~", b"~x",
        b"tr ", b" lead", b"a%zb", b"ends;", b"\xed\xa0\x80", b"n" * 255, b"..x", b"-",
        b"x (deleted)",
    ]  # fmt: skip
    wrong = {}
    for name in dict.fromkeys(names):
        path = decoded(os.fsencode(top) + b"/" + name)
        os.makedirs(path)
        where = started_in(server, how, path)
        if where != (path, path):
            wrong[name] = where
    assert wrong == {}
    assert server.ran_no_job()


def test_a_pipe_pane_command_runs_exactly_its_words(server: Server) -> None:
    every = decoded(bytes(range(1, 256)).replace(b"/", b""))
    for text in [*HOSTILE, every, ""]:
        name = text.replace("/", "_") if text.strip(".") else f"name{text}"
        pipes_exactly(server, text, name)
    assert server.ran_no_job()


# --- the round trips, for generated text ----------------------------------------------

TEXT = st.one_of(
    st.binary(max_size=30).filter(lambda b: b"\0" not in b).map(decoded),
    st.text(alphabet="#[]{}(),;%:'\"\\ $`~!?=aZ\x1b\n", max_size=30),
)
NAME = (
    st.binary(min_size=1, max_size=60)
    .filter(lambda b: b"\0" not in b and b"/" not in b and b not in (b".", b".."))
    .map(decoded)
)


@SETTINGS
@given(text=TEXT)
@example(text="-\x01")  # found by hypothesis: display-message took a leading - for a flag
@example(text="--")
def test_printed_expanded_and_parsed_text_round_trips(server: Server, text: str) -> None:
    assert (printed(server, text), expanded(server, text), parsed(server, text)) == (
        text,
        text,
        text,
    )


@settings(SETTINGS, max_examples=25)
@given(name=NAME)
def test_a_pane_starts_in_a_generated_directory(server: Server, name: str) -> None:
    folder = tempfile.mkdtemp(dir=server.root)
    path = os.path.join(folder, name)
    os.mkdir(path)
    assert started_in(server, "split-window", path) == (path, path)


@settings(SETTINGS, max_examples=25)
@given(word=TEXT, name=NAME)
def test_a_pipe_pane_command_round_trips(server: Server, word: str, name: str) -> None:
    pipes_exactly(server, word, name)


# --- end to end: a directory whose name is a payload ----------------------------------

HOSTILE_DIR = "x #(cd; touch pwned)#{pane_id} #[fg=red]%z;"


def hostile_dir(b: TestPane) -> Path:
    path = b.home / HOSTILE_DIR
    path.mkdir()
    return path


def no_job_ran(b: TestPane) -> bool:
    """Whether ``#(cd; touch pwned)`` never ran in the bridge's tmux server."""
    b.tmux(*control_job())
    return not (b.home / "pwned").exists()


def pane_path(b: TestPane, pane: str) -> str:
    return b.tmux("display-message", "-p", "-t", pane, "#{pane_current_path}")[:-1]


def cd_into(b: TestPane, path: Path) -> None:
    assert b.send_text("--", f"cd {shlex.quote(str(path))}")[0] == 0
    b.wait_for(lambda: pane_path(b, b.target) == str(path), "the cd")


def test_split_in_a_directory_named_like_a_format(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    work = hostile_dir(b)
    cd_into(b, work)
    result = b.bridge_cli("split", "--json", "--", "true")
    assert result.returncode == 0, result.stderr
    pane = json.loads(result.stdout)["pane"]
    assert pane_path(b, pane) == str(work)
    assert no_job_ran(b)


def test_respawn_after_exit_in_a_directory_named_like_a_format(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    work = hostile_dir(b)
    cd_into(b, work)
    code, _, err = b.send_text("--", "exit 3")
    assert code == 3, err
    b.wait_for_prompt()
    assert pane_path(b, b.target) == str(work)
    assert no_job_ran(b)


def test_detach_started_in_a_directory_named_like_a_format(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    work = hostile_dir(b)
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "--detach"],
        env=b.env, cwd=work, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (result.returncode, result.stderr) == (0, "")
    b.wait_for_prompt()
    assert pane_path(b, b.target) == str(work)
    assert no_job_ran(b)


def test_detach_with_a_session_name_like_a_format(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.session = b.env["TMUX_BRIDGE_SESSION"] = "tb #(cd; touch pwned)#{pane_id}%z"
    result = b.bridge_cli("--detach")
    assert (result.returncode, result.stdout) == (0, f"{b.session}\n"), result.stderr
    assert b.tmux("list-sessions", "-F", "#{session_name}") == f"{b.session}\n"
    b.wait_for_prompt()
    assert no_job_ran(b)


def test_detach_in_a_directory_tmux_cannot_start_in_says_where_it_started(
    make_bridge: MakeBridge,
) -> None:
    b = make_bridge("bash")
    deep = b.home / "deep"
    deep.mkdir()
    # longer than PATH_MAX: made (and entered) one step at a time, as a shell can
    work = subprocess.run(
        ["bash", "-c", 'for i in $(seq 17); do mkdir "$(printf %0250d 0)" && cd "$_"; '
         'done && exec "$0" --detach', str(BIN / "tmux-bridge")],
        env=b.env, cwd=deep, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert work.returncode == 0, work.stderr
    assert "starts in " + str(b.home) in work.stderr
    b.wait_for_prompt()
    assert pane_path(b, b.target) == str(b.home)


def test_http_create_session_in_a_directory_named_like_a_format(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    work = hostile_dir(b)
    with running(b.env) as server:
        reply = server.post(action="create_session", session="fmt", cwd=str(work))
        assert reply.status_code == 200, reply.text
    b.wait_for(lambda: pane_path(b, "=fmt:") == str(work), "the new session's shell")
    assert no_job_ran(b)


def test_http_create_session_refuses_a_directory_tmux_cannot_start_in(
    make_bridge: MakeBridge,
) -> None:
    b = make_bridge("bash")
    b.start()
    with running(b.env) as server:
        # within the contract's 4096 characters, beyond what chdir(2) takes
        reply = server.post(action="create_session", session="fmt", cwd="/" + "é" * 2100)
    assert reply.status_code == 400
    body = reply.json()
    assert body["metadata"]["error_code"] == "invalid_request", body
    assert "4095 bytes" in body["error"], body


# --- what the person's terminal shows -------------------------------------------------


class Terminal:
    """The person's terminal: an outer tmux whose one pane runs a client attached to the
    inner server's session; the outer ``capture-pane -e`` is what the terminal shows."""

    def __init__(self, env: dict[str, str], inner: list[str], session: str, root: Path) -> None:
        self.socket = str(root / "outer")
        attach = shlex.join([*inner, "attach-session", "-t", f"={session}"])
        self.env = {k: v for k, v in env.items() if k not in ("TMUX", "TMUX_PANE")}
        self.outer("-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "10", attach)
        self.outer("set-option", "-g", "status", "off")

    def outer(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args],
            env=self.env, capture_output=True, text=True, check=True, timeout=30,
        ).stdout  # fmt: skip

    def status_line(self, colours: bool = False) -> str:
        """The client's last row (its status line), with SGR sequences when ``colours``."""
        shown = self.outer("capture-pane", "-p", *(["-e"] if colours else []))
        return shown.rstrip("\n").split("\n")[-1]

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)


@contextlib.contextmanager
def person_terminal(b: TestPane) -> Iterator[Terminal]:
    term = Terminal(b.env, ["tmux", "-L", "default"], b.session, b.root)
    try:
        b.wait_for(lambda: b.tmux("list-clients").strip() != "", "the person's client")
        yield term
    finally:
        term.close()


class Drawn(NamedTuple):
    test_id: str
    text: str


DRAWN = [
    Drawn("style", "#[fg=red]red#[default]"),
    Drawn("style-after-hash", "##[fg=red]red"),
    Drawn("odd-run-before-style", "a###[fg=red]red"),
    Drawn("hashes", "h#x h##x h###x"),
    Drawn("variable", "#{pane_id} #{session_name}"),
    Drawn("job", "#(cd; touch pwned)"),
    Drawn("strftime", "%z %H %%"),
    Drawn("alias", "#H #S #D"),
    Drawn("unclosed", "a #{ b"),
]


@pytest.mark.pty
def test_a_notice_is_drawn_as_its_text_in_the_message_and_the_status_line(
    make_bridge: MakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = make_bridge("bash")
    b.start()
    b.tmux("set-option", "-g", "status-right", "<#{@tmux-bridge-notice}>")
    b.tmux("set-option", "-g", "status-right-length", "180")
    monkeypatch.setenv("TMUX_TMPDIR", b.env["TMUX_TMPDIR"])
    with person_terminal(b) as term:
        for case in DRAWN:
            _shows_notice(b, term, f"{case.test_id}: {case.text}")
    assert not (b.home / "pwned").exists()


def _shows_notice(b: TestPane, term: Terminal, text: str) -> None:
    """Notify ``text``: the message on the client's status line is ``text``, then (the
    message taken away) the status line's ``#{@tmux-bridge-notice}`` ends with it; no
    red in either (the payloads' style)."""
    from tmux_bridge.agents.notices import notify

    assert notify(Tmux(socket_name="default"), text) != []
    b.wait_for(lambda: term.status_line().startswith(text), f"the message {text!r}")
    assert "\x1b[31m" not in term.status_line(colours=True), term.status_line(colours=True)
    client = b.tmux("list-clients", "-F", "#{client_name}").split()[0]
    b.tmux("display-message", "-c", client, "-d", "1", "")  # the message hides the rest
    kept = f"] {text}>"
    b.wait_for(lambda: kept in term.status_line(), f"the status line {kept!r}")
    assert "\x1b[31m" not in term.status_line(colours=True), term.status_line(colours=True)


# --- end to end: tmux-send's own TMPDIR and runtime directory -------------------------


@pytest.fixture
def nested_bash(make_bridge: MakeBridge) -> TestPane:
    """A bash pane in which the person started another bash: calls go the far way."""
    b = make_bridge("bash")
    b.start()
    b.tmux("send-keys", "-t", b.target, "bash", "Enter")
    b.wait_for(lambda: len(_descendants(int(b.pane("#{pane_pid}")))) > 0, "the nested bash")
    b.wait_until_ready()
    return b


def _descendants(pid: int) -> list[str]:
    children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return children


def test_a_far_call_with_a_tmpdir_and_runtime_dir_named_like_formats(
    nested_bash: TestPane,
) -> None:
    b = nested_bash
    tmpdir = b.root / "t m#(cd; touch pwned)%z"
    tmpdir.mkdir()
    b.env["TMPDIR"] = str(tmpdir)
    b.env["TMUX_BRIDGE_DIR"] = str(b.root / "r un#(cd; touch pwned)%z")
    code, out, err = b.send_text("--max-time", "20", "--", "echo far-$((6*7))")
    assert (code, out) == (0, "far-42\n"), err
    assert no_job_ran(b)


def test_a_watch_with_a_tmpdir_named_like_formats(
    make_bridge: MakeBridge, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tmux_bridge.pane.watch import PaneWatch

    b = make_bridge("bash")
    b.start()
    tmpdir = b.root / "w t#(cd; touch pwned)%z"
    tmpdir.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    monkeypatch.setenv("TMUX_TMPDIR", b.env["TMUX_TMPDIR"])

    class Seen:
        data = b""

        def output(self, data: bytes) -> None:
            self.data += data

        def resync(self, reason: str) -> None:
            pass

    seen = Seen()
    watch = PaneWatch(Tmux(socket_name="default"), b.pane("#{pane_id}"), lambda: None)
    assert watch.stream.folder.startswith(str(tmpdir))
    watch.add(seen)
    watch.start()
    try:
        b.tmux("send-keys", "-t", b.target, "echo watched-$((6*7))", "Enter")
        b.wait_for(lambda: b"watched-42" in seen.data, "the watched output")
    finally:
        watch.stop()
    assert no_job_ran(b)


# --- by construction: no tmux call bypasses the seam ----------------------------------


def test_no_tmux_call_passes_expanded_text_not_built_by_the_seam() -> None:
    findings, allowed_seen = scan()
    assert findings == []
    assert allowed_seen == set(ALLOWED)  # every exception is still needed


class Bypass(NamedTuple):
    test_id: str
    source: str
    found: bool


BYPASSES = [
    Bypass("split-c", "t.run_all(['split-window', '-d', '-c', path])", True),
    Bypass("split-c-seam", "t.run_all(['split-window', '-c', seams.start_directory(p)])", False),
    Bypass("split-c-wrong-seam", "t.run_all(['split-window', '-c', seams.format_text(p)])", True),
    Bypass("run-with-seam", "t.run('respawn-pane', '-c', seams.start_directory(p))", True),
    Bypass("new-window-n", "t.run_all(['new-window', '-n', name])", True),
    Bypass("new-session-geometry", "['new-session', *g, '-c', cwd]", True),
    Bypass("flag-choice", "t.run('split-window', '-h' if h else '-v', '-c', d)", True),
    Bypass("message", "['display-message', '-c', c, text]", True),
    Bypass("message-seam", "['display-message', '-c', c, seams.message_text(text)]", False),
    Bypass("our-format", "['display-message', '-p', '-t', p, '#{pane_id}']", False),
    Bypass("our-constant", "F = '#{a}'\n['display-message', '-p', F + '#{b}']", False),
    Bypass("set-F", "['set-option', '-gF', '@x', value]", True),
    Bypass("notice", "['set-option', '-g', NOTICE_OPTION, 'constant']", True),
    Bypass("notice-seam", "['set-option', '-g', NOTICE_OPTION, seams.drawn_text(v)]", False),
    Bypass("title", "['select-pane', '-T', title]", True),
    Bypass("pipe", "['pipe-pane', '-O', '-t', p, f'cat > {path}']", True),
    Bypass("pipe-imported", "from .seams import pipe_command\n"
           "['pipe-pane', '-t', p, pipe_command(['cat'], path)]", False),
    Bypass("pipe-via-name", "c = seams.pipe_command(['cat'], x)\n['pipe-pane', c]", False),
    Bypass("command-string", "t.run('if-shell', '-F', c, f'pipe-pane -t {p} {cmd}')", True),
    Bypass("run-shell", "t.run('run-shell', command)", True),
]  # fmt: skip


@pytest.mark.parametrize("case", BYPASSES, ids=[c.test_id for c in BYPASSES])
def test_the_scan_finds_a_bypass(case: Bypass) -> None:
    assert bool(scan_source(case.source)) == case.found, scan_source(case.source)


def test_the_scan_reads_the_package_and_knows_every_tmux_command(server: Server) -> None:
    assert (PACKAGE / "text" / "seams.py").exists() and len(list(PACKAGE.rglob("*.py"))) > 40
    listed = server.tmux.run("list-commands", "-F", "#{command_list_name}").stdout.split()
    assert set(listed) == TMUX_COMMANDS


@pytest.mark.parametrize("token", ["", "a}", "x,#{pid}", "t\n", "a b", "é"])
def test_unpipe_if_ours_refuses_a_token_that_is_not_ours(token: str) -> None:
    """The live view's pipe token goes into an ``if-shell`` format: only its own
    alphabet may (``[A-Za-z0-9_-]+``); anything else never reaches tmux."""
    from tmux_bridge.pane.tap import unpipe_if_ours

    with pytest.raises(ValueError):
        unpipe_if_ours("%1", token)
    assert unpipe_if_ours("%1", "tmux-bridge-watch-ab_C9-3")[0] == "if-shell"


@pytest.mark.parametrize(
    "fifo", ["/tmp/x}/stream", "/tmp/tmux-bridge-watch-ab/s,#{pid}", "/tmp/a b/stream", "stream"]
)
def test_unmark_if_ours_refuses_a_fifo_that_is_not_ours(fifo: str) -> None:
    """The watch's mark is matched in an ``if-shell`` format by the FIFO's directory and
    name, which must be ours (a token's letters); the directories above them, which may
    hold any byte, never reach the format."""
    from tmux_bridge.pane.tap import unmark_if_ours

    with pytest.raises(ValueError):
        unmark_if_ours("%1", fifo)
    ours = unmark_if_ours("%1", "/tmp/#{pid},}/tmux-bridge-watch-ab_C9/stream")
    assert ours[0] == "if-shell" and "#{pid}" not in ours[4], ours
