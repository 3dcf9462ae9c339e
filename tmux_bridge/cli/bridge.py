"""``tmux-bridge``: the person's side. Parses options, calls the core, maps errors."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

import click

from .. import __version__
from ..target import Target
from ..text.seams import json_text, shorten, visible, visible_lines
from .common import run_cli

if TYPE_CHECKING:
    from ..api import LoggedCall
    from ..results import PaneEntry, PaneLabel

HELP = """Open the terminal that AI agents send commands to with tmux-send.

\b
Creates the tmux session tmux-bridge-$USER running your shell in the current
directory, or attaches to it when it already runs. Inside tmux on the same
server, the current client switches to it instead of nesting. Watch the
agent's commands run there, type passwords and answers into them, and use
the shell yourself between calls.

\b
Examples:
  tmux-bridge          # open (or reopen) the bridge terminal
  tmux-bridge -d       # create it in the background and print its name
  tmux-bridge status   # what runs in it now, and any tmux-send call in flight
  tmux-bridge log      # what agents ran in it
  tmux-bridge log --stats  # failures, timeouts, refusals, slowest commands
  tmux-bridge split --label db -- ssh db.example.com   # a second, labelled pane
  tmux-bridge panes    # every pane: target, label, shell, what is in front
  tmux-bridge serve    # the HTTP API, for agents that reach you over HTTP
  tmux-bridge mcp      # the MCP server an agent client starts (Claude Code, Codex)
  tmux-bridge agents   # the AI agents in tmux panes, and what each is doing
  tmux-bridge prompt --to codex "review the PR"   # a prompt, with a receipt
  tmux-bridge doctor   # what this machine lacks, and how to install it

\b
Environment:
  TMUX_BRIDGE_SESSION  session name (default tmux-bridge-$USER)
  TMUX_BRIDGE_DIR      runtime directory (default /tmp/tmux-bridge-$USER)
  TMUX_BRIDGE_MESSAGE_TTL  seconds a message may stay pending (default 86400)
  TMUX_TMPDIR          picks the tmux server, as for tmux itself
  TMUX_BRIDGE_PROCESS  linux or portable: how processes are seen (default:
                       linux where /proc is, else portable)
