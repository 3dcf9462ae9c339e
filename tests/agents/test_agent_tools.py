"""For agents beside a person: --json, keys/type/screen, waiting for input, the audit
log, tmux-bridge status and log, the guide, and pagers."""

from __future__ import annotations

import base64
import json
import os
import re
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tmux_bridge.audit import log as audit

from ..support.pane import BIN, TestPane

FIELDS = {
    "id",
    "command",
    "stdout",
    "stderr",
    "exit_status",
    "timed_out",
    "signals_sent",
    "duration_s",
    "shell",
    "error",
}


def _json(bridge: TestPane, *args: str) -> tuple[int, dict[str, Any], bytes]:
    result = bridge.send("--json", *args)
    document = json.loads(result.stdout)
    assert isinstance(document, dict)
    return result.returncode, document, result.stderr


# --- --json --------------------------------------------------------------------------


def test_json_for_a_command(bridge: TestPane) -> None:
    code, doc, err = _json(bridge, "--", "echo out; echo err >&2; sh -c 'exit 3'")
    assert err == b""  # nothing but the JSON object
    assert set(doc) >= FIELDS
    assert (code, doc["exit_status"]) == (3, 3)
    assert (doc["stdout"], doc["stderr"]) == ("out\n", "err\n")
    assert doc["command"] == "echo out; echo err >&2; sh -c 'exit 3'"
    assert doc["timed_out"] is None and doc["signals_sent"] == [] and doc["error"] is None
    assert doc["shell"] == bridge.shell
    assert isinstance(doc["id"], str) and doc["duration_s"] >= 0


def test_json_for_a_timeout(bridge: TestPane) -> None:
    code, doc, _ = _json(bridge, "--timeout", "1.5", "--", "echo partial; sleep 30")
    assert code == doc["exit_status"] == 124
    assert doc["timed_out"] == "idle"
    assert doc["signals_sent"] == ["SIGINT"]
    assert doc["stdout"] == "partial\n"


def test_json_carries_bytes_that_are_not_utf8(bridge: TestPane, tmp_path: Path) -> None:
    data = b"ok \xff\xfe bytes\n"
    (tmp_path / "bin").write_bytes(data)
    _, doc, _ = _json(bridge, "--", f"cat {tmp_path / 'bin'}")
    assert base64.b64decode(doc["stdout_b64"]) == data
    assert doc["stdout"] == data.decode("utf-8", "replace")
    assert "stderr_b64" not in doc


