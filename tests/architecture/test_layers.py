"""The layers of the tree, checked on the source: who may import whom, and no cycles.

Every ``import`` in ``tmux_bridge`` counts: at module level, inside functions (lazy) and
under ``TYPE_CHECKING``; a lazy import is a dependency all the same, only a later one.
The rules are the architecture (docs/architecture.md): pure text at the bottom, then the
machine and tmux, one pane, calls and agents, the audit log, the facade; the faces on
top see only the public API.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import tmux_bridge

PACKAGE = Path(tmux_bridge.__file__).resolve().parent

# The public API: the modules a face may import from the core. Besides the facade and
# its vocabulary: the core's checks of what a call is given (rules: a face refuses early
# as the call would), Tmux (a Target names its server), and the seams a face stands on (text
# printed to a terminal, a client's regular expression).
PUBLIC = {
    "tmux_bridge", "api", "errors", "results", "report", "target", "cancel", "rules",
    "infra.tmux", "text.seams", "infra.patterns",
}  # fmt: skip
VOCABULARY = {"errors", "cancel", "target", "results", "report"}

# Below every layer, importing nothing of ours: the base of the record classes (a
# language-level helper, as ``typing`` is), which any module may import.
BASE = {"tuples"}

# A layer (a package, or a module at the top) -> what it may import besides itself and
# BASE: whole layers, or single modules (``infra.tmux``).
ALLOWED: dict[str, set[str]] = {
    "tuples": set(),
    "text": set(),
    "errors": set(),
    "cancel": {"errors"},  # check_not_cancelled raises Cancelled
    "infra": {"text", "errors", "cancel"},
    "target": {"infra"},
    "pane": {"infra", "text", "errors", "cancel", "target"},
    "results": {"errors", "pane"},
    "report": {"errors", "results"},
    "rules": {"pane", "calls", "errors"},  # the checks themselves, re-exported
    "calls": {"pane", "infra", "text", "errors", "cancel", "target", "results"},
    "agents": {"pane", "infra", "text", "errors", "cancel", "target", "results"},
    "audit": {"infra", "text", "errors", "results"},
    "api": {"calls", "agents", "audit", "pane", "infra", "text", *VOCABULARY},
    "tmux_bridge": PUBLIC - {"tmux_bridge"},  # the lazy table of the public names
    # the faces: the public API, and the faces they start
    "web": PUBLIC,
    "mcp": PUBLIC | {"web"},
    "server": PUBLIC | {"web", "mcp"},
    "cli": PUBLIC | {"server", "mcp"},
    "__main__": {"cli"},
}

# Imports against the rules that are still to be removed (issue 21): each entry must
# still be needed, so the list only shrinks.
PENDING: set[tuple[str, str]] = set()
# Import cycles still to be broken (issue 21), likewise.
PENDING_CYCLES: list[list[str]] = []


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> Iterator[str]:
    """The modules of ours that ``module`` imports, anywhere in its source."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [
                f"{source}.{alias.name}" if f"{source}.{alias.name}" in MODULES else source
                for alias in node.names
            ]
        else:
            continue
        for target in targets:
            while target not in MODULES and "." in target:
                target = target.rpartition(".")[0]
            if target in MODULES and target != module:
                yield target


GRAPH = {name: sorted(set(_imported(name, path))) for name, path in MODULES.items()}


def layer(module: str) -> str:
    """The layer a module belongs to: its package under tmux_bridge, or itself."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def test_every_layer_has_a_rule() -> None:
    assert {layer(name) for name in MODULES} <= set(ALLOWED)


def _short(module: str) -> str:
    return module.partition(".")[2] or module


def _allowed(module: str, target: str) -> bool:
    rule = ALLOWED[layer(module)] | BASE
    return layer(target) == layer(module) or layer(target) in rule or _short(target) in rule


def _violations() -> set[tuple[str, str]]:
    return {
        (_short(name), _short(target))
        for name, targets in GRAPH.items()
        for target in targets
        if not _allowed(name, target)
    }


def test_imports_keep_to_the_layers() -> None:
    assert sorted(_violations() - PENDING) == []


def test_the_pending_list_only_shrinks() -> None:
    assert sorted(PENDING - _violations()) == []


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in GRAPH[node]:
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(_short(name) for name in component))

    for node in GRAPH:
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_import_cycles() -> None:
    assert [cycle for cycle in _cycles() if cycle not in PENDING_CYCLES] == []


def test_the_pending_cycles_only_go() -> None:
    assert [cycle for cycle in PENDING_CYCLES if cycle not in _cycles()] == []


def test_no_cycles_between_layers() -> None:
    edges = {
        (layer(a), layer(b))
        for a, targets in GRAPH.items()
        for b in targets
        if (_short(a), _short(b)) not in PENDING
    }
    assert sorted((a, b) for a, b in edges if a != b and (b, a) in edges) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from ..calls.command import run\n", ["tmux_bridge.calls.command"]),
        ("def f():\n    from ..calls import repl\n", ["tmux_bridge.calls.repl"]),
        (
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..api import Bridge\n",
            ["tmux_bridge.api"],
        ),
        ("import tmux_bridge.infra.tmux\n", ["tmux_bridge.infra.tmux"]),
        ("from . import common\n", ["tmux_bridge.cli.common"]),
    ],
    ids=["relative", "lazy", "type-checking", "absolute", "sibling"],
)
def test_the_walk_sees_every_kind_of_import(
    tmp_path: Path, source: str, expected: list[str]
) -> None:
    path = tmp_path / "probe.py"
    path.write_text(source)
    assert sorted(set(_imported("tmux_bridge.cli.probe", path))) == expected


@pytest.mark.parametrize(
    ("module", "target", "allowed"),
    [
        ("tmux_bridge.text.shells", "tmux_bridge.text.markers", True),
        ("tmux_bridge.text.shells", "tmux_bridge.errors", False),
        ("tmux_bridge.calls.command", "tmux_bridge.pane.info", True),
        ("tmux_bridge.pane.info", "tmux_bridge.calls.command", False),
        ("tmux_bridge.cli.send", "tmux_bridge.api", True),
        ("tmux_bridge.cli.send", "tmux_bridge.text.seams", True),
        ("tmux_bridge.cli.send", "tmux_bridge.calls.command", False),
        ("tmux_bridge.mcp.tools", "tmux_bridge.infra.runtime", False),
        ("tmux_bridge.server.app", "tmux_bridge.web.security", True),
        ("tmux_bridge.web.security", "tmux_bridge.server.app", False),
    ],
)
def test_the_rules_say_what_they_mean(module: str, target: str, allowed: bool) -> None:
    assert _allowed(module, target) is allowed
