"""The pane as tmux reports it: finding it, its state, its screen.

Only tmux queries live here (one ``list-panes`` call finds a pane and captures its
screen); what the shell inside is doing is read from ``/proc`` in
:mod:`tmux_bridge.infra.procfs`.
"""

from __future__ import annotations

from ..errors import AmbiguousPane, NoBridgeSession, NoSuchPane, TmuxError
from ..infra.tmux import Tmux, is_no_server_error
from ..tuples import NamedTuple

# Marks the pane tmux-bridge created, so tmux-send finds it even when the person opens
# more windows or panes in the bridge session.
PANE_MARKER_OPTION = "@tmux-bridge-pane"
# A pane's label (``tmux-bridge label``), kept on the pane itself: tmux shows it with
# ``#{@tmux-bridge-label}`` and it outlives any tmux-bridge process.
LABEL_OPTION = "@tmux-bridge-label"
# set on a pane the live view watches (``watch.py``): REPL mode may take its pipe
WATCH_OPTION = "@tmux-bridge-watch"
# which arming of the watch owns the pane's pipe; REPL mode clears it when it takes it
WATCH_PIPE_OPTION = "@tmux-bridge-watch-pipe"
# set by the person to "verbose" (on a pane, window, session or globally): tmux-send shows
# its plumbing there, as ``--verbose-transcript`` does
TRANSCRIPT_OPTION = "@tmux-bridge-transcript"


_FIELDS = (
    "pane_id",
    "pane_pid",
    "pane_tty",
    "pane_in_mode",
    "alternate_on",
    "pane_dead",
    "pane_width",
    "pane_height",
    "pane_current_command",
    "cursor_x",
    "cursor_y",
    "remain-on-exit",
    PANE_MARKER_OPTION,
    "pane_active",
    "window_active",
    "pane_current_path",
    "pane_pipe",
    "session_activity",
    "session_last_attached",
    "session_name",
    "window_index",
    "pane_index",
    LABEL_OPTION,
    WATCH_OPTION,
    "start_time",  # the server's: with its pid, which server this pane id belongs to
    "pid",
    "history_size",
    TRANSCRIPT_OPTION,
)
_FORMAT = "\t".join("#{" + name + "}" for name in _FIELDS)
# Who is attached, listed in the same tmux call as the panes: ``session_attached``
# counts control-mode clients too (serve's own lifecycle client, ``control.py``), and
# those are no person. One line per client, before the panes; never has a tab count of
# a pane line.
_CLIENT_MARK = "tmux-bridge-client "
LIST_CLIENTS = [
    "list-clients", "-F",
    _CLIENT_MARK + "#{client_control_mode} #{client_flags} #{session_name}",
]  # fmt: skip


def is_person(control_mode: str, flags: str) -> bool:
    """Whether a client is someone's terminal: any client but a control-mode one that
    asked for no output (a watcher such as serve's lifecycle client). A control client
    that takes output (iTerm2's ``tmux -CC``) shows the panes to a person."""
    return control_mode != "1" or "no-output" not in flags.split(",")


class PaneInfo(NamedTuple):
    """One pane as ``list-panes`` described it."""

    pane_id: str
    pid: int
    tty: str
    in_mode: bool
    alternate_on: bool
    dead: bool
    width: int
    height: int
    current_command: str
    cursor_x: int
    cursor_y: int
    remain_on_exit: str
    marked: bool
    active: bool
    current_path: str
    piped: bool  # a pipe-pane is open (REPL mode needs it)
    # the last key an attached client sent the session (or its attach), whole seconds;
    # send-keys does not count; 0 when no client ever attached (so no key was ever sent)
    keys_at: int
    session: str = ""
    window_index: str = ""
    pane_index: str = ""
    label: str = ""
    attached: int = 0  # people attached to the pane's session (control clients not counted)
    watched: bool = False  # the live view watches it (its pipe-pane is the watch's)
    # the tmux server's start time and pid: a pane id is only this pane's on that server
    server: str = ""
    history_size: int = 0  # rows of scrollback above the screen
    transcript: str = ""  # TRANSCRIPT_OPTION: "verbose" shows tmux-send's plumbing

    @property
    def target(self) -> str:
        """``SESSION:WINDOW.PANE``, the pane's place as a person reads it."""
        return f"{self.session}:{self.window_index}.{self.pane_index}"


