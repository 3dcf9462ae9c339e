"""The far-shell seam (tmux_bridge/text/seams.py, "far shells"): data as a printf format, the
far shell's private directory and the temporary files made in it or beside a file being
written, fed every byte and hostile text, run by the real shells (bash, zsh, fish, dash,
busybox sh); and the far-shell modules scanned for any path made another way.

Expected bytes are the test's own data; what a shell made is looked at on disk.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import stat
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tmux_bridge
from tmux_bridge.calls.farrepl import start_line
from tmux_bridge.calls.files import SCRIPT, FarTransport
from tmux_bridge.calls.validate import SCRIPT as VALIDATE_SCRIPT
from tmux_bridge.text.farshell import (
    FarLook,
    Recovery,
    command_lines,
    fixup_line,
    helpers_line,
    probe_line,
    quiet_lines,
    recovery_line,
)
from tmux_bridge.text.seams import (
    FAR_DIR_VARIABLE,
    far_dir_function,
    far_temp_file,
    fish_quoted,
    printf_text,
    sh_backup_file,
    sh_lock_link,
    sh_private_dir,
    sh_temp_beside,
)
from tmux_bridge.text.shells import ShellKind
from tmux_bridge.text.transfer import wrapper as transfer_wrapper

from ..support.pane import shell_path

EVERY_BYTE = [bytes([b]) for b in range(256)]
HOSTILE = [
    b"#(touch pwned)",
    b"#{pane_id}",
    b"#[fg=red]",
    b"$(touch pwned)",
    b"`touch pwned`",
    b"${HOME}",
    b"'; touch pwned; '",
    b"\x1b[201~",
    b"\x1b]52;c;cHduZWQ=\x07",
    b"\r\x1b[2K",
    "\ud800".encode("utf-8", "surrogatepass"),  # a lone surrogate as Python would pass it
    bytes(range(0x80, 0xA0)),  # C1 controls as bytes
    "".join(map(chr, range(0x80, 0xA0))).encode(),  # and as UTF-8
    b"-n",
    b"--",
    b"-",
    b"--help",
    b"%s%d%%%b",
    b"\\0\\n\\x41\\",
    b"\x00",
    b"a\x00b",
    b"\n\n",
]


class Shell(NamedTuple):
    name: str
    argv: tuple[str, ...]  # how to run a script: argv + (script,)
    fish: bool


SHELLS = [
    Shell("bash", ("bash", "-c"), False),
    Shell("zsh", ("zsh", "-c"), False),
    Shell("dash", ("dash", "-c"), False),
    Shell("busybox", ("busybox", "sh", "-c"), False),
    Shell("fish", ("fish", "-c"), True),
]
SHELL_IDS = [s.name for s in SHELLS]


def run(
    shell: Shell, script: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    shell_path(shell.argv[0])
    argv = [*shell.argv, script]
    return subprocess.run(argv, capture_output=True, timeout=60, env=env, cwd=cwd)


# --- data: printf_text ------------------------------------------------------------------------


def _printf_all(shell: Shell, cases: list[bytes], cwd: Path) -> list[bytes]:
    """What ``printf 'printf_text(case)'`` prints for each case, in one run of ``shell``
    (a separator the cases do not hold printed between them)."""
    separator = b"\n=TB=SEP=\n"
    script = "\n".join(
        f"printf '{printf_text(case)}'; printf '{printf_text(separator)}'" for case in cases
    )
    result = run(shell, script, cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert result.stderr == b""
    return result.stdout.split(separator)[:-1]


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_printf_text_every_byte_and_hostile_text(shell: Shell, tmp_path: Path) -> None:
    """Each byte alone, inside text and at the start; the hostile payloads: each comes
    back exactly from the shell's own printf, and nothing in them ran."""
    cases = [*EVERY_BYTE, *(b"a" + b + b"z" for b in EVERY_BYTE), *HOSTILE, bytes(range(256))]
    cases += [b + b"tail" for b in (b"-", b"--", b"%", b"\\", b"'")]
    assert _printf_all(shell, cases, tmp_path) == cases
    assert list(tmp_path.iterdir()) == []  # no `touch pwned` ran


