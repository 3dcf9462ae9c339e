"""The states of each runtime of ``RUNTIMES``, read from screens the real CLIs drew (Claude
Code 2.1.331, Codex 0.169.0, copied from their panes at 120 and 35 columns), and the
markers of the runtimes only known from their documentation. Pure: no tmux."""

from __future__ import annotations

import pytest

from tmux_bridge.agents.detect import RUNTIMES, Runtime, read_state
from tmux_bridge.pane.info import PaneInfo

BY_NAME = {runtime.name: runtime for runtime in RUNTIMES}
RULE = "─" * 40
C = "\u276f"  # Claude Code's prompt glyph
S = "\u203a"  # Codex's

CLAUDE_IDLE = ["", f"{C} earlier prompt", "", "● ANSWER", "", RULE, f"{C} ", RULE,
               "  ⏵⏵ auto mode on"]  # fmt: skip
CLAUDE_WORKING = ["", f"{C} hello there", "", "✻ Hashing…", RULE, f"{C} ", RULE,
                  "  ⏵⏵ auto mode on (shift+tab to cycle) · esc to interrupt"]  # fmt: skip
CLAUDE_WORKING_35 = [f"{C} hello there", "", "✻ Connectio… · retrying in 3s ·",
                     "  attempt 4/10", "", "─" * 35, f"{C} ", "─" * 35,
                     "  ⏵⏵ auto mode on · esc to inter…"]  # fmt: skip
CLAUDE_TRUST = [RULE, " Accessing workspace:", "", " /tmp/ag/untrusted", "",
                " Quick safety check: Is this a project you created or one you trust?", "",
                f" {C} No, exit", "   Yes, I trust this folder", "",
                " Enter to confirm · Esc to cancel"]  # fmt: skip
CLAUDE_PERMISSION = ["● Bash(rm -rf build)", "", " Do you want to proceed?", f" {C} 1. Yes",
                     "   2. Yes, and don't ask again", "   3. No (esc)"]  # fmt: skip
CODEX_IDLE = [f"{S} what is two plus two", "", "• ANSWER", "", f"{S} Ask Codex to do anything", "",
              "  fake-model default · ~", "  ← for agents · ? for shortcuts"]  # fmt: skip
CODEX_WORKING = [f"{S} hello codex", "", "• Working (0s • esc to interrupt)", "",
                 f"{S} Ask Codex to do anything", "",
                 "  ← for agents · ? for shortcuts"]  # fmt: skip
CODEX_RECONNECTING_35 = [f"{S} hello codex", "◦ Reconnecting... 4/5 (2s • esc to…", "",
                         f"{S} Ask Codex to do anything"]  # fmt: skip
CODEX_STARTING = ["  >_ OpenAI Codex (v0.169.0)", "", f"{S} name three prime numbers", "",
                  "  Waiting for startup  · esc cancel"]  # fmt: skip
# its box before its session is set up: no status rows below it yet (a paste shows later)
CODEX_SETTING_UP = ["  >_ OpenAI Codex (v0.169.0)", "     ~", "", f"{S} Ask Codex to do anything",
                    "", "  ? for shortcuts"]  # fmt: skip
CODEX_SETTING_UP_DRAFT = ["  >_ OpenAI Codex (v0.169.0)", "     ~", "", f"{S} my own draft",
                          "  of three"]  # fmt: skip
CODEX_TRUST = ["  Folder access", "  /tmp/ag/gitproj", "", "  Trust this folder? Codex can",
               "  read, edit, and run files here.", "", f"{S} 1. Trust and continue",
               "  2. Back to Agent Command Center", "", "  enter continue · esc back"]  # fmt: skip


def _pane(screen: list[str], cursor_y: int) -> PaneInfo:
    return PaneInfo(
        "%0", 0, "", False, True, False, 120, len(screen), "agent", 2, cursor_y, "", False,
        True, "/", False, 0,
    )  # fmt: skip


def _row(screen: list[str], start: str) -> int:
    return max(i for i, line in enumerate(screen) if line.startswith(start))


CASES = [
    ("claude", CLAUDE_IDLE, _row(CLAUDE_IDLE, f"{C} "), ("idle", None)),
    ("claude", CLAUDE_WORKING, _row(CLAUDE_WORKING, f"{C} "), ("working", None)),
    ("claude", CLAUDE_WORKING_35, _row(CLAUDE_WORKING_35, f"{C} "), ("working", None)),
    ("claude", CLAUDE_TRUST, 0, ("needs_person", "a folder-trust question")),
    ("claude", CLAUDE_PERMISSION, 3, ("needs_person", "a permission question")),
    ("codex", CODEX_IDLE, _row(CODEX_IDLE, f"{S} Ask"), ("idle", None)),
    ("codex", CODEX_WORKING, _row(CODEX_WORKING, f"{S} Ask"), ("working", None)),
    ("codex", CODEX_RECONNECTING_35, 3, ("working", None)),
    ("codex", CODEX_STARTING, 2, ("starting", None)),
    ("codex", CODEX_SETTING_UP, 3, ("starting", None)),
    ("codex", CODEX_SETTING_UP_DRAFT, 4, ("starting", None)),
    # no input line and no marker (a view of its own, a redraw): nothing to say
    ("claude", ["", " ▐▛███▜▌   Claude Code v2.1.331", ""], 2, ("unknown", None)),
    ("codex", ["", "  Transcript", "", "  q to quit"], 3, ("unknown", None)),
    ("codex", CODEX_TRUST, 0, ("needs_person", "a folder-trust question")),
]


@pytest.mark.parametrize(
    ("runtime", "screen", "cursor_y", "expected"),
    CASES,
    ids=[f"{c[0]}-{c[3][0]}-{n}" for n, c in enumerate(CASES)],
)
def test_each_runtime_in_each_state(
    runtime: str, screen: list[str], cursor_y: int, expected: tuple[str, str | None]
) -> None:
    assert read_state(BY_NAME[runtime], screen, _pane(screen, cursor_y)) == expected


def test_a_reply_that_mentions_a_question_above_the_box_is_no_question() -> None:
    screen = ["● Then it asks: Do you want to proceed? Enter to confirm", "", RULE, f"{C} ", RULE]
    assert read_state(BY_NAME["claude"], screen, _pane(screen, 3)) == ("idle", None)


@pytest.mark.parametrize("runtime", [r for r in RUNTIMES if r.name not in ("claude", "codex")])
def test_a_runtime_known_from_its_documentation_works_while_its_marker_shows(
    runtime: Runtime,
) -> None:
    screen = ["> do it", "", f"  ({runtime.busy[0]}, 3s)", "> "]
    assert read_state(runtime, screen, _pane(screen, 3))[0] == "working"
    assert runtime.checked is None  # its patterns were not tried against the real CLI


def test_the_checked_runtimes_name_the_version() -> None:
    assert (BY_NAME["claude"].checked, BY_NAME["codex"].checked) == ("2.1.331", "0.169.0")
