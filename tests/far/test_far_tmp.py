"""Far shells against another user of the far host: names planted in /tmp before the
call. tmux-send's far-shell code once wrote to ``/tmp/.tmux-send-$$.out`` (and ``.in``,
``-w$$``); another user who made those names first, for the pids to come, read what
was written there through a hard link of theirs and truncated a root-owned file through
a symbolic link. Kernels with ``fs.protected_regular`` and ``fs.protected_symlinks``
stop that in sticky directories; macOS, the BSDs and many containers have neither, so
the test turns both off (and restores them).

The far shell is root's (whom the links are aimed at), nested in a local pane, in a pid
namespace and a mount namespace of its own (``unshare``): its pids start at 1, so the
names to plant are known, and its /tmp is a sticky directory of the test's (bound over
/tmp), so no other process of the machine meets a planted name. The other user is a
test user of tests/support/sshd.py. Expected contents are the test's own data.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from ..support.pane import enter_nested, private_pane, shell_path
from ..support.sshd import ensure_user

pytestmark = pytest.mark.tmux

PIDS = 5000  # the far shell's pids planted for: fish spends ~300 on a long typed command
SECRET = b"root-only secret\n"
VICTIM = b"a root-owned file that must stay as it is\n"
# the far shell's rc files (its HOME is the test's: the bridge's is under the real /tmp)
RC = {
    ".bashrc": "PS1='$ '\n",
    ".shrc": "PS1='$ '\n",
    ".config/fish/config.fish": (
        "function fish_prompt; echo -n '$ '; end\nset -g fish_greeting ''\n"
    ),
    # fish's first start makes completions from man pages in the background otherwise
    ".local/share/fish/generated_completions/.keep": "",
}

# The other user's side: for every pid of the far shell's namespace, a hard link to a
# file of theirs at the output file's name ("link"), or a symbolic link to the victim
# at every name ("sym").
_PLANT = """
import os, sys
how, tmp, loot, victim, count = *sys.argv[1:5], int(sys.argv[5])
for pid in range(1, count):
    names = [f".tmux-send-{pid}.out"]
    if how == "sym":
        names += [f".tmux-send-{pid}.in", f".tmux-send-w{pid}"]
    for name in names:
        path = os.path.join(tmp, name)
        os.link(loot, path) if how == "link" else os.symlink(victim, path)
"""


class Host(NamedTuple):
    """The far shell's world: its /tmp, HOME, the other user's file, root's files."""

    tmp: Path
    home: Path
    loot: Path
    secret: Path
    victim: Path


@pytest.fixture
def unprotected() -> Iterator[None]:
    """``fs.protected_regular`` and ``fs.protected_symlinks`` off for the test, as on a
    host without them; restored after."""
    saved: dict[Path, str] = {}
    try:
        for name in ("protected_regular", "protected_symlinks"):
            path = Path("/proc/sys/fs") / name
            try:
                saved[path] = path.read_text()
                path.write_text("0")
            except OSError as error:
                pytest.skip(f"cannot turn fs.{name} off here ({error}): the test needs that")
        yield
    finally:
        for path, value in saved.items():
            path.write_text(value)


@pytest.fixture
def host() -> Iterator[Host]:
    """A directory outside /tmp (the far shell's /tmp is bound over it) holding its
    sticky /tmp, its HOME, the other user's directory and root's 0700 one."""
    attacker = ensure_user("dash")
    top = Path(tempfile.mkdtemp(prefix="tb-far-tmp-", dir="/var/tmp"))
    try:
        top.chmod(0o755)
        tmp, home, theirs, root = top / "tmp", top / "home", top / "theirs", top / "root"
        for folder, mode in ((tmp, 0o1777), (home, 0o700), (theirs, 0o755), (root, 0o700)):
            folder.mkdir()
            folder.chmod(mode)
        for name, text in RC.items():
            (home / name).parent.mkdir(parents=True, exist_ok=True)
            (home / name).write_text(text)
        shutil.chown(theirs, attacker, attacker)
        loot = theirs / "loot"
        subprocess.run(["runuser", "-u", attacker, "--", "touch", str(loot)], check=True)
        loot.chmod(0o666)
        assert loot.stat().st_uid != 0  # the premise: another user's file
        host = Host(tmp, home, loot, root / "secret", root / "victim")
        host.secret.write_bytes(SECRET)
        host.secret.chmod(0o600)
        host.victim.write_bytes(VICTIM)
        yield host
    finally:
        shutil.rmtree(top, ignore_errors=True)


@pytest.mark.parametrize("how", ["link", "sym"], ids=["hard-links", "symbolic-links"])
@pytest.mark.parametrize("shell", ["bash", "dash", "fish"])
def test_names_planted_in_tmp_by_another_user(
    unprotected: None, host: Host, shell: str, how: str
) -> None:
    """Another user plants hard links to a file of theirs (or symbolic links to a
    root-owned file) at the names the far shell's pids would give; the person's root
    shell then runs far calls: the helpers' definition, --read of a root-only file,
    --write of a new file. After each, the other user's file is still empty and the
    root-owned file untouched; the calls give the right bytes."""
    shell_path(shell)
    attacker = host.loot.parent.owner()
    plant = ["runuser", "-u", attacker, "--", "python3", "-c", _PLANT, how, str(host.tmp)]
    args = [str(host.loot), str(host.victim), str(PIDS)]
    subprocess.run([*plant, *args], check=True, timeout=60)
    assert (host.tmp / ".tmux-send-1.out").lstat().st_uid == host.loot.stat().st_uid
    _far_calls(shell, host)


def _untouched(host: Host, step: str) -> None:
    loot, victim = host.loot.read_bytes(), host.victim.read_bytes()
    assert loot == b"", f"{step}: the other user's hard link got what was written"
    assert victim == VICTIM, f"{step}: a root-owned file was written through a link"


def _far_calls(shell: str, host: Host) -> None:
    """Root's ``shell`` nested in a bash pane, in its namespaces (its own pid 1, the
    test's /tmp): far calls that must work, :func:`_untouched` after each."""
    if shutil.which("unshare") is None:
        pytest.skip("unshare (util-linux) is not installed")
    with private_pane("bash") as b:
        b.start()
        start = f"{shell} -i" if shell == "dash" else shell
        env = f"HOME={host.home} ENV={host.home}/.shrc"
        inner = f"mount --bind {host.tmp} /tmp && cd {host.home} && {env} exec {start}"
        line = f"unshare --pid --fork --mount --propagation private sh -c '{inner}'"
        enter_nested(b, shell, line)
        pid = "$fish_pid" if shell == "fish" else "$$"
        first = b.send_text("--", f"echo {pid}; id -un; command ls -d /tmp/.tmux-send-1.out")
        assert first == (0, "1\nroot\n/tmp/.tmux-send-1.out\n", ""), b.screen()
        _untouched(host, "the first call (the helpers defined)")
        result = b.send("--read", str(host.secret))
        assert (result.returncode, result.stdout) == (0, SECRET), result.stderr
        _untouched(host, "--read of a root-only file")
        new = host.secret.parent / "new"
        written = b.send("--write", str(new), input=b"new data\n")
        assert written.returncode == 0, written.stderr
        assert new.read_bytes() == b"new data\n"
        _untouched(host, "--write")
