"""Pure text: cutting a REPL's echo and prompts out of what it printed, for REPLs that
are given their input as typed lines (nix, and a REPL without a preset)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .output import clean


def echo_prompt(ready: str) -> str:
    """The pattern of a REPL's prompt (``ready``, anchored at the line's end) as it
    starts a line that also holds the echo: for :func:`without_echo`."""
    return ready.rstrip("$").rstrip(" ?")


def without_echo(raw: bytes, echo_lines: tuple[str, ...], prompt: Callable[[str], Any]) -> bytes:
    """For REPLs given their input as typed lines (nix): drop the prompt-and-echo lines
    and the blank lines the REPL puts around each value. ``prompt`` matches the prompt
    at a line's start (the ``match`` of the compiled :func:`echo_prompt`)."""
    lines = clean(raw).decode("utf-8", "surrogateescape").split("\n")
    expected = [line.strip() for line in echo_lines if line.strip()]
    kept = []
    for line in lines:
        stripped = line.strip()
        match = prompt(line)
        if match and line[match.end() :].strip() in ("", *expected[:1]):
            if expected and line[match.end() :].strip() == expected[0]:
                expected.pop(0)
            continue
        if expected and stripped == expected[0] and line.startswith(" "):
            expected.pop(0)
            continue
        kept.append(line)
    if kept and kept[-1] in ('"', "/"):
        kept.pop()  # what shows of the end marker's value: a string's quote, a path's /
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return ("\n".join(kept) + "\n").encode("utf-8", "surrogateescape") if kept else b""


def prompt_after_echo(
    collected: list[bytes], typed: tuple[str, ...], prompt: Callable[[str], Any]
) -> Callable[[], bool]:
    """For a REPL without a preset: done once the echo of the last typed line has come,
    followed by output and a line in which ``prompt`` (the ``search`` of the REPL's
    compiled prompt) finds the prompt."""
    last = next((line.strip() for line in reversed(typed) if line.strip()), "")

    def done() -> bool:
        lines = clean(b"".join(collected)).decode("utf-8", "replace").split("\n")
        echoed = [i for i, line in enumerate(lines) if last and last in line]
        return bool(echoed) and echoed[-1] < len(lines) - 1 and bool(prompt(lines[-1]))

    return done


def after_echo(raw: bytes, typed: tuple[str, ...]) -> bytes:
    """The lines after the echo of the last typed line, without the final prompt line."""
    last = next((line.strip() for line in reversed(typed) if line.strip()), "")
    lines = clean(raw).decode("utf-8", "surrogateescape").split("\n")
    echoed = max((i for i, line in enumerate(lines) if last in line), default=-1)
    body = lines[echoed + 1 : -1]
    return ("\n".join(body) + "\n").encode("utf-8", "surrogateescape") if body else b""
