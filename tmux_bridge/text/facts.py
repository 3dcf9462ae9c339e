"""Platform facts of a pane's shell: one quiet probe command, run in that shell.

The probe is a POSIX ``sh -c`` script run by the pane's own shell, so it reports the
machine the shell runs on (another host, once the shell is reached through ssh), not
this one. It prints ``key=value`` lines; :func:`parse` keeps the known keys.

Besides the OS it tells the tools an agent calls: the flavour of ``grep``, ``sed``,
``awk``, ``date``, ``stat``, ``find``, ``xargs`` and ``tar`` (``gnu``, ``bsd``,
``busybox``, ``mawk``; absent: none), the GNU variants also there (Homebrew's ``ggrep``,
``gsed``...) and the package manager. That part costs a few processes per tool, so it
runs once per host (``user@hostname``): the probe is given the hosts whose tools are
known and fresh, and skips it there (``tools_probed`` is then absent).
"""

from __future__ import annotations

from .shells import ShellKind, quote

# The tools' flavours: what --version (else --help) says first; the GNU variants of
# Homebrew and the BSDs; the first package manager found.
TOOLS = ("grep", "sed", "awk", "date", "stat", "find", "xargs", "tar")
GNU_VARIANTS = ("ggrep", "gsed", "gawk", "gdate", "gstat", "gfind", "gxargs", "gtar")
MANAGERS = ("apt-get", "dnf", "yum", "zypper", "pacman", "apk", "pkg", "brew", "port", "nix-env")
_TOOLS = (
    'fl() { v=$( ("$1" --version) </dev/null 2>&1 | head -n 1); '
    '[ "$1" != awk ] || v="$v $( (awk -W version) </dev/null 2>&1 | head -n 1)"; case $v in '
    '*BusyBox* | *"not GNU"*) echo busybox ;; *BSD* | *bsdtar*) echo bsd ;; '
    '*GNU* | *"Free Software"*) echo gnu ;; *mawk*) echo mawk ;; '
    '*) v=$( ("$1" --help) </dev/null 2>&1 | head -n 1); case $v in '
    "*BusyBox*) echo busybox ;; *) echo bsd ;; esac ;; esac; }; "
    f"for t in {' '.join(TOOLS)}; do command -v $t >/dev/null 2>&1 && "
    'printf "%s=%s\\n" $t "$(fl $t)"; done; '
    f"g=; for t in {' '.join(GNU_VARIANTS)}; do "
    'command -v $t >/dev/null 2>&1 && g="$g $t"; done; printf "gnu_tools=%s\\n" "${g# }"; '
    f"for m in {' '.join(MANAGERS)}; do if command -v $m >/dev/null 2>&1; then "
    'printf "package_manager=%s\\n" "${m%-get}"; break; fi; done; '
    "printf 'tools_probed=1\\n'"
)

# The probe's script; $1 is the pane shell's version, which only that shell knows; $2
# the hosts (user@hostname, space-separated) whose tools need no probe.
SCRIPT = (
    'printf "os=%s\\nkernel=%s\\narch=%s\\nhostname=%s\\n"'
    ' "$(uname -s)" "$(uname -r)" "$(uname -m)" "$(uname -n)"; '
    'printf "user=%s\\ncwd=%s\\nshell_version=%s\\n" "$(id -un)" "$(pwd)" "$1"; '
    "if [ -r /etc/os-release ]; then . /etc/os-release; "
    'printf "distro=%s\\ndistro_version=%s\\ndistro_name=%s\\n"'
    ' "${ID-}" "${VERSION_ID-}" "${PRETTY_NAME-}"; fi; '
    'case " $2 " in *" $(id -un)@$(uname -n) "*) ;; *) ' + _TOOLS + " ;; esac"
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
    *TOOLS,
    "gnu_tools",
    "package_manager",
)
TOOL_KEYS = (*TOOLS, "gnu_tools", "package_manager")


def probe_command(kind: ShellKind, known: str = "") -> str:
    """The probe as shell code for a shell of ``kind``: ``sh -c SCRIPT sh VERSION
    KNOWN`` (``known``: the hosts whose tools are not probed again)."""
    version = _VERSION[kind]
    return f'sh -c {quote(kind, SCRIPT)} sh "{version}" {quote(kind, known)}'


def parse(output: str, kind: str) -> dict[str, str | None]:
    """The facts in the probe's output (a missing one is ``None``), plus the shell."""
    facts: dict[str, str | None] = dict.fromkeys(KEYS)
    for line in output.splitlines():
        key, sep, value = line.partition("=")
        if sep and (key in facts or key == "tools_probed") and facts.get(key) is None:
            facts[key] = value or None
    facts["shell"] = kind
    return facts
