"""The friction summary of the audit log (``tmux-bridge log --stats``). Pure: entries in,
one document out (its text for a person: :mod:`tmux_bridge.cli.stats_text`).

Each entry of the log (each call once, as :func:`tmux_bridge.audit.log.read` folds them) is
one of:

* a dry run (mode ``check``): counted as ``checks`` only;
* a call that has not ended (only its start is logged): ``running`` while the process
  that made it runs, else ``never_ended`` (tmux-send was killed, say);
* a refusal (an ``error_code``: tmux-send could not make the call, nothing ran);
* a timeout (``timed_out``: the command was interrupted);
* a success (exit status 0) or a failure (any other exit status).

``calls`` counts all but the dry runs, so ``calls == ok + failed + timeouts + refused +
never_ended + running``; ``unfinished`` lists the last of the calls that have not ended.
The slowest commands are taken from the calls that ran; the commands that failed most
often count failures and timeouts, by the command's exact text. Entries are grouped by
pane id (``%3``); a refusal that came before any pane was found (no such pane) has none
and is grouped under ``unknown``, and a call that has not ended under the pane it asked
for (``unknown``: the bridge pane).

Where friction happens: ``hosts`` has the same counts by the host and platform a call
ran on (``HOST (OS)`` as its entry logged them: a far shell's host when one answered;
``unknown`` for entries without, such as refusals and older entries), and
``first_words`` the calls and failures (failures and timeouts) by a command's first word
(the mode for calls that are not commands), those that failed most first. ``first_try``
counts the calls that succeeded with no refusal, failure or timeout before them in the
same pane within :data:`FIRST_TRY_WINDOW` seconds: the share of work done at the first
try.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..tuples import NamedTuple

TOP = 5  # slowest and most often failed commands listed
UNKNOWN_PANE = "unknown"
FIRST_TRY_WINDOW = 60  # seconds: a success after a miss within this is not a first try


class Unfinished(NamedTuple):
    """A call that has not ended (only its start is logged), as its start says."""

    command: object
    mode: object
    pane: object
    client: object
    pid: object
    running: bool  # its process still runs (else it never ended)
    time: object

    def document(self) -> dict[str, object]:
        return dict(self._asdict())


class Slow(NamedTuple):
    """One of the slowest calls that ran."""

    command: object
    mode: object
    pane: object
    duration_s: float
    exit_status: object
    timed_out: object
    time: object

    def document(self) -> dict[str, object]:
        return dict(self._asdict())


class Failed(NamedTuple):
    """A command that failed or timed out: how often, its exit statuses (most frequent
    first) and the time of the last failure."""

    command: str
    failures: int
    exit_statuses: dict[str, int]
    last: object

    def document(self) -> dict[str, object]:
        return dict(self._asdict())


class Friction(NamedTuple):
    """The counts of one pane (its ``target``, the last one logged) or of all panes."""

    target: str | None
    calls: int
    ok: int
    failed: int
    failures_by_status: dict[str, int]
    timeouts: int
    timeouts_by_kind: dict[str, int]
    refused: int
    refusals_by_reason: dict[str, int]
    never_ended: int
    running: int
    unfinished: tuple[Unfinished, ...]
    checks: int
    slowest: tuple[Slow, ...]
    most_failed: tuple[Failed, ...]

    def document(self) -> dict[str, object]:
        """The counts as JSON, the lists as lists of objects."""
        document: dict[str, object] = self._asdict()
        for key in ("unfinished", "slowest", "most_failed"):
            items: tuple[Unfinished | Slow | Failed, ...] = getattr(self, key)
            document[key] = [item.document() for item in items]
        return document


class FrictionSummary(NamedTuple):
    """The friction summary: how many entries, the first and last time, the counts of
    all panes (``overall``) and of each pane, in the order panes first appear."""

    entries: int
    first: str | None
    last: str | None
    overall: Friction
    panes: dict[str, Friction]
    hosts: dict[str, Friction] | None = None
    first_words: dict[str, dict[str, int]] | None = None
    first_try: int = 0

    def document(self) -> dict[str, object]:
        """The summary as ``tmux-bridge log --stats --json`` prints it (``overall``
        without a target)."""
        overall = self.overall.document()
        del overall["target"]
        return {
            "entries": self.entries,
            "first": self.first,
            "last": self.last,
            "overall": overall,
            "panes": {pane: friction.document() for pane, friction in self.panes.items()},
            "hosts": {host: f.document() for host, f in (self.hosts or {}).items()},
            "first_words": self.first_words or {},
            "first_try": self.first_try,
        }


def outcome(entry: dict[str, Any]) -> str:
    """``check``, ``running``, ``never_ended``, ``refused``, ``timeout``, ``ok`` or
    ``failed``."""
    if entry.get("mode") == "check":
        return "check"
    if entry.get("event") == "start":
        return "running" if entry.get("running") else "never_ended"
    if entry.get("error_code"):
        return "refused"
    if entry.get("timed_out"):
        return "timeout"
    return "ok" if entry.get("exit_status") == 0 else "failed"


class _Failing:
    """A command's failures so far."""

    def __init__(self, command: str) -> None:
        self.command = command
        self.failures = 0
        self.exit_statuses: Counter[str] = Counter()
        self.last: object = None

    def freeze(self) -> Failed:
        return Failed(self.command, self.failures, _by_count(self.exit_statuses), self.last)


