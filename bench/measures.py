"""The benchmark's measurements, one function each, all run in one bridge pane.

Each measurement interleaves the thing measured with its baselines inside every run (the
order rotates from run to run), waits for the shell's prompt before each step (outside
the timed part), and returns :class:`~results.Metric` figures, or a :class:`Skip`.
Durations are taken with ``time.perf_counter`` in seconds and reported in ms or s.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from results import Metric, count_ok, ratio
from tmuxserver import PROMPT_TIMEOUT, TMUX_BRIDGE, BenchError, Pane, reaped, timed_run

IMPORT_CLICK = (sys.executable, "-c", "import click")
INTERRUPT_IDLE = 0.5  # seconds: tmux-send's --timeout in the interrupt measurement
SEND_TIMEOUT = 180.0  # seconds any one tmux-send may take before the benchmark gives up


@dataclass(frozen=True)
class Config:
    """Sizes and run counts. ``runs`` applies to latency, throughput, concurrency and
    streaming; memory and interrupt are slow and use their own counts."""

    quick: bool
    runs: int
    throughput_lines: int
    memory_lines: tuple[int, ...]
    memory_runs: int
    interrupt_runs: int
    interrupt_cases: int  # 1: only the Ctrl-C case; 2: also the SIGQUIT one
    concurrency_calls: int
    streaming_lines: int
    streaming_interval: float  # seconds between two printed lines
    file_bytes: int  # the file written, read and cat'ed in the files measurement
    large_file_bytes: int  # a file only written and read, for the rate (0: none)
    large_file_runs: int
    serve_requests: int  # requests before the server's RSS is read again

    @classmethod
    def make(cls, quick: bool, runs: int | None) -> Config:
        """The full configuration, or the tiny ``--quick`` one; ``runs`` overrides."""
        if quick:
            return cls(
                quick=True,
                runs=runs or 2,
                throughput_lines=10_000,
                memory_lines=(1_000, 10_000),
                memory_runs=1,
                interrupt_runs=1,
                interrupt_cases=1,
                concurrency_calls=4,
                streaming_lines=3,
                streaming_interval=0.02,
                file_bytes=100_000,
                large_file_bytes=0,
                large_file_runs=0,
                serve_requests=300,
            )
        return cls(
            quick=False,
            runs=runs or 15,
            throughput_lines=1_000_000,
            memory_lines=(10_000, 1_000_000, 10_000_000),
            memory_runs=min(runs or 3, 3),
            interrupt_runs=min(runs or 3, 3),
            interrupt_cases=2,
            concurrency_calls=20,
            streaming_lines=20,
            streaming_interval=0.05,
            file_bytes=1_000_000,
            large_file_bytes=100_000_000,
            large_file_runs=min(runs or 3, 3),
            serve_requests=10_000,
        )


@dataclass
class Skip:
    """A measurement that was not run, and why."""

    reason: str


@dataclass
class ShellState:
    """One shell's pane, plus figures later measurements reuse."""

    pane: Pane
    latency_s: float | None = None  # median wall time of `tmux-send -- true`, seconds


Outcome = list[Metric] | Skip
Step = Callable[[], float]


