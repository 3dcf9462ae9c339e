"""Which panes hold an AI agent, and what each one is doing.

A pane is an agent when the program in its foreground is a known agent CLI
(:data:`RUNTIMES`: data, extend it with another :class:`Runtime`), or when its session
declares one (``TMUX_BRIDGE_AGENT=NAME``, or the WebSocket adapter spec's
``GT_AGENT``/``GT_ROLE``/``GT_RIG``) and the program in front is neither a shell nor a
way to one: not a shell, not one of the gateways far shells go through
(:data:`~tmux_bridge.pane.front.GATEWAYS`: ``ssh``, ``sudo``, ``script``, ``docker`` ...), no
remote or nested way of :mod:`~tmux_bridge.pane.layout`, no terminal multiplexer (a nested
``tmux``, ``screen``), and with no interactive shell among its descendants (what
``script``, ``sudo -i``, ``unbuffer bash`` start on a terminal of their own). Text
pasted there would be typed into a shell. A session whose agent process is gone (a
zombie: back at the shell, or the pane dead) is not listed.

An :class:`Agent` names its program (``pid`` and its ``start`` time): text is pasted
only while that very program is still in front and still passes these checks
(:func:`changed`), so a program that exits between the look and the paste, or execs a
shell, gets nothing.

The screen tells the state (:func:`read_state`): ``needs_person`` while a dialog asks the
person (the runtime's questions, a numbered menu), ``working`` while its busy marker
shows (also cut short by a narrow pane) or a working row, ``starting`` while it cannot
take a prompt yet, ``idle`` when its input box has the cursor; for a program the table
does not know (a ``python3`` prompt, ``cat``) the kernel does: ``idle`` while it is
blocked reading the terminal. ``unknown`` otherwise.

Names (:func:`list_agents`) depend on the agent's own pane only, and :func:`pick` also
finds an agent by an alias no other agent has (its runtime, a window's name ...).

Everything is read with three tmux invocations for the whole server (panes, session
environments, screens) plus ``/proc``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Literal

from ..errors import AmbiguousAgent
from ..infra.process import proc
from ..infra.procfacts import Unknown
from ..infra.tmux import Tmux
from ..pane.front import SHELL_WAYS, interactive
from ..pane.info import PaneInfo, list_all_panes
from ..tuples import NamedTuple

AgentState = Literal["working", "idle", "needs_person", "starting", "unknown"]

# The environment a session sets to declare an agent (tmux ``set-environment``).
NAME_VARS = ("TMUX_BRIDGE_AGENT",)
RUNTIME_VARS = ("TMUX_BRIDGE_RUNTIME", "GT_AGENT")
ROLE_VARS = ("TMUX_BRIDGE_ROLE", "GT_ROLE")
RIG_VARS = ("GT_RIG",)
SHELLS = frozenset({"bash", "zsh", "fish", "sh", "dash", "ksh", "mksh", "tcsh", "csh", "ash"})
# Programs that run an agent CLI as their script: the agent is named by the next word.
INTERPRETERS = ("node", "python", "bun", "deno", "env")
# Terminal multiplexers: a terminal of their own with shells in it (far shells leave
# them out of GATEWAYS because their screen is redrawn, not streamed).
MULTIPLEXERS = frozenset({"tmux", "tmux: client", "screen", "zellij", "dtach", "abduco", "byobu"})
DESCENDANT_DEPTH = 4  # how deep below a declared program an interactive shell is looked for


class Runtime(NamedTuple):
    """One agent CLI, as data: the names its process runs under, and what its screen
    shows in each state, checked against the version ``checked`` (``None``: from its
    documentation, not tried here).

    ``busy``: text shown while it works (lower case; a marker cut short by a narrow pane,
    ``esc to inter…``, still counts when at least :data:`MIN_CUT` characters are left);
    ``working``: a regex for a row only a working agent draws (a spinner with its verb),
    whatever the width; ``starting``: text shown while it starts and takes no prompt yet
    (what is typed then is queued); ``questions``: text that shows a dialog the person
    must answer, with what it is; ``prompt``: a regex for the start of its input line (the
    glyph the cursor follows when the box is empty); ``ready_row``: a regex for a row below
    the input line that only an agent done starting draws (while none shows, it is
    ``starting``: Codex draws its box before its session is set up, and shows a paste
    only once it is)."""

    name: str
    programs: tuple[str, ...]
    busy: tuple[str, ...] = ("esc to interrupt", "esc to cancel")
    prompt: str = r"^[\s│┃|]*[>\u276f\u203a]\s?"
    working: str | None = None
    starting: tuple[str, ...] = ()
    questions: tuple[tuple[str, str], ...] = ()
    checked: str | None = None
    ready_row: str | None = None


MIN_CUT = 6  # characters of a busy marker left before the ellipsis of a cut line
# A numbered menu with its selection glyph on one choice (``> 1. Yes``): the person picks.
MENU = re.compile(r"^\s*[>\u276f\u203a]\s*\d+\.\s+\S")
# Questions many CLIs ask, besides their own: what to tell the person.
COMMON_QUESTIONS = (
    ("do you want to proceed", "a permission question"),
    ("do you trust", "a folder-trust question"),
    ("enter to confirm", "a menu"),
)

RUNTIMES: tuple[Runtime, ...] = (
    Runtime(
        "claude",
        ("claude",),
        busy=("esc to interrupt",),  # not "esc to cancel": its dialogs say that
        # "✻ Hashing…": the spinner and its verb, at any width
        working=r"^[·✢✳✶✻✽*] \w+…",
        questions=(
            ("yes, i trust this folder", "a folder-trust question"),
            ("do you want to make this edit", "a permission question"),
            ("do you want to", "a permission question"),
        ),
        checked="2.1.331",
    ),
    Runtime(
        "codex",
        ("codex",),
        busy=("esc to interrupt",),
        # "• Working (0s • esc to interrupt)", "◦ Reconnecting... 4/5 (2s • esc to …"
        working=r"^[•◦] \w.*\((\d+[hm] )*\d+[hms]\b",
        starting=("waiting for startup", "booting mcp server"),
        # its status rows once set up: "fake-model default · ~", "← for agents · ? for ..."
        ready_row=r" · ",
        questions=(
            ("trust this folder?", "a folder-trust question"),
            ("allow command?", "a permission question"),
            ("would you like to run", "a permission question"),
            ("enter continue", "a menu"),
        ),
        checked="0.169.0",
    ),
    Runtime("gemini", ("gemini",), busy=("esc to cancel",)),
    Runtime("cursor", ("cursor-agent",)),
    Runtime("auggie", ("auggie",)),
    Runtime("amp", ("amp",)),
    Runtime("opencode", ("opencode",)),
    Runtime("aider", ("aider",), busy=("waiting for",), prompt=r"^[\w\s]*>\s?"),
    Runtime("goose", ("goose",), busy=("thinking", "working")),
)
# A program the table does not know, declared an agent by its session: its input line
# starts with a common prompt (``>>> ``, ``> ``, ``$ ``), else at the first column.
GENERIC = Runtime("program", (), busy=(), prompt=r"^(>>>|\.\.\.|[>\u276f\u203a$%#])?\s?")
_BY_PROGRAM = {program: runtime for runtime in RUNTIMES for program in runtime.programs}
_BY_NAME = {runtime.name: runtime for runtime in RUNTIMES}


class Agent(NamedTuple):
    """An agent as listed: the WebSocket spec's fields (``name``, ``role``, ``runtime``,
    ``rig``, ``work_dir``, ``attached``), the pane (id and ``SESSION:WINDOW.PANE``
    target), its state, and the pid of the program in front."""

    name: str
    role: str | None
    runtime: str
    rig: str | None
    work_dir: str
    attached: bool
    pane: str
    target: str
    state: AgentState
    pid: int
    start: int = 0  # the program's start, clock ticks after boot: with pid, which program
    declared: bool = False  # a declared agent (no known runtime): checked for ways to shells
    question: str | None = None  # needs_person: what the person must answer
    aliases: tuple[str, ...] = ()  # other names it answers to, when no other agent does

    def document(self) -> dict[str, object]:
        """The agent as JSON: the spec's camel-case ``workDir``, plus pane, target, state."""
        return {
            "name": self.name,
            "role": self.role,
            "runtime": self.runtime,
            "rig": self.rig,
            "workDir": self.work_dir,
            "attached": self.attached,
            "pane": self.pane,
            "target": self.target,
            "state": self.state,
            "question": self.question,
            "aliases": list(self.aliases),
        }

    @property
    def kind(self) -> Runtime:
        """The runtime's table entry (:data:`GENERIC` for a program it does not know)."""
        return _BY_NAME.get(self.runtime, GENERIC)


