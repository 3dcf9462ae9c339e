"""The person's side: creating the bridge session and attaching to it."""

from __future__ import annotations

import os
import pwd
import re

from ..errors import InvalidRequest, NoBridgeSession, SessionExists, TmuxError
from ..infra.runtime import ensure_private_dir, enterable, pane_directory
from ..infra.tmux import Tmux, is_no_server_error
from ..target import Target
from ..text import seams
from .info import PANE_MARKER_OPTION

# Scrollback for the bridge pane. tmux reads history-limit only when a pane is created,
# so it is in force before new-session runs (see create_session).
HISTORY_LIMIT = 50000
SAVED_HISTORY_LIMIT = "@tmux-bridge-saved-history-limit"  # the global value, while raised


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
    """Start session ``name`` detached, running ``shell`` as a login shell in ``cwd``
    (exactly there, whatever its name holds; see
    :func:`~tmux_bridge.infra.runtime.pane_directory` for a directory tmux cannot start in).

    One tmux invocation: the global history-limit is raised only around new-session and
    put back, so the pane gets a long scrollback and the person's other panes do not
    change. The pane is marked so tmux-send finds it among others the person opens.
    Starts the tmux server if none runs. Raises TmuxError when tmux refuses, ValueError
    when tmux cannot start a pane in ``cwd``.
    """
    geometry = ["-x", str(size[0]), "-y", str(size[1])] if size else []
    # tmux expands -s and -c as formats: a directory named x#(cmd) would run cmd
    name_arg, cwd_arg = seams.format_text(name), seams.start_directory(cwd)
    saved = SAVED_HISTORY_LIMIT
    tmux.run_all(
        ["set-option", "-gF", saved, "#{history-limit}"],
        ["set-option", "-g", "history-limit", str(HISTORY_LIMIT)],
        ["new-session", "-d", "-s", name_arg, "-c", cwd_arg, *geometry, "--", shell, "-l"],
        ["set-option", "-gF", "history-limit", "#{" + saved + "}"],
        ["set-option", "-gu", saved],
        # "=name:" (with the colon): set-option does not take a bare "=name" target
        ["set-option", "-t", f"={name}:", "history-limit", str(HISTORY_LIMIT)],
        ["set-option", "-p", "-t", f"={name}:", PANE_MARKER_OPTION, "1"],
    )


# Session names a client may give: tmux turns "." and ":" into "_" (so the session would
# not have the name asked for) and reads them as window and pane separators in targets.
SESSION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def check_session_name(name: str) -> None:
    """Raise :class:`InvalidRequest` unless ``name`` is 1-64 of ``A-Z a-z 0-9 _ -``,
    starting with a letter or a digit."""
    if not SESSION_NAME.fullmatch(name):
        raise InvalidRequest(
            f"invalid session name {name[:80]!r}: use 1-64 of A-Z a-z 0-9 _ -, starting "
            "with a letter or a digit (tmux renames . and : and reads them as window and "
            "pane separators)."
        )


def check_directory(path: str) -> None:
    """Raise :class:`InvalidRequest` unless ``path`` is an absolute path to an existing
    directory that tmux can start a pane in (we may enter it; at most 4095 bytes)."""
    if "\0" in path or not os.path.isabs(path):
        raise InvalidRequest(f"the directory {path[:200]!r} is not an absolute path.")
    try:
        seams.start_directory(path)
    except ValueError:
        raise InvalidRequest(
            f"tmux cannot start a shell in the directory {path[:200]!r}: its path is longer "
            f"than {seams.MAX_DIRECTORY_BYTES} bytes (or holds a surrogate that is no byte). "
            "Give a shorter path."
        ) from None
    if not os.path.isdir(path):
        raise InvalidRequest(f"the directory {path[:200]!r} does not exist.")
    if not enterable(path):
        raise InvalidRequest(
            f"tmux cannot start a shell in the directory {path[:200]!r}: you may not enter "
            "it. Give another directory."
        )


def list_sessions(tmux: Tmux) -> list[str]:
    """The names of the sessions on the tmux server, sorted; empty when none runs."""
    result = tmux.run("list-sessions", "-F", "#{session_name}", check=False)
    if result.returncode != 0:
        if is_no_server_error(result.stderr):
            return []
        raise TmuxError(result.argv, result.returncode, result.stderr)
    return sorted(line for line in result.stdout.split("\n") if line)


def new_session(target: Target, name: str, cwd: str) -> None:
    """Create session ``name`` on the target's tmux server, running the person's login
    shell in ``cwd``, with the bridge pane's options (see :func:`create_session`), so
    the person can attach to it and tmux-send finds its pane. Raises
    :class:`InvalidRequest` for a bad name or directory and :class:`SessionExists`
    when the name is taken; starts the tmux server if none runs."""
    check_session_name(name)
    check_directory(cwd)
    ensure_private_dir(target.runtime_dir)
    taken = SessionExists(f"a session {name!r} already runs on this tmux server.")
    if session_exists(target.tmux, name):
        raise taken
    try:
        create_session(target.tmux, name, user_shell(), cwd, None)
    except TmuxError as exc:
        # new-session failed mid-chain: put back the history-limit it had raised
        target.tmux.run_all(
            ["set-option", "-gF", "history-limit", "#{" + SAVED_HISTORY_LIMIT + "}"],
            ["set-option", "-gu", SAVED_HISTORY_LIMIT],
            check=False,
        )
        if "duplicate session" in exc.stderr:
            raise taken from None
        raise


def kill_session(tmux: Tmux, name: str) -> None:
    """End session ``name`` and the programs in its panes (tmux hangs them up). Raises
    :class:`NoBridgeSession` when there is no such session."""
    check_session_name(name)
    result = tmux.run("kill-session", "-t", f"={name}", check=False)
    if result.returncode != 0:
        if is_no_server_error(result.stderr):
            raise NoBridgeSession(f"no session {name!r} on this tmux server.")
        raise TmuxError(result.argv, result.returncode, result.stderr)


def ensure_session(target: Target) -> tuple[bool, str | None]:
    """Create the target's session in the current directory unless it exists. Returns
    whether it made it, and a note for the person when the shell had to start elsewhere
    (the home directory: tmux cannot start a pane in this one, see
    :func:`~tmux_bridge.infra.runtime.pane_directory`).

    Also creates the runtime directory (mode 0700) and refuses an unsafe one.
    """
    ensure_private_dir(target.runtime_dir)
    if session_exists(target.tmux, target.session):
        return False, None
    try:
        here: str | None = os.getcwd()
    except OSError:  # the current directory was removed
        here = None
    cwd, note = pane_directory(here)
    create_session(target.tmux, target.session, user_shell(), cwd, _terminal_size())
    return True, note


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