def interleaved(pane: Pane, steps: Mapping[str, Step], runs: int) -> dict[str, list[float]]:
    """Run every step once as a warm-up, then ``runs`` times interleaved, rotating the
    order each run. Each step returns seconds; the shell's prompt is awaited before it."""
    names = list(steps)
    for name in names:
        pane.wait_for_prompt()
        steps[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for run in range(runs):
        shift = run % len(names)
        for name in names[shift:] + names[:shift]:
            pane.wait_for_prompt()
            samples[name].append(steps[name]())
    return samples


def short(count: int) -> str:
    """A line count for labels: powers of ten as ``1e6``, others as they are."""
    digits = str(count)
    if len(digits) > 3 and digits == "1" + "0" * (len(digits) - 1):
        return f"1e{len(digits) - 1}"
    return digits


def to_ms(seconds: Sequence[float]) -> list[float]:
    """Seconds to milliseconds."""
    return [s * 1000.0 for s in seconds]


def timed_send(pane: Pane, *args: str) -> tuple[float, bytes]:
    """Run ``tmux-send ARGS``; its wall time in seconds and its stdout. Raises
    :class:`BenchError` unless it exits 0."""
    started = time.perf_counter()
    result = pane.send(*args, timeout=SEND_TIMEOUT)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise BenchError(
            f"tmux-send {' '.join(args)} exited {result.returncode}: "
            + result.stderr.decode("utf-8", "replace").strip()
        )
    return elapsed, result.stdout


# --- 1. latency ------------------------------------------------------------------------


def latency(state: ShellState, cfg: Config) -> Outcome:
    """Wall time of ``tmux-send -- true`` against ``python -c 'import click'`` (the same
    interpreter) and against the pane's own send-keys + wait-for round trip."""
    pane = state.pane
    steps: dict[str, Step] = {
        "send": lambda: timed_send(pane, "--", "true")[0],
        "click": lambda: timed_run(IMPORT_CLICK, pane.env),
        "pane": lambda: pane.round_trip("true"),
    }
    s = interleaved(pane, steps, cfg.runs)
    shell = pane.shell
    send = Metric("latency", shell, "tmux-send -- true", "ms", to_ms(s["send"])).at_most(45)
    click = Metric("latency", shell, "python -c 'import click'", "ms", to_ms(s["click"]))
    own = Metric("latency", shell, "pane round trip (send-keys + wait-for)", "ms", to_ms(s["pane"]))
    state.latency_s = send.median / 1000.0
    over_pane = Metric(
        "latency",
        shell,
        "tmux-send minus pane round trip",
        "ms",
        [send.median - own.median],
        derived=True,
    )
    return [
        send,
        click,
        own,
        # issue 26 (the command contract's own was 1.5 x)
        ratio("latency", shell, "tmux-send / import click", send, click).at_most(1.1),
        ratio("latency", shell, "tmux-send / pane round trip", send, own),
        over_pane,
    ]


# --- 2. throughput ---------------------------------------------------------------------


def seq_md5(lines: int) -> str:
    """md5 of ``seq 1 LINES`` run locally."""
    out = subprocess.run(
        ["seq", "1", str(lines)], capture_output=True, check=True, timeout=60
    ).stdout
    return hashlib.md5(out).hexdigest()


# The line count the throughput targets are set for; a quick run's 1e4 lines measure
# mostly start-up, so its ratios are shown without a target.
TARGET_LINES = 1_000_000


def throughput(state: ShellState, cfg: Config) -> Outcome:
    """``seq 1 N`` through tmux-send (md5 of its stdout checked) against the same command
    typed straight into the pane and awaited with wait-for (tmux's own rendering)."""
    pane = state.pane
    lines = cfg.throughput_lines
    command = f"seq 1 {lines}"
    label = f"seq 1 {short(lines)}"
    expected = seq_md5(lines)
    matches: list[bool] = []

    def send() -> float:
        elapsed, out = timed_send(pane, "--", command)
        matches.append(hashlib.md5(out).hexdigest() == expected)
        return elapsed

    steps: dict[str, Step] = {"send": send, "pane": lambda: pane.round_trip(command)}
    s = interleaved(pane, steps, cfg.runs)
    shell = pane.shell
    via_send = Metric("throughput", shell, f"tmux-send -- {label}", "ms", to_ms(s["send"]))
    own = Metric("throughput", shell, f"{label} in the pane", "ms", to_ms(s["pane"]))
    rate = Metric(
        "throughput",
        shell,
        "tmux-send lines per second",
        "lines/s",
        [lines / (via_send.median / 1000.0)],
        derived=True,
    )
    through = ratio("throughput", shell, "tmux-send / pane", via_send, own)
    if lines >= TARGET_LINES:
        through.at_most(1.3)
    return [
        via_send,
        own,
        through,
        count_ok("throughput", shell, "stdout md5 == local seq md5", matches[1:]),
        rate,
    ]


# --- 3. memory -------------------------------------------------------------------------


MAXRSS = Path(__file__).with_name("maxrss.py")
TRUE = shutil.which("true") or "/bin/true"


def peak_rss_mib(
    argv: Sequence[str], env: Mapping[str, str], timeout: float = SEND_TIMEOUT
) -> float:
    """Peak resident set size of the process ``argv`` (and of the children it waited
    for), in MiB: ``os.wait4``'s ru_maxrss (KiB on Linux), taken by the small launcher
    ``maxrss.py`` so that the benchmark's own RSS does not leak into the figure (see
    there). stdout goes to /dev/null. Raises :class:`BenchError` unless ``argv`` exits 0
    within ``timeout`` seconds."""
    launcher = [sys.executable, "-S", str(MAXRSS), *argv]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            launcher,
            env=dict(env),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=err.fileno(),
            start_new_session=True,  # its own process group, killed as one below
        )
        try:
            out, _ = proc.communicate(timeout=timeout)
        except BaseException as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if isinstance(exc, subprocess.TimeoutExpired):
                raise BenchError(f"{argv[-1]!r} took more than {timeout:g} s") from None
            raise
        err.seek(0)
        message = err.read().decode("utf-8", "replace").strip()
    fields = out.split()
    if proc.returncode != 0 or len(fields) != 2 or int(fields[1]) != 0:
        raise BenchError(f"{' '.join(argv)} failed ({out.decode().strip()}): {message}")
    return int(fields[0]) / 1024.0