class _Candidate(NamedTuple):
    pane: PaneInfo
    runtime: str
    pid: int
    env: dict[str, str]
    declared: bool = False


def list_agents(tmux: Tmux) -> list[Agent]:
    """Every agent on the tmux server, in session, window and pane order; empty when no
    server runs. Names are unique and stable while the agent runs (see :func:`_base_name`:
    never derived from how many agents share a session); ``:WINDOW.PANE`` is added only
    when two declared names or labels collide."""
    panes = [p for p in list_all_panes(tmux) if not p.dead]
    if not panes:
        return []
    environments = session_environments(tmux, sorted({p.session for p in panes}))
    candidates = list(_candidates(panes, environments))
    screens = _screens(tmux, [c.pane.pane_id for c in candidates])
    firsts = _first_panes(panes)
    bases = [_base_name(c, firsts) for c in candidates]
    agents = []
    for candidate, base in zip(candidates, bases, strict=True):
        name = base if bases.count(base) == 1 else f"{base}:{candidate.pane.target.split(':')[1]}"
        window, screen = screens.get(candidate.pane.pane_id, ("", []))
        agents.append(_agent(candidate, name, screen, _aliases(candidate, name, window)))
    return agents


def _first_panes(panes: list[PaneInfo]) -> set[str]:
    """The first pane (lowest window, then pane index) of each session."""
    first: dict[str, PaneInfo] = {}
    for pane in panes:
        key = (_index(pane.window_index), _index(pane.pane_index))
        seen = first.get(pane.session)
        if seen is None or key < (_index(seen.window_index), _index(seen.pane_index)):
            first[pane.session] = pane
    return {pane.pane_id for pane in first.values()}


