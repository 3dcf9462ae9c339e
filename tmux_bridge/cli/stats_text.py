"""The audit log's friction summary as text for a person (``tmux-bridge log --stats``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..text.seams import shorten

if TYPE_CHECKING:
    from ..api import Friction, FrictionSummary


def render_lines(stats: FrictionSummary) -> list[str]:
    """The summary for a person, as lines (a field never holds the line break: the
    caller makes each line visible): a block for all panes, then one per pane."""
    if not stats.entries:
        return ["No calls logged yet."]
    span = f"{_when(stats.first)} to {_when(stats.last)}"
    lines = [f"{stats.entries} log entries, {span}", "", *_block("all panes", stats.overall)]
    for pane, summary in stats.panes.items():
        name = f"pane {pane}" + (f" ({summary.target})" if summary.target else "")
        lines += ["", *_block(name, summary)]
    return lines + _where(stats)


def _where(stats: FrictionSummary) -> list[str]:
    """Friction by host and by first word, and the first-try successes."""
    lines = [""]
    for host, summary in (stats.hosts or {}).items():
        lines.append(
            f"host {host}: {_plural(summary.calls, 'call')} ({summary.ok} ok, "
            f"{summary.failed} failed, {summary.timeouts} timed out, {summary.refused} refused)"
        )
    words = [
        f"{_short(w)} {c['failed']}/{c['calls']}" for w, c in (stats.first_words or {}).items()
    ]
    if words:
        lines.append("first words (failed/calls): " + ", ".join(words))
    calls = stats.overall.calls - stats.overall.never_ended - stats.overall.running
    if calls:
        share = 100 * stats.first_try // calls
        lines.append(f"first-try success: {stats.first_try} of {calls} calls ({share}%)")
    return lines if len(lines) > 1 else []


def _block(name: str, summary: Friction) -> list[str]:
    checks = summary.checks
    unended = "".join(
        f", {count} {words}"
        for count, words in ((summary.never_ended, "never ended"), (summary.running, "running"))
        if count
    )
    lines = [
        f"{name}: {_plural(summary.calls, 'call')} ({summary.ok} ok, "
        f"{summary.failed} failed, {summary.timeouts} timed out, "
        f"{summary.refused} refused{unended}), {_plural(checks, 'dry run')}"
    ]
    for label, counts, prefix in (
        ("failures", summary.failures_by_status, "exit "),
        ("timeouts", summary.timeouts_by_kind, ""),
        ("refusals", summary.refusals_by_reason, ""),
    ):
        if counts:
            counted = ", ".join(f"{prefix}{what} x{count}" for what, count in counts.items())
            lines.append(f"  {label:<13}{counted}")
    for index, slow in enumerate(summary.slowest):
        status = f"[{slow.exit_status}]"
        shown = f"{slow.duration_s:7.2f} s  {status:<6} {_short(slow.command)}"
        lines.append(f"  {'slowest' if index == 0 else '':<13}{shown}")
    for index, failed in enumerate(summary.most_failed):
        statuses = "[" + ",".join(failed.exit_statuses) + "]"
        shown = f"{failed.failures:>4} x    {statuses:<6} {_short(failed.command)}"
        lines.append(f"  {'failed most' if index == 0 else '':<13}{shown}")
    for call in summary.unfinished:
        state = "running" if call.running else "never ended"
        shown = f"{_when(call.time)}  {_short(call.command)}"
        lines.append(f"  {state:<13}{shown}")
    return lines


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _when(time: object) -> str:
    return str(time or "?")[:19].replace("T", " ")


def _short(command: object) -> str:
    return shorten(str(command or "").replace("\n", "\u23ce "), 80)