def memory(state: ShellState, cfg: Config) -> Outcome:
    """Peak RSS of tmux-send for ``seq 1 N`` at each size, plus the RSS of
    ``python -c 'import click'`` (where any click program starts) and of ``true`` (the
    floor the launcher adds to every figure)."""
    pane = state.pane
    rss: dict[str, list[float]] = {}
    argvs = {short(n): pane.send_argv(["--", f"seq 1 {n}"]) for n in cfg.memory_lines}
    argvs["click"] = list(IMPORT_CLICK)
    argvs["floor"] = [TRUE]
    names = list(argvs)
    pane.wait_for_prompt()
    peak_rss_mib(argvs[names[0]], pane.env)  # warm-up: compiles and caches bytecode if needed
    for run in range(cfg.memory_runs):
        shift = run % len(names)
        for name in names[shift:] + names[:shift]:
            pane.wait_for_prompt()
            rss.setdefault(name, []).append(peak_rss_mib(argvs[name], pane.env))
    shell = pane.shell
    by_size = [
        Metric("memory", shell, f"tmux-send peak RSS, seq 1 {short(n)}", "MiB", rss[short(n)])
        for n in cfg.memory_lines
    ]
    smallest, largest = by_size[0], by_size[-1]
    largest.at_most(40)
    flat = ratio(
        "memory",
        shell,
        f"RSS at {short(cfg.memory_lines[-1])} / at {short(cfg.memory_lines[0])} lines",
        largest,
        smallest,
    )
    click = Metric("memory", shell, "python -c 'import click' peak RSS", "MiB", rss["click"])
    floor = Metric("memory", shell, "launcher floor (true) peak RSS", "MiB", rss["floor"])
    return [*by_size, flat.at_most(1.2), click, floor]


# --- 4. interrupt ----------------------------------------------------------------------

_INTERRUPT_CASES = (
    # (label, command, target in seconds after the timeout)
    ("Ctrl-C works: sleep 100", "sleep 100", 0.3),
    ("only SIGQUIT works: trap '' INT", "bash -c \"trap '' INT; sleep 100\"", 3.3),
)


def interrupt(state: ShellState, cfg: Config) -> Outcome:
    """``tmux-send --timeout 0.5`` on a command that never prints: seconds from the idle
    timeout firing to tmux-send's exit, taken as wall time minus 0.5 s (so it includes
    tmux-send's start-up); also checks the exit status is 124."""
    pane = state.pane
    cases = _INTERRUPT_CASES[: cfg.interrupt_cases]
    after: dict[str, list[float]] = {label: [] for label, _, _ in cases}
    status_ok: dict[str, list[bool]] = {label: [] for label, _, _ in cases}
    for run in range(cfg.interrupt_runs):
        shift = run % len(cases)
        for label, command, _ in cases[shift:] + cases[:shift]:
            pane.wait_for_prompt()
            started = time.perf_counter()
            result = pane.send("--timeout", f"{INTERRUPT_IDLE:g}", "--", command, timeout=30)
            after[label].append(time.perf_counter() - started - INTERRUPT_IDLE)
            status_ok[label].append(result.returncode == 124)
    metrics: list[Metric] = []
    for label, _, target in cases:
        figure = f"exit after timeout, {label}"
        metrics.append(Metric("interrupt", pane.shell, figure, "s", after[label]).at_most(target))
        metrics.append(count_ok("interrupt", pane.shell, f"exit 124, {label}", status_ok[label]))
    return metrics


# --- 5. concurrency --------------------------------------------------------------------


def concurrent_calls(pane: Pane, calls: int) -> tuple[float, bool]:
    """Start ``calls`` x ``tmux-send -- echo N`` at once and wait for all: seconds of wall
    time, and whether every call printed exactly ``N`` and exited 0."""
    started = time.perf_counter()
    procs: list[subprocess.Popen[bytes]] = []
    with reaped(procs):
        for n in range(calls):
            procs.append(pane.start_send("--", f"echo {n}"))
        outputs = [proc.communicate(timeout=SEND_TIMEOUT) for proc in procs]
    elapsed = time.perf_counter() - started
    wrong = [
        f"call {n} (echo {n}): exit {proc.returncode}, stdout {out!r}, stderr {err[-500:]!r}"
        for n, ((out, err), proc) in enumerate(zip(outputs, procs, strict=True))
        if out != f"{n}\n".encode() or proc.returncode != 0
    ]
    for line in wrong:  # a miss of this kind is a bug to find: say what each call got
        print(f"concurrency ({pane.shell}): {line}", file=sys.stderr)
    return elapsed, not wrong


