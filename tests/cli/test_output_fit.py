"""tmux-send's output that fits (--first, --last, --max-bytes, the TMUX_SEND_* defaults,
--output) against a real bridge pane: exact cuts, both streams, REPLs, the saved files,
live streaming of the head, paging. Expected text comes from running the same command
directly and from hand counts in the comments."""

from __future__ import annotations

import hashlib
import json
import os
import re
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..support.pane import MakeBridge, TestPane

CUT = re.compile(
    rb"\[tmux-send: ([\d,]+) lines? \(([\d,]+) bytes\) of (stdout|stderr) not shown "
    rb"\(truncated\); all of it is in (\S+)\]\n"
)


@pytest.fixture
def pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    """A started bash bridge at its prompt."""
    b = make_bridge("bash")
    b.start()
    yield b


def direct(command: str) -> subprocess.CompletedProcess[bytes]:
    """What bash itself prints for ``command``."""
    return subprocess.run(["bash", "-c", command], capture_output=True, timeout=30)


def seq(first: int, last: int) -> bytes:
    return b"".join(b"%d\n" % i for i in range(first, last + 1))


def saved(bridge: TestPane, path: bytes | str) -> bytes:
    """A saved stream's bytes, checked to be a private file in the output folder."""
    file = Path(os.fsdecode(path))
    assert file.parent == bridge.runtime / "output"
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    return file.read_bytes()


def test_first_and_last_cut_at_exact_lines(shared_bridge: TestPane) -> None:
    result = shared_bridge.send("--first", "10", "--last", "10", "--", "seq 1 200")
    whole = direct("seq 1 200").stdout
    assert result.returncode == 0, result.stderr
    found = CUT.search(result.stdout)
    assert found is not None, result.stdout
    # 1-9: 2 bytes each, 10-99: 3, 100-200: 4 (692); head 21, tail 40
    assert found.group(1, 2, 3) == (b"180", b"631", b"stdout")
    assert result.stdout == seq(1, 10) + found.group(0) + seq(191, 200)
    data = saved(shared_bridge, found.group(4))
    assert hashlib.sha256(data).hexdigest() == hashlib.sha256(whole).hexdigest()
    assert result.stderr == b""


def test_both_streams_are_cut_apart_each_with_its_file(pane: TestPane) -> None:
    command = "seq 1 1000; seq 1 300 >&2; (exit 3)"
    expected = direct(command)
    result = pane.send("--first", "2", "--last", "1", "--", command)
    assert result.returncode == 3
    out, err = CUT.search(result.stdout), CUT.search(result.stderr)
    assert out is not None and err is not None, (result.stdout, result.stderr)
    assert result.stdout == b"1\n2\n" + out.group(0) + b"1000\n"
    assert result.stderr == b"1\n2\n" + err.group(0) + b"300\n"
    assert (out.group(1), err.group(1)) == (b"997", b"297")
    assert saved(pane, out.group(4)) == expected.stdout
    assert saved(pane, err.group(4)) == expected.stderr
    assert out.group(4).endswith(b".stdout") and err.group(4).endswith(b".stderr")


def test_max_bytes_never_splits_a_character(pane: TestPane) -> None:
    command = "for i in $(seq 1 100); do printf 'é'; done"  # 200 bytes, no newline
    result = pane.send("--max-bytes", "11", "--", command)
    found = CUT.search(result.stdout)
    assert found is not None, result.stdout
    # head budget 5: two é (4 bytes); tail 11 - 4 = 7: three é (6 bytes); 190 cut
    assert result.stdout == "éé\n".encode() + found.group(0) + "ééé".encode()
    assert found.group(1, 2) == (b"0", b"190")
    assert saved(pane, found.group(4)) == direct(command).stdout


def test_nothing_is_cut_or_saved_when_it_fits(pane: TestPane) -> None:
    result = pane.send("--first", "3", "--last", "2", "--max-bytes", "10", "--", "seq 1 5")
    assert (result.returncode, result.stdout, result.stderr) == (0, seq(1, 5), b"")
    assert not (pane.runtime / "output").exists()


def test_json_counts_the_whole_streams(pane: TestPane) -> None:
    command = "seq 1 5000; echo warn >&2"
    expected = direct(command)
    result = pane.send("--json", "--last", "3", "--", command)
    got = json.loads(result.stdout)
    assert got["stdout_truncated"] is True and got["stderr_truncated"] is False
    assert (got["stdout_lines"], got["stdout_bytes"]) == (5000, len(expected.stdout))
    assert (got["stderr_lines"], got["stderr_bytes"], got["stderr_file"]) == (1, 5, None)
    assert got["stderr"] == "warn\n"
    assert got["stdout"].endswith(f"all of it is in {got['stdout_file']}]\n4998\n4999\n5000\n")
    assert saved(pane, got["stdout_file"]) == expected.stdout
    assert Path(got["stdout_file"]).name == f"{got['id']}.stdout"
    whole = json.loads(pane.send("--json", "--", "seq 1 3").stdout)
    assert (whole["stdout_truncated"], whole["stdout_file"], whole["stdout_lines"]) == (
        False, None, 3,
    )  # fmt: skip


