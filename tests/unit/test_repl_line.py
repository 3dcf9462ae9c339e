"""What the cursor's line shows of a local REPL before an evaluation is typed
(``pane/front.py``'s ``repl_line``): the prompt with nothing typed, the prompt after
output that did not end its line, the person's text, a statement begun, or no prompt.
The lines are as tmux gives them (right-trimmed), the cursor's column beside each."""

from __future__ import annotations

import re

import pytest

from tmux_bridge.pane.front import repl_line
from tmux_bridge.text.presets import PRESETS, Preset

PYTHON, NODE, PSQL, SQLITE = (PRESETS[name] for name in ("python", "node", "psql", "sqlite"))

CASES = [
    # python: `>>> ` and `... `
    (PYTHON, ">>>", 4, "ready"),
    (PYTHON, "x>>>", 5, "ready"),  # print('x', end='') then the prompt
    (PYTHON, "x = 1>>>", 9, "ready"),
    (PYTHON, ">>> x = 4", 9, "typed"),
    (PYTHON, ">>> x = 4", 4, "typed"),  # typed, then Home: the text right of the cursor
    (PYTHON, ">>> x ", 6, "typed"),
    (PYTHON, "...", 4, "continued"),
    (PYTHON, "...     total += i", 19, "typed"),
    (PYTHON, "who?", 5, "other"),  # the person's input('who? ')
    (PYTHON, "loading...", 11, "other"),  # their code printing, no prompt
    (PYTHON, "", 0, "other"),
    (PYTHON, "x>>>", 4, "other"),  # the cursor on the prompt's last mark: not after it
    # node: `> ` (a prompt after output only with the blank the cursor follows)
    (NODE, ">", 2, "ready"),
    (NODE, "y>", 3, "ready"),
    (NODE, "<b>", 3, "other"),  # output ending in `>`, the cursor right after it
    (NODE, "> 1 +", 5, "typed"),
    (NODE, "...", 4, "continued"),
    # psql: `db=# `, and PROMPT2's `db-# ` (a statement begun)
    (PSQL, "postgres=#", 11, "ready"),
    (PSQL, "postgres=> select", 17, "typed"),
    (PSQL, "postgres-#", 11, "continued"),
    (PSQL, "postgres(#", 11, "continued"),
    (PSQL, "postgres'#", 11, "continued"),
    # sqlite: `sqlite> ` and `   ...> `
    (SQLITE, "sqlite>", 8, "ready"),
    (SQLITE, "sqlite> select", 14, "typed"),
    (SQLITE, "   ...>", 8, "continued"),
]


@pytest.mark.parametrize(("preset", "line", "column", "kind"), CASES)
def test_what_the_line_shows(preset: Preset, line: str, column: int, kind: str) -> None:
    assert repl_line(line, column, re.compile(preset.ready), preset.continued) == kind


def test_a_wide_character_before_the_prompt() -> None:
    """Columns are cells: a wide character's output takes two before the prompt."""
    assert repl_line("表>>>", 6, re.compile(PYTHON.ready), PYTHON.continued) == "ready"
    assert repl_line("表>>>", 5, re.compile(PYTHON.ready), PYTHON.continued) == "other"
