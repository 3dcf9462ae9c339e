"""Benchmark of tmux-send (issue 4): latency, throughput, memory, interrupt, concurrency,
streaming, REPL, files, several panes, the HTTP API (``tmux-bridge serve``) and the MCP
server (``tmux-bridge mcp``, issue 14), prompt delivery to a stand-in agent (issue 12),
the live view's ``/ws`` (issue 13, ``bench/ws_measure.py``) and far shells (an ssh pane,
issue 10), each in
bash, zsh and fish panes of a private tmux server.

Usage::

    .venv/bin/python bench/run.py [--quick] [--json PATH] [--shells bash,zsh,fish] [--runs N]
                                  [--only latency,memory,...] [--no-pyc-cache]

Prints a table of medians, minima and maxima next to their targets (PASS/MISS) and writes
every figure to ``--json``. A missed target is reported, never a failure. Exit status: 0
when the benchmark ran, 1 when a measurement could not be completed, 2 when the benchmark
could not start, 128 + N when signal N (Ctrl-C, SIGTERM, SIGHUP) stopped it. The private
tmux server is killed at the end in every case; the user's own server is never touched.

``--no-pyc-cache`` runs Python with PYTHONDONTWRITEBYTECODE=1 instead of a private
bytecode cache, to see the cost of compiling modules that have no .pyc at every start.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from types import FrameType
from typing import Any

from filekeep_measure import filekeep
from jobs_measure import jobs
from liveview_measure import liveview
from machine import describe, load_average
from mcp_measure import mcp
from measures import MEASUREMENTS as BASE_MEASUREMENTS
from measures import Config, Outcome, ShellState, Skip
from nested_measure import nested
from process_measure import process
from prompt_measure import prompt
from realagent_measure import realagent
from results import Report
from tmuxserver import TMUX_BRIDGE, TMUX_SEND, BenchError, PrivateServer, private_server
from transfer_measure import transfer
from view_measure import view
from ws_measure import ws

DEFAULT_SHELLS = ("bash", "zsh", "fish")
MEASUREMENTS = [
    *BASE_MEASUREMENTS,
    ("mcp", mcp),
    ("prompt", prompt),
    ("ws", ws),
    ("liveview", liveview),
    ("nested", nested),
    ("jobs", jobs),
    ("filekeep", filekeep),
    ("process", process),
    ("realagent", realagent),
    ("view", view),
    ("transfer", transfer),
]
NAMES = tuple(name for name, _ in MEASUREMENTS)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(
        prog="bench/run.py", description="Benchmark tmux-send in a private tmux server."
    )
    parser.add_argument(
        "--quick", action="store_true", help="tiny sizes and few runs (a few seconds)"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="write all figures here")
    parser.add_argument(
        "--shells",
        default=",".join(DEFAULT_SHELLS),
        help="comma-separated shells to run in (default: %(default)s)",
    )
    parser.add_argument(
        "--runs", type=_positive_int, metavar="N", help="runs per measurement (default 15)"
    )
    parser.add_argument(
        "--no-pyc-cache",
        action="store_true",
        help="run Python with PYTHONDONTWRITEBYTECODE=1 instead of a private bytecode cache "
        "(modules without a .pyc, such as an editable tmux_bridge, compile at every start)",
    )
    parser.add_argument(
        "--only",
        metavar="NAMES",
        help=f"comma-separated measurements to run (default: all of {','.join(NAMES)})",
    )
    args = parser.parse_args(argv)
    args.shells = [s for s in args.shells.split(",") if s]
    if not args.shells:
        parser.error("--shells: name at least one shell")
    args.only = [n for n in args.only.split(",") if n] if args.only else list(NAMES)
    unknown = sorted(set(args.only) - set(NAMES))
    if unknown or not args.only:
        parser.error(f"--only: choose from {','.join(NAMES)} (got {','.join(unknown) or 'none'})")
    return args


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def progress(started: float, message: str) -> None:
    """One line on stderr, prefixed with the seconds since ``started``."""
    print(f"[{time.perf_counter() - started:7.1f} s] {message}", file=sys.stderr, flush=True)


def open_panes(
    server: PrivateServer, shells: list[str], report: Report, started: float
) -> list[ShellState]:
    """One bridge pane per shell; a shell that is missing or fails to start is recorded
    (skipped or error) and left out."""
    states: list[ShellState] = []
    for shell in shells:
        progress(started, f"starting a {shell} bridge pane")
        try:
            pane = server.open_pane(shell)
        except BenchError as exc:
            if str(exc).endswith("is not installed"):
                report.skip("all", shell, str(exc))
            else:
                report.error("setup", shell, str(exc))
            continue
        report.machine[f"pane ({shell})"] = pane.size()
        states.append(ShellState(pane))
    return states


def file_outcome(name: str, outcome: Outcome | BenchError, shell: str, report: Report) -> None:
    """File one measurement's outcome in the report."""
    if isinstance(outcome, BenchError):
        report.error(name, shell, str(outcome))
    elif isinstance(outcome, Skip):
        report.skip(name, shell, outcome.reason)
    else:
        report.metrics.extend(outcome)


