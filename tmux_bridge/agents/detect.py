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

The screen tells the state: ``working`` while the runtime's busy marker shows (Claude
Code's and Codex's "esc to interrupt"), ``idle`` when its input box has the cursor, and
for a program the table does not know (a ``python3`` prompt, ``cat``) the kernel does:
``idle`` while it is blocked reading the terminal. ``unknown`` otherwise.

Everything is read with three tmux invocations for the whole server (panes, session
environments, screens) plus ``/proc``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Literal, NamedTuple

from ..infra.process import proc
from ..infra.procfacts import Unknown
from ..infra.tmux import Tmux
from ..pane.front import SHELL_WAYS, interactive
from ..pane.info import PaneInfo, list_all_panes

AgentState = Literal["working", "idle", "unknown"]

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
    """One agent CLI: the names its process runs under, the text its screen shows while
    it works (lower case), and a regex for the start of its input line (the glyph the
    cursor follows when the box is empty)."""

    name: str
    programs: tuple[str, ...]
    busy: tuple[str, ...] = ("esc to interrupt", "esc to cancel")
    prompt: str = r"^[\s│┃|]*[>\u276f\u203a]\s?"


RUNTIMES: tuple[Runtime, ...] = (
    Runtime("claude", ("claude",)),
    Runtime("codex", ("codex",)),
    Runtime("gemini", ("gemini",)),
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
    server runs. Names are unique: the session's name (or its ``TMUX_BRIDGE_AGENT``),
    with ``:WINDOW.PANE`` added when one session holds several agents."""
    panes = [p for p in list_all_panes(tmux) if not p.dead]
    if not panes:
        return []
    environments = session_environments(tmux, sorted({p.session for p in panes}))
    candidates = list(_candidates(panes, environments))
    screens = _screens(tmux, [c.pane.pane_id for c in candidates])
    bases = [_base_name(c) for c in candidates]
    agents = []
    for candidate, base in zip(candidates, bases, strict=True):
        name = base if bases.count(base) == 1 else f"{base}:{candidate.pane.target.split(':')[1]}"
        screen = screens.get(candidate.pane.pane_id, [])
        agents.append(_agent(candidate, name, screen))
    return agents


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


def _base_name(candidate: _Candidate) -> str:
    declared = _first(candidate.env, NAME_VARS)
    return declared if declared and declared != "1" else candidate.pane.session


def _agent(candidate: _Candidate, name: str, screen: list[str]) -> Agent:
    pane = candidate.pane
    runtime = _BY_NAME.get(candidate.runtime, GENERIC)
    return Agent(
        name=name,
        role=_first(candidate.env, ROLE_VARS),
        runtime=candidate.runtime,
        rig=_first(candidate.env, RIG_VARS),
        work_dir=proc.working_dir(candidate.pid) or pane.current_path,
        attached=pane.attached > 0,
        pane=pane.pane_id,
        target=pane.target,
        state=agent_state(runtime, screen, pane),
        pid=candidate.pid,
        start=stat.start if (stat := proc.proc_stat(candidate.pid)) else 0,
        declared=candidate.declared,
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


def _screens(tmux: Tmux, pane_ids: list[str]) -> dict[str, list[str]]:
    """The visible rows of each pane, in one tmux call."""
    if not pane_ids:
        return {}
    commands: list[list[str]] = []
    for pane_id in pane_ids:
        commands.append(["display-message", "-p", "-t", pane_id, "\x1fpane\x1f"])
        commands.append(["capture-pane", "-p", "-t", pane_id])
    result = tmux.run_all(*commands, check=False)
    chunks = result.stdout.split("\x1fpane\x1f\n")[1:]
    return {p: c.split("\n")[:-1] for p, c in zip(pane_ids, chunks, strict=False)}


def agent_state(runtime: Runtime, screen: list[str], pane: PaneInfo) -> AgentState:
    """``working``, ``idle`` or ``unknown``, from the screen and the cursor (and for a
    program the table does not know, from what the kernel says it waits for)."""
    text = "\n".join(screen).lower()
    if any(marker in text for marker in runtime.busy):
        return "working"
    if runtime is GENERIC:
        waiting = proc.waiting_for_input(pane.pid, pane.tty)
        return "unknown" if isinstance(waiting, Unknown) else "idle" if waiting else "working"
    if input_row(runtime, screen, pane.cursor_y) is not None:
        return "idle"
    return "unknown"


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
    """The agent called ``name``, or whose pane id or ``SESSION:WINDOW.PANE`` it is."""
    agents = list_agents(tmux)
    for agent in agents:
        if name in (agent.name, agent.pane, agent.target):
            return agent
    return None


def runtime_names() -> list[str]:
    """The runtimes the table knows, for help texts."""
    return [runtime.name for runtime in RUNTIMES]
