"""Platform facts of a pane's shell: one quiet probe command, run in that shell.

The probe is a POSIX ``sh -c`` script run by the pane's own shell, so it reports the
machine the shell runs on (another host, once the shell is reached through ssh), not
this one. It prints ``key=value`` lines; :func:`parse` keeps the known keys.
"""

from __future__ import annotations

from .shells import ShellKind, quote

# The probe's script; $1 is the pane shell's version, which only that shell knows.
SCRIPT = (
    'printf "os=%s\\nkernel=%s\\narch=%s\\nhostname=%s\\n"'
    ' "$(uname -s)" "$(uname -r)" "$(uname -m)" "$(uname -n)"; '
    'printf "user=%s\\ncwd=%s\\nshell_version=%s\\n" "$(id -un)" "$(pwd)" "$1"; '
    "if [ -r /etc/os-release ]; then . /etc/os-release; "
    'printf "distro=%s\\ndistro_version=%s\\ndistro_name=%s\\n"'
    ' "${ID-}" "${VERSION_ID-}" "${PRETTY_NAME-}"; fi'
)

# How each shell names its own version (fish 3: $version).
_VERSION = {"bash": "$BASH_VERSION", "zsh": "$ZSH_VERSION", "fish": "$version", "posix": ""}

KEYS = (
    "os",
    "kernel",
    "arch",
    "hostname",
    "user",
    "cwd",
    "shell_version",
    "distro",
    "distro_version",
    "distro_name",
)


def probe_command(kind: ShellKind) -> str:
    """The probe as shell code for a shell of ``kind``: ``sh -c SCRIPT sh VERSION``."""
    version = _VERSION[kind]
    return f'sh -c {quote(kind, SCRIPT)} sh "{version}"'


def parse(output: str, kind: str) -> dict[str, str | None]:
    """The facts in the probe's output (a missing one is ``None``), plus the shell."""
    facts: dict[str, str | None] = dict.fromkeys(KEYS)
    for line in output.splitlines():
        key, sep, value = line.partition("=")
        if sep and key in facts and facts[key] is None:
            facts[key] = value or None
    facts["shell"] = kind
    return facts
