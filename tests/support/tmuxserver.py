"""A private tmux server's directory, rc files and environment, for the tests and bench/.

Nothing made here touches the user's own tmux server or bridge: the server lives under
its own short ``TMUX_TMPDIR``, its shells get their own ``HOME`` whose rc files give the
plain prompt ``$ ``, and ``TMUX``/``TMUX_PANE``/``PROMPT_COMMAND`` are removed from the
environment passed on. bench/tmuxserver.py and tests/support/pane.py build on this.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

# The rc files of the private HOME: the prompt `$ ` in every shell, no hooks, no core files.
RC_FILES = {
    ".bashrc": "PS1='$ '\nunset PROMPT_COMMAND\nulimit -c 0\n",
    ".bash_profile": ". ~/.bashrc\n",
    ".zshrc": "PS1='$ '\nulimit -c 0\n",
    ".config/fish/config.fish": (
        "function fish_prompt; echo -n '$ '; end\nset -g fish_greeting ''\nulimit -c 0\n"
    ),
}


@contextlib.contextmanager
def private_root(prefix: str) -> Iterator[Path]:
    """A new temporary directory for one server, removed on exit whatever the reason. Its
    path stays short: Unix socket paths are limited to 108 bytes."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def prepare(root: Path, rc_files: Mapping[str, str] | None = None) -> dict[str, str]:
    """Make ``ROOT/home`` with :data:`RC_FILES` (``rc_files``, paths under ``HOME`` ->
    text, replace or add to them) and ``ROOT/tmux``; the environment of a server and its
    shells there: ``HOME`` and ``TMUX_TMPDIR`` set, the C.UTF-8 locale, xterm-256color."""
    home = root / "home"
    home.mkdir()
    (root / "tmux").mkdir()
    for name, text in {**RC_FILES, **(rc_files or {})}.items():
        path = home / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    # A fish that finds no generated completions in its HOME starts a Python script in
    # the background that parses every man page (10 to 18 s of CPU here), at the first
    # start in every new HOME: a person's fish did that once, long ago.
    (home / ".local/share/fish/generated_completions").mkdir(parents=True, exist_ok=True)
    # (an agent running the tests names itself: not in the test's calls' headers)
    env = {
        k: v for k, v in os.environ.items() if k not in ("TMUX", "TMUX_PANE", "TMUX_BRIDGE_AGENT")
    }
    env.pop("PROMPT_COMMAND", None)
    env.update(
        HOME=str(home), TMUX_TMPDIR=str(root / "tmux"), LC_ALL="C.UTF-8", TERM="xterm-256color"
    )
    # python3 in the panes is the suite's own interpreter, not a version manager's shim
    # (pyenv's takes 0.3 s and a dozen processes to start it: a command that waits for
    # input then showed no output for seconds on a loaded machine)
    interpreter = Path(sys.base_prefix) / "bin" / "python3"
    if interpreter.exists():  # else the PATH's own python3 (a dangling link would hide it)
        bin_dir = root / "interpreter"
        bin_dir.mkdir()
        (bin_dir / "python3").symlink_to(interpreter)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', os.defpath)}"
    return env


def run_tmux(env: Mapping[str, str], args: tuple[str, ...], timeout: float) -> tuple[int, str, str]:
    """``tmux -L default ARGS`` on the server of ``env``, no input: its exit status, stdout
    and stderr. Raises :class:`subprocess.TimeoutExpired` after ``timeout`` seconds."""
    result = subprocess.run(
        ["tmux", "-L", "default", *args],
        env=dict(env),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return result.returncode, result.stdout, result.stderr


def at_prompt(screen: str) -> bool:
    """Whether the last non-empty line of ``screen`` is the bare prompt ``$``."""
    lines = [line for line in screen.split("\n") if line.strip()]
    return bool(lines) and lines[-1].rstrip() == "$"
