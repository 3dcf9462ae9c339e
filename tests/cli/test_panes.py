"""Several panes: targets in every form, labels, new panes, and what runs where.

Which pane a command ran in is told by the command itself: tmux sets ``$TMUX_PANE`` in
every pane's environment, so ``echo $TMUX_PANE`` answers with the id of the pane whose
shell ran it, whatever tmux-send believes.
"""

from __future__ import annotations

import getpass
import json
import os
import platform
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..support.pane import MakeBridge, TestPane, dash_bridge


def _split(b: TestPane, *args: str) -> tuple[str, str]:
    """``tmux-bridge split ARGS --json``: the new pane's id and target."""
    result = b.bridge_cli("split", "--json", *args)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    return info["pane"], info["target"]


def _place(b: TestPane, pane_id: str) -> str:
    """The pane's SESSION:WINDOW.PANE, as tmux itself reports it."""
    return b.tmux(
        "display-message", "-p", "-t", pane_id, "#{session_name}:#{window_index}.#{pane_index}"
    ).strip()


def _ran_in(b: TestPane, *target: str) -> str:
    """The pane id whose shell ran ``echo $TMUX_PANE`` sent with ``target`` options."""
    code, out, err = b.send_when_ready(*target, "--", "echo $TMUX_PANE")
    assert code == 0, err
    return out.strip()


def _panes(b: TestPane, *args: str) -> dict[str, dict[str, Any]]:
    result = b.bridge_cli("panes", "--json", *args)
    assert result.returncode == 0, result.stderr
    return {entry["pane"]: entry for entry in json.loads(result.stdout)}


def test_every_form_of_target_reaches_its_pane(bridge: TestPane) -> None:
    main = bridge.pane("#{pane_id}")
    other, other_target = _split(bridge, "--label", "other")
    assert other_target == _place(bridge, other)
    window_pane = other_target.split(":", 1)[1]
    assert _ran_in(bridge) == main
    for form in ("other", other, window_pane, other_target):
        assert _ran_in(bridge, "-p", form) == other, form
        assert _ran_in(bridge, "--pane", form) == other, form
    # keys, typed text and the screen go to the pane named too
    code, out, err = bridge.send_text("-p", "other", "--screen")
    assert code == 0, err
    assert out.rstrip("\n").split("\n") == bridge.tmux("capture-pane", "-p", "-t", other).rstrip(
        "\n"
    ).split("\n")