def concurrency(state: ShellState, cfg: Config) -> Outcome:
    """Many tmux-send calls at once: total time against that many times the single-call
    median from the latency measurement, and whether each got exactly its own output."""
    pane = state.pane
    single = state.latency_s
    if single is None:  # latency did not run for this shell: measure it here
        single = sorted(timed_send(pane, "--", "true")[0] for _ in range(3))[1]
    calls = cfg.concurrency_calls
    totals: list[float] = []
    exact: list[bool] = []
    pane.wait_for_prompt()
    concurrent_calls(pane, calls)  # warm-up
    for _ in range(cfg.runs):
        pane.wait_for_prompt()
        elapsed, ok = concurrent_calls(pane, calls)
        totals.append(elapsed)
        exact.append(ok)
    shell = pane.shell
    total = Metric("concurrency", shell, f"{calls} calls at once, total", "ms", to_ms(totals))
    serial = Metric(
        "concurrency",
        shell,
        f"{calls} x single-call median",
        "ms",
        [calls * single * 1000.0],
        derived=True,
    )
    return [
        total,
        serial,
        ratio("concurrency", shell, f"total / ({calls} x single)", total, serial).at_most(1.5),
        count_ok("concurrency", shell, f"all {calls} got exactly N, exit 0", exact),
    ]


# --- 6. streaming ----------------------------------------------------------------------


def stamp_command(lines: int, interval: float) -> str:
    """Shell code printing ``time.time()`` ``lines`` times, ``interval`` seconds apart
    (the benchmark's own Python, quoted the same way for bash, zsh and fish)."""
    code = (
        "import time; "
        f"[(print(time.time(), flush=True), time.sleep({interval})) for _ in range({lines})]"
    )
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


