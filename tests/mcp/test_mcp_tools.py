"""The MCP tools through the SDK's in-memory client, on a real private tmux server: each
tool's result against the command line's ``--json`` document and what the shell itself
gives, the error cases, the caps, ``--readonly``, and the audit log's client name."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from mcp import Client

from tmux_bridge.audit.log import read

from ..support.mcp_client import ALL_TOOLS, READ_ONLY, bash, call, document, text, with_client
from ..support.pane import MakeBridge, TestPane, transcript


@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    """A started bash bridge at its prompt."""
    b = make_bridge("bash")
    b.start()
    yield b


def listed(bridge: TestPane, readonly: bool = False) -> dict[str, Any]:
    async def use(client: Client) -> dict[str, Any]:
        return {tool.name: tool for tool in (await client.list_tools()).tools}

    return with_client(bridge, use, readonly)


# --- the list of tools -------------------------------------------------------------------


def test_every_tool_is_listed_with_bounded_inputs_and_annotations(pane: TestPane) -> None:
    tools = listed(pane)
    assert list(tools) == ALL_TOOLS
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints.read_only_hint is (name in READ_ONLY), name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        assert "tmux-bridge" in tool.description, name  # what to tell the person
    run = tools["run"].input_schema["properties"]
    assert run["timeout"]["maximum"] == run["max_time"]["maximum"] == 3600
    assert run["timeout"]["exclusiveMinimum"] == 0
    assert run["command"]["maxLength"] == 128 * 1024
    assert tools["send_keys"].input_schema["properties"]["keys"]["maxItems"] == 200
    assert tools["run"].annotations.destructive_hint is True
    assert tools["start_repl"].annotations.destructive_hint is False


def _nullable_pairs(node: Any) -> list[Any]:
    """Every ``anyOf`` of one bare type and null in ``node``, nested ones included."""
    found = []
    if isinstance(node, dict):
        alternatives = node.get("anyOf")
        if (
            isinstance(alternatives, list)
            and {"type": "null"} in alternatives
            and all(isinstance(a, dict) and set(a) == {"type"} for a in alternatives)
        ):
            found.append(alternatives)
        for value in node.values():
            found += _nullable_pairs(value)
    elif isinstance(node, list):
        for value in node:
            found += _nullable_pairs(value)
    return found


def test_output_schemas_write_nullable_fields_as_a_type_list(pane: TestPane) -> None:
    """A field that may be null is ``"type": [X, "null"]``, not an ``anyOf`` of two
    schemas (the SDK's client checks every result against its schema: half the time),
    and the schema still tells a wrong type from null."""
    from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

    tools = listed(pane)
    for name, tool in tools.items():
        assert _nullable_pairs(tool.output_schema) == [], name
    schema = tools["run"].output_schema
    assert schema["properties"]["label"]["type"] == ["string", "null"]
    assert schema["$defs"]["FileDocument"]["properties"]["mode"]["type"] == ["string", "null"]
    result = document(call(pane, "run", {"command": "true"}))
    validator = Draft202012Validator(schema)
    assert list(validator.iter_errors(result)) == []
    assert list(validator.iter_errors({**result, "label": None})) == []
    assert [e.validator for e in validator.iter_errors({**result, "label": 5})] == ["type"]


def test_readonly_serves_only_the_tools_that_change_nothing(pane: TestPane) -> None:
    assert set(listed(pane, readonly=True)) == READ_ONLY
    result = call(pane, "run", {"command": "touch should-not-exist"}, readonly=True)
    assert result.is_error and "run" in text(result)
    assert read(str(pane.runtime), None) == []  # nothing ran, nothing was logged


# --- run -----------------------------------------------------------------------------------


def test_run_gives_the_document_tmux_send_json_prints(pane: TestPane) -> None:
    command = "echo out; echo err >&2; (exit 3)"
    expected = bash(command)
    result = call(pane, "run", {"command": command})
    got = document(result)
    assert not result.is_error
    assert (got["stdout"], got["stderr"]) == (expected.stdout, expected.stderr)
    assert got["exit_status"] == got["status"] == expected.returncode == 3
    assert json.loads(text(result)) == got
    pane.wait_for_prompt()
    cli = json.loads(pane.send("--json", "--", command).stdout)
    assert set(got) == set(cli)
    same = ("mode", "command", "exit_status", "stdout", "stderr", "shell", "pane", "target")
    assert {k: got[k] for k in same} == {k: cli[k] for k in same}


def test_run_keeps_the_shells_state_and_logs_the_clients_name(
    pane: TestPane, tmp_path: Path
) -> None:
    async def use(client: Client) -> list[dict[str, Any]]:
        first = await client.call_tool("run", {"command": f"cd {tmp_path} && export MARK=m1"})
        second = await client.call_tool("run", {"command": 'echo "$PWD $MARK"'})
        return [document(first), document(second)]

    first, second = with_client(pane, use)
    assert first["exit_status"] == 0
    assert second["stdout"] == f"{tmp_path} m1\n"
    entries = read(str(pane.runtime), None)
    assert [(e["client"], e["command"]) for e in entries] == [
        ("test-client", f"cd {tmp_path} && export MARK=m1"),
        ("test-client", 'echo "$PWD $MARK"'),
    ]


def test_the_clients_name_comes_from_the_initialize_handshake_too(pane: TestPane) -> None:
    async def use(client: Client) -> dict[str, Any]:
        return document(await client.call_tool("run", {"command": "true"}))

    assert with_client(pane, use, mode="legacy")["exit_status"] == 0
    assert [e["client"] for e in read(str(pane.runtime), None)] == ["test-client"]


def test_a_timeout_interrupts_and_says_so(pane: TestPane) -> None:
    got = document(call(pane, "run", {"command": "echo before; sleep 30", "max_time": 1.5}))
    assert (got["exit_status"], got["timed_out"], got["stdout"]) == (124, "overall", "before\n")
    assert got["signals_sent"][0] == "SIGINT"
    assert any("overall timeout" in note for note in got["notes"])


# --- caps ----------------------------------------------------------------------------------


def _size(got: dict[str, Any]) -> int:
    return len(json.dumps(got, ensure_ascii=False).encode())


def test_output_over_the_cap_keeps_head_and_tail_and_saves_the_whole(pane: TestPane) -> None:
    command = "seq 1 30000; seq 1 5000 >&2; (exit 7)"
    expected = bash(command)
    got = document(call(pane, "run", {"command": command, "max_output": 8192}))
    assert got["exit_status"] == expected.returncode == 7
    assert _size(got) <= 8192
    for name, whole, lines in (
        ("stdout", expected.stdout, 30000),
        ("stderr", expected.stderr, 5000),
    ):
        shown, path = got[name], got[name + "_file"]
        assert (got[name + "_bytes"], got[name + "_lines"]) == (len(whole), lines)
        assert got[name + "_truncated"] is True
        head, marker, rest = shown.partition("[tmux-bridge: ")
        assert marker and whole.startswith(head.removesuffix("\n")), name
        assert f" of {name} not shown (truncated); all of it is in {path}]\n" in rest
        assert whole.endswith(rest.split("]\n", 1)[1]), name
        assert Path(path).read_text() == whole
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert Path(path).parent == pane.runtime / "output"
        assert Path(path).name == f"{got['id']}.{name}"


def test_the_default_fits_claude_codes_inline_limit(pane: TestPane) -> None:
    small, large = bash("seq 1 3000").stdout, bash("seq 1 200000").stdout
    got = document(call(pane, "run", {"command": "seq 1 3000"}))
    assert got["stdout"] == small and got["stdout_file"] is None and not got["stdout_truncated"]
    result = call(pane, "run", {"command": "seq 1 200000"})
    got = document(result)
    # 76 KB with the old 64 KiB cap per stream: Claude Code moved it to a file
    assert _size(got) <= 32 * 1024 and len(text(result).encode()) <= 32 * 1024
    assert got["stdout_bytes"] == len(large) and got["stdout_truncated"]
    keys = list(got)  # a head-only preview sees the file before the text
    assert keys.index("stdout_file") < keys.index("stdout") < keys.index("stderr")
    cut = got["stdout"].index("[tmux-bridge: ")
    assert got["stdout"].index(got["stdout_file"], cut) < got["stdout"].index("\n200000\n")


def test_read_output_pages_through_a_saved_stream(pane: TestPane) -> None:
    got = document(call(pane, "run", {"command": "seq 1 50000"}))
    page = document(
        call(pane, "read_output", {"output": got["stdout_file"], "offset": 100, "limit": 5})
    )
    assert page["text"] == "101\n102\n103\n104\n105\n"
    assert (page["total_lines"], page["more"], page["next_offset"]) == (50000, True, 105)
    by_id = document(call(pane, "read_output", {"output": got["id"], "offset": 49998}))
    assert (by_id["text"], by_id["more"]) == ("49999\n50000\n", False)
    refused = call(pane, "read_output", {"output": "/etc/passwd"})
    assert refused.is_error and document(refused)["error_code"] == "invalid_request"
    gone = call(pane, "read_output", {"output": "0123456789.stderr"})
    assert gone.is_error and document(gone)["error_code"] == "no_saved_output"


def test_bounds_refuse_a_call_before_anything_is_typed(pane: TestPane) -> None:
    for arguments in (
        {"command": "echo no", "timeout": 0},
        {"command": "echo no", "max_time": 3601},
        {"command": ""},
        {"command": "echo no", "max_output": 10},
    ):
        result = call(pane, "run", arguments)
        assert result.is_error, arguments
    assert read(str(pane.runtime), None) == []


# --- REPLs ---------------------------------------------------------------------------------


def test_a_repl_is_started_evaluated_in_and_closed(pane: TestPane) -> None:
    async def use(client: Client) -> list[dict[str, Any]]:
        results = [
            await client.call_tool("start_repl", {"name": "python", "command": "python3 -q"}),
            await client.call_tool("evaluate", {"name": "python", "code": "x = 6\nprint(x * 7)"}),
            await client.call_tool("evaluate", {"name": "python", "code": "1/0"}),
            await client.call_tool("close_repl", {}),
            await client.call_tool("status", {}),
        ]
        return [document(result) for result in results]

    started, printed, failed, closed, status = with_client(pane, use)
    assert (started["mode"], started["exit_status"]) == ("repl_start", 0)
    assert (printed["stdout"], printed["exit_status"]) == ("42\n", 0)
    assert failed["exit_status"] == 1 and "ZeroDivisionError" in failed["stdout"]
    assert (closed["mode"], closed["exit_status"]) == ("repl_close", 0)
    assert status["repl"] is None and status["foreground"] is None


# --- keys, text and the screen -------------------------------------------------------------


def test_type_text_send_keys_and_read_screen(pane: TestPane) -> None:
    got = document(call(pane, "type_text", {"text": "cat", "enter": True}))
    assert got["mode"] == "type" and "$ cat" in got["screen"]
    pane.wait_for(lambda: pane.foreground() == "cat", "cat to run")
    typed = document(call(pane, "type_text", {"text": "hello-typed", "enter": True}))
    assert typed["screen"].count("hello-typed") == 2  # echoed by the terminal, then by cat
    screen = document(call(pane, "read_screen", {}))
    assert screen["screen"] == typed["screen"] and screen["mode"] == "screen"
    keys = document(call(pane, "send_keys", {"keys": ["C-d"]}))
    assert keys["mode"] == "keys"
    pane.wait_for_prompt()
    last = document(call(pane, "read_screen", {"lines": 2}))
    assert last["screen"].splitlines()[-1].rstrip() == "$"


# --- status, panes, info -------------------------------------------------------------------


def test_status_list_panes_and_pane_info(pane: TestPane) -> None:
    pane_id = pane.pane("#{pane_id}")
    status = document(call(pane, "status", {}))
    assert (status["running"], status["pane"], status["foreground"]) == (True, pane_id, None)
    panes = document(call(pane, "list_panes", {}))["panes"]
    assert [(p["pane"], p["bridge"]) for p in panes] == [(pane_id, True)]
    info = document(call(pane, "pane_info", {}))
    uname = bash("uname -s; uname -m")
    assert [info["info"]["os"], info["info"]["arch"]] == uname.stdout.split()
    assert info["exit_status"] == 0


def test_status_says_when_no_bridge_runs(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")  # not started
    status = call(b, "status", {})
    assert not status.is_error
    assert document(status) == {"session": b.session, "running": False}


# --- files ---------------------------------------------------------------------------------


def test_write_read_and_edit_a_file(pane: TestPane, tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("old line\n")
    wrote = document(call(pane, "write_file", {"path": str(path), "content": "héllo\nworld\n"}))
    assert wrote["file"]["size"] == len("héllo\nworld\n".encode())
    assert path.read_text() == "héllo\nworld\n"
    assert Path(wrote["file"]["backup"]).read_text() == "old line\n"
    got = document(call(pane, "read_file", {"path": str(path)}))
    assert (got["stdout"], got["file"]["sha256"]) == ("héllo\nworld\n", wrote["file"]["sha256"])
    edit = {"path": str(path), "old": "world", "new": "there", "backup": False}
    edited = document(call(pane, "edit_file", edit))
    assert "-world\n+there\n" in edited["stdout"]
    assert path.read_text() == "héllo\nthere\n"


def test_stat_backups_restore_lines_and_checks(pane: TestPane, tmp_path: Path) -> None:
    """The files' keeping through MCP, as the command line does it: stat without the
    content, a line edit guarded by the SHA-256 last seen, the backup listed and put
    back, and a JSON check by the host's validator."""
    import hashlib

    path = tmp_path / "k.txt"
    path.write_bytes(b"one\ntwo\n")
    facts = document(call(pane, "stat_file", {"path": str(path)}))["file"]
    assert (facts["sha256"], facts["md5"], facts["size"]) == (
        hashlib.sha256(b"one\ntwo\n").hexdigest(),
        hashlib.md5(b"one\ntwo\n").hexdigest(),
        8,
    )
    edit = {"path": str(path), "action": "replace", "line": 2, "text": "TWO"}
    edited = document(call(pane, "edit_lines", {**edit, "if_sha256": facts["sha256"]}))
    assert "-two\n+TWO\n" in edited["stdout"] and path.read_bytes() == b"one\nTWO\n"
    stale = call(pane, "edit_lines", {**edit, "text": "2", "if_sha256": facts["sha256"]})
    assert stale.is_error and stale.structured_content["error_code"] == "file_changed"
    listed = document(call(pane, "list_backups", {"path": str(path)}))["backups"]
    assert [entry["sha256"] for entry in listed] == [facts["sha256"]]
    restored = document(call(pane, "restore_file", {"path": str(path), "backup": listed[0]["id"]}))
    assert restored["file"]["status"] == "updated" and path.read_bytes() == b"one\ntwo\n"
    bad = document(call(pane, "check_content", {"content": '{"a": 1,}', "kind": "json"}))
    assert (bad["valid"], bad["validator"], bad["error"]["line"]) == (False, "python3", 1), bad
    good = document(call(pane, "check_content", {"content": "a: 1\n", "name": "x.yaml"}))
    assert (good["kind"], good["would_exit"]) == ("yaml", 0), good


# --- errors --------------------------------------------------------------------------------


class ErrorCase(NamedTuple):
    test_id: str
    tool: str
    arguments: dict[str, Any]
    code: str
    advice: str  # a phrase of what to do or ask the person


def _busy(pane: TestPane) -> None:
    pane.tmux("send-keys", "-t", pane.target, "read answer", "Enter")
    pane.wait_for(lambda: "read answer" in pane.screen(), "read to start")
    pane.wait_for(lambda: pane.send_text("--", "true")[0] == 125, "the shell to look busy")


ERRORS = [
    ErrorCase("no-repl", "evaluate", {"name": "python", "code": "1"}, "repl_not_open",
              "start_repl"),
    ErrorCase("bad-key", "send_keys", {"keys": ["NoSuchKey"]}, "invalid_request",
              "type_text"),
    ErrorCase("no-pane", "run", {"command": "true", "pane": "nolabel"}, "no_such_pane",
              "list_panes"),
    ErrorCase("no-file", "read_file", {"path": "/nonexistent/file"}, "file_not_found", ""),
]  # fmt: skip


@pytest.mark.parametrize("case", ERRORS, ids=[c.test_id for c in ERRORS])
def test_errors_are_tool_errors_with_the_error_code(pane: TestPane, case: ErrorCase) -> None:
    result = call(pane, case.tool, case.arguments)
    assert result.is_error
    assert document(result)["error_code"] == case.code
    assert text(result).endswith(f"(error_code: {case.code})")
    assert case.advice in text(result)


def test_no_bridge_tells_the_model_to_ask_the_person(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")  # not started
    result = call(b, "run", {"command": "true"})
    assert result.is_error and document(result)["error_code"] == "no_bridge"
    assert "`tmux-bridge`" in text(result) and "do not try to start it yourself" in text(result)
    assert (
        document(result)["exit_status"]
        == json.loads(b.send("--json", "--", "true").stdout)["exit_status"]
    )


def test_a_busy_pane_is_refused_with_what_to_do(pane: TestPane) -> None:
    _busy(pane)
    result = call(pane, "run", {"command": "echo no"})
    assert result.is_error and document(result)["error_code"] == "pane_busy"
    assert "read_screen" in text(result) and "ask the person" in text(result)
    pane.tmux("send-keys", "-t", pane.target, "x", "Enter")
    pane.wait_for_prompt()


def test_a_half_typed_line_is_refused_and_left_alone(pane: TestPane) -> None:
    for _ in range(2):  # two calls let tmux-send learn what the bare prompt looks like
        assert document(call(pane, "run", {"command": "true"}))["exit_status"] == 0
        pane.wait_for_prompt()
    pane.person_types("git sta")
    pane.wait_for(lambda: "$ git sta" in pane.screen(), "the typing to show")
    result = call(pane, "run", {"command": "echo no"})
    assert result.is_error and document(result)["error_code"] == "half_typed_line"
    assert "ask them to run or clear their line" in text(result)
    assert [line for line in pane.screen().splitlines() if line.strip()][-1] == "$ git sta"


def test_the_clients_name_shows_in_the_header_the_person_sees(pane: TestPane) -> None:
    """The header of a command, a REPL evaluation and a job names the MCP client
    (``clientInfo.name``), as ``TMUX_BRIDGE_AGENT`` names tmux-send's caller."""

    async def use(client: Client) -> None:
        assert document(await client.call_tool("run", {"command": "echo via-mcp"}))["stdout"]
        start = {"name": "python", "command": "python3 -q", "timeout": 30}
        assert document(await client.call_tool("start_repl", start))["exit_status"] == 0
        value = await client.call_tool("evaluate", {"name": "python", "code": "6*7"})
        assert document(value)["stdout"] == "42\n"
        await client.call_tool("close_repl", {})
        await client.call_tool("start_job", {"command": "echo via-mcp-job"})

    with_client(pane, use)
    headers = [
        "$ [tmux-send: test-client] echo via-mcp",
        "$ [tmux-send: test-client] python3 -q",
        ">>> [tmux-send: test-client] 6*7",
        "$ [tmux-send: test-client] echo via-mcp-job",
    ]
    pane.wait_for(lambda: all(h in transcript(pane) for h in headers), f"the headers {headers}")