def run_all(
    server: PrivateServer, cfg: Config, shells: list[str], only: list[str], report: Report
) -> None:
    """The measurements named in ``only`` in every shell's pane, measurement by
    measurement, in their fixed order."""
    started = time.perf_counter()
    states = open_panes(server, shells, report, started)
    for name, measure in MEASUREMENTS:
        if name not in only:
            continue
        for state in states:
            if state.pane.broken:
                report.skip(name, state.pane.shell, "the pane did not come back to its prompt")
                continue
            progress(started, f"{name} in {state.pane.shell}")
            outcome: Outcome | BenchError
            try:
                outcome = measure(state, cfg)
            except BenchError as exc:
                outcome = exc
                state.pane.recover()
            file_outcome(name, outcome, state.pane.shell, report)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, handled like Ctrl-C so the private server is killed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_terminated(signum: int, _frame: FrameType | None) -> None:
    raise Terminated(signum)


def config_record(
    cfg: Config, shells: list[str], only: list[str], pyc_cache: bool
) -> dict[str, Any]:
    """The configuration as written to the table header and the JSON."""
    bytecode = "private PYTHONPYCACHEPREFIX" if pyc_cache else "PYTHONDONTWRITEBYTECODE=1"
    return {
        **asdict(cfg),
        "shells": ",".join(shells),
        "only": ",".join(only),
        "bytecode_cache": bytecode,
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; the process's exit status (see the module docstring)."""
    args = parse_args(argv)
    for path in (TMUX_SEND, TMUX_BRIDGE):
        if not path.exists():
            print(f"bench: {path} not found; install the package in this venv", file=sys.stderr)
            return 2
    cfg = Config.make(args.quick, args.runs)
    report = Report(
        machine=describe(args.shells),
        config=config_record(cfg, args.shells, args.only, not args.no_pyc_cache),
    )
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _raise_terminated)
    started = time.perf_counter()
    try:
        with private_server(bytecode_cache=not args.no_pyc_cache) as server:
            run_all(server, cfg, args.shells, args.only, report)
    except KeyboardInterrupt as exc:
        print("bench: interrupted; the private tmux server was killed", file=sys.stderr)
        return 128 + (exc.signum if isinstance(exc, Terminated) else signal.SIGINT)
    except (BenchError, OSError) as exc:
        print(f"bench: could not run: {exc}", file=sys.stderr)
        return 2
    report.duration_s = time.perf_counter() - started
    report.machine["load at end"] = load_average()
    print(report.table())
    if args.json:
        try:
            report.write_json(args.json)
        except OSError as exc:
            print(f"bench: cannot write {args.json}: {exc.strerror}", file=sys.stderr)
            return 2
        print(f"figures written to {args.json}")
    if report.errors or not report.metrics:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