class _Tally:
    """The counts of one pane (or of all)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.statuses: Counter[str] = Counter()
        self.timeout_kinds: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.ran: list[dict[str, Any]] = []
        self.failures: dict[str, _Failing] = {}
        self.unfinished: list[Unfinished] = []
        self.target: str | None = None

    def add(self, entry: dict[str, Any]) -> None:
        what = outcome(entry)
        self.counts[what] += 1
        if isinstance(entry.get("target"), str):
            self.target = entry["target"]
        if what == "check":
            return
        if what in ("running", "never_ended"):
            self.unfinished.append(_unfinished(entry, what))
            return
        if what == "refused":
            self.reasons[str(entry["error_code"])] += 1
            return
        self.ran.append(entry)
        if what == "timeout":
            self.timeout_kinds[str(entry["timed_out"])] += 1
        elif what == "failed":
            self.statuses[str(entry.get("exit_status"))] += 1
        if what != "ok":
            self._failed(entry)

    def _failed(self, entry: dict[str, Any]) -> None:
        command = str(entry.get("command", ""))
        key = f"{command}\0{entry.get('command_sha256')}"  # a long one: the whole text's
        record = self.failures.setdefault(key, _Failing(command))
        record.failures += 1
        record.exit_statuses[str(entry.get("exit_status"))] += 1
        record.last = entry.get("time")

    def summary(self, top: int) -> Friction:
        counts = self.counts
        failing = sorted(self.failures.values(), key=lambda r: -r.failures)[:top]
        return Friction(
            target=self.target,
            calls=sum(counts.values()) - counts["check"],
            ok=counts["ok"],
            failed=counts["failed"],
            failures_by_status=_by_count(self.statuses),
            timeouts=counts["timeout"],
            timeouts_by_kind=_by_count(self.timeout_kinds),
            refused=counts["refused"],
            refusals_by_reason=_by_count(self.reasons),
            never_ended=counts["never_ended"],
            running=counts["running"],
            unfinished=tuple(self.unfinished[-top:]),
            checks=counts["check"],
            slowest=tuple(_slow(entry) for entry in _slowest(self.ran)[:top]),
            most_failed=tuple(record.freeze() for record in failing),
        )


def _by_count(counter: Counter[str]) -> dict[str, int]:
    """Most frequent first; ties in the order first seen."""
    return dict(counter.most_common())


def _duration(entry: dict[str, Any]) -> float:
    value = entry.get("duration_s")
    return float(value) if isinstance(value, (int, float)) else 0.0


def _slowest(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(entries, key=lambda entry: -_duration(entry))


def _unfinished(entry: dict[str, Any], what: str) -> Unfinished:
    return Unfinished(
        command=entry.get("command"),
        mode=entry.get("mode"),
        pane=entry.get("pane") or UNKNOWN_PANE,
        client=entry.get("client"),
        pid=entry.get("pid"),
        running=what == "running",
        time=entry.get("time"),
    )


def _slow(entry: dict[str, Any]) -> Slow:
    return Slow(
        command=entry.get("command"),
        mode=entry.get("mode"),
        pane=entry.get("pane") or UNKNOWN_PANE,
        duration_s=_duration(entry),
        exit_status=entry.get("exit_status"),
        timed_out=entry.get("timed_out"),
        time=entry.get("time"),
    )


def summarize(entries: Iterable[Any], top: int = TOP) -> FrictionSummary:
    """The friction summary of audit-log ``entries`` (oldest first): overall and per
    pane, in the order panes first appear. Entries that are not JSON objects are
    skipped."""
    overall = _Tally()
    panes: dict[str, _Tally] = {}
    hosts: dict[str, _Tally] = {}
    words = _Words()
    times: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        pane = str(entry.get("pane") or UNKNOWN_PANE)
        where = _host(entry)
        for tally in (overall, panes.setdefault(pane, _Tally()), hosts.setdefault(where, _Tally())):
            tally.add(entry)
        words.add(pane, entry)
        if isinstance(entry.get("time"), str):
            times.append(entry["time"])
    return FrictionSummary(
        entries=sum(overall.counts.values()),
        first=times[0] if times else None,
        last=times[-1] if times else None,
        overall=overall.summary(top),
        panes={pane: tally.summary(top) for pane, tally in panes.items()},
        hosts={host: tally.summary(top) for host, tally in hosts.items()},
        first_words=words.table(top * 2),
        first_try=words.first_try,
    )


def _host(entry: dict[str, Any]) -> str:
    host, system = entry.get("host"), entry.get("platform")
    if not isinstance(host, str):
        return UNKNOWN_PANE
    return f"{host} ({system})" if isinstance(system, str) else host


def first_word(entry: dict[str, Any]) -> str:
    """A command's first word (assignments before it skipped), or the call's mode for
    calls that are not commands."""
    if entry.get("mode") != "command":
        return str(entry.get("mode") or "?")
    for word in str(entry.get("command") or "").split():
        if "=" not in word or word.startswith("="):
            return word
    return "?"


def _seconds(entry: dict[str, Any]) -> float | None:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(entry.get("time"))).timestamp()
    except ValueError:
        return None


class _Words:
    """Calls and failures by first word, and the first-try successes."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.missed: dict[str, float] = {}  # a pane's last miss, in seconds
        self.first_try = 0

    def add(self, pane: str, entry: dict[str, Any]) -> None:
        what = outcome(entry)
        if what in ("check", "running", "never_ended"):
            return
        word = first_word(entry)
        self.calls[word] += 1
        when = _seconds(entry)
        if what in ("failed", "timeout"):
            self.failures[word] += 1
        if what != "ok":
            self.missed[pane] = when if when is not None else float("inf")
            return
        last = self.missed.get(pane)
        if last is None or when is None or not 0 <= when - last <= FIRST_TRY_WINDOW:
            self.first_try += 1

    def table(self, top: int) -> dict[str, dict[str, int]]:
        order = sorted(self.calls, key=lambda w: (-self.failures[w], -self.calls[w]))[:top]
        return {w: {"calls": self.calls[w], "failed": self.failures[w]} for w in order}
