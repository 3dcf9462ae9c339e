"""The shape of the code: no function or method in tmux_bridge/ longer than 60 lines.

ruff's C901 (max-complexity 15, in pyproject.toml) caps branching; this caps length,
which C901 misses in long straight-line functions. Nested functions count on their own
and inside the function that holds them.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tmux_bridge"
MAX_LINES = 60


def _long_functions(source: str, filename: str) -> list[str]:
    """``filename:line name (N lines)`` for each function longer than MAX_LINES, counted
    from its ``def`` line (decorators excluded) to the last line of its body."""
    tree = ast.parse(source, filename=filename)
    found = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                assert child.end_lineno is not None
                length = child.end_lineno - child.lineno + 1
                if length > MAX_LINES:
                    found.append(f"{filename}:{child.lineno} {name} ({length} lines)")
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return found


def _function(name: str, lines: int, indent: str = "") -> str:
    """Source of a function ``lines`` long from its ``def`` to its last line."""
    body = "".join(f"{indent}    x{i} = {i}\n" for i in range(lines - 2))
    return f"{indent}@decorator\n{indent}def {name}(\n{indent}):\n{body}"


def test_the_count_runs_from_def_to_the_last_line_of_the_body() -> None:
    source = (
        _function("fits", MAX_LINES)
        + _function("too_long", MAX_LINES + 1)
        + "class Outer:\n"
        + _function("method", MAX_LINES + 1, indent="    ")
    )
    assert _long_functions(source, "m.py") == [
        f"m.py:{MAX_LINES + 3} too_long ({MAX_LINES + 1} lines)",
        f"m.py:{2 * MAX_LINES + 6} Outer.method ({MAX_LINES + 1} lines)",
    ]


def test_no_function_is_longer_than_60_lines() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 10, f"no modules found in {PACKAGE}"
    too_long = [
        line
        for path in modules
        for line in _long_functions(
            path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent))
        )
    ]
    assert not too_long, f"functions longer than {MAX_LINES} lines (split them):\n" + "\n".join(
        too_long
    )