def test_json_for_an_error(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    code, doc, err = _json(b, "--", "echo x")
    assert err == b""
    assert code == doc["exit_status"] == 125
    assert doc["error"].startswith("Error: No tmux-bridge session is running.")
    assert doc["stdout"] == ""


def test_json_for_repl_close_keys_and_screen(make_bridge: Callable[[str], TestPane]) -> None:
    b = make_bridge("bash")
    b.start()
    code, doc, _ = _json(b, "--repl", "python", "--", "python3 -q")
    assert code == 0 and doc["exit_status"] == 0
    code, doc, _ = _json(b, "--repl", "python", "--", "6 * 7")
    assert (code, doc["stdout"], doc["exit_status"]) == (0, "42\n", 0)
    code, doc, _ = _json(b, "--repl", "python", "--", "1 / 0")
    assert doc["exit_status"] == 1 and "ZeroDivisionError" in doc["stdout"]
    code, doc, _ = _json(b, "--close")
    assert code == 0 and doc["error"] is None
    assert any("Closed the python REPL" in note for note in doc["notes"])
    code, doc, _ = _json(b, "--keys", "--", "Enter")
    assert code == 0 and doc["stdout"].rstrip().endswith("$")
    code, doc, _ = _json(b, "--screen")
    assert code == 0 and "$" in doc["stdout"]


# --- keys, type, screen -----------------------------------------------------------------


def test_keys_into_a_pager(bridge: TestPane, tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text("".join(f"line {i}\n" for i in range(200)))
    bridge.tmux("send-keys", "-t", bridge.target, f"less {page}", "Enter")
    bridge.wait_for(lambda: bridge.pane("#{alternate_on}") == "1", "less to open")
    code, screen, _ = bridge.send_text("--keys", "--", "G")  # to the end
    assert code == 0
    assert "line 199" in screen
    code, screen, _ = bridge.send_text("--keys", "--", "q")
    assert code == 0
    bridge.wait_for(lambda: bridge.pane("#{alternate_on}") == "0", "less to quit")
    assert screen.rstrip().endswith("$")


def test_answering_a_prompt_of_a_running_call(bridge: TestPane) -> None:
    if bridge.shell == "fish":
        ask = "read -P 'Continue? ' answer"
    else:
        ask = "printf 'Continue? ' >&2; read answer"
    proc = bridge.start_send("--timeout", "1.5", "--", f'{ask}; echo "answer=$answer"')
    assert proc.stderr is not None
    # the first call says it waits; a second call answers the question
    assert b"waiting for input" in bridge.read_line_from(proc.stderr)
    code, _screen, _ = bridge.send_text("--type", "sure", "--enter")
    assert code == 0
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out == b"answer=sure\n"


def test_type_refuses_control_characters_unless_asked(bridge: TestPane) -> None:
    result = bridge.send("--type", "a\x03b")
    assert result.returncode == 2
    assert b"control characters" in result.stderr and b"--keys" in result.stderr


def test_type_is_literal(bridge: TestPane) -> None:
    code, _screen, _ = bridge.send_text("--type", "echo Enter C-c 'x;'", "--enter")
    assert code == 0
    bridge.wait_for(lambda: "Enter C-c x;" in bridge.screen(), "the typed command's output")


def test_screen_joins_wrapped_lines(bridge: TestPane) -> None:
    width = int(bridge.pane("#{pane_width}"))
    long_line = "w" * (width * 3 + 7)
    bridge.tmux("send-keys", "-t", bridge.target, f"echo {long_line}", "Enter")
    bridge.wait_for(lambda: long_line[:width] in bridge.screen(), "the long line")
    code, screen, _ = bridge.send_text("--screen")
    assert code == 0
    assert long_line in screen.split("\n")


def test_screen_lines_reaches_into_history(bridge: TestPane) -> None:
    assert bridge.send_text("--", "seq 1 300")[0] == 0
    code, screen, _ = bridge.send_text("--screen", "--lines", "250")
    assert code == 0
    assert "100" in screen.split("\n")
    code, visible, _ = bridge.send_text("--screen")
    assert "100" not in visible.split("\n")


# --- waiting for input ------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "printf 'Name? '; read name; echo \"hi $name\"",
        "python3 -c \"print('hi', input('Name? '))\"",
    ],
    ids=["read", "python-input"],
)
def test_waiting_for_input_pauses_the_idle_timeout(bridge: TestPane, command: str) -> None:
    if bridge.shell == "fish" and command.startswith("printf"):
        command = "read -P 'Name? ' name; echo \"hi $name\""
    proc = bridge.start_send("--timeout", "1.5", "--", command)
    assert proc.stderr is not None
    notice = bridge.read_line_from(proc.stderr)
    assert b"waiting for input in the bridge terminal" in notice, notice
    assert b"Name?" in notice
    # longer than the idle timeout: the call goes on waiting for the answer
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=2)
    bridge.tmux("send-keys", "-t", bridge.target, "-l", "Ada")
    bridge.tmux("send-keys", "-t", bridge.target, "Enter")
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.endswith(b"hi Ada\n")


def test_the_overall_timeout_still_ends_a_wait(bridge: TestPane) -> None:
    code, doc, _ = _json(bridge, "--timeout", "1.5", "--max-time", "3", "--", "read x")
    assert code == doc["exit_status"] == 124
    assert (doc["timed_out"], doc["waited_for_input"]) == ("overall", True)
    assert doc["duration_s"] >= 3
    notes = "\n".join(doc["notes"])
    assert "waiting for input" in notes and "overall timeout" in notes


