"""The source scan behind ``test_seam_fmt.py``: every tmux command in ``tmux_bridge/``
whose argument tmux expands as a format gets that argument from the seam
(``tmux_bridge/text/seams.py``, "tmux formats") or writes it itself as a constant.

Read from the AST, so a new call cannot slip past: a tmux command is a list or tuple
whose first item is a tmux command name, or the arguments of ``X.run(NAME, ...)``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple, TypeGuard

PACKAGE = Path(__file__).resolve().parents[2] / "tmux_bridge"

# `tmux list-commands` of tmux 3.3a (test_seam_fmt.py compares them with tmux's own)
_COMMAND_NAMES = """attach-session bind-key break-pane capture-pane choose-buffer choose-client
    choose-tree clear-history clear-prompt-history clock-mode command-prompt
    confirm-before copy-mode customize-mode delete-buffer detach-client display-menu
    display-message display-popup display-panes find-window has-session if-shell
    join-pane kill-pane kill-server kill-session kill-window last-pane last-window
    link-window list-buffers list-clients list-commands list-keys list-panes
    list-sessions list-windows load-buffer lock-client lock-server lock-session move-pane
    move-window new-session new-window next-layout next-window paste-buffer pipe-pane
    previous-layout previous-window refresh-client rename-session rename-window
    resize-pane resize-window respawn-pane respawn-window rotate-window run-shell
    save-buffer select-layout select-pane select-window send-keys send-prefix
    server-access set-buffer set-environment set-hook set-option set-window-option
    show-buffer show-environment show-hooks show-messages show-options
    show-prompt-history show-window-options source-file split-window start-server
    suspend-client swap-pane swap-window switch-client unbind-key unlink-window
    wait-for"""
TMUX_COMMANDS = frozenset(_COMMAND_NAMES.split())

POSITIONAL = ""  # the key of a command's positional arguments in Grammar.expanded


class Grammar(NamedTuple):
    """What tmux 3.3a does with one command's arguments: the flags that take a value
    (its getopt string) and, for each argument it expands as a format (a flag letter,
    or POSITIONAL), the seam functions that may build it (a constant of ours may too)."""

    value_flags: str
    expanded: dict[str, frozenset[str]]


_DIR = frozenset({"start_directory"})
_TEXT = frozenset({"format_text"})
_NONE: frozenset[str] = frozenset()
GRAMMAR = {
    "new-session": Grammar("cefnstxyF", {"c": _DIR, "s": _TEXT, "n": _TEXT, "F": _NONE}),
    "new-window": Grammar("ceFnt", {"c": _DIR, "n": _TEXT, "F": _NONE}),
    "split-window": Grammar("ceFlpt", {"c": _DIR, "F": _NONE}),
    "respawn-pane": Grammar("cet", {"c": _DIR}),
    "respawn-window": Grammar("cet", {"c": _DIR}),
    "pipe-pane": Grammar("t", {POSITIONAL: frozenset({"pipe_command"})}),
    "display-message": Grammar(
        "cdtF", {POSITIONAL: frozenset({"message_text", "format_text_timed"}), "F": _NONE}
    ),
    "run-shell": Grammar("cdt", {POSITIONAL: _NONE}),
    "if-shell": Grammar("t", {POSITIONAL: frozenset({"command_line"})}),
    "rename-window": Grammar("t", {POSITIONAL: _TEXT}),
    "rename-session": Grammar("t", {POSITIONAL: _TEXT}),
    "select-pane": Grammar("PTt", {"T": _TEXT}),
    "display-menu": Grammar("cMOtTxy", {POSITIONAL: _NONE, "T": _NONE}),
    "display-popup": Grammar("BbcdehsStTwxy", {POSITIONAL: _NONE, "T": _NONE}),
    "command-prompt": Grammar("ItpT", {POSITIONAL: _NONE}),
    "confirm-before": Grammar("ctp", {POSITIONAL: _NONE}),
    "list-panes": Grammar("Fft", {"F": _NONE, "f": _NONE}),
    "list-sessions": Grammar("Ff", {"F": _NONE, "f": _NONE}),
    "list-windows": Grammar("Fft", {"F": _NONE, "f": _NONE}),
    "list-clients": Grammar("Ft", {"F": _NONE}),
}
NOTICE_OPTION = "NOTICE_OPTION"  # shown by the person's status-right: drawn_text only

# Dynamic text in an expanded argument that is ours all the same, by its exact source,
# with the reason. A change to the expression fails the scan until it is looked at again.
ALLOWED = {
    "f'#{{==:#{{{WATCH_PIPE_OPTION}}},{token}}}'": (
        "tap.py: unpipe_if_ours refuses a token that is not [A-Za-z0-9_-]+ (the live view's:"
        " the basename of mkdtemp and a count)"
    ),
    "f'#{{m:*/{folder}/{leaf},#{{{WATCH_OPTION}}}}}'": (
        "tap.py: unmark_if_ours refuses a FIFO whose directory or name is not [A-Za-z0-9_-]+"
        " (the live view's: the basename of mkdtemp and 'stream'); the path above stays out"
    ),
}


class Finding(NamedTuple):
    where: str  # file:line
    what: str


def scan(root: Path = PACKAGE) -> tuple[list[Finding], set[str]]:
    """Every bypass in the modules under ``root``, and the ALLOWED expressions seen."""
    findings: list[Finding] = []
    allowed_seen: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        module = _Module(ast.parse(source), f"{path.relative_to(root.parent)}")
        findings += module.check()
        allowed_seen |= module.allowed_seen
    return findings, allowed_seen


def scan_source(source: str, name: str = "m.py") -> list[Finding]:
    """The bypasses in one module's source (for the scan's own tests)."""
    return _Module(ast.parse(source), name).check()


class _Module:
    def __init__(self, tree: ast.Module, name: str) -> None:
        self.tree = tree
        self.name = name
        self.allowed_seen: set[str] = set()
        self.seam_names = _seam_imports(tree)
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node

    def check(self) -> list[Finding]:
        found = []
        for node in ast.walk(self.tree):
            command = self._command(node)
            if command is not None:
                found += self._check_command(node, command)
            if _is_call_to(node, "run") and any(self._seam(arg) for arg in node.args):
                found.append(
                    self._finding(
                        node,
                        "a seam's text passed to Tmux.run, which does not escape a trailing "
                        "';' (use run_all)",
                    )
                )
            if isinstance(node, ast.JoinedStr) and self._tmux_command_string(node):
                found.append(
                    self._finding(
                        node, "a tmux command string built by hand (use seams.command_line)"
                    )
                )
        return found

    # --- finding the commands -----------------------------------------------------

    def _command(self, node: ast.AST) -> list[ast.expr] | None:
        """The items of a tmux command at ``node`` (name first), or None."""
        if isinstance(node, (ast.List, ast.Tuple)) and node.elts:
            items = list(node.elts)
        elif _is_call_to(node, "run") or _is_call_to(node, "argv"):
            items = list(node.args)
        else:
            return None
        return items if items and _str_value(items[0]) in TMUX_COMMANDS else None

    def _tmux_command_string(self, node: ast.JoinedStr) -> bool:
        """Whether ``node`` is a tmux command string with text not ours in it."""
        head = "".join(_str_value(v) or "" for v in node.values)
        words = head.replace(";", " ").split()
        return any(word in TMUX_COMMANDS for word in words) and not self._ours(node)

    # --- checking one command -----------------------------------------------------

    def _check_command(self, at: ast.AST, items: list[ast.expr]) -> list[Finding]:
        name = _str_value(items[0]) or ""
        grammar = GRAMMAR.get(name)
        if grammar is None and name != "set-option":
            return []
        flags, values, positional = _parse(items[1:], grammar.value_flags if grammar else "t")
        found = []
        if grammar is not None:
            for flag, node in values:
                if flag in grammar.expanded:
                    found += self._check_arg(node, grammar.expanded[flag], f"{name} -{flag}")
            if POSITIONAL in grammar.expanded:
                for node in positional:
                    found += self._check_arg(node, grammar.expanded[POSITIONAL], name)
        elif len(positional) >= 2:  # set-option OPTION VALUE
            option, value = positional[0], positional[1]
            if isinstance(option, ast.Name) and option.id == NOTICE_OPTION:
                found += self._check_arg(value, frozenset({"drawn_text"}), name, strict=True)
            elif "F" in flags:
                found += self._check_arg(value, _TEXT, f"{name} -F")
        return found

    def _check_arg(
        self, node: ast.expr, seams: frozenset[str], what: str, strict: bool = False
    ) -> list[Finding]:
        if self._built_by(node, seams, strict):
            return []
        wanted = " or ".join(f"seams.{s}" for s in sorted(seams)) or "a constant of ours"
        return [self._finding(node, f"{what}: {ast.unparse(node)} is not built by {wanted}")]

    def _built_by(self, node: ast.expr, seams: frozenset[str], strict: bool) -> bool:
        """Whether ``node`` is a call to one of ``seams`` (or a name only ever bound to
        one), or (unless ``strict``) text of ours."""
        seam = self._seam(node)
        if seam is not None:
            return seam in seams
        if isinstance(node, ast.Name):
            values = self._assignments(node)
            if values and all(self._seam(v) in seams for v in values):
                return True
        return not strict and not isinstance(node, ast.Starred) and self._ours(node)

    # --- what is ours ---------------------------------------------------------------

    def _seam(self, node: ast.expr) -> str | None:
        """The seam function ``node`` calls, if it is such a call."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            return func.attr if func.value.id == "seams" else None
        if isinstance(func, ast.Name) and func.id in self.seam_names:
            return func.id
        return None

    def _ours(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether ``node`` is text we wrote: constants, constant names, and strings
        made of them (never a parameter, an attribute or a call's result)."""
        source = ast.unparse(node)
        if source in ALLOWED:
            self.allowed_seen.add(source)
            return True
        if depth > 8:
            return False
        if isinstance(node, ast.Constant):
            return isinstance(node.value, (str, int))
        if isinstance(node, ast.JoinedStr):
            return all(
                self._ours(v.value if isinstance(v, ast.FormattedValue) else v, depth + 1)
                for v in node.values
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            return self._ours(node.left, depth + 1) and self._ours(node.right, depth + 1)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            return node.func.id == "str" and all(self._ours(a, depth + 1) for a in node.args)
        if isinstance(node, ast.Name):
            return node.id.isupper() or self._assigned_ours(node, depth)
        return False

    def _assigned_ours(self, name: ast.Name, depth: int) -> bool:
        """Whether every value bound to ``name`` is ours."""
        values = self._assignments(name)
        return bool(values) and all(self._ours(v, depth + 1) for v in values)

    def _assignments(self, name: ast.Name) -> list[ast.expr]:
        """The values bound to ``name`` by assignments in its function (else the module);
        ``a, b = x, y`` binds ``a`` to ``x``. A value not known (a loop variable, a
        parameter, ``a, b = f()``) makes the list empty."""
        scope: ast.AST = self.tree
        parent = self.parents.get(name)
        while parent is not None:
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope = parent
                break
            parent = self.parents.get(parent)
        values: list[ast.expr] = []
        for node in ast.walk(scope):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == name.id:
                    values.append(node.value)
                elif isinstance(target, ast.Tuple) and any(
                    isinstance(t, ast.Name) and t.id == name.id for t in target.elts
                ):
                    if not isinstance(node.value, ast.Tuple):
                        return []
                    names = [t.id if isinstance(t, ast.Name) else "" for t in target.elts]
                    values.append(node.value.elts[names.index(name.id)])
        if not values and scope is not self.tree and name in self.parents:
            return self._assignments(ast.Name(name.id))  # a module-level name
        return values

    def _finding(self, node: ast.AST, what: str) -> Finding:
        return Finding(f"{self.name}:{getattr(node, 'lineno', '?')}", what)


def _parse(
    items: list[ast.expr], value_flags: str
) -> tuple[set[str], list[tuple[str, ast.expr]], list[ast.expr]]:
    """The flags, the (flag, value) pairs and the positional arguments of a command,
    read as tmux's getopt does (flags first, ``--`` ends them)."""
    flags: set[str] = set()
    values: list[tuple[str, ast.expr]] = []
    it: Iterator[ast.expr] = iter(items)
    for node in it:
        if isinstance(node, ast.Starred):
            continue  # flags of ours (a geometry, keys): never an expanded argument here
        texts = _flag_texts(node)
        if texts == ["--"]:
            return flags, values, list(it)
        if not texts:
            return flags, values, [node, *it]
        letters = {letter for text in texts for letter in text[1:]}
        flags |= letters
        for letter in sorted(letters & set(value_flags)):
            values.append((letter, next(it)))
    return flags, values, []


def _flag_texts(node: ast.expr) -> list[str]:
    """The flag cluster(s) ``node`` may be (``"-h" if x else "-v"`` is either), or []."""
    if isinstance(node, ast.IfExp):
        texts = _flag_texts(node.body) + _flag_texts(node.orelse)
        return texts if len(texts) == 2 else []
    text = _str_value(node)
    if text is None or not text.startswith("-") or len(text) < 2:
        return []
    return [text]


def _seam_imports(tree: ast.Module) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("seams"):
            names |= {alias.asname or alias.name for alias in node.names}
    return names


def _str_value(node: ast.AST) -> str | None:
    """The text of a string constant, else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _is_call_to(node: ast.AST, method: str) -> TypeGuard[ast.Call]:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == method
    )
