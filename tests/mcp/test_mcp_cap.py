"""The output cap alone (pure, no tmux): characters are never split, base64 goes when
the text is cut, old saved streams are swept; and the tool list of docs/mcp.md is the code's."""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

from tmux_bridge.mcp.cap import cap_stream, save
from tmux_bridge.mcp.texts import tool_table

from ..support.mcp_client import ALL_TOOLS, READ_ONLY

MCP_PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def test_a_cut_never_splits_a_character(tmp_path: Path) -> None:
    data = ("é" * 3000).encode()  # two bytes each: a cut at an odd byte would split one
    document = {"id": "abc", "stdout": data.decode()}
    cap_stream(document, "stdout", data, 1025, str(tmp_path / "run"))
    head, _, rest = document["stdout"].partition("\n[tmux-bridge: ")
    tail = rest.split("]\n", 1)[1]
    assert set(head) == set(tail) == {"é"}  # no U+FFFD from a split character
    cut = int(rest.split(" ", 1)[0])
    assert len(head.encode()) + cut + len(tail.encode()) == len(data)
    assert Path(document["stdout_file"]).read_bytes() == data


def test_base64_goes_when_the_text_is_cut_and_stays_when_it_is_whole(tmp_path: Path) -> None:
    data = b"\xff" * 2000
    whole = {"id": "a", "stdout": "x", "stdout_b64": "kept"}
    cap_stream(whole, "stdout", data, 4096, str(tmp_path / "run"))
    assert whole == {"id": "a", "stdout": "x", "stdout_b64": "kept"}
    cut = {"id": "b", "stdout": "x", "stdout_b64": "dropped"}
    cap_stream(cut, "stdout", data, 1024, str(tmp_path / "run"))
    assert "stdout_b64" not in cut and Path(cut["stdout_file"]).read_bytes() == data


def test_saved_streams_older_than_a_day_are_swept(tmp_path: Path) -> None:
    runtime = str(tmp_path / "run")
    old = save(runtime, "old", "stdout", b"old")
    os.utime(old, (time.time() - 25 * 3600,) * 2)
    recent = save(runtime, "recent", "stdout", b"recent")
    os.utime(recent, (time.time() - 23 * 3600,) * 2)
    new = save(runtime, "new", "stderr", b"new")
    assert not os.path.exists(old) and os.path.exists(recent) and os.path.exists(new)
    assert stat.S_IMODE(os.stat(os.path.dirname(new)).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(new).st_mode) == 0o600


def test_the_mcp_page_lists_the_tools_the_code_serves() -> None:
    section = MCP_PAGE.read_text()
    rows = re.findall(r"^\| `(\w+)` \| (yes|) \|", section, re.M)
    assert [name for name, _ in rows] == ALL_TOOLS
    assert {name for name, mark in rows if mark} == READ_ONLY
    assert tool_table() in section  # the same rows, word for word
