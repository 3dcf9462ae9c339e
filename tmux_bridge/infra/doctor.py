"""``tmux-bridge doctor``: whether this machine has what tmux-bridge needs, and what to install.

Each check is a line: ``ok``, ``missing`` (tmux-bridge cannot work without it) or
``note`` (it works, with less). Nothing here changes the machine except creating the
runtime directory where it is missing (as any call would).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from importlib.util import MAGIC_NUMBER, cache_from_source, find_spec

from ..errors import RuntimeDirError
from ..tuples import NamedTuple
from . import runtime
from .process import CHOICES, proc
from .tmux import tmux_version

MIN_TMUX = (3, 2)
INSTALL_TMUX = (
    "install tmux 3.2 or later: `sudo apt install tmux` (Debian, Ubuntu), "
    "`brew install tmux` (macOS), `pkg install tmux` (FreeBSD), `pkg_add tmux` (OpenBSD)"
)
SHELLS = ("bash", "zsh", "fish", "dash", "sh")
# Where shells live beyond PATH: macOS's /bin/zsh, Homebrew (Apple silicon, Intel), pkg.
SHELL_DIRS = ("/bin", "/usr/bin", "/usr/local/bin", "/opt/homebrew/bin", "/opt/local/bin")


class Check(NamedTuple):
    name: str
    status: str  # ok, missing, note
    detail: str
    fix: str = ""

    def document(self) -> dict[str, str]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "fix": self.fix}


def parse_version(text: str) -> tuple[int, int] | None:
    """``tmux 3.3a`` -> (3, 3); ``tmux next-3.5`` -> (3, 5); ``None`` when no number."""
    found = re.search(r"(\d+)\.(\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def check_tmux(version: str | None) -> Check:
    if version is None:
        return Check("tmux", "missing", "tmux is not installed (not on PATH)", INSTALL_TMUX)
    number = parse_version(version)
    if number is None:
        return Check("tmux", "note", f"{version}: a build whose version is not a number", "")
    if number < MIN_TMUX:
        return Check("tmux", "missing", f"{version} is older than 3.2", INSTALL_TMUX)
    return Check("tmux", "ok", version)


def check_control_mode(version: str | None) -> list[Check]:
    """tmux before 3.7 crashes, every session with it, when a session is created, closed
    or renamed while a control-mode client is attaching (tmux GitHub issue 4980, fixed in
    3.7). ``serve`` and ``mcp`` attach such clients (the command channel, the lifecycle
    watch): a note, with what tmux-bridge does about it."""
    number = parse_version(version or "")
    if number is None or number < MIN_TMUX or number >= (3, 7):
        return []
    detail = (
        f"{version} can crash when a session is created or closed at the moment a "
        "control-mode client attaches; serve and mcp attach one or two, at their start "
        "and when the client's session goes away (a subscriber is answered only once "
        "attached)"
    )
    return [Check("control mode", "note", detail, "tmux 3.7 or later fixes it")]


def _find(name: str) -> str | None:
    path = os.environ.get("PATH", os.defpath).split(os.pathsep)
    for folder in [*path, *SHELL_DIRS]:
        candidate = os.path.join(folder, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def check_shells() -> list[Check]:
    found = {name: _find(name) for name in SHELLS}
    present = ", ".join(f"{n} ({p})" for n, p in found.items() if p)
    checks = [Check("shells", "ok" if present else "missing", present or "no shell found")]
    login = os.environ.get("SHELL", "")
    kind = os.path.basename(login).lstrip("-")
    if login and kind not in SHELLS and kind not in ("ash", "ksh", "mksh", "yash", "busybox"):
        checks.append(
            Check(
                "your shell",
                "note",
                f"$SHELL is {login}: tmux-send drives bash, zsh, fish and POSIX sh only",
                "run `chsh -s /bin/bash` (or zsh, fish), or start tmux-bridge from one",
            )
        )
    return checks


def check_runtime_dir() -> Check:
    path = runtime.runtime_dir()
    try:
        runtime.ensure_private_dir(path)
    except RuntimeDirError as exc:
        return Check("runtime dir", "missing", str(exc), "set TMUX_BRIDGE_DIR to a private path")
    if not os.access(path, os.W_OK):
        return Check("runtime dir", "missing", f"{path} is not writable", "fix its permissions")
    return Check("runtime dir", "ok", f"{path} (0700, yours)")


def check_processes() -> list[Check]:
    forced = os.environ.get("TMUX_BRIDGE_PROCESS", "")
    how = (
        "forced by TMUX_BRIDGE_PROCESS"
        if forced in CHOICES
        else "chosen: " + ("/proc is there" if proc.NAME == "linux" else "no /proc")
    )
    checks = [Check("process facts", "ok", f"{proc.NAME} ({how})")]
    if forced and forced not in CHOICES:
        checks.append(
            Check(
                "process facts",
                "note",
                f"TMUX_BRIDGE_PROCESS={forced} is neither linux nor portable: ignored",
                "unset it, or set linux or portable",
            )
        )
    if proc.NAME == "portable" and _find("ps") is None:
        checks.append(Check("ps", "missing", "ps is not installed", "install procps (ps)"))
    for limit in proc.limits():
        fix = "install lsof" if "lsof" in limit else ""
        checks.append(Check("cannot see", "note", limit, fix))
    return checks


def check_extras() -> list[Check]:
    checks = []
    extras = (("serve", "server", ("starlette", "uvicorn")), ("mcp", "mcp", ("mcp",)))
    for command, extra, modules in extras:
        absent = [m for m in modules if find_spec(m) is None]
        if absent:
            fix = f"pipx install 'tmux-bridge[{extra}]' (or pip install 'tmux-bridge[{extra}]')"
            detail = f"tmux-bridge {command} needs {', '.join(absent)}"
            checks.append(Check(f"{command} extra", "note", detail, fix))
        else:
            checks.append(Check(f"{command} extra", "ok", "installed"))
    return checks


def check_bytecode() -> Check:
    """Whether tmux_bridge's modules have bytecode, or Python may write it: without it
    every tmux-send compiles the modules it imports again (``tmux-send -- true`` here:
    175 ms of CPU against 50 ms). pip compiles what it installs; an editable install, a
    uv install (it does not compile by default) or a read-only one where
    ``PYTHONDONTWRITEBYTECODE`` is set has none."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = [
        os.path.join(folder, name)
        for folder, _dirs, names in os.walk(package)
        if "__pycache__" not in folder
        for name in names
        if name.endswith(".py")
    ]
    stale = [source for source in sources if not _compiled(source)]
    if not stale:
        return Check("bytecode", "ok", f"{len(sources)} modules compiled ({package})")
    caches = {os.path.dirname(cache_from_source(source)) for source in stale}
    writable = all(_writable(cache) for cache in caches)
    if writable and not sys.dont_write_bytecode:
        return Check("bytecode", "ok", f"{len(stale)} modules compile once, at their next start")
    why = "PYTHONDONTWRITEBYTECODE is set" if writable else "its folders are not writable"
    return Check(
        "bytecode",
        "note",
        f"{len(stale)} of {len(sources)} modules have no bytecode and {why}: every "
        "tmux-send compiles again those it imports (none compiled: about 3 x its CPU)",
        f"{shlex.quote(sys.executable)} -m compileall -q {shlex.quote(package)}",
    )


def _compiled(source: str) -> bool:
    """Whether ``source`` has bytecode Python will use: its cache file is this Python's,
    checked by hash, or stamped with the source's time and size as they are."""
    try:
        with open(cache_from_source(source), "rb") as cache:
            header = cache.read(16)
        stat = os.stat(source)
    except OSError:
        return False
    if len(header) < 16 or header[:4] != MAGIC_NUMBER:
        return False
    if int.from_bytes(header[4:8], "little") & 1:  # hash-based: checked or trusted
        return True
    stamp = int.from_bytes(header[8:12], "little"), int.from_bytes(header[12:16], "little")
    return stamp == (int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)


def _writable(folder: str) -> bool:
    """Whether a cache file could be written in ``folder`` (made if it is missing)."""
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return os.access(folder, os.W_OK | os.X_OK)


def checks() -> list[Check]:
    """Every check, in the order a person fixes them."""
    python = f"Python {sys.version.split()[0]}"
    version = tmux_version()
    return [
        Check("python", "ok", python),
        check_tmux(version),
        *check_control_mode(version),
        *check_shells(),
        check_runtime_dir(),
        *check_processes(),
        *check_extras(),
        check_bytecode(),
    ]