def test_fish_quoted_every_character_and_hostile_text(tmp_path: Path) -> None:
    """What a far fish's line hands to ``sh -c`` (a long command's reader): each ASCII
    character alone and inside text, non-ASCII, the hostile payloads, runs of
    backslashes and quotes: each one word that fish's ``printf %s`` gives back exactly,
    and nothing in them ran."""
    fish = shell_path("fish")
    cases = [chr(c) for c in range(1, 128)] + ["a" + chr(c) + "z" for c in range(1, 128)]
    cases += [h.decode("utf-8", "replace") for h in HOSTILE if b"\0" not in h]
    cases += ["é€", "\\", "\\\\'", "'\\", "\\'", "''", "\\\\\\", "\\n", "\\047"]
    words = "\n".join(f"printf '%s\\n=TB=SEP=\\n' {fish_quoted(case)}" for case in cases)
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    result = subprocess.run(
        [fish, "--no-config", "-c", words], capture_output=True, cwd=tmp_path, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode("utf-8").split("\n=TB=SEP=\n")[:-1] == cases
    assert list(tmp_path.iterdir()) == []  # no `touch pwned` ran


def test_printf_text_is_safe_to_type() -> None:
    """Printable ASCII without a single quote, never starting with `-` (an option to
    bash's and dash's printf): for every byte alone, inside text and the payloads."""
    for data in [*EVERY_BYTE, *HOSTILE, bytes(range(256)) * 2]:
        text = printf_text(data)
        assert all(0x20 <= ord(c) < 0x7F for c in text), (data, text)
        assert "'" not in text and not text.startswith("-"), (data, text)


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200))
def test_printf_text_round_trips(data: bytes) -> None:
    for shell in (SHELLS[2], SHELLS[0]):  # dash, then bash
        result = run(shell, f"printf '{printf_text(data)}'")
        assert (result.returncode, result.stdout, result.stderr) == (0, data, b"")


@settings(max_examples=40, deadline=None)
@given(st.binary(min_size=1, max_size=3000))
def test_long_commands_in_pieces_round_trip(data: bytes) -> None:
    """A command typed in pieces (busybox's 900-character lines) is the same text once
    collected: the pieces printed by the same printf give the bytes back."""
    lines = command_lines("posix", "0123456789", data)
    if len(lines) == 1:
        return
    collect = "\n".join(line.strip() for line in lines[:-1])
    result = run(SHELLS[3], collect + '\nprintf "$__tmux_send_c"')
    assert (result.returncode, result.stdout) == (0, data), result.stderr


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_commands_that_start_with_a_dash(shell: Shell, tmp_path: Path) -> None:
    """A command that starts with `-` is a command to the far shell, short and in
    pieces: its status is the one the shell gives that line (bash's eval took it for an
    option, and printf did before it)."""
    kind: ShellKind = "fish" if shell.fish else "posix"
    for command in (b"-x", b"--help", b"-" + b"x" * 2000):
        direct = run(shell, "true\n" + command.decode(), cwd=tmp_path).returncode
        typed = helpers_line(kind, "0123456789") + "\n"
        typed += "\n".join(command_lines(kind, "0123456789", command)) + "\n"
        result = run(shell, typed, cwd=tmp_path)
        status = re.search(rb"TMUXSEND_END_0123456789 (\d+)___", result.stdout)
        assert status is not None, result
        assert int(status.group(1)) == direct != 0, (direct, result)


# --- names written into far-shell code ----------------------------------------------------------