def arrival_delays(proc: subprocess.Popen[bytes], timeout: float) -> list[float]:
    """Read ``proc``'s stdout to its end; for each line (a ``time.time()`` stamp) the
    seconds between the stamp and the moment the line reached us."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    pending = b""
    delays: list[float] = []
    while True:
        ready, _, _ = select.select([fd], [], [], max(deadline - time.monotonic(), 0.0))
        if not ready:
            raise BenchError(f"streaming: no end of output after {timeout:g} s")
        data = os.read(fd, 65536)
        arrived = time.time()
        if not data:
            return delays
        pending += data
        *complete, pending = pending.split(b"\n")
        for line in complete:
            try:
                delays.append(arrived - float(line))
            except ValueError:
                raise BenchError(f"streaming: unexpected line {line!r}") from None


def streaming(state: ShellState, cfg: Config) -> Outcome:
    """Delay from a line being printed in the pane to it reaching tmux-send's stdout:
    per run the median and the largest delay over its lines."""
    pane = state.pane
    command = stamp_command(cfg.streaming_lines, cfg.streaming_interval)
    medians: list[float] = []
    maxima: list[float] = []
    complete: list[bool] = []
    for run in range(cfg.runs + 1):  # run 0 is a warm-up
        pane.wait_for_prompt()
        proc = pane.start_send("--", command)
        with reaped([proc]):
            delays = arrival_delays(proc, SEND_TIMEOUT)
            _, err = proc.communicate(timeout=SEND_TIMEOUT)
        if proc.returncode != 0 or not delays:
            message = err.decode("utf-8", "replace").strip()
            raise BenchError(f"streaming: tmux-send exited {proc.returncode}: {message}")
        if run:
            medians.append(sorted(delays)[len(delays) // 2])
            maxima.append(max(delays))
            complete.append(len(delays) == cfg.streaming_lines)
    shell = pane.shell
    per_line = f"{cfg.streaming_lines} lines, {cfg.streaming_interval * 1000:g} ms apart"
    return [
        Metric(
            "streaming", shell, f"per-line delay, median of {per_line}", "ms", to_ms(medians)
        ).at_most(50),
        Metric("streaming", shell, "per-line delay, largest in a run", "ms", to_ms(maxima)),
        count_ok("streaming", shell, "every line arrived", complete),
    ]


# --- 7. REPL ---------------------------------------------------------------------------


def repl(state: ShellState, cfg: Config) -> Outcome:
    """Wall time of ``tmux-send --repl python -- '1 + 1'`` (stdout checked to be ``2``) in
    a Python REPL tmux-send started, next to ``tmux-send -- true`` from measurement 1."""
    pane = state.pane
    pane.wait_for_prompt()
    timed_send(pane, "--timeout", "60", "--repl", "python", "--", f"{sys.executable} -q")
    samples: list[float] = []
    right: list[bool] = []
    try:
        for _ in range(cfg.runs + 1):  # the first is a warm-up
            elapsed, out = timed_send(pane, "--repl", "python", "--", "1 + 1")
            samples.append(elapsed)
            right.append(out == b"2\n")
    finally:
        pane.send("--close")
    shell = pane.shell
    name = "tmux-send --repl python -- '1 + 1'"
    evaluation = Metric("repl", shell, name, "ms", to_ms(samples[1:]))
    metrics = [evaluation, count_ok("repl", shell, "stdout is exactly 2", right[1:])]
    if state.latency_s:
        metrics.append(
            Metric(
                "repl", shell, "REPL evaluation / tmux-send -- true", "x",
                [evaluation.median / (state.latency_s * 1000.0)], derived=True,
            )
        )  # fmt: skip
    return metrics


# --- 8. files ----------------------------------------------------------------------------------


def file_text(size: int) -> bytes:
    """``size`` bytes of text in lines of 76 characters (base64 of random bytes), so that
    ``cat`` through a terminal gives them back unchanged."""
    text = base64.encodebytes(os.urandom(size))[: size - 1]
    return text + b"\n"


def files(state: ShellState, cfg: Config) -> Outcome:
    """``tmux-send --write`` and ``--read`` of one file against ``tmux-send -- cat FILE``
    of the same file, interleaved; every run's bytes are checked (the file after a write,
    stdout after a read or a cat), and the rates are in MB/s (10^6 bytes per second)."""
    pane = state.pane
    data = file_text(cfg.file_bytes)
    exact: dict[str, list[bool]] = {"write": [], "read": [], "cat": []}
    held = [data]  # what the file holds now: the last write's bytes
    with tempfile.TemporaryDirectory(prefix="tb-bench-files-") as work:
        path = Path(work) / "file.txt"
        path.write_bytes(data)

        def write() -> float:
            # every other run writes other bytes: the same bytes again are `unchanged`
            # (nothing written), measured apart in filekeep_measure.py
            other = data if len(exact["write"]) % 2 else data[:-1] + b"."
            started = time.perf_counter()
            result = pane.send("--no-backup", "--write", str(path), data=other)
            elapsed = time.perf_counter() - started
            if result.returncode != 0:
                raise BenchError(f"tmux-send --write exited {result.returncode}: {result.stderr!r}")
            exact["write"].append(path.read_bytes() == other)
            held[0] = other
            return elapsed

        def read(*args: str) -> Step:
            def step() -> float:
                elapsed, out = timed_send(pane, *args, str(path))
                exact["cat" if "cat" in args else "read"].append(out == held[0])
                return elapsed

            return step

        steps = {"write": write, "read": read("--read"), "cat": read("--", "cat")}
        s = interleaved(pane, steps, cfg.runs)
    metrics = files_metrics(pane.shell, len(data), s, exact)
    if cfg.large_file_bytes:
        metrics += large_file(pane, cfg.large_file_bytes, cfg.large_file_runs)
    return metrics


def large_file(pane: Pane, size: int, runs: int) -> list[Metric]:
    """The rate of ``--write`` and ``--read`` of a file of ``size`` random bytes, where
    the call's own cost counts little; the bytes are checked by SHA-256."""
    data = os.urandom(size)
    digest = hashlib.sha256(data).hexdigest()
    exact: list[bool] = []
    with tempfile.TemporaryDirectory(prefix="tb-bench-files-") as work:
        path = Path(work) / "large.bin"

        def write() -> float:
            started = time.perf_counter()
            result = pane.send("--max-time", "600", "--no-backup", "--write", str(path), data=data)
            elapsed = time.perf_counter() - started
            if result.returncode != 0:
                raise BenchError(f"tmux-send --write exited {result.returncode}: {result.stderr!r}")
            return elapsed

        def read() -> float:
            elapsed, out = timed_send(pane, "--max-time", "600", "--read", str(path))
            exact.append(hashlib.sha256(out).hexdigest() == digest)
            return elapsed

        s = interleaved(pane, {"write": write, "read": read}, runs)
    label = f"{size / 1e6:g} MB"
    metrics: list[Metric] = []
    for name in ("write", "read"):
        rates = [size / 1e6 / seconds for seconds in s[name]]
        metrics.append(Metric("files", pane.shell, f"--{name} of {label}", "MB/s", rates))
    return [*metrics, count_ok("files", pane.shell, f"{label} read: SHA-256 equal", exact[1:])]


def files_metrics(
    shell: str, size: int, s: dict[str, list[float]], exact: dict[str, list[bool]]
) -> list[Metric]:
    """The files measurement's figures from its samples (seconds) and checks."""
    label = f"{size / 1e6:g} MB"
    times = {
        "write": Metric("files", shell, f"tmux-send --write, {label}", "ms", to_ms(s["write"])),
        "read": Metric("files", shell, f"tmux-send --read, {label}", "ms", to_ms(s["read"])),
        "cat": Metric("files", shell, f"tmux-send -- cat FILE, {label}", "ms", to_ms(s["cat"])),
    }
    metrics = list(times.values())
    for name in ("write", "read"):
        metrics.append(
            ratio("files", shell, f"--{name} / cat", times[name], times["cat"]).at_most(3)
        )
    for name, metric in times.items():
        rate = size / 1e6 / (metric.median / 1000.0)
        metrics.append(Metric("files", shell, f"{name} MB/s", "MB/s", [rate], derived=True))
        # the warm-up run is not counted, as in the other measurements
        metrics.append(count_ok("files", shell, f"{name}: bytes exact", exact[name][1:]))
    return metrics