"""


def _say(*lines: str, err: bool = False) -> None:
    """Print ``lines``, each on a line of its own made visible
    (:func:`~tmux_bridge.text.seams.visible`): text we do not control in them (a command, a
    name, a directory) can neither drive the person's terminal nor start a line. Every
    line tmux-bridge prints for a person goes through here."""
    click.echo("\n".join(visible(line) for line in lines), err=err)


def _say_text(text: str) -> None:
    """Print ``text`` that is lines by nature (an agent's reply), its control characters
    made visible (:func:`~tmux_bridge.text.seams.visible_lines`)."""
    click.echo(visible_lines(text))


def _say_json(document: object) -> None:
    """Print one JSON document on a line (:func:`~tmux_bridge.text.seams.json_text`)."""
    click.echo(json_text(document))


@click.group(
    help=HELP,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "-d",
    "--detach",
    is_flag=True,
    help="Create the session if needed (and wait for its shell's prompt), print its name, exit.",
)
@click.version_option(__version__, "-V", "--version", prog_name="tmux-bridge")
@click.pass_context
def cli(ctx: click.Context, detach: bool) -> int:
    if ctx.invoked_subcommand not in ("serve", "mcp", "message", "inbox"):
        _deliver_pending()  # a message pending for an idle agent waits for no one
    if ctx.invoked_subcommand is not None:
        if detach:
            raise click.UsageError("--detach goes without a subcommand")
        return 0
    from ..api import Bridge

    bridge = Bridge(Target.from_env(), client="tmux-bridge")
    note = bridge.ensure_session(ready=detach)  # the person sees their shell start
    if note:
        _say(f"tmux-bridge: {note}", err=True)
    if detach:
        _say(bridge.target.session)
        return 0
    bridge.attach()
    return 0


@cli.command()
@click.option(
    "-n",
    "count",
    type=click.IntRange(min=1),
    default=None,
    help="How many of the latest calls to show (default 20); with --stats, how many to "
    "summarize (default all).",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON line per call, as the log keeps its end (a call that has not ended: its "
    "start, with running true or false); with --stats, one object.",
)
@click.option(
    "--stats",
    is_flag=True,
    help="A friction summary per pane and overall: calls, failures by exit status, timeouts, "
    "refusals by reason, the slowest commands and those that failed most often.",
)
def log(count: int | None, as_json: bool, stats: bool) -> int:
    """Show what agents ran in the bridge (the audit log), oldest first; or, with
    --stats, where they met friction."""
    from ..api import Bridge

    bridge = Bridge(client="tmux-bridge")
    if stats:
        from .stats_text import render_lines

        summary = bridge.stats(count)
        if as_json:
            _say_json(summary.document())
        else:
            _say(*render_lines(summary))
        return 0
    entries = bridge.log(20 if count is None else count)
    for entry in entries:
        if as_json:
            _say_json(entry.document())
        else:
            _say(_log_line(entry))
    if not entries and not as_json:
        _say("No calls logged yet.", err=True)
    return 0


def _log_line(entry: LoggedCall) -> str:
    when = (entry.time or "")[:19].replace("T", " ")
    status: object = entry.exit_status
    timed_out = f" ({entry.timed_out} timeout)" if entry.timed_out else ""
    if entry.started:  # a call whose end is not logged
        status, timed_out = "-", " (running)" if entry.running else " (never ended)"
    command = shorten((entry.command or "").replace("\n", "\u23ce "), 100)
    took = f"{entry.duration_s:.2f}s" if entry.duration_s is not None else ""
    return f"{when}  {entry.mode or '':<7} {status!s:>3}{timed_out} {took:>7}  {command}"


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def status(as_json: bool) -> int:
    """Show whether the bridge runs, its shell, what is in front, the open REPL and any
    tmux-send call in flight. Exits 1 when no bridge session runs."""
    from ..api import Bridge

    info = Bridge(client="tmux-bridge").status()
    if as_json:
        _say_json(info.document())
        return 0 if info.running else 1
    if not info.running:
        _say(f"{info.session}: not running (start it with tmux-bridge)")
        return 1
    front = info.foreground or "the shell's prompt"
    repl = info.repl
    flight = info.in_flight.document() if info.in_flight else None
    lines = [
        f"session    {info.session} (running, pane {info.pane})",
        f"shell      {info.shell} (pid {info.shell_pid}) in {info.cwd}",
        f"in front   {front}",
        f"repl       {repl.name} (pid {repl.pid})" if repl else "repl       none",
        (
            f"tmux-send  pid {flight['pid']}, {flight['elapsed_s']} s: "
            + (f"job {flight['job']}: " if flight.get("job") else "")
            + shorten(str(flight["command"]), 80)
            if flight
            else "tmux-send  idle"
        ),
        f"transcript {info.transcript}"
        + (f": {info.transcript_note}" if info.transcript_note else ""),
    ]
    _say(*lines)
    return 0


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
def doctor(as_json: bool) -> int:
    """Check this machine for what tmux-bridge needs (tmux 3.2 or later, a shell, the
    runtime directory, how processes are seen here) and say what to install. Exits 1
    when something it cannot work without is missing."""
    from ..api import environment_checks

    checks = environment_checks()
    ok = all(check.status != "missing" for check in checks)
    if as_json:
        _say_json({"ok": ok, "checks": [check.document() for check in checks]})
        return 0 if ok else 1
    for check in checks:
        _say(f"{check.status:<8} {check.name:<14} {check.detail}")
        if check.fix:
            _say(f"{'':<8} {'':<14} -> {check.fix}")
    _say("", "ready" if ok else "not ready: install what is missing above")
    return 0 if ok else 1


_TARGET_HELP = (
    "The pane: a label, a pane id (%3), WINDOW.PANE in the bridge session or "
    "SESSION:WINDOW.PANE (default: the bridge pane)."
)


@cli.command(context_settings={"help_option_names": ["--help"]})  # -h: side by side
@click.option("--label", "name", metavar="NAME", help="Label the new pane NAME.")
@click.option("-h", "horizontal", is_flag=True, help="Side by side (default: one above the other).")
@click.option("-v", "vertical", is_flag=True, help="One above the other (the default).")
@click.option("-t", "--target", "pane", metavar="TARGET", help=_TARGET_HELP + " Split it.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def split(
    name: str | None,
    horizontal: bool,
    vertical: bool,
    pane: str | None,
    as_json: bool,
    command: tuple[str, ...],
) -> int:
    """Open a new pane in the bridge session, beside the bridge pane (or TARGET), in its
    directory, running your shell; your focus stays where it is. With a COMMAND (after
    --), type it there once the shell shows its prompt (ssh HOST, a server): it is not
    waited for. Prints the new pane's target (and, on stderr, where the shell starts when
    tmux cannot start it in that directory)."""
    from ..api import Bridge

    if horizontal and vertical:
        raise click.UsageError("-h and -v do not go together")
    text = (command[0] if len(command) == 1 else _joined(command)) if command else None
    info = Bridge(Target.from_env(pane=pane), client="tmux-bridge").split(name, horizontal, text)
    if as_json:
        _say_json(info.document())
    else:
        _say(_pane_line(info))
    if info.note and not as_json:
        _say(f"tmux-bridge: {info.note}", err=True)
    return 0


def _joined(words: tuple[str, ...]) -> str:
    import shlex

    return shlex.join(words)


def _pane_line(info: PaneLabel) -> str:
    label = f"  {info.label}" if info.label else ""
    return f"{info.target}  {info.pane}{label}"


@cli.command()
@click.argument("pane", metavar="TARGET")
@click.argument("name", required=False)
@click.option("--clear", is_flag=True, help="Remove the pane's label.")
def label(pane: str, name: str | None, clear: bool) -> int:
    """Label pane TARGET as NAME, so that tmux-send -p NAME reaches it.

    NAME is 1-40 of A-Z a-z 0-9 _ . - and unique on the tmux server. The label is kept
    on the pane itself (tmux shows it as #{@tmux-bridge-label}) and survives restarts of
    tmux-bridge."""
    from ..api import Bridge

    if clear == (name is not None):
        raise click.UsageError("give a NAME, or --clear to remove the label")
    info = Bridge(Target.from_env(pane=pane), client="tmux-bridge").label(name)
    _say(_pane_line(info))
    return 0


@cli.command()
@click.option("--all", "every_session", is_flag=True, help="Every session of the tmux server.")
@click.option(
    "--refresh",
    is_flag=True,
    help="First find the platform of every pane at its shell prompt (one probe command each).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON array.")
def panes(every_session: bool, refresh: bool, as_json: bool) -> int:
    """List the panes of the bridge session: target, label, shell, user, directory,
    what is in front, the platform, the last command and any tmux-send call in flight."""
    from ..api import Bridge

    entries = Bridge(client="tmux-bridge").panes(every_session, refresh)
    if as_json:
        _say_json([entry.document() for entry in entries])
    else:
        for entry in entries:
            _say(_panes_line(entry))
    return 0


def _panes_line(entry: PaneEntry) -> str:
    if entry.gone or entry.front is None:
        return f"{entry.target:<20} {entry.pane:<5} (gone)"
    front = entry.front
    shown = front.kind + (f" {front.program}" if front.program else "")
    last = entry.last_command or {}
    done = (
        f"  last: {shorten(str(last.get('command', '')), 40)} -> {last.get('exit_status')}"
        if last
        else ""
    )
    flight = "  (tmux-send call in flight)" if entry.in_flight else ""
    if entry.in_flight and entry.in_flight.job:
        flight = f"  (job {entry.in_flight.job} running)"
    mark = "*" if entry.bridge else " "
    platform = entry.platform or {}
    where = (
        f"{platform.get('distro') or platform.get('os')}/{platform.get('arch')} "
        if platform
        else ""
    )
    return (
        f"{mark}{entry.target:<19} {entry.pane:<5} {entry.label or '-':<12} "
        f"{entry.shell or '?':<5} {where}{entry.user or '?'}@{entry.host} {entry.cwd}  "
        f"[{shown}]{done}{flight}"
    )


SERVE_HELP = """Serve the HTTP API (the tmux bridge contract v1, plus exact command results)
so that agents that are not processes on this machine (a browser add-in, a web app)
can use your terminal.

\b
POST /v1/tmux takes one JSON action: list_sessions, create_session, send_keys,
capture_pane, send_and_capture, kill_session (the contract), and run, start_repl,
evaluate, close_repl, status, screen (results as tmux-send --json gives them). GET
/health answers without a token (and says more with one). Sessions are made on
your own tmux server (the one tmux-bridge uses), so you can attach and watch.
In tmux mode, with the mcp extra installed, /mcp serves the tools of tmux-bridge
mcp over Streamable HTTP, behind the same gates.

\b
Every request must come from this machine, name an allowed Host, come from an
allowed Origin if it has one, and carry the token (Authorization: Bearer TOKEN):
TMUX_BRIDGE_TOKEN, else the content of --token-file (default: token in the
runtime directory, made with a random token, mode 0600, on first start).

\b
Examples:
  tmux-bridge serve                                  # http://127.0.0.1:3337
  TOKEN=$(cat /tmp/tmux-bridge-$USER/token)
  curl -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \\
       -d '{"action":"run","command":"ls -la"}' http://127.0.0.1:3337/v1/tmux
  tmux-bridge serve --uds /tmp/tmux-bridge-$USER/http.sock --no-token
  tmux-bridge serve --mode stub                      # nothing runs: for client work
  tmux-bridge serve --tls-cert localhost.pem --tls-key localhost-key.pem \\
       --allowed-origins https://localhost:3000      # for a browser add-in

\b
Environment: TMUX_BRIDGE_MODE (--mode), TMUX_BRIDGE_TOKEN (the token),
ALLOWED_ORIGINS (--allowed-origins), ALLOWED_HOSTS (--allowed-hosts).
Ctrl-C or SIGTERM stops it: calls in flight are interrupted, their replies sent.
"""


def _list(_ctx: click.Context, _param: click.Parameter, value: str | None) -> tuple[str, ...]:
    return tuple(item.strip() for item in (value or "").split(",") if item.strip())


@cli.command(help=SERVE_HELP, context_settings={"max_content_width": 100})
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Loopback address to listen on (127.0.0.1, ::1, localhost).",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=3337,
    show_default=True,
    help="TCP port (0: any free one, printed on start).",
)
@click.option(
    "--uds", metavar="PATH", help="Listen on a Unix socket (made mode 0600) instead of TCP."
)
@click.option(
    "--mode",
    type=click.Choice(["tmux", "stub"]),
    default="tmux",
    envvar="TMUX_BRIDGE_MODE",
    show_default=True,
    help="tmux: your terminal; stub: an in-memory simulation that runs nothing.",
)
@click.option(
    "--token-file",
    metavar="PATH",
    help="Read the token here (made with a random token when missing).",
)
@click.option(
    "--read-only-token-file",
    metavar="PATH",
    help="A second token, read here (made, 0600, when missing), that may watch (/ws, the "
    "browser view) and call list_sessions, capture_pane, status, screen only.",
)
@click.option(
    "--no-token",
    is_flag=True,
    help="Ask no token; only with --uds (the socket's mode keeps others out).",
)
@click.option(
    "--allowed-origins",
    metavar="LIST",
    envvar="ALLOWED_ORIGINS",
    callback=_list,
    help="Comma-separated browser origins let in, e.g. https://localhost:3000.",
)
@click.option(
    "--allowed-hosts",
    metavar="LIST",
    envvar="ALLOWED_HOSTS",
    callback=_list,
    help="Comma-separated Host values let in (NAME:* for any port) "
    "[default: 127.0.0.1:*,localhost:*,[::1]:*].",
)
@click.option(
    "--tls-cert",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False),
    help="Serve HTTPS with this certificate (PEM), e.g. from mkcert.",
)
@click.option(
    "--tls-key",
    metavar="FILE",
    type=click.Path(exists=True, dir_okay=False),
    help="The certificate's private key (PEM).",
)
@click.option(
    "--socket",
    "tmux_socket",
    metavar="NAME|PATH",
    help="The tmux server (a socket name or path; default: tmux-bridge's).",
)
@click.option(
    "--tmux-timeout",
    type=click.FloatRange(min=0.1),
    default=10.0,
    show_default=True,
    help="Seconds a tmux command may take (then 504).",
)
@click.option("--no-mcp", is_flag=True, help="Do not serve /mcp (the MCP SDK is not loaded).")
def serve(**params: Any) -> int:
    if not params["allowed_hosts"]:
        params.pop("allowed_hosts")
    params["socket"] = params.pop("tmux_socket")
    try:
        from ..server.serve import ServeOptions, serve
    except ImportError as exc:
        raise click.ClickException(
            f"the server's dependencies are missing ({exc.name}); install tmux-bridge "
            "with its server extra: pip install 'tmux-bridge[server]'."
        ) from None
    try:
        code = serve(ServeOptions(**params))
    except OSError as exc:  # the port is taken, the socket's directory is missing ...
        raise click.ClickException(f"cannot listen: {exc.strerror or exc}.") from None
    _ending()
    return code


def _ending() -> None:
    """A resident face has stopped and the process ends next: the objects it made are
    left to that end. The interpreter's last collection would otherwise walk them all
    (0.3 s with the MCP SDK loaded, more on a busy machine), and ``serve`` promises its
    exit within 2 s of SIGTERM (docs/http-api.md)."""
    import gc

    gc.freeze()


MCP_HELP = """Serve the bridge to an MCP client (Claude Code, Codex, Cursor, VS Code, Zed)
on stdin and stdout: the client starts this command itself.

\b
Tools: run, start_repl, evaluate, close_repl, send_keys, type_text,
read_screen, status, list_panes, pane_info, read_file, write_file, edit_file,
list_agents, send_prompt, send_message (--list-tools describes them). Each
returns the document tmux-send --json prints; run and evaluate send their
output as progress while they work, and a cancelled call is interrupted as by
Ctrl-C. Every call is in your audit log (tmux-bridge log) under the client's
name.

\b
Examples:
  claude mcp add tmux-bridge -- tmux-bridge mcp
  claude mcp add tmux-bridge-ro -- tmux-bridge mcp --readonly
  tmux-bridge mcp --list-tools
"""


@cli.command(help=MCP_HELP, context_settings={"max_content_width": 100})
@click.option(
    "--readonly",
    is_flag=True,
    help="Serve only the tools that change nothing: read_screen, status, list_panes, "
    "pane_info, read_file, list_agents.",
)
@click.option(
    "--socket",
    "tmux_socket",
    metavar="NAME|PATH",
    help="The tmux server (a socket name or path; default: tmux-bridge's).",
)
@click.option("--list-tools", is_flag=True, help="Print the tools as a Markdown table and exit.")
def mcp(readonly: bool, tmux_socket: str | None, list_tools: bool) -> int:
    if list_tools:
        from ..mcp.texts import tool_table

        click.echo(tool_table(readonly), nl=False)
        return 0
    try:
        from ..mcp.server import main as serve_mcp
    except ImportError as exc:
        raise click.ClickException(
            f"the MCP server's dependencies are missing ({exc.name}); install tmux-bridge "
            "with its mcp extra: pip install 'tmux-bridge[mcp]'."
        ) from None
    code = serve_mcp(Target.from_env(socket=tmux_socket), readonly)
    _ending()
    return code


# --- agents, prompts, messages ---------------------------------------------------------


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON array.")
def agents(as_json: bool) -> int:
    """List the AI agents on the tmux server: panes whose program is a known agent CLI
    (claude, codex, gemini, cursor-agent, auggie, amp, opencode, aider, goose), or whose
    session sets TMUX_BRIDGE_AGENT=NAME (or GT_AGENT). Each with its name, runtime,
    role, rig, directory, whether a person is attached, its pane and its state
    (working, idle, needs_person with the question, starting, unknown)."""
    from ..api import Bridge

    found = Bridge(client="tmux-bridge").agents()
    if as_json:
        _say_json([a.document() for a in found])
        return 0
    if not found:
        _say("No agents are running.", err=True)
    for a in found:
        seen = " (attached)" if a.attached else ""
        role = f" {a.role}" if a.role else ""
        asks = f" ({a.question})" if a.question else ""
        _say(
            f"{a.name:<20} {a.runtime:<9} {a.state:<12} {a.target:<14}{role}{seen}  "
            f"{a.work_dir}{asks}"
        )
    return 0


def _prompt_text(text: str | None, path: str | None) -> str:
    if (text is None) == (path is None):
        raise click.UsageError("give the text, or --file FILE (- for stdin), not both")
    if path is None:
        assert text is not None
        return text
    with click.open_file(path, encoding="utf-8") as f:
        return str(f.read())


_FILE_OPTION = click.option(
    "--file", "path", metavar="FILE", help="Read the text from FILE (- for stdin)."
)


@cli.command()
@click.option("--to", "agent", required=True, metavar="AGENT", help="A name from `agents`.")
@_FILE_OPTION
@click.option(
    "--replace-draft",
    is_flag=True,
    help="Clear text someone left in the agent's input box (default: refuse).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=30.0,
    show_default=True,
    help="Seconds to wait for another sender and for a working agent to be idle.",
)
@click.option("--json", "as_json", is_flag=True, help="The receipt as one JSON object.")
@click.argument("text", required=False)
def prompt(
    agent: str,
    path: str | None,
    replace_draft: bool,
    timeout: float,
    as_json: bool,
    text: str | None,
) -> int:
    """Put TEXT into AGENT's input box and submit it, as if the person typed it; report
    delivered only once the agent showed it took it (the box emptied and the text
    appears in the conversation, or it started working). Swallowed Enters are retried.

    \b
    Exit status: 0 delivered; 1 not delivered (why on stderr: busy, no input box,
    a question for the person, a draft in the box, Enter never taken); 3 unconfirmed
    (submitted, and the agent may well have taken it: do not send it again); 2 an
    ambiguous name; 125 could not try (no such agent).
    """
    from ..api import Bridge
    from ..errors import NotDelivered

    body = _prompt_text(text, path)
    try:
        receipt = Bridge(client="tmux-bridge").send_prompt(
            agent, body, replace_draft=replace_draft, timeout=timeout
        )
    except NotDelivered as exc:
        if as_json and exc.receipt is not None:
            doc = {**exc.receipt.document(), "error_code": exc.code}  # type: ignore[attr-defined]
            _say_json(doc)
        raise
    if as_json:
        _say_json(receipt.document())
    return 0


def _deliver_pending() -> None:
    """Pending messages to agents that are idle now (no wait for busy ones). Never stops
    the command it comes before: a broken inbox is said on stderr (it was moved aside)."""
    from ..api import Bridge
    from ..errors import BridgeError, InboxError

    try:
        Bridge(client="tmux-bridge").deliver_pending()
    except InboxError as exc:
        _say(f"tmux-bridge: {exc}", err=True)
    except BridgeError:
        pass  # no tmux server, a pane gone ...: the next command tries again
    except Exception as exc:  # a fault of ours must not take the person's command with it
        _say(f"tmux-bridge: pending messages were not tried: {exc!r}", err=True)


@cli.command()
@click.option("--to", "agent", required=True, metavar="AGENT", help="A name from `agents`.")
@click.option("--from", "sender", metavar="NAME", help="Who sends (default: your agent's name).")
@_FILE_OPTION
@click.option(
    "--wait-reply", is_flag=True, help="Wait until AGENT has answered and print its answer."
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0),
    default=300.0,
    show_default=True,
    help="Seconds --wait-reply waits for delivery and the answer.",
)
@click.option(
    "--ttl",
    type=float,
    metavar="SECONDS",
    help="How long it may stay pending before it expires [default: $TMUX_BRIDGE_MESSAGE_TTL, "
    "else 86400].",
)
@click.option("--json", "as_json", is_flag=True, help="The message (and reply) as JSON.")
@click.argument("text", required=False)
def message(
    agent: str,
    sender: str | None,
    path: str | None,
    wait_reply: bool,
    timeout: float,
    ttl: float | None,
    as_json: bool,
    text: str | None,
) -> int:
    """Send TEXT to AGENT as a message from another agent: kept in the inbox, and
    delivered as a prompt (headed as a message from the sender, not from the person)
    once AGENT is idle. A message AGENT cannot take now stays pending; the next
    tmux-bridge command (or `serve`) delivers it, only to the program it was sent to,
    and only until --ttl runs out (then it is expired). The sender's name (--from, or
    your agent's name) is like a pane label: 1 to 40 letters, digits, '_', '.' or '-'.

    \b
    Exit status: 0 delivered (with --wait-reply: answered, the answer on stdout), or
    kept pending for a busy AGENT (said on stderr; do not send it again); 1 failed or
    expired (why on stderr); 124 --wait-reply timed out; 125 could not try (no such
    agent); 2 a message to yourself, or a sender's name that is no label.
    """
    import os

    from ..api import Bridge, Origin

    body = _prompt_text(text, path)
    sent = Bridge(client="tmux-bridge").send_message(
        agent, body, sender=sender, origin=Origin.from_env(os.environ), wait_reply=wait_reply,
        timeout=timeout, ttl=ttl,
    )  # fmt: skip
    if as_json:
        _say_json(sent.document())
    elif sent.reply is not None:
        _say_text(sent.reply)
    note = sent.message
    if note.state in ("delivered", "read"):
        return 0
    why = f": {note.error}" if note.error else ""
    _say(f"message #{note.id} to {note.recipient} is {note.state}{why}", err=True)
    if note.state == "pending":
        _say(f"It is delivered once {note.recipient} runs and is idle; `tmux-bridge inbox` "
             "shows it. Do not send it again.", err=True)  # fmt: skip
        return 0
    return 1


@cli.command()
@click.argument("agent", required=False)
@click.option("--json", "as_json", is_flag=True, help="One JSON array.")
@click.option("--clear", is_flag=True, help="First remove the messages that are done.")
@click.option(
    "--read", "read_id", type=int, metavar="N", help="Print the text of message #N and exit."
)
def inbox(agent: str | None, as_json: bool, clear: bool, read_id: int | None) -> int:
    """Show the messages between agents (those AGENT sent or got, or all; AGENT is any
    name --to takes) and their states: pending, delivered, failed, expired, read.
    Pending ones are tried first. An unreadable inbox is moved aside (exit 125, the
    message names where); the next command starts a new one. --read N prints message
    N's text (a message longer than $TMUX_BRIDGE_MESSAGE_INLINE characters, 2,000,
    arrives as a line naming this)."""
    from ..api import Bridge

    if read_id is not None:
        found = Bridge(client="tmux-bridge").read_message(read_id)
        if as_json:
            _say_json(found.document())
        else:
            _say_text(found.body.removesuffix("\n"))  # echo ends the last line
        return 0
    messages = Bridge(client="tmux-bridge").inbox(agent, clear)
    if as_json:
        _say_json([m.document() for m in messages])
        return 0
    if not messages:
        _say("No messages.", err=True)
    for m in messages:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(m.created))
        body = " ".join(m.body.split())
        body = body if len(body) <= 60 else body[:57] + "..."
        _say(f"#{m.id:<4} {m.state:<9} {when}  {m.from_label()} -> {m.recipient}: {body}")
    return 0


def main() -> None:
    """Console-script entry point."""
    code = run_cli(cli)
    sys.exit(code)
