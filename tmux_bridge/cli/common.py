"""What both command-line faces share: running a click command with our exit codes,
exiting fast, and writing straight to file descriptors. click is imported only to run
a click command: tmux-send's common command lines never need it."""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..errors import EXIT_SIGINT, BridgeError
from ..infra.tmux import write_all
from ..text.seams import visible_lines

if TYPE_CHECKING:
    import click


class FdSink:
    """Writes straight to a file descriptor; a reader that went away is ignored."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.open = True
        self.line_open = False  # the last write did not end a line

    def __call__(self, data: bytes) -> None:
        if not self.open or not data:
            return
        self.line_open = not data.endswith(b"\n")
        try:
            write_all(self.fd, data)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            self.open = False


def exit_now(code: int) -> None:
    """Exit with ``code`` without the interpreter's tear-down (about 5 ms of tmux-send's
    latency). Everything tmux-send opened is closed by then; only the streams to flush."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def run_cli(command: click.Command, args: Sequence[str] | None = None) -> int:
    """Run a click command without click's own exit handling: usage errors exit 2,
    Ctrl-C before the command was typed exits 130 (click would say "Aborted!", 1). An
    error's text goes to stderr with its control characters made visible
    (:func:`~tmux_bridge.text.seams.visible_lines`): it may quote what it was given."""
    import io

    import click

    try:
        code = command.main(args=args, standalone_mode=False)
    except click.ClickException as exc:
        shown = io.StringIO()  # click's message quotes the bad option or value
        exc.show(file=shown)
        click.echo(visible_lines(shown.getvalue()), err=True, nl=False)
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        return EXIT_SIGINT
    except BridgeError as exc:
        click.echo(visible_lines(exc.render()), err=True)
        return exc.exit_code
    return code if isinstance(code, int) else 0
