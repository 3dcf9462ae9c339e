"""A real ``tmux-bridge serve`` process for the tests, and ways to talk to it.

The server is started as a subprocess (so SIGTERM and Ctrl-C are real) on a free port
of 127.0.0.1 (``--port 0``; the port is read from its banner) or on a Unix socket, with
the environment of a private tmux server from :class:`~tests.support.pane.TestPane`.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from .pane import BIN, WAIT, read_line

TOKEN = "test-token-0123456789-abcdefghij"  # what TMUX_BRIDGE_TOKEN is set to
START_TIMEOUT = 30.0  # seconds for the banner to appear on a loaded machine


class Server:
    """One ``tmux-bridge serve`` process."""

    def __init__(
        self, proc: subprocess.Popen[bytes], base_url: str, uds: str | None, banner: list[str]
    ) -> None:
        self.proc = proc
        self.base_url = base_url
        self.uds = uds
        self.banner = banner

    @classmethod
    def start(
        cls,
        env: Mapping[str, str],
        *args: str,
        token: str | None = TOKEN,
        uds: str | None = None,
        wrap: Sequence[str] = (),
    ) -> Server:
        """Start the server and wait for its banner; fail the test if it exits first.
        ``wrap`` goes before the command (``prlimit --as=N --``, say)."""
        env = dict(env)
        env.pop("TMUX_BRIDGE_TOKEN", None)
        if token is not None:
            env["TMUX_BRIDGE_TOKEN"] = token
        where = ["--uds", uds] if uds else ["--port", "0"]
        proc = subprocess.Popen(
            [*wrap, str(BIN / "tmux-bridge"), "serve", *where, *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        banner = []
        assert proc.stdout is not None
        while True:
            line = read_line(proc.stdout, START_TIMEOUT, lambda: _stderr_of(proc)).decode()
            banner.append(line)
            found = re.search(r"listening on (\S+)", line)
            if found:
                break
        url = "http://localhost" if uds else found.group(1)
        url = url.replace("http://", "https://") if "https" in found.group(1) else url
        # the rest of the banner, so the pipe never fills
        for _ in range(4):
            banner.append(read_line(proc.stdout, START_TIMEOUT, lambda: _stderr_of(proc)).decode())
        return cls(proc, url, uds, banner)

    def client(self, token: str | None = TOKEN, **kwargs: Any) -> httpx.Client:
        """A keep-alive client (with the token, unless None)."""
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        headers.update(kwargs.pop("headers", {}))
        transport = httpx.HTTPTransport(uds=self.uds) if self.uds else None
        return httpx.Client(
            base_url=self.base_url,
            headers=headers,
            transport=transport,
            timeout=kwargs.pop("timeout", 60.0),
            **kwargs,
        )

    def post(self, token: str | None = TOKEN, **fields: Any) -> httpx.Response:
        """One request ``{"action": ..., **fields}`` on a new connection."""
        with self.client(token) as client:
            return client.post("/v1/tmux", json=fields)

    def result(self, **fields: Any) -> dict[str, Any]:
        """The ``result`` of one action that must answer 200 (the contract's metadata)."""
        response = self.post(**fields)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()["metadata"]["result"]
        return result

    def stop(self, signum: int = signal.SIGTERM, timeout: float = 30.0) -> tuple[int, str, str]:
        """Send ``signum``, wait for the exit; exit status, the rest of stdout, stderr."""
        self.proc.send_signal(signum)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"the server did not stop within {timeout} s: {err.decode()}")
        return self.proc.returncode, out.decode(), err.decode()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.communicate(timeout=10)


def _stderr_of(proc: subprocess.Popen[bytes]) -> str:
    if proc.poll() is None:
        return "the server is still running"
    assert proc.stderr is not None
    return f"the server exited {proc.returncode}: {proc.stderr.read().decode()}"


@contextlib.contextmanager
def running(env: Mapping[str, str], *args: str, **kwargs: Any) -> Iterator[Server]:
    """A server for the ``with`` block, killed after it if still running."""
    server = Server.start(env, *args, **kwargs)
    try:
        yield server
    finally:
        server.kill()


def wait_until(predicate: Any, what: str, timeout: float = WAIT) -> None:
    """Poll ``predicate`` every 20 ms until true; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def processes_running(argv: list[str]) -> list[int]:
    """The pids of processes whose command line is exactly ``argv``."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if Path(f"/proc/{entry}/cmdline").read_bytes() == wanted:
                    found.append(int(entry))
    return found