def test_an_unknown_target_is_refused_with_the_labels(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    _split(b, "--label", "db")
    code, out, err = b.send_text("-p", "nosuch", "--", "echo hi")
    assert (code, out) == (125, "")
    assert "'nosuch'" in err and "db" in err and "tmux-bridge panes" in err
    code, out, _ = b.send_text("-p", "nosuch", "--json", "--", "echo hi")
    document = json.loads(out)
    assert (code, document["error_code"], document["exit_status"]) == (125, "no_such_pane", 125)
    assert "echo hi" not in b.history()


def test_a_target_that_names_two_panes_is_refused(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    main = b.pane("#{pane_id}")
    other, other_target = _split(b)
    window_pane = other_target.split(":", 1)[1]
    # the bridge pane labelled as the other pane's place
    assert b.bridge_cli("label", main, window_pane).returncode == 0
    code, out, _ = b.send_text("-p", window_pane, "--json", "--", "echo hi")
    document = json.loads(out)
    assert (code, document["error_code"]) == (125, "ambiguous_pane")
    assert main in document["error"] and other in document["error"]


def test_labels_are_checked_unique_and_kept_on_the_pane(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    main = b.pane("#{pane_id}")
    other, _ = _split(b, "--label", "web")
    for bad in ("", "a b", "x" * 41, "a:b", "%1", "é"):
        result = b.bridge_cli("label", main, bad)
        assert result.returncode == 2, (bad, result.stdout, result.stderr)
    taken = b.bridge_cli("label", main, "web")
    assert taken.returncode == 2 and "already on pane " + other in taken.stderr
    assert b.bridge_cli("label", main, "x" * 40).returncode == 0
    # tmux itself holds the label: a new tmux-bridge process finds it
    option = b.tmux("show-options", "-p", "-v", "-t", other, "@tmux-bridge-label").strip()
    assert option == "web"
    b.start()  # tmux-bridge --detach again: attaches to the running session
    assert _panes(b)[other]["label"] == "web"
    assert b.bridge_cli("label", other, "--clear").returncode == 0
    assert b.tmux("show-options", "-p", "-v", "-t", other, "@tmux-bridge-label", check=False) == ""
    assert _panes(b)[other]["label"] is None


def test_calls_to_two_panes_run_at_once(make_bridge: MakeBridge, tmp_path: Path) -> None:
    """The call in pane one waits for a file only the call in pane two makes: it can end
    only if the two run at the same time (one after the other, it would time out)."""
    b = make_bridge("bash")
    b.start()
    _split(b, "--label", "two")
    flag = tmp_path / "flag"
    b.send_when_ready("-p", "two", "--", "true")
    first = b.start_send(
        "--timeout",
        "20",
        "--",
        f"echo started; while [ ! -e {flag} ]; do sleep 0.05; done; echo one",
    )
    b.wait_for_call_start(first)
    assert b.send_text("-p", "two", "--", f"touch {flag}; echo two") == (0, "two\n", "")
    out, err = first.communicate(timeout=30)
    assert (first.returncode, out, err) == (0, b"one\n", b"")  # "started" was read


def test_split_opens_a_labelled_pane_in_the_same_directory(
    make_bridge: MakeBridge, tmp_path: Path
) -> None:
    b = make_bridge("zsh")
    b.start()
    work = tmp_path / "work dir"
    work.mkdir()
    assert b.send_text("--", f"cd '{work}'")[0] == 0
    b.wait_for(lambda: b.pane("#{pane_current_path}") == str(work), "the cd")
    pane, _ = _split(b, "--label", "srv", "--", "sleep 300")
    # the person's focus stays on the bridge pane
    assert b.pane("#{pane_id}") != pane
    b.wait_for(
        lambda: (
            b.tmux("display-message", "-p", "-t", pane, "#{pane_current_command}").strip()
            == "sleep"
        ),
        "sleep in the new pane",
    )
    assert b.tmux("display-message", "-p", "-t", pane, "#{pane_current_path}").strip() == str(work)
    entry = _panes(b)[pane]
    assert (entry["label"], entry["front"]) == ("srv", {"kind": "program", "program": "sleep"})
    # the new pane runs the person's shell, with the typed command in its history
    assert "sleep 300" in b.tmux("capture-pane", "-p", "-t", pane)
    code, _, err = b.send_text("-p", "srv", "--", "true")
    assert code == 125 and "sleep" in err


def test_panes_tells_what_runs_where(make_bridge: MakeBridge, tmp_path: Path) -> None:
    b = make_bridge("bash")
    b.start()
    main = b.pane("#{pane_id}")
    repl, _ = _split(b, "--label", "py")
    busy, _ = _split(b, "--label", "busy")
    assert b.send_text("--", "(exit 3)")[0] == 3
    code, _, err = b.send_when_ready("-p", "py", "--repl", "python", "--", "python3 -q")
    assert code == 0, err
    b.send_when_ready("-p", "busy", "--", "true")
    flight = b.start_send("-p", "busy", "--timeout", "30", "--", "echo started; sleep 20")
    b.wait_for_call_start(flight)
    try:
        entries = _panes(b)
    finally:
        flight.kill()
        flight.communicate(timeout=30)
    assert set(entries) == {main, repl, busy}
    me = getpass.getuser()
    for pane_id, entry in entries.items():
        assert entry["target"] == _place(b, pane_id)
        assert entry["user"] == me and entry["shell"] == "bash"
        assert entry["cwd"] == os.readlink(f"/proc/{entry['shell_pid']}/cwd")
        assert entry["attached"] is False
    assert entries[main]["bridge"] and not entries[repl]["bridge"]
    assert entries[main]["front"] == {"kind": "prompt", "program": None}
    assert entries[main]["last_command"]["command"] == "(exit 3)"
    assert entries[main]["last_command"]["status"] == 3
    assert entries[repl]["front"] == {"kind": "repl", "program": "python"}
    assert entries[busy]["in_flight"]["command"] == "echo started; sleep 20"
    assert entries[main]["in_flight"] is None
    b.person_types("")  # a client attaches
    assert all(entry["attached"] for entry in _panes(b).values())


def test_the_context_file_is_private_and_forgets_gone_panes(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    other, _ = _split(b, "--label", "gone")
    assert b.send_when_ready("-p", "gone", "--", "echo x")[0] == 0
    assert b.send_text("--", "echo y")[0] == 0
    path = b.runtime / "context.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    keys = set(json.loads(path.read_text()))
    assert keys == {b.pane_dir(), "pane-" + other.lstrip("%")}
    b.tmux("kill-pane", "-t", other)
    assert set(_panes(b)) == {b.pane("#{pane_id}")}
    assert set(json.loads(path.read_text())) == {b.pane_dir()}


def test_the_audit_log_names_each_calls_pane(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    other, other_target = _split(b, "--label", "side")
    assert b.send_when_ready("-p", "side", "--", "echo a")[0] == 0
    assert b.send_text("--", "echo b")[0] == 0
    entries = [json.loads(line) for line in (b.runtime / "log.jsonl").read_text().splitlines()]
    ends = [e for e in entries if e.get("event") != "start"]  # each call's start comes first
    calls = [
        (e["command"], e["pane"], e["target"], e["label"]) for e in ends if e["exit_status"] == 0
    ]
    main = b.pane("#{pane_id}")
    assert ("echo a", other, other_target, "side") in calls
    assert ("echo b", main, _place(b, main), None) in calls


@pytest.mark.parametrize("args", [["-h", "-v"], ["--label", "bad label"]])
def test_split_usage_errors(make_bridge: MakeBridge, args: list[str]) -> None:
    b = make_bridge("bash")
    b.start()
    result = b.bridge_cli("split", *args)
    assert result.returncode == 2, result.stderr
    assert b.tmux("list-panes", "-F", "#{pane_id}").split() == [b.pane("#{pane_id}")]


def test_split_side_by_side(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    pane, _ = _split(b, "-h")
    rows = b.tmux("list-panes", "-F", "#{pane_top} #{pane_left}").split("\n")
    assert len({row.split()[0] for row in rows if row}) == 1  # same top: side by side
    assert pane in b.tmux("list-panes", "-F", "#{pane_id}")


def _shell_version(shell: str) -> str | None:
    """The shell's version as the shell itself says it (dash has none)."""
    expression = {"bash": "$BASH_VERSION", "zsh": "$ZSH_VERSION", "fish": "$version"}.get(shell)
    if expression is None:
        return None
    result = subprocess.run([shell, "-c", f"echo {expression}"], capture_output=True, text=True)
    return result.stdout.strip()


def _tools() -> dict[str, str | None]:
    """The flavour of each tool here, from what the binary is (busybox, mawk) or what its
    --version says; the GNU variants; the package manager (Debian's apt here)."""
    found: dict[str, str | None] = {}
    for tool in ("grep", "sed", "awk", "date", "stat", "find", "xargs", "tar"):
        path = shutil.which(tool)
        real = os.path.basename(os.path.realpath(path)) if path else ""
        if not path:
            found[tool] = None
        elif real in ("busybox", "mawk"):
            found[tool] = real
        else:
            version = subprocess.run([path, "--version"], capture_output=True, text=True)
            found[tool] = "gnu" if "GNU" in version.stdout.splitlines()[0] else "bsd"
    variants = ("ggrep", "gsed", "gawk", "gdate", "gstat", "gfind", "gxargs", "gtar")
    found["gnu_tools"] = " ".join(v for v in variants if shutil.which(v)) or None
    found["package_manager"] = "apt" if shutil.which("apt-get") else None
    return found


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish", "dash"])
def test_info_finds_the_platform_and_remembers_it(make_bridge: MakeBridge, shell: str) -> None:
    b = dash_bridge(make_bridge) if shell == "dash" else make_bridge(shell)
    b.start()
    code, out, err = b.send_when_ready("--info", "--json")
    assert code == 0, err
    info = json.loads(out)["info"]
    uname = os.uname()
    release = platform.freedesktop_os_release()
    expected = {
        "os": uname.sysname,
        "kernel": uname.release,
        "arch": uname.machine,
        "hostname": uname.nodename,
        "user": getpass.getuser(),
        "cwd": os.readlink(f"/proc/{b.pane('#{pane_pid}')}/cwd"),
        "shell": "posix" if shell == "dash" else shell,
        "shell_version": _shell_version(shell),
        "distro": release.get("ID"),
        "distro_version": release.get("VERSION_ID"),
        "distro_name": release.get("PRETTY_NAME"),
    }
    expected.update(_tools())
    probed_at = info.pop("tools_at")
    assert info == expected
    # the plain form prints the same facts, one per line; the tools are not probed again
    code, out, _ = b.send_text("--info")
    shown = dict(line.split(": ", 1) for line in out.splitlines())
    assert shown.pop("tools_at") == probed_at
    assert shown == {k: v if v is not None else "?" for k, v in expected.items()}
    # remembered for `panes`, and the person's last command is not the probe
    assert b.send_text("--", "echo mine")[0] == 0
    code, _, _ = b.send_text("--info")
    entry = _panes(b)[b.pane("#{pane_id}")]
    assert {k: entry["platform"][k] for k in expected} == expected
    assert entry["last_command"]["command"] == "echo mine"


def test_panes_refresh_probes_every_pane_at_its_prompt(make_bridge: MakeBridge) -> None:
    b = make_bridge("bash")
    b.start()
    ready, _ = _split(b, "--label", "ready")
    busy, _ = _split(b, "--label", "busy", "--", "sleep 300")
    b.send_when_ready("-p", "ready", "--", "true")
    b.wait_for(
        lambda: (
            b.tmux("display-message", "-p", "-t", busy, "#{pane_current_command}").strip()
            == "sleep"
        ),
        "sleep in the busy pane",
    )
    entries = _panes(b, "--refresh")
    assert entries[ready]["platform"]["hostname"] == os.uname().nodename
    assert entries[b.pane("#{pane_id}")]["platform"]["arch"] == os.uname().machine
    assert entries[busy]["platform"] is None  # not typed into: sleep is in front
    assert "sh -c" not in b.tmux("capture-pane", "-p", "-t", busy)


def test_files_and_dry_runs_reach_the_pane_named(make_bridge: MakeBridge, tmp_path: Path) -> None:
    """--write, --read and --check with -p work in that pane's shell and directory."""
    b = make_bridge("bash")
    b.start()
    there = tmp_path / "there"
    there.mkdir()
    pane, _ = _split(b, "--label", "files")
    assert b.send_when_ready("-p", "files", "--", f"cd {there}")[0] == 0
    written = b.send("-p", "files", "--no-backup", "--write", "note.txt", input=b"hello\n")
    assert written.returncode == 0, written.stderr
    assert (there / "note.txt").read_bytes() == b"hello\n"
    assert b.send_text("-p", "files", "--read", "note.txt") == (0, "hello\n", "")
    code, out, _ = b.send_text("-p", "files", "--check", "--json", "--", "true")
    assert (code, json.loads(out)["pane"]) == (0, pane)