def _index(text: str) -> int:
    return int(text) if text.isdigit() else 0


def _aliases(candidate: _Candidate, name: str, window: str) -> tuple[str, ...]:
    """The names people use for it besides its own: its declared name and label, its
    window's name, its session's, its runtime's, ``WINDOW.PANE`` and ``SESSION:WINDOW``."""
    pane = candidate.pane
    where = pane.target.split(":", 1)[1]
    found = [
        _declared_name(candidate),
        pane.label,
        window,
        pane.session,
        candidate.runtime,
        where,
        f"{pane.session}:{pane.window_index}",
    ]
    return tuple(dict.fromkeys(n for n in found if n and n != name))


def _candidates(
    panes: list[PaneInfo], environments: dict[str, dict[str, str]]
) -> Iterable[_Candidate]:
    declared_done: set[str] = set()
    for pane in panes:
        env = environments.get(pane.session, {})
        pid, names = foreground(pane)
        known = _known(names)
        if known is not None:
            yield _Candidate(pane, _first(env, RUNTIME_VARS) or known.name, pid, env)
        elif _declared(env) and pane.session not in declared_done and not way_to_shell(pid):
            declared_done.add(pane.session)  # one declared agent per session
            runtime = _first(env, RUNTIME_VARS) or (names[0] if names else "program")
            yield _Candidate(pane, runtime, pid, env, declared=True)


def _known(names: list[str]) -> Runtime | None:
    return next((_BY_PROGRAM[n] for n in names if n in _BY_PROGRAM), None)


def _declared(env: dict[str, str]) -> bool:
    return any(env.get(var) for var in (*NAME_VARS, *RUNTIME_VARS))