# --- 8. several panes ------------------------------------------------------------------

SECOND_PANE = "bench-two"  # the label of the pane the measurement splits off
PANE_COMMAND = "sleep 0.2"  # long enough that two calls overlap, short enough to repeat


def second_pane(pane: Pane) -> str:
    """Split a labelled pane off the bridge pane with the real ``tmux-bridge split``;
    its id, once a call there gets in. Raises :class:`BenchError` when it does not."""
    result = subprocess.run(
        [str(TMUX_BRIDGE), "split", "--json", "--label", SECOND_PANE],
        env=pane.env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=PROMPT_TIMEOUT, check=False,
    )  # fmt: skip
    if result.returncode != 0:
        raise BenchError(f"tmux-bridge split failed: {result.stderr.strip()}")
    pane_id = str(json.loads(result.stdout)["pane"])
    deadline = time.monotonic() + PROMPT_TIMEOUT
    while pane.send("-p", SECOND_PANE, "--", "true", timeout=SEND_TIMEOUT).returncode != 0:
        if time.monotonic() > deadline:
            raise BenchError("the split pane's shell did not come to its prompt")
        time.sleep(0.05)
    return pane_id


def both_panes(pane: Pane) -> float:
    """Seconds until ``PANE_COMMAND`` ended in the bridge pane and the second pane,
    started at once."""
    started = time.perf_counter()
    with reaped([
        pane.start_send("--", PANE_COMMAND),
        pane.start_send("-p", SECOND_PANE, "--", PANE_COMMAND),
    ]) as procs:  # fmt: skip
        for proc in procs:
            proc.communicate(timeout=SEND_TIMEOUT)
            if proc.returncode != 0:
                raise BenchError(f"a call in two panes exited {proc.returncode}")
    return time.perf_counter() - started


def panes(state: ShellState, cfg: Config) -> Outcome:
    """A call with ``-p LABEL`` against one without, and calls in two panes at once
    against one call."""
    pane = state.pane
    pane_id = second_pane(pane)
    try:
        steps: dict[str, Step] = {
            "plain": lambda: timed_send(pane, "--", "true")[0],
            "label": lambda: timed_send(pane, "-p", SECOND_PANE, "--", "true")[0],
            "one": lambda: timed_send(pane, "--", PANE_COMMAND)[0],
            "two": lambda: both_panes(pane),
        }
        s = interleaved(pane, steps, cfg.runs)
    finally:
        pane.tmux("kill-pane", "-t", pane_id, check=False)
    shell = pane.shell
    plain = Metric("panes", shell, "tmux-send -- true", "ms", to_ms(s["plain"]))
    label = Metric("panes", shell, f"tmux-send -p {SECOND_PANE} -- true", "ms", to_ms(s["label"]))
    one = Metric("panes", shell, f"one call: {PANE_COMMAND}", "ms", to_ms(s["one"]))
    two = Metric("panes", shell, "the same in two panes at once", "ms", to_ms(s["two"]))
    return [
        plain,
        label,
        ratio("panes", shell, "with -p LABEL / without", label, plain).at_most(1.1),
        one,
        two,
        ratio("panes", shell, "two panes at once / one call", two, one).at_most(1.3),
    ]


# --- 9. the HTTP API --------------------------------------------------------------------

SERVE_TOKEN = "bench-token-0123456789abcdef"
SERVE_CLIENTS = 20  # concurrent clients in the load step
SERVE_LOAD = 200  # requests they make in all


