"""The syntax check of a dry run: a script parsed by a shell binary of this machine.

The script goes into a private file in the runtime directory (so the shell's complaint
names a file, shown as ``command``), checked with the binary's own no-execute flag
(:func:`~tmux_bridge.text.syntax.parse_argv`), its ``BASH_ENV``/``ENV`` left out.
"""

from __future__ import annotations

import os

from ..infra.runtime import remove_quietly, write_private_file
from ..results import new_call_id
from ..text.shells import ShellKind
from ..text.syntax import parse_argv, parse_complaint

# Seconds a syntax check may take (the shells need a few milliseconds).
PARSE_TIMEOUT = 10.0


def parse_check(
    kind: ShellKind, binary: str, script: bytes, runtime_dir: str
) -> tuple[bool | None, str | None]:
    """Whether ``binary`` (the pane's shell, a ``kind`` shell) parses ``script``, and its
    complaint when not (the file's name shown as ``command``). ``(None, reason)`` when
    the check itself could not be made."""
    import subprocess

    path = os.path.join(runtime_dir, f"check-{new_call_id()}.cmd")
    env = {k: v for k, v in os.environ.items() if k not in ("BASH_ENV", "ENV")}
    try:
        write_private_file(path, script)
        done = subprocess.run(
            parse_argv(kind, binary, path),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PARSE_TIMEOUT,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"the syntax check with {binary} could not be made: {exc}"
    finally:
        remove_quietly(path)
    if done.returncode == 0:
        return True, None
    return False, parse_complaint(binary, path, done.returncode, done.stderr)