def shell_ways() -> frozenset[str]:
    """Every program in front that leads to a shell, which a declared agent is not: the
    registry of ways to a shell (:data:`~tmux_bridge.pane.front.SHELL_WAYS`: far shells'
    gateways, the remote and nested ways of panes), the multiplexers, ``login``."""
    return _ALL_WAYS


_ALL_WAYS = SHELL_WAYS | MULTIPLEXERS | {"login"}


def way_to_shell(pid: int) -> str | None:
    """What makes the program ``pid`` a shell or a way to one (for a declared agent),
    as a short phrase; ``None`` when it is neither. Reads ``/proc`` only (the program
    and at most DESCENDANT_DEPTH levels of its children)."""
    names = process_names(pid)
    if not names:
        return "no program"
    if names[0].lstrip("-") in SHELLS or proc.shell_kind(pid) is not None:
        return f"the shell {names[0]}"
    way = next((n for n in names if n.lstrip("-") in shell_ways()), None)
    if way is not None:
        return f"{way}, a way to a shell"
    below = _shell_below(pid)
    if below is not None:
        return f"{names[0]}, with the interactive shell {below} below it"
    return None


def _shell_below(pid: int) -> str | None:
    """An interactive shell (no ``-c``, no script) among the descendants of ``pid``."""
    layer = [pid]
    for _ in range(DESCENDANT_DEPTH):
        layer = [child for parent in layer for child in _children(parent)]
        for child in layer:
            if proc.shell_kind(child) is not None and interactive(child):
                return proc.command_name(child)
        if not layer:
            break
    return None