class HttpServer:
    """A ``tmux-bridge serve`` process on a free port of 127.0.0.1, for one pane's
    session, with a keep-alive client."""

    def __init__(self, pane: Pane) -> None:
        import httpx

        env = {**pane.env, "TMUX_BRIDGE_TOKEN": SERVE_TOKEN}
        self.proc = subprocess.Popen(
            [str(TMUX_BRIDGE), "serve", "--port", "0"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().decode()
        if "listening on http://" not in first:
            self.stop()
            raise BenchError(f"tmux-bridge serve did not start: {first!r}")
        self.url = first.split("listening on ", 1)[1].strip()
        headers = {"Authorization": f"Bearer {SERVE_TOKEN}"}
        self.client = httpx.Client(base_url=self.url, headers=headers, timeout=SEND_TIMEOUT)
        self.lean: http.client.HTTPConnection | None = None  # see lean_post

    def lean_post(self, fields: Mapping[str, object]) -> dict[str, object]:
        """One action on a keep-alive connection of the standard library's ``http.client``
        (one thread only): the timed requests use it, so that their figure is the
        server's and not the client library's (httpx alone adds about 1 ms per request
        on this machine)."""
        if self.lean is None:
            address = self.url.removeprefix("http://").rstrip("/")
            host, _, port = address.rpartition(":")
            self.lean = http.client.HTTPConnection(host, int(port), timeout=SEND_TIMEOUT)
        headers = {"Authorization": f"Bearer {SERVE_TOKEN}", "Content-Type": "application/json"}
        self.lean.request("POST", "/v1/tmux", body=json.dumps(dict(fields)), headers=headers)
        response = self.lean.getresponse()
        body = response.read()
        if response.status != 200:
            raise BenchError(f"{fields} answered {response.status}: {body!r}")
        reply: dict[str, object] = json.loads(body)
        return reply

    def post(self, fields: Mapping[str, object], client: object = None) -> dict[str, object]:
        """One action; its reply. Raises :class:`BenchError` unless it is 200."""
        import httpx

        http = client if isinstance(client, httpx.Client) else self.client
        response = http.post("/v1/tmux", json=dict(fields))
        if response.status_code != 200:
            raise BenchError(f"{fields} answered {response.status_code}: {response.text}")
        reply: dict[str, object] = response.json()
        return reply

    def rss_mib(self) -> float:
        """The server's resident set size now, in MiB (VmRSS)."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
        raise BenchError("no VmRSS for the server")

    def stop(self) -> int:
        """SIGTERM, then wait; the exit status."""
        if hasattr(self, "client"):
            self.client.close()
        lean = getattr(self, "lean", None)
        if lean is not None:
            lean.close()
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
        return self.proc.returncode


def _timed_post(server: HttpServer, fields: Mapping[str, object], check: str) -> float:
    """Seconds for one request on the lean keep-alive connection; ``check`` is the
    output the reply must carry (``None``-like empty: any)."""
    started = time.perf_counter()
    reply = server.lean_post(fields)
    elapsed = time.perf_counter() - started
    if check and reply.get("output") != check:
        raise BenchError(f"{fields} gave {reply.get('output')!r}, not {check!r}")
    return elapsed


def _load(server: HttpServer, session: str) -> tuple[float, list[float], bool]:
    """SERVE_LOAD requests from SERVE_CLIENTS clients at once, in turn ``run echo N``
    (serialized by the pane's lock, as calls to one pane are), ``capture_pane``,
    ``list_sessions`` and ``status``: seconds in all, each request's seconds, whether
    every reply was right."""
    from concurrent.futures import ThreadPoolExecutor

    import httpx

    def one(c: httpx.Client, n: int) -> bool:
        kind = n % 4
        if kind == 0:
            reply = c.post("/v1/tmux", json={"action": "run", "command": f"echo {n}"})
            return reply.status_code == 200 and reply.json()["output"] == f"{n}\n"
        if kind == 1:
            fields = {"action": "capture_pane", "session": session, "lines": 5}
            reply = c.post("/v1/tmux", json=fields)
            return reply.status_code == 200 and "$" in reply.json()["output"]
        if kind == 2:
            reply = c.post("/v1/tmux", json={"action": "list_sessions"})
            return reply.status_code == 200 and session in reply.json()["sessions"]
        reply = c.post("/v1/tmux", json={"action": "status", "session": session})
        return reply.status_code == 200 and reply.json()["metadata"]["running"] is True

    def client_work(client_index: int) -> list[tuple[float, bool]]:
        done = []
        headers = {"Authorization": f"Bearer {SERVE_TOKEN}"}
        with httpx.Client(base_url=server.url, headers=headers, timeout=SEND_TIMEOUT) as c:
            for k in range(SERVE_LOAD // SERVE_CLIENTS):
                started = time.perf_counter()
                right = one(c, client_index * 1000 + client_index + k)
                done.append((time.perf_counter() - started, right))
        return done

    started = time.perf_counter()
    with ThreadPoolExecutor(SERVE_CLIENTS) as pool:
        results = [r for part in pool.map(client_work, range(SERVE_CLIENTS)) for r in part]
    return time.perf_counter() - started, [t for t, _ in results], all(ok for _, ok in results)


def _percentile(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def serve(state: ShellState, cfg: Config) -> Outcome:
    """``tmux-bridge serve`` on the pane's tmux server: ``run`` of ``true`` over HTTP
    (keep-alive) against the pane's own round trip, ``capture_pane`` against one ``tmux
    capture-pane`` subprocess, 200 requests from 20 clients at once, and the server's
    RSS idle, after that load and after ``serve_requests`` more."""
    try:
        import httpx  # noqa: F401  (the test extra installs it)
    except ImportError:
        return Skip("httpx is not installed (pip install -e '.[test]')")
    pane = state.pane
    server = HttpServer(pane)
    try:
        server.post({"action": "list_sessions"})
        idle = server.rss_mib()
        run_true = {"action": "run", "command": "true"}
        capture = {"action": "capture_pane", "session": pane.session, "lines": 1}
        steps: dict[str, Step] = {
            "http": lambda: _timed_post(server, run_true, ""),
            "pane": lambda: pane.round_trip("true"),
            "capture_http": lambda: _timed_post(server, capture, ""),
            "capture_tmux": lambda: _timed_tmux(pane, "capture-pane", "-p", "-t", pane.target),
        }
        s = interleaved(pane, steps, cfg.runs)
        pane.wait_for_prompt()
        total, latencies, right = _load(server, pane.session)
        after_load = server.rss_mib()
        _many(server, pane.session, cfg.serve_requests)
        after_many = server.rss_mib()
    finally:
        status = server.stop()
    if status != 0:
        raise BenchError(f"tmux-bridge serve exited {status} on SIGTERM")
    return _serve_metrics(
        pane.shell, s, (total, latencies, right), (idle, after_load, after_many), cfg
    )


def _timed_tmux(pane: Pane, *args: str) -> float:
    started = time.perf_counter()
    pane.tmux(*args)
    return time.perf_counter() - started


def _many(server: HttpServer, session: str, count: int) -> None:
    """``count`` cheap requests (capture_pane, list_sessions, status) from 4 clients."""
    from concurrent.futures import ThreadPoolExecutor

    actions: list[dict[str, object]] = [
        {"action": "capture_pane", "session": session, "lines": 20},
        {"action": "list_sessions"},
        {"action": "status", "session": session},
    ]

    def work(offset: int) -> None:
        for i in range(offset, count, 4):
            server.post(actions[i % len(actions)])

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(work, range(4)))


def _serve_metrics(
    shell: str,
    s: dict[str, list[float]],
    load: tuple[float, list[float], bool],
    rss: tuple[float, float, float],
    cfg: Config,
) -> list[Metric]:
    total, latencies, right = load
    idle, after_load, after_many = rss
    http = Metric("serve", shell, "run true over HTTP (keep-alive)", "ms", to_ms(s["http"]))
    own = Metric("serve", shell, "pane round trip (send-keys + wait-for)", "ms", to_ms(s["pane"]))
    cap = Metric("serve", shell, "capture_pane over HTTP", "ms", to_ms(s["capture_http"]))
    tmux = Metric(
        "serve", shell, "one tmux capture-pane subprocess", "ms", to_ms(s["capture_tmux"])
    )
    load_name = f"{SERVE_LOAD} requests, {SERVE_CLIENTS} clients"
    rate = Metric(
        "serve",
        shell,
        f"{load_name}: requests per second",
        "req/s",
        [len(latencies) / total],
        derived=True,
    )
    p50 = Metric(
        "serve",
        shell,
        f"{load_name}: p50",
        "ms",
        [_percentile(latencies, 0.5) * 1000],
        derived=True,
    )
    p99 = Metric(
        "serve",
        shell,
        f"{load_name}: p99",
        "ms",
        [_percentile(latencies, 0.99) * 1000],
        derived=True,
    )
    rss_idle = Metric(  # the MCP SDK loads on the first /mcp request (issue 26)
        "serve", shell, "server RSS idle (no MCP client yet)", "MiB", [idle], derived=True
    ).at_most(45)
    rss_load = Metric(
        "serve", shell, f"server RSS after {SERVE_LOAD} requests", "MiB", [after_load], derived=True
    )
    rss_many = Metric(
        "serve",
        shell,
        f"server RSS after {cfg.serve_requests} more",
        "MiB",
        [after_many],
        derived=True,
    )
    return [
        http,
        own,
        # issue 26's target (the HTTP contract's first was 3 x)
        ratio("serve", shell, "run true over HTTP / pane round trip", http, own).at_most(1.3),
        cap,
        tmux,
        ratio("serve", shell, "capture_pane over HTTP / tmux capture-pane", cap, tmux).at_most(2),
        count_ok("serve", shell, f"{load_name}: all right", [right]),
        rate,
        p50,
        p99,
        rss_idle,
        rss_load,
        rss_many,
        ratio(
            "serve",
            shell,
            f"RSS after {cfg.serve_requests} more / after {SERVE_LOAD}",
            rss_many,
            rss_load,
        ).at_most(1.1),  # issue 26: flat after 10,000 requests
    ]


MEASUREMENTS: list[tuple[str, Callable[[ShellState, Config], Outcome]]] = [
    ("latency", latency),
    ("throughput", throughput),
    ("memory", memory),
    ("interrupt", interrupt),
    ("concurrency", concurrency),
    ("streaming", streaming),
    ("repl", repl),
    ("files", files),
    ("panes", panes),
    ("serve", serve),
]
