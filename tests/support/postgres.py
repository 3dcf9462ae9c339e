"""A real PostgreSQL server for the psql REPL tests, run as an unprivileged user."""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def _pg_bin(name: str) -> str | None:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return found[-1] if found else shutil.which(name)


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A PostgreSQL server on a private Unix socket; yields the socket directory."""
    initdb, pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
    if not initdb or not pg_ctl or not shutil.which("psql"):
        pytest.skip("PostgreSQL (initdb, pg_ctl, psql) is not installed")
    root = Path(tempfile.mkdtemp(prefix="tb-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        os.chown(root, 65534, 65534)
        as_user = ["runuser", "-u", "nobody", "--"]
    data, sock = root / "data", root / "sock"
    subprocess.run([*as_user, "mkdir", str(sock)], check=True)
    subprocess.run(
        [*as_user, initdb, "-D", str(data), "-U", "postgres", "--auth=trust"],
        check=True,
        capture_output=True,
    )
    subprocess.run(
        [*as_user, pg_ctl, "-D", str(data), "-l", str(root / "log"), "-w", "-o",
         f"-k {sock} -c listen_addresses=''", "start"],
        check=True,
        capture_output=True,
    )  # fmt: skip
    try:
        yield str(sock)
    finally:
        subprocess.run(
            [*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True
        )
        shutil.rmtree(root, ignore_errors=True)