def test_names_are_refused_unless_plain() -> None:
    """Every byte as a variable name, a stem or a directory variable, alone and inside a
    name, and the payloads: only letters, digits and `_` (stems: lowercase letters) get
    in; the rest raise ValueError rather than reach shell code."""
    letters = set("abcdefghijklmnopqrstuvwxyz")
    name_chars = letters | set("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
    for byte in range(256):
        char = chr(byte)
        for text in (char, f"a{char}b"):
            makers: list[Callable[[str], str]] = [
                lambda t: far_temp_file(t, "err"),
                lambda t: sh_temp_beside(t, "base"),
                lambda t: sh_temp_beside("dir", t),
                lambda t: sh_backup_file(t, "now"),
                lambda t: sh_backup_file("bdir", t),
                lambda t: sh_lock_link(t, "now"),
                lambda t: sh_lock_link("bdir", t),
            ]
            for make in makers:
                if set(text) <= name_chars and not text[0].isdigit():
                    assert make(text)
                else:
                    with pytest.raises(ValueError):
                        make(text)
            if set(text) <= letters:
                assert far_temp_file("v", text)
            else:
                with pytest.raises(ValueError):
                    far_temp_file("v", text)
    for text in [*(p.decode("utf-8", "surrogateescape") for p in HOSTILE), "\ud800", "é"]:
        with pytest.raises(ValueError):
            far_temp_file(text, "err")
        with pytest.raises(ValueError):
            far_temp_file("v", text)
    with pytest.raises(ValueError):
        far_temp_file("", "err")


# --- the private directory in each shell --------------------------------------------------------


def _dir_script(shell: Shell, body: str) -> str:
    """``body`` after the definitions of the directory function and a temp-file maker
    (``__tb_mk``: a new file in ``$__tb_f``, else ``NONE``)."""
    if shell.fish:
        maker = (
            "function __tb_mk; "
            + far_temp_file("__tb_f", "err", fish=True)
            + "; or set -g __tb_f NONE; end;"
        )
    else:
        maker = "__tb_mk() { " + far_temp_file("__tb_f", "err") + " || __tb_f=NONE; }; "
    return far_dir_function(fish=shell.fish) + " " + maker + "\n" + body


def _show(shell: Shell) -> str:
    """Code printing whether the directory function succeeded (0 or 1) and the
    variable, on one line (safe under `set -e`)."""
    d = f"${FAR_DIR_VARIABLE}"
    if shell.fish:
        return f'if __tmux_send_dir; echo "0:{d}"; else; echo "1:{d}"; end\n'
    return f'if __tmux_send_dir; then echo "0:{d}"; else echo "1:{d}"; fi\n'


@pytest.fixture
def tmpdir_env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An environment whose TMPDIR is a fresh world-writable sticky directory (a /tmp of
    the test's own)."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    yield {**os.environ, "TMPDIR": str(shared)}


def _parse(out: bytes) -> list[tuple[int, str]]:
    lines = out.decode().splitlines()
    return [(int(s), d) for s, _, d in (line.partition(":") for line in lines)]


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_private_directory_made_once_and_reused(shell: Shell, tmpdir_env: dict[str, str]) -> None:
    """Made by mktemp -d in $TMPDIR, 0700, the shell user's; the same one the next time;
    files made in it are new, 0600, and distinct."""
    body = _show(shell) + _show(shell) + "__tb_mk; echo $__tb_f; __tb_mk; echo $__tb_f\n"
    result = run(shell, _dir_script(shell, body), env=tmpdir_env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.decode().splitlines()
    (first, second), files = _parse("\n".join(lines[:2]).encode()), lines[2:]
    assert first == second and first[0] == 0, lines
    folder = Path(first[1])
    assert folder.parent == Path(tmpdir_env["TMPDIR"])
    info = folder.lstat()
    assert stat.S_ISDIR(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o700
    assert info.st_uid == os.geteuid()
    assert len(set(files)) == 2 and all(Path(f).parent == folder for f in files), files
    for made in files:
        assert stat.S_IMODE(Path(made).stat().st_mode) == 0o600
        assert Path(made).read_bytes() == b""


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_private_directory_gone_or_not_ours_is_made_again(
    shell: Shell, tmpdir_env: dict[str, str]
) -> None:
    """Removed (a tmp cleaner), then replaced by another user's directory of the same
    name (0777, a symbolic link planted in it), then by a symbolic link to a directory
    of ours: each time a new directory is made, and nothing is written into the
    other user's one."""
    if os.geteuid() != 0:
        pytest.skip("making a directory owned by another user needs root")
    marker = Path(tmpdir_env["TMPDIR"]).parent / "steps"
    marker.mkdir()
    steps = ["gone", "other", "link"]
    body = _show(shell)
    for step in steps:
        # the shell waits until the test has changed the directory, each step
        if shell.fish:
            body += f"while not test -e {marker}/{step}; sleep 0.01; end\n"
        else:
            body += f"while [ ! -e {marker}/{step} ]; do sleep 0.01; done\n"
        body += _show(shell) + "__tb_mk; echo 0:$__tb_f\n"
    shell_path(shell.argv[0])
    proc = subprocess.Popen(
        [*shell.argv, _dir_script(shell, body)],
        env=tmpdir_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    folders = [Path(proc.stdout.readline().decode().strip().partition(":")[2])]
    assert folders[0].is_dir()
    shutil.rmtree(folders[0])  # gone
    (marker / "gone").touch()
    folders.append(_next_dir(proc))
    shutil.rmtree(folders[-1])  # another user's at that name, with a planted link
    os.mkdir(folders[-1], 0o777)
    os.chmod(folders[-1], 0o777)
    os.chown(folders[-1], 65534, 65534)
    (folders[-1] / "err.planted").symlink_to("/etc/passwd")
    (marker / "other").touch()
    folders.append(_next_dir(proc))
    ours = Path(tmpdir_env["TMPDIR"]).parent / "ours"
    ours.mkdir()
    shutil.rmtree(folders[-1])
    folders[-1].symlink_to(ours)  # a link where the directory was
    (marker / "link").touch()
    folders.append(_next_dir(proc))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert len(set(folders)) == 4, folders  # a new one each time
    assert sorted(os.listdir(folders[1])) == ["err.planted"]  # nothing of ours went there
    assert os.listdir(ours) == []


def _next_dir(proc: subprocess.Popen[bytes]) -> Path:
    """The directory the shell's function settled on (checked: ours, no link, 0700,
    and the file made next is in it)."""
    assert proc.stdout is not None
    status, _, name = proc.stdout.readline().decode().strip().partition(":")
    assert status == "0", (status, name)
    made = Path(proc.stdout.readline().decode().strip().partition(":")[2])
    folder = Path(name)
    info = folder.lstat()
    assert stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid()
    assert stat.S_IMODE(info.st_mode) == 0o700
    assert made.parent == folder and made.is_file()
    return folder


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_no_mktemp_no_directory(shell: Shell, tmp_path: Path) -> None:
    """Without mktemp (a PATH without it), or with a TMPDIR that cannot hold a
    directory: status 1, the variable empty, no file made, and the shell (under
    `set -eu` where it has that) goes on."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("sleep", "cat", "rm"):
        found = shutil.which(name)
        assert found is not None
        (tools / name).symlink_to(found)
    strict = "" if shell.fish else "set -eu\n"
    body = strict + _show(shell) + "__tb_mk; echo $__tb_f; echo alive\n"
    env = {**os.environ, "PATH": str(tools), "TMPDIR": str(tmp_path)}
    argv0 = shutil.which(shell.argv[0])
    if argv0 is None:
        pytest.skip(f"{shell.argv[0]} is not installed")
    bare = shell._replace(argv=(argv0, *shell.argv[1:]))
    if shell.name != "busybox":  # whose sh runs its own mktemp applet, PATH or not
        result = run(bare, _dir_script(bare, body), env=env)
        assert result.stdout.decode().splitlines() == ["1:", "NONE", "alive"], result.stderr
        assert sorted(os.listdir(tmp_path)) == ["bin"]
    read_only = {**os.environ, "TMPDIR": str(tmp_path / "no" / "such")}
    result = run(shell, _dir_script(shell, body), env=read_only)
    assert result.stdout.decode().splitlines() == ["1:", "NONE", "alive"], result.stderr


HOSTILE_TMPDIRS = ["a b", "$(touch pwned)", "#(touch pwned)", "`touch pwned`", "x;touch pwned",
                   "new\nline", "*", "-n", "'q'\"", "#{pane_id}"]  # fmt: skip


@pytest.mark.parametrize("shell", SHELLS, ids=SHELL_IDS)
def test_hostile_tmpdir_names(shell: Shell, tmp_path: Path) -> None:
    """A TMPDIR whose name holds spaces, substitutions, globs or a newline is used as it
    is: the directory is made inside it, nothing runs, and the stderr file works with
    the typed command line (bash splits an unquoted redirection's word)."""
    for number, name in enumerate(HOSTILE_TMPDIRS):
        base = tmp_path / str(number) / name
        base.mkdir(parents=True)
        env = {**os.environ, "TMPDIR": str(base)}
        body = _show(shell) + "__tb_mk; echo 0:$__tb_f\n"
        result = run(shell, _dir_script(shell, body), env=env, cwd=tmp_path)
        assert result.returncode == 0, (name, result.stderr)
        status, folder = result.stdout.decode().split(":", 1)[0], _single(base)
        assert status == "0" and folder.parent == base, (name, result.stdout)
    assert not list(tmp_path.rglob("pwned"))
    kind: ShellKind = "fish" if shell.fish else "posix"
    typed = helpers_line(kind, "0123456789") + "\n"
    typed += "\n".join(command_lines(kind, "0123456789", b"echo out; echo err >&2")) + "\n"
    env = {**os.environ, "TMPDIR": str(tmp_path / "0" / "a b")}
    result = run(shell, typed, env=env, cwd=tmp_path)
    assert b"out\n" in result.stdout and b"\nerr\n" not in result.stderr, result
    assert re.search(rb"END_0123456789 0___err\n___TMUXSEND_ERR", result.stdout), result.stdout


def _single(base: Path) -> Path:
    (entry,) = base.iterdir()
    return entry


# --- by construction: no other path in far-shell code -------------------------------------------

FAR_MODULES = [
    "text/farshell.py",
    "calls/far.py",
    "calls/farrepl.py",
    "calls/farcheck.py",
    "text/presets.py",  # the far REPLs' helpers
    "calls/files.py",
    "calls/validate.py",
    "text/transfer.py",
    "calls/transfer.py",
]
# a name another user can guess ($$, fish's pid), a fixed temporary directory, or a
# mktemp call written by hand (the seam's functions make those)
BYPASS = re.compile(r"\$\$|fish_pid|/tmp|/var/tmp|/dev/shm|mktemp\s+[\"'$-]|\(mktemp")


def _strings(path: Path) -> Iterator[tuple[int, str]]:
    """Every string constant in a module but its docstrings, with its line."""
    tree = ast.parse(path.read_text())
    docs = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            docs.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            yield node.lineno, node.value


@pytest.mark.parametrize("module", FAR_MODULES)
def test_far_modules_make_no_path_of_their_own(module: str) -> None:
    """No string in the far-shell modules holds `$$`, `$fish_pid`, a temporary directory
    or a mktemp call: paths there come from tmux_bridge/text/seams.py."""
    path = Path(tmux_bridge.__file__).parent / module
    found = [(line, text) for line, text in _strings(path) if BYPASS.search(text)]
    assert found == [], f"{module}: build far-shell paths with tmux_bridge.text.seams: {found}"


def test_far_shell_text_holds_only_the_seams_paths() -> None:
    """Everything typed into or run by a far shell, for every kind, with the seam's own
    code taken out, holds no guessable name, temporary directory or mktemp call."""
    seam_code = [far_dir_function(), far_dir_function(fish=True), sh_temp_beside("dir", "base")]
    seam_code += [sh_backup_file("bdir", "now"), sh_lock_link("bdir", "lk_now"), sh_private_dir()]
    seam_code += [far_temp_file("__tmux_send_err", "err", fish=f) for f in (False, True)]
    texts = [SCRIPT, FarTransport.WRAPPER, *FarTransport().words(SCRIPT, ["read", "-"], b"-x")]
    texts += [VALIDATE_SCRIPT, transfer_wrapper(SCRIPT)]
    kinds: list[ShellKind] = ["bash", "zsh", "fish", "posix"]
    for kind in kinds:
        texts += [helpers_line(kind, "0123456789"), probe_line("0123456789")]
        texts += [*command_lines(kind, "0123456789", b"x" * 5000), recovery_line(kind)]
        texts += [recovery_line(kind, Recovery(2, 80, (1, 0), "idle timeout"))]
        texts += [fixup_line("0123456789", Recovery(2, 80, (2, 0), "idle timeout"), True)]
        quiet = quiet_lines(kind, "0123456789", b"x" * 5000, FarLook(2, 80, "x"))
        texts += [quiet[0], *quiet[1]] if quiet is not None else []
        texts += [start_line(kind, "0123456789", b"python3")]
    for text in texts:
        for code in seam_code:
            text = text.replace(code, "")
        assert not BYPASS.search(text), (BYPASS.findall(text), text[:200])