def test_a_quiet_command_is_not_taken_for_a_wait(bridge: TestPane) -> None:
    code, _, err = bridge.send_text("--timeout", "1.5", "--", "sleep 30")
    assert code == 124
    assert "waiting for input" not in err


# --- the audit log ---------------------------------------------------------------------


def test_every_call_is_logged_privately(bridge: TestPane) -> None:
    bridge.send_text("--", "echo logged-command")
    bridge.send_text("--keys", "--", "C-l")
    log = bridge.runtime / audit.LOG_FILE
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    ends = [e for e in entries if e.get("event") != "start"]  # a start, then the end
    command = next(e for e in ends if e["command"] == "echo logged-command")
    assert command["mode"] == "command" and command["exit_status"] == 0
    assert command["stdout_bytes"] == len(b"logged-command\n")
    assert {"time", "id", "duration_s", "timed_out", "stderr_bytes"} <= set(command)
    assert any(e["mode"] == "keys" and e["command"] == "C-l" for e in entries)


def test_the_log_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit, "MAX_BYTES", 2000)
    for i in range(500):
        audit.record(str(tmp_path), {"command": f"echo {i}", "exit_status": 0})
    sizes = [p.stat().st_size for p in tmp_path.iterdir()]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["log.jsonl", "log.jsonl.1"]
    assert sum(sizes) < 3 * 2000
    assert audit.read(str(tmp_path), 1)[0]["command"] == "echo 499"


def test_tmux_bridge_log_shows_the_calls(bridge: TestPane) -> None:
    bridge.send_text("--", "echo shown-in-log")
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "log", "-n", "5"], env=bridge.env, capture_output=True, text=True
    )
    assert result.returncode == 0
    assert "shown-in-log" in result.stdout.splitlines()[-1]
    as_json = subprocess.run(
        [str(BIN / "tmux-bridge"), "log", "--json"], env=bridge.env, capture_output=True, text=True
    )
    assert json.loads(as_json.stdout.splitlines()[-1])["command"] == "echo shown-in-log"


# --- tmux-bridge status ----------------------------------------------------------------


def _status(b: TestPane) -> tuple[int, dict[str, Any]]:
    result = subprocess.run(
        [str(BIN / "tmux-bridge"), "status", "--json"], env=b.env, capture_output=True, text=True
    )
    return result.returncode, json.loads(result.stdout)


def test_status_in_each_state(make_bridge: Callable[[str], TestPane], tmp_path: Path) -> None:
    b = make_bridge("bash")
    code, info = _status(b)
    assert (code, info["running"]) == (1, False)
    b.start()
    assert b.send_text("--", f"cd {tmp_path}")[0] == 0
    code, info = _status(b)
    assert code == 0
    assert info["running"] and info["shell"] == "bash" and info["cwd"] == str(tmp_path)
    assert info["foreground"] is None and info["repl"] is None and info["in_flight"] is None
    go = tmp_path / "go"
    proc = b.start_send("--", f"echo started; sh -c 'while [ ! -e {go} ]; do sleep 0.02; done'")
    b.wait_for_call_start(proc)
    _, info = _status(b)
    assert info["foreground"] == "sh"
    assert info["in_flight"]["pid"] == proc.pid and "while" in info["in_flight"]["command"]
    go.touch()
    proc.communicate(timeout=30)
    assert b.send_text("--repl", "python", "--", "python3 -q")[0] == 0
    _, info = _status(b)
    assert info["repl"]["name"] == "python"
    human = subprocess.run(
        [str(BIN / "tmux-bridge"), "status"], env=b.env, capture_output=True, text=True
    )
    assert "repl       python" in human.stdout


# --- the guide and pagers --------------------------------------------------------------


