"""Agents on a real tmux server: detection, and prompt delivery with its receipt, into
stand-in agent TUIs (``tests/standin_agent.py`` as ``claude`` and ``codex``), a plain
``python3`` prompt and ``cat``. What a stand-in took is read from its own log."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from tmux_bridge.agents import delivery as prompt_module
from tmux_bridge.errors import (
    AgentBusy,
    AgentChanged,
    DraftInInput,
    NoInputBox,
    NoSuchAgent,
    NotDelivered,
    PromptNotTaken,
)
from tmux_bridge.pane.records import PaneDir

from ..support.agent_world import PYTHON3, World
from ..support.pane import MakeBridge
from ..support.sshd import Sshd, running_sshd


@pytest.fixture
def world(make_bridge: MakeBridge) -> Iterator[World]:
    yield World(make_bridge("bash"))


# --- detection -------------------------------------------------------------------------


def test_agents_are_detected_with_the_spec_fields(world: World) -> None:
    world.start("alpha", "claude")
    world.start("beta", "codex", "GT_ROLE=crew", "GT_RIG=gastown")
    world.start("plain", "bash --norc")  # a shell is no agent
    world.start("helper", f"{PYTHON3} -q", "TMUX_BRIDGE_AGENT=pyhelper", "TMUX_BRIDGE_ROLE=calc")
    seen: list[dict[str, dict[str, object]]] = []

    def all_idle() -> bool:
        seen.append({a.name: a.document() for a in world.facade().agents()})
        return set(seen[-1]) == {"alpha", "beta", "pyhelper"} and all(
            entry["state"] == "idle" for entry in seen[-1].values()
        )

    world.b.wait_for(all_idle, "the three agents, idle")
    agents = seen[-1]
    pane = world.b.tmux("display-message", "-p", "-t", "=beta:", "#{pane_id}").strip()
    assert agents["beta"] == {
        "name": "beta",
        "role": "crew",
        "runtime": "codex",
        "rig": "gastown",
        "workDir": str(world.b.home),
        "attached": False,
        "pane": pane,
        "target": "beta:0.0",
        "state": "idle",
        "question": None,
        "aliases": ["codex", "0.0", "beta:0"],
    }
    assert (agents["alpha"]["runtime"], agents["alpha"]["role"]) == ("claude", None)
    assert (agents["pyhelper"]["runtime"], agents["pyhelper"]["role"]) == ("python3", "calc")


def test_agents_come_and_go_and_a_zombie_session_is_not_listed(world: World) -> None:
    world.start("alpha", "claude")
    world.start("zed", "bash --norc", "TMUX_BRIDGE_AGENT=zed")
    world.wait_names({"alpha"})  # zed's session declares an agent, but only a shell runs
    world.b.tmux("send-keys", "-t", "=zed:", f"{PYTHON3} -q", "Enter")
    world.wait_names({"alpha", "zed"})
    world.b.tmux("send-keys", "-t", "=zed:", "exit()", "Enter")
    world.wait_names({"alpha"})  # the agent process is gone, the session lives on
    assert "zed" in world.b.tmux("list-sessions", "-F", "#{session_name}").split()
    world.b.tmux("send-keys", "-t", "=alpha:", "C-d")
    world.wait_names(set())


def test_several_agents_in_one_session_get_unique_names(world: World) -> None:
    world.start("duo", "claude")
    world.wait_names({"duo"})
    world.b.tmux("split-window", "-t", "=duo:", f"PATH={world.bin}:$PATH codex")
    world.b.wait_for(lambda: len(world.facade().agents()) == 2, "two agents")
    # the first agent keeps its name: names never depend on how many agents share a session
    assert sorted(a.name for a in world.facade().agents()) == ["duo", "duo:0.1"]


def test_names_people_use_reach_an_agent_and_an_ambiguous_one_is_refused(world: World) -> None:
    world.start("work", "bash --norc")
    world.b.tmux(
        "new-window", "-d", "-t", "=work:", "-n", "reviewer", f"PATH={world.bin}:$PATH claude"
    )
    world.b.tmux("new-window", "-d", "-t", "=work:", "-n", "coder", f"PATH={world.bin}:$PATH codex")
    world.wait_names({"work:1.0", "work:2.0"})
    facade = world.facade()
    for name, target in [("codex", "work:2.0"), ("claude", "work:1.0"), ("2.0", "work:2.0"),
                         ("reviewer", "work:1.0"), ("work:2", "work:2.0")]:  # fmt: skip
        receipt = facade.send_prompt(name, f"hello {name}")
        assert (receipt.target, receipt.delivered) == (target, True), name
    names = ["codex", "claude", "2.0", "reviewer", "work:2"]
    assert world.prompts("work") == [f"hello {n}" for n in names]  # one log per session

    def coder_took_its_three() -> bool:
        coder = world.b.tmux("capture-pane", "-p", "-t", "=work:2")
        return all(f"HELLO {n.upper()}" in coder for n in ("codex", "2.0", "work:2"))

    world.b.wait_for(coder_took_its_three, "the coder window's replies")
    world.b.tmux("new-window", "-d", "-t", "=work:", f"PATH={world.bin}:$PATH codex")
    world.b.wait_for(lambda: len(facade.agents()) == 3, "three agents")
    code, out, err = world.cli("prompt", "--to", "codex", "which one?")
    assert code == 2 and "ambiguous" not in out, (code, out, err)
    assert "'codex' names 2 agents" in err and "work:2.0" in err and "work:3.0" in err, err
    assert facade.send_prompt("coder", "still reachable").target == "work:2.0"


def test_the_agents_command_lists_them_as_json(world: World) -> None:
    world.start("alpha", "claude")
    world.wait_names({"alpha"})
    code, out, err = world.cli("agents", "--json")
    assert (code, err) == (0, "")
    [entry] = json.loads(out)
    assert (entry["name"], entry["runtime"], entry["target"]) == ("alpha", "claude", "alpha:0.0")
    code, out, err = world.cli("agents")
    assert code == 0 and "alpha" in out and "claude" in out


# --- delivery ---------------------------------------------------------------------------


def test_a_prompt_is_delivered_and_confirmed(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0.5")
    world.wait_names({"alpha"})
    receipt = world.facade().send_prompt("alpha", "please review the PR")
    assert receipt.delivered and receipt.confirmed_by in ("working", "conversation")
    assert world.prompts("alpha") == ["please review the PR"]
    world.wait_screen("alpha", "● PLEASE REVIEW THE PR")


def test_a_multi_line_prompt_arrives_whole_through_bracketed_paste(world: World) -> None:
    world.start("beta", "codex", "STANDIN_WORK=0")
    world.wait_names({"beta"})
    text = "first line\nsecond line with 'quotes' and $HOME\n\tthird"
    assert world.facade().send_prompt("beta", text).delivered
    assert world.prompts("beta") == [text]


def test_python_prompt_and_cat_take_prompts(world: World) -> None:
    world.start("py", f"{PYTHON3} -q", "TMUX_BRIDGE_AGENT=py")
    world.start("cat", "cat", "TMUX_BRIDGE_AGENT=cat")
    world.wait_names({"py", "cat"})
    # Either sign is a submission: the line above the new prompt, or the kernel showing
    # python off its terminal read while it runs the line (caught so on a loaded machine).
    receipt = world.facade().send_prompt("py", "print(6 * 7)")
    assert receipt.delivered and receipt.confirmed_by in ("conversation", "working")
    world.wait_screen("py", "\n42\n")
    assert world.facade().send_prompt("cat", "meow").delivered
    world.b.wait_for(lambda: world.screen("cat").count("meow") == 2, "cat's echo and copy")


def test_copy_mode_is_left_first(world: World) -> None:
    world.start("alpha", "claude")
    world.wait_names({"alpha"})
    world.b.tmux("copy-mode", "-t", "=alpha:")
    assert world.facade().send_prompt("alpha", "out of copy mode").delivered
    assert world.prompts("alpha") == ["out of copy mode"]


def test_a_draft_is_refused_and_replaced_only_when_asked(world: World) -> None:
    world.start("alpha", "claude")
    world.wait_names({"alpha"})
    world.wait_screen("alpha", "? for shortcuts")  # in raw mode: keys typed now stay
    world.b.tmux("send-keys", "-t", "=alpha:", "-l", "half typed by the person")
    world.wait_screen("alpha", "> half typed by the person")
    code, out, err = world.cli("prompt", "--to", "alpha", "from the agent")
    assert (code, out) == (1, "")
    assert "not ours" in err and "half typed" in err
    assert world.prompts("alpha") == []
    assert "> half typed by the person" in world.screen("alpha")  # left as it was
    code, out, err = world.cli("prompt", "--to", "alpha", "--json", "from the agent")
    receipt = json.loads(out)
    assert (code, receipt["delivered"], receipt["error_code"]) == (1, False, "draft_in_input")
    with pytest.raises(DraftInInput):
        world.facade().send_prompt("alpha", "from the agent")
    receipt = world.facade().send_prompt("alpha", "from the agent", replace_draft=True)
    assert receipt.replaced_draft and world.prompts("alpha") == ["from the agent"]


def test_a_busy_agent_and_one_without_input_box_are_not_delivered_to(world: World) -> None:
    world.start("slow", "claude", "STANDIN_WORK=30")
    world.install("gemini", "input('Allow this action? (y/n) ')\n")
    world.start("asks", "gemini")
    world.wait_names({"slow", "asks"})
    assert world.facade().send_prompt("slow", "take a while").delivered
    with pytest.raises(AgentBusy) as busy:
        world.facade().send_prompt("slow", "second", timeout=0.5)
    assert busy.value.exit_code == 1 and world.prompts("slow") == ["take a while"]
    with pytest.raises(NoInputBox):
        world.facade().send_prompt("asks", "hello", timeout=0.5)


def test_swallowed_enters_are_retried_and_never_taken_is_a_failure(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.start("deaf", "claude", "STANDIN_IGNORE=1")
    world.start("flaky", "claude", "STANDIN_IGNORE=0.5", "STANDIN_SEED=3", "STANDIN_WORK=0")
    world.wait_names({"deaf", "flaky"})
    monkeypatch.setattr(prompt_module, "ENTER_WAITS", (0.2, 0.2, 0.2))
    with pytest.raises(PromptNotTaken) as failed:
        world.facade().send_prompt("deaf", "never submitted")
    receipt = failed.value.receipt
    assert isinstance(receipt, prompt_module.PromptReceipt)
    assert (receipt.delivered, receipt.enters) == (False, 3)
    assert world.prompts("deaf") == []
    # our own stranded text is no draft of the person's: the next prompt clears it
    monkeypatch.setattr(prompt_module, "ENTER_WAITS", prompt_module.ENTER_WAITS)
    enters = [world.facade().send_prompt("flaky", f"try {n}").enters for n in range(6)]
    assert world.prompts("flaky") == [f"try {n}" for n in range(6)]
    assert max(enters) > 1, enters


def test_a_prompt_taken_without_a_sign_is_unconfirmed_and_sent_once(world: World) -> None:
    """The box empties but the text shows nowhere and the agent does not work: taken or
    not, the screen cannot say: unconfirmed (exit 3), one Enter, never resent."""
    world.start("mute", "claude", "STANDIN_LIMBO=1")
    world.wait_names({"mute"})
    code, out, err = world.cli("prompt", "--to", "mute", "--json", "did you get it")
    assert code == 3, (code, out, err)
    receipt = json.loads(out)
    assert (receipt["error_code"], receipt["delivered"], receipt["enters"]) == (
        "unconfirmed",
        False,
        1,
    )
    assert "do not send it again" in err
    assert world.prompts("mute") == ["did you get it"]


def test_our_stranded_text_is_cleared_by_the_next_prompt(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    world.start("deaf", "claude", "STANDIN_IGNORE=1")
    world.wait_names({"deaf"})
    monkeypatch.setattr(prompt_module, "ENTER_WAITS", (0.1,))
    with pytest.raises(PromptNotTaken):
        world.facade().send_prompt("deaf", "stranded once")
    with pytest.raises(PromptNotTaken) as again:
        world.facade().send_prompt("deaf", "stranded twice")
    assert isinstance(again.value.receipt, prompt_module.PromptReceipt)
    assert again.value.receipt.replaced_draft
    assert "stranded once" not in world.screen("deaf")


def test_forty_prompts_with_enters_ignored_at_random(world: World) -> None:
    """One Enter in four swallowed (about ten retries, some twice in a row, as a hundred
    prompts at one in ten gave, in less than half the time): each prompt taken once, in
    order."""
    world.start("flaky", "claude", "STANDIN_IGNORE=0.25", "STANDIN_SEED=12", "STANDIN_WORK=0")
    world.wait_names({"flaky"})
    facade = world.facade()
    texts = [f"prompt number {n} of forty" for n in range(40)]
    receipts = [facade.send_prompt("flaky", text) for text in texts]
    assert all(r.delivered for r in receipts)
    assert world.prompts("flaky") == texts
    assert sum(r.enters for r in receipts) >= 45  # Enters were swallowed and retried
    assert max(r.enters for r in receipts) >= 3  # twice in a row too


def test_exit_codes_of_the_prompt_command(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.wait_names({"alpha"})
    text_file = world.b.root / "prompt.txt"
    text_file.write_text("from a file\n")
    code, out, err = world.cli("prompt", "--to", "alpha", "--file", str(text_file), "--json")
    assert (code, err) == (0, ""), err
    assert json.loads(out)["delivered"] is True
    assert world.prompts("alpha") == ["from a file"]
    code, out, err = world.cli("prompt", "--to", "nobody", "hello")
    assert code == 125 and "no agent called 'nobody'" in err
    assert not issubclass(NoSuchAgent, NotDelivered)


def test_the_audit_log_records_each_prompt(world: World) -> None:
    world.start("alpha", "claude", "STANDIN_WORK=0")
    world.wait_names({"alpha"})
    world.facade("auditor").send_prompt("alpha", "logged prompt")
    with pytest.raises(NoSuchAgent):
        world.facade("auditor").send_prompt("ghost", "lost prompt")
    lines = (world.b.runtime / "log.jsonl").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    sent, refused = [e for e in entries if e["mode"] == "prompt"]
    assert (sent["agent"], sent["command"], sent["exit_status"]) == ("alpha", "logged prompt", 0)
    assert sent["client"] == "auditor" and sent["target"] == "alpha:0.0"
    assert (refused["agent"], refused["error_code"], refused["exit_status"]) == (
        "ghost",
        "no_such_agent",
        125,
    )


def test_no_server_means_no_agents(world: World) -> None:
    assert world.facade().agents() == []


# --- who is an agent: never a shell, never a way to one ----------------------------------------


class Way(NamedTuple):
    test_id: str
    command: str  # what the person types in a session that declares an agent
    nested_server: str | None = None  # a tmux server it starts, to be killed at the end


WAYS = [
    Way("script", "script -q /dev/null"),
    Way("sudo-i", "sudo -i"),
    Way("nested-tmux", "TMUX= tmux -L nested -f /dev/null new-session", "nested"),
    Way("nested-bash", "bash"),
    # a program no list names, with a shell on a terminal of its own below it
    Way("pty-wrapper", f"""{PYTHON3} -c 'import pty; pty.spawn("bash")'"""),
]
BUSY = f"{PYTHON3} -c 'import signal; signal.pause()'"  # a declared program, working


@pytest.fixture
def marker_dir() -> Iterator[Path]:
    """A directory anyone may write into: what a pasted body would create there shows
    that it ran (also as the ssh test user)."""
    path = Path(tempfile.mkdtemp(prefix="tb-ran-"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _declared_and_busy(world: World) -> None:
    """Session gw declares an agent; a python program that works (pause()) is in front."""
    world.start("gw", "bash", "TMUX_BRIDGE_AGENT=gw")
    world.wait_screen("gw", "$")
    world.b.tmux("send-keys", "-t", "=gw:", BUSY, "Enter")
    world.b.wait_for(
        lambda: [(a.name, a.state) for a in world.facade().agents()] == [("gw", "working")],
        "gw, a declared agent, working",
    )


def _reach_shell_through(world: World, command: str) -> None:
    """Back at gw's shell, the person types ``command`` and reaches a shell behind it,
    whose prompt they set to `% ` (a prompt the generic agent rule knows)."""
    world.b.tmux("send-keys", "-t", "=gw:", "C-c")
    world.b.wait_for(lambda: world.screen("gw").rstrip().endswith("$"), "gw's shell again")
    world.b.tmux("send-keys", "-t", "=gw:", command, "Enter")
    typed = [0.0]

    def behind() -> bool:
        if _cursor_line(world, "gw").rstrip() == "%":
            return True
        if time.monotonic() - typed[0] > 0.5:  # again: a program going raw may flush it
            world.b.tmux("send-keys", "-t", "=gw:", "PS1='% '", "Enter")
            typed[0] = time.monotonic()
        return False

    world.b.wait_for(behind, "the shell behind it")


def _cursor_line(world: World, session: str) -> str:
    """The line the cursor is on (a nested tmux draws its status line below it)."""
    row = int(world.b.tmux("display-message", "-p", "-t", f"={session}:", "#{cursor_y}"))
    return world.screen(session).split("\n")[row]


def _never_pasted(world: World, marker: Path) -> None:
    """A pending message to gw, tried now by an unrelated `tmux-bridge inbox`, failed and
    nothing of it reached the shell behind the program in front."""
    code, out, _ = world.cli("inbox", "--json")
    assert not marker.exists(), "the message's body ran in the shell"
    assert "touch" not in world.screen("gw")
    [message] = json.loads(out)
    assert (code, message["state"]) == (0, "failed"), message
    assert "gw" not in world.names()
    # a new message to gw waits for an agent of that name: none runs, so it is not pasted
    code, _, err = world.cli("message", "--to", "gw", "--from", "boss", f"touch {marker}")
    assert code == 0 and "runs and is idle" in err
    code, out, _ = world.cli("inbox", "--json")
    assert [m["state"] for m in json.loads(out)] == ["failed", "pending"]
    assert not marker.exists() and "touch" not in world.screen("gw")


@pytest.mark.parametrize("way", WAYS, ids=[w.test_id for w in WAYS])
def test_a_way_to_a_shell_is_no_agent_and_gets_no_message(
    world: World, way: Way, marker_dir: Path
) -> None:
    if way.test_id == "sudo-i" and os.geteuid() != 0:
        pytest.skip("sudo -i without a password: as root, as in CI")
    marker = marker_dir / "ran"
    _declared_and_busy(world)
    code, _, err = world.cli("message", "--to", "gw", "--from", "boss", f"touch {marker}")
    assert code == 0 and "is pending" in err
    try:
        _reach_shell_through(world, way.command)
        _never_pasted(world, marker)
    finally:
        if way.nested_server:
            world.b.tmux("-L", way.nested_server, "kill-server", check=False)


@pytest.fixture(scope="module")
def sshd() -> Iterator[Sshd]:
    with running_sshd() as server:
        yield server


def test_ssh_is_no_agent_and_gets_no_message(world: World, sshd: Sshd, marker_dir: Path) -> None:
    marker = marker_dir / "ran"
    _declared_and_busy(world)
    assert world.cli("message", "--to", "gw", "--from", "boss", f"touch {marker}")[0] == 0
    _reach_shell_through(world, sshd.command("bash"))
    _never_pasted(world, marker)


def test_a_message_goes_only_to_the_program_it_was_sent_to(world: World, marker_dir: Path) -> None:
    """The declared program ends and another (cat, which would take the text) takes its
    place: the message pending for the first fails and is never pasted into the second."""
    marker = marker_dir / "ran"
    _declared_and_busy(world)
    assert world.cli("message", "--to", "gw", "--from", "boss", f"touch {marker}")[0] == 0
    world.b.tmux("send-keys", "-t", "=gw:", "C-c")
    world.b.wait_for(lambda: world.screen("gw").rstrip().endswith("$"), "gw's shell again")
    world.b.tmux("send-keys", "-t", "=gw:", "cat", "Enter")
    world.b.wait_for(lambda: world.names() == {"gw"}, "cat as gw, a declared agent")
    code, out, _ = world.cli("inbox", "--json")
    [message] = json.loads(out)
    assert (code, message["state"]) == (0, "failed")
    assert "not the one the message was sent to" in message["error"]
    assert "touch" not in world.screen("gw")


def test_a_prompt_is_not_pasted_once_another_program_is_in_front(world: World) -> None:
    """Between the look and the paste the agent's program went away (here: it exec'd a
    shell, same pid); what the caller looked at is no longer there, and nothing is typed."""
    world.start("py", f"{PYTHON3} -q", "TMUX_BRIDGE_AGENT=py")
    world.wait_names({"py"})
    [seen] = world.facade().agents()
    world.b.tmux("send-keys", "-t", "=py:", "import os; os.execvp('bash', ['bash'])", "Enter")
    world.b.wait_for(lambda: world.names() == set(), "py's program became a shell")
    world.b.wait_for(lambda: world.screen("py").rstrip().endswith("$"), "bash's prompt")
    tmux = world.facade().target.tmux
    records = PaneDir(str(world.b.runtime), tmux, seen.pane)
    deadline = time.monotonic() + 5
    with pytest.raises(AgentChanged) as changed, records.locked(deadline, None, lambda: None):
        prompt_module.deliver_locked(tmux, seen, records, "echo pasted", False, deadline, None)
    assert "shell" in str(changed.value) and changed.value.exit_code == 1
    assert "echo pasted" not in world.screen("py")
