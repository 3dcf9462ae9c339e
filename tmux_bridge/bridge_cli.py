"""``tmux-bridge``: the person's side. Parses options, calls the core, maps errors."""

from __future__ import annotations

import sys

import click

from . import __version__
from .bridge import attach, ensure_session
from .send_cli import run_cli

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

\b
Environment:
  TMUX_BRIDGE_SESSION  session name (default tmux-bridge-$USER)
  TMUX_BRIDGE_DIR      runtime directory (default /tmp/tmux-bridge-$USER)
  TMUX_TMPDIR          picks the tmux server, as for tmux itself
"""


@click.command(help=HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "-d", "--detach", is_flag=True, help="Create the session if needed, print its name, exit."
)
@click.version_option(__version__, "-V", "--version", prog_name="tmux-bridge")
def cli(detach: bool) -> int:
    name, _created = ensure_session()
    if detach:
        click.echo(name)
        return 0
    attach(name)
    return 0


def main() -> None:
    """Console-script entry point."""
    sys.exit(run_cli(cli))
