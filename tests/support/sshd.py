"""A real OpenSSH server for the far-shell tests: on 127.0.0.1, a free port, a host key
and a client key made in a temp directory, and test users whose login shells are bash,
zsh, fish and dash (made with ``useradd`` when missing: needs root, as in CI)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import pytest

if TYPE_CHECKING:
    from .pane import TestPane

SSHD = "/usr/sbin/sshd"
USERS = {"bash": "tbfar-bash", "zsh": "tbfar-zsh", "fish": "tbfar-fish", "dash": "tbfar-dash"}
# each user's rc files: a plain `$ ` prompt, no greeting, no zsh new-user wizard
_RC = {
    "bash": {".bashrc": "PS1='$ '\nHISTCONTROL=ignoreboth\n", ".profile": ". ~/.bashrc\n"},
    "zsh": {".zshrc": "PS1='$ '\n"},
    "fish": {".config/fish/config.fish": "set -g fish_greeting ''\n"},
    "dash": {".profile": "PS1='$ '\n"},
}


class Sshd(NamedTuple):
    port: int
    key: Path  # the client's private key
    pid: int  # the listening sshd

    def command(self, shell: str) -> str:
        """The line the person types to reach the user whose login shell is ``shell``."""
        return (
            f"ssh -p {self.port} -i {self.key} -o StrictHostKeyChecking=no "
            f"-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR {USERS[shell]}@127.0.0.1"
        )

    def connections(self, user: str) -> list[int]:
        """The sshd processes serving ``user``: each connection's monitor (a child of the
        listener) and the children it forked (the session's own sshd, the shell)."""
        found = []
        for pid in _children(self.pid):
            with contextlib.suppress(OSError):
                if user.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found += [pid, *_children(pid)]
        return found


def _children(pid: int) -> list[int]:
    out: list[int] = []
    with contextlib.suppress(OSError):
        for task in os.listdir(f"/proc/{pid}/task"):
            text = Path(f"/proc/{pid}/task/{task}/children").read_text()
            out += [int(p) for p in text.split()]
    return out


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("far-shell tests make users with useradd and run sshd: they need root")


def ensure_user(shell: str) -> str:
    """The test user for ``shell`` (created when missing), its rc files in place."""
    need_root()
    path = shutil.which(shell)
    if path is None:
        pytest.skip(f"{shell} is not installed")
    user = USERS[shell]
    if subprocess.run(["id", user], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "-m", "-s", path, user], check=True)
    subprocess.run(["usermod", "-s", path, "-p", "*", user], check=True)  # not locked
    home = Path(f"/home/{user}")
    for name, text in _RC[shell].items():
        target = home / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        _own(home, target, user)
    # no man-page parse in the background at fish's first start (tmuxserver.prepare)
    completions = home / ".local/share/fish/generated_completions"
    completions.mkdir(parents=True, exist_ok=True)
    _own(home, completions, user)
    return user


def _own(home: Path, path: Path, user: str) -> None:
    """Give ``user`` ``path`` and the folders between it and ``home``."""
    folders = [home / p for p in path.relative_to(home).parents if p != Path(".")]
    for owned in [path, *folders]:
        shutil.chown(owned, user, user)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_sshd() -> Iterator[Sshd]:
    """sshd on 127.0.0.1 for the test users, killed at the end."""
    need_root()
    if not os.path.exists(SSHD):
        pytest.skip("openssh-server is not installed (bash .ci/deps installs it)")
    for shell in USERS:
        if shutil.which(shell):
            ensure_user(shell)
    root = Path(tempfile.mkdtemp(prefix="tb-sshd-"))
    root.chmod(0o755)
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
    for name in ("host", "client"):
        keygen = ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(root / name)]
        subprocess.run(keygen, check=True)
    (root / "authorized_keys").write_text((root / "client.pub").read_text())
    (root / "authorized_keys").chmod(0o644)
    port = _free_port()
    config = root / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {root / 'host'}\n"
        f"AuthorizedKeysFile {root / 'authorized_keys'}\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin no\n"
        f"PidFile {root / 'sshd.pid'}\nPrintMotd no\nPrintLastLog no\nAcceptEnv LANG LC_*\n"
    )
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                pytest.fail("sshd did not start listening")
            time.sleep(0.02)
        yield Sshd(port, root / "client", proc.pid)
    finally:
        proc.kill()
        proc.wait()
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def slow_link(port: int, delay: float) -> Iterator[int]:
    """A TCP relay on a free loopback port to ``port`` that holds every chunk ``delay``
    seconds in each direction (a slow network; tc's netem is not in every kernel). Yields
    its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    opened: list[socket.socket] = []

    def pump(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                time.sleep(delay)
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            server = socket.create_connection(("127.0.0.1", port))
            opened.extend((client, server))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=pump, args=(a, b), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield int(listener.getsockname()[1])
    finally:
        stop.set()
        thread.join(2)
        listener.close()
        for sock in opened:
            sock.close()


def ssh_pane(b: TestPane, sshd: Sshd, shell: str) -> None:
    """The person, in the bridge's local bash, logs in over ssh as the ``shell`` user."""
    b.start()
    b.tmux("send-keys", "-t", b.target, sshd.command(shell), "Enter")
    b.wait_for(lambda: b.foreground() == "ssh", "ssh to start")
    b.wait_until_ready()