class PaneView(NamedTuple):
    """A pane, plus its visible screen when it came free with the lookup."""

    pane: PaneInfo
    screen: list[str] | None


def people_attached(lines: list[str]) -> tuple[dict[str, int], list[str]]:
    """From a tmux output that starts with :data:`LIST_CLIENTS`' lines: how many people
    (:func:`is_person`) are attached to each session, and the lines after them."""
    people: dict[str, int] = {}
    at = 0
    while at < len(lines) and lines[at].startswith(_CLIENT_MARK):
        control, flags, session = [*lines[at][len(_CLIENT_MARK) :].split(" ", 2), "", ""][:3]
        if is_person(control, flags):
            people[session] = people.get(session, 0) + 1
        at += 1
    return people, lines[at:]


def _parse(line: str, people: dict[str, int]) -> PaneInfo:
    f = line.split("\t")
    return PaneInfo(
        pane_id=f[0],
        pid=int(f[1] or 0),
        tty=f[2],
        in_mode=f[3] == "1",
        alternate_on=f[4] == "1",
        dead=f[5] == "1",
        width=int(f[6] or 80),
        height=int(f[7] or 24),
        current_command=f[8],
        cursor_x=int(f[9] or 0),
        cursor_y=int(f[10] or 0),
        remain_on_exit=f[11],
        marked=f[12] == "1",
        active=f[13] == "1" and f[14] == "1",
        current_path=f[15],
        piped=f[16] == "1",
        keys_at=int(f[17]) if f[18] and f[17].isdigit() else 0,
        session=f[19],
        window_index=f[20],
        pane_index=f[21],
        label=f[22],
        attached=people.get(f[19], 0),
        watched=f[23] != "",
        server=f"{f[24]}-{f[25]}",
        history_size=int(f[26]) if f[26].isdigit() else 0,
        transcript="\t".join(f[27:]),
    )


def find_pane(
    tmux: Tmux, session: str, pane: str | None, history_lines: int = 0, join: bool = False
) -> PaneView:
    """The pane a target names, with its visible screen.

    ``pane`` ``None`` means the bridge pane of ``session``: the one tmux-bridge marked,
    else the active one. Otherwise a pane id (``%3``, found in one tmux call), a label,
    ``WINDOW.PANE`` in ``session`` or ``SESSION:WINDOW.PANE`` (see :func:`resolve_pane`).
    ``history_lines`` adds that many rows of scrollback above the screen and ``join``
    joins wrapped lines (``capture-pane -S -N -J``), in the same tmux call.
    Raises :class:`NoBridgeSession` when there is no such session or no tmux server at
    all, :class:`NoSuchPane` when a named pane does not exist.
    """
    capture = _capture_args(history_lines, join)
    if pane is None:
        return _find_bridge(tmux, session, capture, history_lines > 0)
    pane_id = pane if pane.startswith("%") else resolve_pane(tmux, session, pane)
    result = tmux.run_all(*_pane_query(pane_id, capture), check=False)
    people, lines = people_attached(result.stdout.split("\n"))
    if result.returncode != 0 or not lines or lines[0].count("\t") < len(_FIELDS) - 1:
        if "no server running" in result.stderr or "error connecting" in result.stderr:
            raise NoBridgeSession()
        raise NoSuchPane(_unknown(pane, list_places(tmux)))
    info = _parse(lines[0], people)
    return PaneView(info, _rows(lines[1:], info.height, history_lines > 0))


def find_pane_id(tmux: Tmux, session: str, pane: str | None) -> str:
    """The id of the pane :func:`find_pane` would find, without reading its screen
    (one tmux call for a pane id or a name; the bridge pane as :func:`find_pane` finds
    it). Raises as :func:`find_pane` does."""
    if pane is None:
        return find_pane(tmux, session, None).pane.pane_id
    if not pane.startswith("%"):
        return resolve_pane(tmux, session, pane)
    result = tmux.run("display-message", "-p", "-t", pane, "#{pane_id}", check=False)
    if result.returncode == 0 and result.stdout.strip() == pane:
        return pane
    if "no server running" in result.stderr or "error connecting" in result.stderr:
        raise NoBridgeSession()
    raise NoSuchPane(_unknown(pane, list_places(tmux)))


def _capture_args(history_lines: int, join: bool) -> list[str]:
    args = ["capture-pane", "-p"]
    if join:
        args.append("-J")
    if history_lines:
        args += ["-S", str(-history_lines)]
    return args


