"""``tmux-send``: the agent's side. Reads the command line, calls the facade, prints the
result.

Start-up is part of every call an agent makes, so this module never imports click: the
common command lines are read by :mod:`tmux_bridge.cli.send_quick`, and every other one (and
``--help``) by the click command in :mod:`tmux_bridge.cli.send_options`, which builds the same
:class:`~tmux_bridge.cli.request.SendRequest` and calls :func:`~tmux_bridge.cli.request.call`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

from ..errors import EXIT_SIGINT, BridgeError
from .common import exit_now
from .request import Output, SendRequest, call


def main() -> None:
    """Console-script entry point. Exits with the status described in ``--help``."""
    exit_now(run(sys.argv[1:]))


def run(argv: Sequence[str]) -> int:
    """tmux-send with arguments ``argv``; its exit status."""
    from .send_quick import quick_request

    quick = quick_request(argv, os.environ)
    if quick is None:
        from .common import run_cli
        from .send_options import cli

        return run_cli(cli, argv)
    request = SendRequest(
        quick.mode, quick.words, quick.options, pane=quick.pane, job=quick.job,
        everything=quick.everything,
    )  # fmt: skip
    output = Output(quick.as_json)
    try:
        return call(request, output)
    except KeyboardInterrupt:
        return EXIT_SIGINT
    except BridgeError as exc:  # as run_cli prints one raised before the call began
        output.notice(exc.render())
        return exc.exit_code