def _guide() -> str:
    result = subprocess.run(
        [str(BIN / "tmux-send"), "--guide"], capture_output=True, text=True, timeout=30
    )
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout


def test_guide() -> None:
    guide = _guide()
    for words in ("tmux-bridge", "--timeout", "--keys", "--type", "--screen", "--repl", "125"):
        assert words in guide
    from tmux_bridge.mcp.texts import TOOL_NAMES

    tools = " ".join(guide.split("## As MCP tools", 1)[1].split())
    assert all(f" {name}," in tools or f" {name}." in tools for name in TOOL_NAMES)


def _guide_pagers() -> list[str]:
    """The pager variables the guide promises are `cat` unless the person set them."""
    text = " ".join(_guide().split())  # its lines joined
    found = re.search(
        r"Pagers do not wait for keys: ([A-Z_, ]+ and [A-Z_]+) are `cat` for the command "
        r"unless the person set them\.",
        text,
    )
    assert found, text
    return re.findall(r"[A-Z_]+", found[1])


def _command_env(bridge: TestPane) -> dict[str, str]:
    """The environment a command of tmux-send's sees."""
    code, out, err = bridge.send_text("--", "env")
    assert code == 0, err
    return dict(re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", out, re.MULTILINE))


def _as_the_person(bridge: TestPane, line: str) -> None:
    bridge.tmux("send-keys", "-t", bridge.target, "-l", line)
    bridge.tmux("send-keys", "-t", bridge.target, "Enter")
    bridge.wait_for(lambda: f"$ {line}\n$" in bridge.screen(), f"the person's {line!r}")


def test_the_guide_tells_how_pagers_are_set(bridge: TestPane) -> None:
    pagers = _guide_pagers()
    assert "PAGER" in pagers and len(pagers) > 1
    fish = bridge.shell == "fish"
    _as_the_person(bridge, ("set -e " if fish else "unset ") + " ".join(pagers))
    # every pager variable the person has not set is `cat`, and only those are
    env = _command_env(bridge)
    assert {name for name, value in env.items() if value == "cat"} == set(pagers), env
    # the ones the person set are left as they are
    kept = pagers[::2]
    for name in kept:
        _as_the_person(bridge, f"set -gx {name} less" if fish else f"export {name}=less")
    env = _command_env(bridge)
    assert {name: env.get(name) for name in pagers} == {
        name: "less" if name in kept else "cat" for name in pagers
    }


def test_pagers_are_off_for_the_command_and_left_alone_for_the_person(bridge: TestPane) -> None:
    probe = "sh -c 'echo \"$GIT_PAGER|$MANPAGER|$SYSTEMD_PAGER|$PAGER\"'"
    assert bridge.send_text("--", probe) == (0, "cat|cat|cat|cat\n", "")
    bridge.tmux("send-keys", "-t", bridge.target, "-l", f"{probe}; echo person-done")
    bridge.tmux("send-keys", "-t", bridge.target, "Enter")
    bridge.wait_for(lambda: "\nperson-done" in bridge.screen(), "the person's own command")
    assert "|||\nperson-done" in bridge.screen()  # unset again for the person


def test_the_persons_pager_is_kept(bridge: TestPane) -> None:
    setup = "set -gx PAGER more" if bridge.shell == "fish" else "export PAGER=more"
    assert bridge.send_text("--", setup)[0] == 0
    assert bridge.send_text("--", "sh -c 'echo $PAGER'") == (0, "more\n", "")


def test_runtime_files_stay_private(bridge: TestPane) -> None:
    bridge.send_text("--", "true")
    paths = list(bridge.runtime.rglob("*"))
    assert any(path.is_dir() for path in paths)  # the pane's own directory
    for path in paths:
        mode = 0o700 if path.is_dir() else 0o600
        assert stat.S_IMODE(path.lstat().st_mode) == mode, path
        assert path.lstat().st_uid == os.geteuid()
