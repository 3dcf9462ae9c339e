"""The file actions over HTTP on a real pane: write, read, stat, line edits guarded by the
SHA-256 last seen, backups listed and put back, a replace edit, a check by kind; the
refusals as the command line gives them (``file_changed``, an unknown kind)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from ..support.pane import TestPane
from ..support.serve import Server

pytestmark = pytest.mark.tmux


def test_files_over_http(server: Server, pane: TestPane, tmp_path: Path) -> None:
    pane.wait_for_prompt()
    path = tmp_path / "k.txt"
    wrote = server.result(action="write_file", path=str(path), content="one\ntwo\n")
    digest = hashlib.sha256(b"one\ntwo\n").hexdigest()
    assert (wrote["file"]["status"], wrote["file"]["sha256"]) == ("created", digest)
    assert path.read_bytes() == b"one\ntwo\n"
    read = server.post(action="read_file", path=str(path)).json()
    assert (read["output"], read["metadata"]["result"]["file"]["sha256"]) == ("one\ntwo\n", digest)
    facts = server.result(action="stat_file", path=str(path))["file"]
    assert facts["md5"] == hashlib.md5(b"one\ntwo\n").hexdigest()
    edit: dict[str, Any] = {"action": "edit_lines", "path": str(path), "edit": "replace", "line": 2}
    edited = server.result(**edit, new="TWO", if_sha256=digest)
    assert "-two\n+TWO\n" in edited["stdout"] and path.read_bytes() == b"one\nTWO\n"
    stale = server.post(**edit, new="2", if_sha256=digest)
    assert stale.status_code == 409 and stale.json()["metadata"]["error_code"] == "file_changed"
    assert stale.json()["metadata"]["result"]["mode"] == "edit"
    kept = server.result(action="backups", path=str(path))["backups"]
    assert [entry["sha256"] for entry in kept] == [digest]
    back = server.result(action="restore_file", path=str(path), backup_id=kept[0]["id"])
    assert back["file"]["status"] == "updated" and path.read_bytes() == b"one\ntwo\n"
    replaced = server.result(action="edit_file", path=str(path), old="one", new="1")
    assert path.read_bytes() == b"1\ntwo\n", replaced
    checked = server.result(action="check_content", content='{"a": }', kind="json")
    assert (checked["valid"], checked["would_exit"], checked["error"]["line"]) == (False, 1, 1)
    wrong = server.post(action="check_content", content="x", kind="ini")
    assert wrong.status_code == 400, wrong.text