def test_environment_defaults_and_flags_over_them(pane: TestPane) -> None:
    pane.env["TMUX_SEND_FIRST"] = "1"
    pane.env["TMUX_SEND_LAST"] = "1"
    result = pane.send("--", "seq 1 4")
    found = CUT.search(result.stdout)
    assert found is not None and result.stdout == b"1\n" + found.group(0) + b"4\n"
    assert pane.send("--first", "2", "--", "seq 1 4").stdout.startswith(b"1\n2\n[tmux-send")
    pane.env["TMUX_SEND_MAX_BYTES"] = "lots"
    refused = pane.send("--", "seq 1 4")
    assert refused.returncode == 2 and b"TMUX_SEND_MAX_BYTES must be a whole number" in (
        refused.stderr
    )


def test_the_head_streams_while_the_command_runs(pane: TestPane, tmp_path: Path) -> None:
    go = tmp_path / "go"
    command = f"seq 1 5; while [ ! -e {go} ]; do sleep 0.05; done; seq 6 100"
    proc = pane.start_send("--first", "3", "--last", "2", "--", command)
    try:
        assert [pane.read_line(proc) for _ in range(3)] == [b"1\n", b"2\n", b"3\n"]
        go.touch()
        rest, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    found = CUT.search(rest)
    assert found is not None and rest == found.group(0) + b"99\n100\n", (rest, err)
    assert found.group(1) == b"95"


def test_repl_output_is_cut_too(pane: TestPane) -> None:
    assert pane.send("--repl", "python", "--", "python3").returncode == 0
    result = pane.send(
        "--repl", "python", "--first", "2", "--last", "2", "--", "for i in range(50): print(i)\n"
    )
    found = CUT.search(result.stdout)
    assert found is not None, result.stdout
    assert result.stdout == b"0\n1\n" + found.group(0) + b"48\n49\n"
    assert saved(pane, found.group(4)) == seq(0, 49)


def test_output_pages_through_a_saved_stream(pane: TestPane) -> None:
    got = json.loads(pane.send("--json", "--max-bytes", "100", "--", "seq 1 1000").stdout)
    page = pane.send("--output", got["id"], "--offset", "10", "--limit", "3")
    assert (page.returncode, page.stdout) == (0, b"11\n12\n13\n")
    assert b"lines 11-13 of 1000" in page.stderr and b"--offset 13" in page.stderr
    last = json.loads(pane.send("--output", got["stdout_file"], "--offset", "998", "--json").stdout)
    assert (last["text"], last["more"], last["total_lines"]) == ("999\n1000\n", False, 1000)
    refused = pane.send("--output", "/etc/passwd")
    assert refused.returncode == 2 and b"not a saved output" in refused.stderr
    gone = pane.send("--output", "0123456789.stderr")
    assert gone.returncode == 125 and b"no saved output" in gone.stderr


def test_the_options_go_with_output_modes_only(pane: TestPane) -> None:
    assert pane.send("--screen", "--first", "3").returncode == 2
    assert pane.send("--offset", "3", "--", "true").returncode == 2


# --- the seed tool's behaviours (its own suite: tests/cli/test_seed_suite.py) ---------


def test_an_idle_timeout_says_timeout(pane: TestPane) -> None:
    result = pane.send("--timeout", "1", "--", "sleep 30")
    assert result.returncode == 124 and b"Timeout:" in result.stderr


def test_a_prompt_alone_means_the_repl_in_front(pane: TestPane) -> None:
    # with none open, COMMAND starts one named repl; it ends when the shell is back
    started = pane.send("--prompt", "^>>> ?$", "--", "python3")
    assert started.returncode == 0, started.stderr
    assert pane.send("--prompt", "^>>> ?$", "--", "6 * 7").stdout.endswith(b"42\n")
    assert pane.send("--repl", "repl", "--", "6 * 8").stdout.endswith(b"48\n")


def test_a_repl_started_with_its_prompt_is_used_by_its_name(pane: TestPane) -> None:
    assert pane.send("--repl", "mypy3", "--prompt", "^>>> ?$", "--", "python3").returncode == 0
    result = pane.send("--repl", "mypy3", "--", "6 * 9")
    assert result.returncode == 0 and result.stdout.endswith(b"54\n"), result.stderr
    assert pane.send("--close").returncode == 0
    gone = pane.send("--repl", "mypy3", "--", "1")
    assert gone.returncode == 125 and b"no REPL preset is called 'mypy3'" in gone.stderr