def _children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` (a thread pool's too)."""
    return proc.thread_children(pid)


def changed(agent: Agent, pane: PaneInfo) -> str | None:
    """Why ``agent`` (as listed) may no longer be pasted into, seen in ``pane`` (tmux's
    view of its pane now): another program in front (or the same pid started anew), a
    known runtime that exec'd something else, a declared program that became a shell
    or a way to one. ``None`` when it is still the same program. ``/proc`` only."""
    pid, names = foreground(pane)
    stat = proc.proc_stat(pid)
    if pid != agent.pid or stat is None or (agent.start and stat.start != agent.start):
        front = names[0] if names else "nothing"
        return f"the program in front of its pane is no longer the agent's ({front} is)."
    if not agent.declared:
        if _known(names) is None:
            return f"the agent's program now runs as {names[0] if names else 'nothing'}."
        return None
    why = way_to_shell(pid)
    return f"what runs in front of its pane is {why}." if why else None


def _first(env: dict[str, str], variables: tuple[str, ...]) -> str | None:
    return next((env[v] for v in variables if env.get(v)), None)


def _declared_name(candidate: _Candidate) -> str | None:
    """The ``TMUX_BRIDGE_AGENT`` the agent's program runs with, else its session's."""
    own = proc.environment(candidate.pid).get(NAME_VARS[0])
    declared = own or _first(candidate.env, NAME_VARS)
    return declared if declared and declared != "1" else None


def _base_name(candidate: _Candidate, firsts: set[str]) -> str:
    """Its declared name, else its pane's label, else its session's name when it runs in
    the session's first pane, else ``SESSION:WINDOW.PANE``: each depends on the agent's
    own pane only, so another agent starting beside it changes no name."""
    declared = _declared_name(candidate)
    if declared:
        return declared
    pane = candidate.pane
    if pane.label:
        return pane.label
    return pane.session if pane.pane_id in firsts else pane.target


def _agent(candidate: _Candidate, name: str, screen: list[str], aliases: tuple[str, ...]) -> Agent:
    pane = candidate.pane
    runtime = _BY_NAME.get(candidate.runtime, GENERIC)
    state, question = read_state(runtime, screen, pane)
    return Agent(
        name=name,
        role=_first(candidate.env, ROLE_VARS),
        runtime=candidate.runtime,
        rig=_first(candidate.env, RIG_VARS),
        work_dir=proc.working_dir(candidate.pid) or pane.current_path,
        attached=pane.attached > 0,
        pane=pane.pane_id,
        target=pane.target,
        state=state,
        pid=candidate.pid,
        start=stat.start if (stat := proc.proc_stat(candidate.pid)) else 0,
        declared=candidate.declared,
        question=question,
        aliases=aliases,
    )


def foreground(pane: PaneInfo) -> tuple[int, list[str]]:
    """The process in the pane's foreground (the terminal's foreground process group's
    leader, else the pane's first process) and the names it runs under: its ``comm``,
    then the base names of its first words, skipping an interpreter (``node``,
    ``python3``) so that a script such as ``node /usr/bin/gemini`` is ``gemini``."""
    stat = proc.proc_stat(pane.pid)
    pid = pane.pid
    if stat is not None and stat.tpgid > 0 and proc.proc_stat(stat.tpgid) is not None:
        pid = stat.tpgid
    return pid, process_names(pid)


def process_names(pid: int) -> list[str]:
    """``comm``, then the base name of each word of the command line up to and including
    the first that is no interpreter or option."""
    names = [proc.command_name(pid)]
    words = proc.command_line(pid)
    if words is None:
        return [n for n in names if n]
    for word in words:
        if not word or word.startswith("-"):
            continue
        base = os.path.basename(word)
        names.append(base)
        if not base.startswith(INTERPRETERS):
            break
    return [n for n in names if n]


def session_environments(tmux: Tmux, sessions: list[str]) -> dict[str, dict[str, str]]:
    """Each session's own environment (``show-environment -t``), in one tmux call."""
    commands: list[list[str]] = []
    for session in sessions:
        commands.append(["display-message", "-p", "-t", f"={session}:", "\x1fsession\x1f"])
        commands.append(["show-environment", "-t", f"={session}:"])
    result = tmux.run_all(*commands, check=False)
    found: dict[str, dict[str, str]] = {}
    chunks = result.stdout.split("\x1fsession\x1f\n")[1:]
    for session, chunk in zip(sessions, chunks, strict=False):
        env = {}
        for line in chunk.splitlines():
            key, equals, value = line.partition("=")
            if equals and not key.startswith("-"):
                env[key] = value
        found[session] = env
    return found


# A window's name when someone gave it one (tmux's automatic name follows the program in
# front, and is no name to keep).
_WINDOW_NAME = "\x1fpane\x1f#{?automatic-rename,,#{window_name}}"


def _screens(tmux: Tmux, pane_ids: list[str]) -> dict[str, tuple[str, list[str]]]:
    """The window's given name and the visible rows of each pane, in one tmux call."""
    if not pane_ids:
        return {}
    commands: list[list[str]] = []
    for pane_id in pane_ids:
        commands.append(["display-message", "-p", "-t", pane_id, _WINDOW_NAME])
        commands.append(["capture-pane", "-p", "-t", pane_id])
    result = tmux.run_all(*commands, check=False)
    chunks = result.stdout.split("\x1fpane\x1f")[1:]
    found = {}
    for pane_id, chunk in zip(pane_ids, chunks, strict=False):
        window, _, rows = chunk.partition("\n")
        found[pane_id] = (window, rows.split("\n")[:-1])
    return found


def agent_state(runtime: Runtime, screen: list[str], pane: PaneInfo) -> AgentState:
    """The agent's state from the screen and the cursor (see :func:`read_state`)."""
    return read_state(runtime, screen, pane)[0]


def read_state(
    runtime: Runtime, screen: list[str], pane: PaneInfo
) -> tuple[AgentState, str | None]:
    """``needs_person`` (with what the person must answer: a question or menu shown at or
    below the input line, or near the bottom when there is none), ``working`` (a busy
    marker or a working row), ``starting``, ``idle`` (its input box has the cursor), else
    ``unknown``; for a program the table does not know, the kernel tells idle from
    working. Each marker is matched so that a narrow pane's cut lines still count."""
    row = input_row(runtime, screen, pane.cursor_y)
    question = _question(runtime, _bottom(screen, row))
    if question is not None:
        return "needs_person", question
    if _busy(runtime, screen):
        return "working", None
    if runtime is GENERIC:
        waiting = proc.waiting_for_input(pane.pid, pane.tty)
        if isinstance(waiting, Unknown):
            return "unknown", None
        return ("idle" if waiting else "working"), None
    lowered = "\n".join(screen).lower()
    if any(marker in lowered for marker in runtime.starting) or not _ready(runtime, screen, row):
        return "starting", None
    return ("idle" if row is not None else "unknown"), None


def _ready(runtime: Runtime, screen: list[str], row: int | None) -> bool:
    """Whether the agent is done starting, as far as its ``ready_row`` tells."""
    if runtime.ready_row is None or row is None:
        return True
    return any(re.search(runtime.ready_row, line) for line in screen[row + 1 :])


QUESTION_ROWS = 8  # non-blank bottom rows looked at for a question when no input line shows


def _bottom(screen: list[str], row: int | None) -> list[str]:
    """The rows a question would be on: from the input line down, else (also when the
    "input line" is a menu's selected choice) the last few."""
    if row is not None and not MENU.match(screen[row]):
        return screen[row:]
    return [line for line in screen if line.strip()][-QUESTION_ROWS:]


def _question(runtime: Runtime, rows: list[str]) -> str | None:
    if runtime is GENERIC:
        return None
    text = "\n".join(rows).lower()
    for marker, what in (*runtime.questions, *COMMON_QUESTIONS):
        if marker in text:
            return what
    return "a menu" if any(MENU.match(line) for line in rows) else None


def _busy(runtime: Runtime, screen: list[str]) -> bool:
    text = "\n".join(screen).lower()
    if any(_cut_marker(marker).search(text) for marker in runtime.busy):
        return True
    if runtime.working is None:
        return False
    pattern = re.compile(runtime.working)
    return any(pattern.match(line) for line in screen)


_CUTS: dict[str, re.Pattern[str]] = {}


def _cut_marker(marker: str) -> re.Pattern[str]:
    """``marker`` whole, or cut by the pane's width: a prefix of at least MIN_CUT
    characters followed by an ellipsis."""
    if marker not in _CUTS:
        cuts = [re.escape(marker[:n]) + "…" for n in range(min(MIN_CUT, len(marker)), len(marker))]
        _CUTS[marker] = re.compile("|".join([re.escape(marker), *cuts]))
    return _CUTS[marker]


def input_row(runtime: Runtime, screen: list[str], cursor_y: int, reach: int = 12) -> int | None:
    """The row where the input line starts: the cursor's row or one at most ``reach``
    rows above it that starts with the runtime's prompt. ``None`` when there is none
    (for :data:`GENERIC`, the cursor's row)."""
    if runtime is GENERIC:
        return cursor_y if 0 <= cursor_y < len(screen) else None
    pattern = re.compile(runtime.prompt)
    for row in range(min(cursor_y, len(screen) - 1), max(cursor_y - reach, -1), -1):
        found = pattern.match(screen[row])
        if found is not None and found.end() > 0:
            return row
    return None


def find_agent(tmux: Tmux, name: str) -> Agent | None:
    """The agent ``name`` names (see :func:`pick`), or ``None``."""
    return pick(list_agents(tmux), name)


def pick(agents: list[Agent], name: str) -> Agent | None:
    """The agent called ``name``, or whose pane id or ``SESSION:WINDOW.PANE`` it is;
    else the one agent with ``name`` among its aliases (a runtime's name when only one
    agent of that runtime runs, a window's name, ``WINDOW.PANE`` ...). Raises
    :class:`AmbiguousAgent`, listing them, when it is an alias of several."""
    for agent in agents:
        if name in (agent.name, agent.pane, agent.target):
            return agent
    found = [agent for agent in agents if name in agent.aliases]
    if len(found) > 1:
        listed = ", ".join(f"{a.name} ({a.runtime}, {a.target})" for a in found)
        raise AmbiguousAgent(
            f"{name!r} names {len(found)} agents: {listed}; give one of their names or a pane id."
        )
    return found[0] if found else None


def runtime_names() -> list[str]:
    """The runtimes the table knows, for help texts."""
    return [runtime.name for runtime in RUNTIMES]
