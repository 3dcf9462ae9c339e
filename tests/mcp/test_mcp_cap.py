"""The MCP output cap alone (pure, no tmux): the whole document under the cap whatever
the escapes, characters never split, the saved file before the text, base64 gone when the
text is cut; and the tool list of docs/mcp.md is the code's."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tmux_bridge.infra.saved import fit_document_within
from tmux_bridge.mcp.texts import tool_table

from ..support.mcp_client import ALL_TOOLS, READ_ONLY

MCP_PAGE = Path(__file__).resolve().parents[2] / "docs" / "mcp.md"


def _document(call_id: str, stdout: bytes, stderr: bytes = b"") -> dict[str, Any]:
    """A result document as to_document makes it (the fields a cut touches)."""
    document: dict[str, Any] = {"id": call_id, "mode": "command", "exit_status": 0}
    for name, data in (("stdout", stdout), ("stderr", stderr)):
        document[f"{name}_truncated"], document[f"{name}_file"] = False, None
        document[f"{name}_lines"], document[f"{name}_bytes"] = data.count(b"\n"), len(data)
    document["stdout"], document["stderr"] = stdout.decode(), stderr.decode()
    document["notes"] = []
    return document


def _size(document: dict[str, Any]) -> int:
    return len(json.dumps(document, ensure_ascii=False).encode())


def test_a_cut_never_splits_a_character(tmp_path: Path) -> None:
    data = ("é" * 30000).encode()  # two bytes each: a cut at an odd byte would split one
    document = _document("abc", data)
    fit_document_within(document, {"stdout": data}, 32 * 1024, str(tmp_path / "run"))
    head, _, rest = document["stdout"].partition("\n[tmux-bridge: ")  # on a line of its own
    tail = rest.split("]\n", 1)[1]
    assert set(head) == set(tail) == {"é"}  # no U+FFFD from a split character
    cut = int(rest.split("(", 1)[1].split(" ", 1)[0].replace(",", ""))
    assert len(head.encode()) + cut + len(tail.encode()) == len(data)
    assert Path(document["stdout_file"]).read_bytes() == data
    assert document["stdout_truncated"] is True and document["stdout_bytes"] == len(data)


@pytest.mark.parametrize("line", [b"x" * 79 + b"\n", b'\x01\x02\t"\\\n', "€😀\n".encode()])
def test_the_document_stays_under_the_cap_whatever_the_escapes(tmp_path: Path, line: bytes) -> None:
    # seq 1 200000 made a 76 KB result with the old 64 KiB cap per stream
    out, err = line * 20_000, line * 3_000
    document = _document("e1", out, err)
    fit_document_within(document, {"stdout": out, "stderr": err}, 32 * 1024, str(tmp_path / "r"))
    assert 30 * 1024 < _size(document) <= 32 * 1024
    for name, data in (("stdout", out), ("stderr", err)):
        assert Path(document[f"{name}_file"]).read_bytes() == data
    keys = list(document)  # the file comes before the text: a head-only preview shows it
    assert keys.index("stdout_file") < keys.index("stdout")
    text = document["stdout"]
    assert text.index("all of it is in " + document["stdout_file"]) < len(text) - 100


def test_a_small_stream_stays_whole_beside_a_large_one(tmp_path: Path) -> None:
    out, err = b"y\n" * 100_000, b"a warning\n"
    document = _document("s1", out, err)
    fit_document_within(document, {"stdout": out, "stderr": err}, 8 * 1024, str(tmp_path / "r"))
    assert document["stderr"] == "a warning\n" and document["stderr_file"] is None
    assert document["stdout_truncated"] and _size(document) <= 8 * 1024


def test_base64_goes_when_the_text_is_cut_and_stays_when_it_is_whole(tmp_path: Path) -> None:
    small = b"\xff" * 200
    whole = {**_document("a", b""), "stdout": "x", "stdout_b64": "kept"}
    fit_document_within(whole, {"stdout": small}, 4096, str(tmp_path / "run"))
    assert whole["stdout_b64"] == "kept" and whole["stdout_file"] is None
    data = b"\xff" * 20_000
    cut = {**_document("b", b""), "stdout": "x", "stdout_b64": "dropped"}
    fit_document_within(cut, {"stdout": data}, 4096, str(tmp_path / "run"))
    assert "stdout_b64" not in cut and Path(cut["stdout_file"]).read_bytes() == data


def test_the_mcp_page_lists_the_tools_the_code_serves() -> None:
    section = MCP_PAGE.read_text()
    rows = re.findall(r"^\| `(\w+)` \| (yes|) \|", section, re.M)
    assert [name for name, _ in rows] == ALL_TOOLS
    assert {name for name, mark in rows if mark} == READ_ONLY
    assert tool_table() in section  # the same rows, word for word
