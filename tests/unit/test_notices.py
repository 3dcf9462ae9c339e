"""Pure: which notices the background task shows, and the text compared on screens."""

from __future__ import annotations

from typing import NamedTuple

import pytest

from tmux_bridge.agents.delivery import signature, squeeze
from tmux_bridge.agents.notices import message_notice, waiting_notices


class NoticeCase(NamedTuple):
    test_id: str
    before: dict[str, tuple[str, str]]
    now: dict[str, tuple[str, str]]
    expected: list[str]


NOTICE_CASES = [
    NoticeCase("done", {"%1": ("a", "working")}, {"%1": ("a", "idle")},
               ["tmux-bridge: a is done and waits for your input"]),
    NoticeCase("asks", {"%1": ("a", "working")}, {"%1": ("a", "unknown")},
               ["tmux-bridge: a asks you something"]),
    NoticeCase("still-working", {"%1": ("a", "working")}, {"%1": ("a", "working")}, []),
    NoticeCase("was-idle", {"%1": ("a", "idle")}, {"%1": ("a", "idle")}, []),
    NoticeCase("new-agent", {}, {"%1": ("a", "idle")}, []),
    NoticeCase("password", {"bridge": ("bridge", "")}, {"bridge": ("bridge", "password")},
               ["tmux-bridge: the bridge terminal waits for your password"]),
    NoticeCase("password-again", {"bridge": ("bridge", "password")},
               {"bridge": ("bridge", "password")}, []),
    NoticeCase("an-agent-called-bridge", {"%2": ("bridge", "idle")},
               {"%2": ("bridge", "password")}, []),
]  # fmt: skip


@pytest.mark.parametrize("case", NOTICE_CASES, ids=[c.test_id for c in NOTICE_CASES])
def test_waiting_notices(case: NoticeCase) -> None:
    assert waiting_notices(case.before, case.now) == case.expected


def test_message_notices() -> None:
    assert message_notice("b", "a", 3, "delivered") == "tmux-bridge: a -> b: message #3 delivered"
    assert message_notice("b", "a", 3, "failed") == "tmux-bridge: message #3 from a to b failed"
    assert message_notice("b", "a", 3, "expired") == "tmux-bridge: message #3 from a to b expired"


def test_text_on_a_screen_is_compared_without_spaces_and_box_drawing() -> None:
    assert squeeze("│ > hello  world │\n╰──╯") == ">helloworld"
    assert signature("first line\n  the end of it  \n\n") == "theendofit"
    assert signature("x" * 40) == "x" * 24
