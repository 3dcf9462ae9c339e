"""The person's side: creating the bridge session and attaching to it."""

from __future__ import annotations

import os
import pwd

from .pane import PANE_MARKER_OPTION
from .runtime import ensure_private_dir
from .target import Target
from .tmux import Tmux

# Scrollback for the bridge pane. tmux reads history-limit only when a pane is created,
# so it is in force before new-session runs (see create_session).
HISTORY_LIMIT = 50000


def user_shell() -> str:
    """``$SHELL``, else the login shell of the effective user, else /bin/sh."""
    shell = os.environ.get("SHELL")
    if shell:
        return shell
    try:
        return pwd.getpwuid(os.geteuid()).pw_shell or "/bin/sh"
    except KeyError:
        return "/bin/sh"


def session_exists(tmux: Tmux, name: str) -> bool:
    """Whether the session runs on the bridge's tmux server (False when no server runs)."""
    return tmux.run("has-session", "-t", f"={name}", check=False).returncode == 0


def create_session(
    tmux: Tmux, name: str, shell: str, cwd: str, size: tuple[int, int] | None
) -> None:
    """Start session ``name`` detached, running ``shell`` as a login shell in ``cwd``.

    One tmux invocation: the global history-limit is raised only around new-session and
    put back, so the pane gets a long scrollback and the person's other panes do not
    change. The pane is marked so tmux-send finds it among others the person opens.
    Starts the tmux server if none runs. Raises TmuxError when tmux refuses.
    """
    geometry = ["-x", str(size[0]), "-y", str(size[1])] if size else []
    saved = "@tmux-bridge-saved-history-limit"
    tmux.run_all(
        ["set-option", "-gF", saved, "#{history-limit}"],
        ["set-option", "-g", "history-limit", str(HISTORY_LIMIT)],
        ["new-session", "-d", "-s", name, "-c", cwd, *geometry, "--", shell, "-l"],
        ["set-option", "-gF", "history-limit", "#{" + saved + "}"],
        ["set-option", "-gu", saved],
        # "=name:" (with the colon): set-option does not take a bare "=name" target
        ["set-option", "-t", f"={name}:", "history-limit", str(HISTORY_LIMIT)],
        ["set-option", "-p", "-t", f"={name}:", PANE_MARKER_OPTION, "1"],
    )


def ensure_session(target: Target) -> bool:
    """Create the target's session unless it exists; returns whether it is new.

    Also creates the runtime directory (mode 0700) and refuses an unsafe one.
    """
    ensure_private_dir(target.runtime_dir)
    if session_exists(target.tmux, target.session):
        return False
    size = _terminal_size()
    create_session(target.tmux, target.session, user_shell(), os.getcwd(), size)
    return True


def _terminal_size() -> tuple[int, int] | None:
    """The size of the first of stdout, stdin, stderr that is a terminal and knows its size.

    Some terminals (IDE consoles, ``script`` under a parent without a terminal) report
    0x0, which new-session refuses ("width too small"); None lets tmux use default-size.
    """
    for fd in (1, 0, 2):
        try:
            size = os.get_terminal_size(fd)
        except OSError:
            continue
        if size.columns > 0 and size.lines > 0:
            return size.columns, size.lines
    return None


def inside_server(tmux: Tmux) -> bool:
    """Whether this process runs inside a tmux client of the bridge's own server."""
    current = os.environ.get("TMUX", "").split(",")[0]
    if not current:
        return False
    try:
        return os.path.samefile(current, tmux.socket_path())
    except OSError:
        return False


def attach(tmux: Tmux, name: str) -> None:
    """Show the session to the person; does not return when it attaches.

    Inside a client of the same tmux server the client is switched to the session
    (no nesting). Otherwise this process becomes ``tmux attach-session``.
    """
    if inside_server(tmux):
        tmux.run("switch-client", "-t", f"={name}")
        return
    env = dict(os.environ)
    env.pop("TMUX", None)  # inside another tmux server: nest deliberately
    argv = tmux.argv("attach-session", "-t", f"={name}")
    os.execvpe(argv[0], argv, env)