def _rows(lines: list[str], height: int, history: bool) -> list[str]:
    """The captured rows: the screen's ``height`` rows, or with history every row
    (``lines`` is the capture split at newlines, so its last item is empty)."""
    if history:
        return lines[:-1] if lines and not lines[-1] else lines
    return lines[:height]


class Place(NamedTuple):
    """Where a pane is and what it is called: enough to resolve a target."""

    pane_id: str
    session: str
    window_index: str
    window_name: str
    pane_index: str
    label: str
    active: bool  # the active pane of its window
    window_active: bool = False  # in its session's active window

    @property
    def target(self) -> str:
        return f"{self.session}:{self.window_index}.{self.pane_index}"


_PLACE_FORMAT = "\t".join(
    "#{" + name + "}"
    for name in (
        "pane_id",
        "session_name",
        "window_index",
        "window_name",
        "pane_index",
        LABEL_OPTION,
        "pane_active",
        "window_active",
    )
)


def _places_query() -> list[str]:
    """The tmux command that lists every pane's place and label."""
    return ["list-panes", "-a", "-F", _PLACE_FORMAT]


def list_places(tmux: Tmux) -> list[Place]:
    """Every pane of the tmux server; empty when no server runs."""
    result = tmux.run_all(_places_query(), check=False)
    places = []
    for line in result.stdout.split("\n"):
        f = line.split("\t")
        if len(f) == 8:
            places.append(Place(f[0], f[1], f[2], f[3], f[4], f[5], f[6] == "1", f[7] == "1"))
    return places


def resolve_pane(tmux: Tmux, session: str, spec: str) -> str:
    """The pane id ``spec`` names: a pane id, a label, ``WINDOW.PANE`` in ``session``,
    ``SESSION:WINDOW.PANE`` (``SESSION:WINDOW``: its active pane), or a bare
    ``SESSION`` (its active window's active pane). A name that is a label of one pane
    and the place of another is ambiguous. Raises
    :class:`NoBridgeSession` when no tmux server runs, :class:`NoSuchPane` (also
    :class:`AmbiguousPane`) when ``spec`` names no pane or several."""
    places = list_places(tmux)
    if not places:
        raise NoBridgeSession()
    found = {p.pane_id: p for p in places if p.pane_id == spec or p.label == spec}
    found.update({p.pane_id: p for p in places if _at_place(p, session, spec)})
    if len(found) == 1:
        return next(iter(found))
    if not found:
        raise NoSuchPane(_unknown(spec, places))
    names = ", ".join(
        f"{p.pane_id} ({p.target}{', ' + p.label if p.label else ''})" for p in found.values()
    )
    raise AmbiguousPane(
        f"The pane target {spec!r} is ambiguous: it names {names}. "
        "Name the pane by its id or by SESSION:WINDOW.PANE."
    )


def _at_place(place: Place, session: str, spec: str) -> bool:
    """Whether ``spec`` (``[SESSION:]WINDOW[.PANE]``) names ``place``."""
    where, colon, window_pane = spec.rpartition(":")
    if not colon:
        where = session
        if "." not in window_pane:  # a bare word is a label or a session, not a window
            return place.session == spec and place.active and place.window_active
    window, dot, index = window_pane.rpartition(".")
    if not dot or not index.isdigit():
        window, index = window_pane, ""
    if place.session != where or window not in (place.window_index, place.window_name):
        return False
    return place.pane_index == index if index else place.active


def _unknown(spec: str, places: list[Place]) -> str:
    labels = sorted({p.label for p in places if p.label})
    known = (
        "The labelled panes are: " + ", ".join(labels) + "." if labels else "No pane has a label."
    )
    return (
        f"No pane {spec!r} on this tmux server. A pane target is a label, a pane id "
        f"(%3), WINDOW.PANE in the bridge session, SESSION:WINDOW.PANE or a SESSION (its "
        f"active pane). {known}"
    )


def look_ahead(tmux: Tmux, session: str, pane: str | None) -> None:
    """Start the look :func:`find_pane` (no history, not joined) makes first, for it to
    take when it comes (:meth:`~tmux_bridge.infra.tmux.Tmux.look_ahead`): the bridge
    pane's or a pane id's; for a label or a place, the list that resolves it."""
    capture = _capture_args(0, False)
    if pane is None:
        tmux.look_ahead(*_bridge_query(session, capture))
    elif pane.startswith("%"):
        tmux.look_ahead(*_pane_query(pane, capture))
    else:
        tmux.look_ahead(_places_query())


def _pane_query(pane_id: str, capture: list[str]) -> list[list[str]]:
    """The tmux commands that look at one pane: who is attached, its facts, its screen."""
    return [
        LIST_CLIENTS,
        ["display-message", "-p", "-t", pane_id, "-F", _FORMAT],
        [*capture, "-t", pane_id],
    ]


def _bridge_query(session: str, capture: list[str]) -> list[list[str]]:
    """The tmux commands that look for the bridge pane of ``session``: who is attached,
    the session's panes, the screen of its active pane."""
    return [
        LIST_CLIENTS,
        ["list-panes", "-s", "-t", f"={session}", "-F", _FORMAT],
        [*capture, "-t", f"={session}:"],
    ]


def _find_bridge(tmux: Tmux, session: str, capture: list[str], history: bool) -> PaneView:
    result = tmux.run_all(*_bridge_query(session, capture), check=False)
    people, lines = people_attached(result.stdout.split("\n"))
    panes = [_parse(line, people) for line in lines if line.count("\t") == len(_FIELDS) - 1]
    if result.returncode != 0 and not panes:
        if is_no_server_error(result.stderr):
            raise NoBridgeSession()
        raise TmuxError(result.argv, result.returncode, result.stderr)
    if not panes:
        raise NoBridgeSession()
    pane = next((p for p in panes if p.marked), None) or next(
        (p for p in panes if p.active), panes[0]
    )
    screen_lines = [line for line in lines if line.count("\t") != len(_FIELDS) - 1]
    screen = (
        _rows(screen_lines, pane.height, history)
        if pane.active and result.returncode == 0
        else None
    )
    return PaneView(pane, screen)


def list_all_panes(tmux: Tmux) -> list[PaneInfo]:
    """Every pane of the server, in session, window and pane order; empty when no server
    runs."""
    result = tmux.run_all(LIST_CLIENTS, ["list-panes", "-a", "-F", _FORMAT], check=False)
    if result.returncode != 0:
        return []
    people, lines = people_attached(result.stdout.split("\n"))
    return [_parse(line, people) for line in lines if line.count("\t") == len(_FIELDS) - 1]


def pane_state(tmux: Tmux, pane_id: str) -> PaneInfo | None:
    """Re-read one pane; ``None`` when it (or its whole server) no longer exists."""
    result = tmux.run_all(
        LIST_CLIENTS, ["display-message", "-p", "-t", pane_id, "-F", _FORMAT], check=False
    )
    people, lines = people_attached(result.stdout.rstrip("\n").split("\n"))
    if result.returncode != 0 or len(lines) != 1 or lines[0].count("\t") != len(_FIELDS) - 1:
        return None
    return _parse(lines[0], people)


def capture_screen(
    tmux: Tmux, pane_id: str, history_lines: int = 0, join: bool = True
) -> list[str]:
    """The pane's visible rows (plus ``history_lines`` rows of scrollback), wrapped lines
    joined unless ``join`` is false. Empty when the pane is gone."""
    result = tmux.run(*_capture_args(history_lines, join), "-t", pane_id, check=False)
    return result.stdout.split("\n")[:-1] if result.returncode == 0 else []


def screen_tail(tmux: Tmux, pane_id: str, count: int = 20) -> list[str]:
    """The last ``count`` lines on the pane's screen, blank rows below them dropped: what
    an error report shows of the bridge terminal."""
    lines = capture_screen(tmux, pane_id)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines[-count:]


def cursor_line(tmux: Tmux, pane_id: str) -> str:
    """The text of the line the cursor is on (a prompt, say)."""
    return cursor_place(tmux, pane_id)[0]


def cursor_place(tmux: Tmux, pane_id: str) -> tuple[str, int]:
    """The text of the line the cursor is on, and the cursor's column (-1: unknown)."""
    result = tmux.run_all(
        ["display-message", "-p", "-t", pane_id, "#{cursor_y} #{cursor_x}"],
        ["capture-pane", "-p", "-t", pane_id],
        check=False,
    )
    place, _, screen = result.stdout.partition("\n")
    row, _, column = place.partition(" ")
    lines = screen.split("\n")
    index = int(row) if row.strip().isdigit() else -1
    line = lines[index].rstrip() if 0 <= index < len(lines) else ""
    return line, int(column) if column.strip().isdigit() else -1
