"""The servers' seams: a client's regular expression on its way to the regex engine
(``tmux_bridge/infra/patterns.py``), the order in which ``serve`` reads a request (gates,
role, action, then fields), text that is no text (lone surrogates), and clients that
never finish their request (slowloris).

The pattern check is fed every character 0x00-0xff and the hostile patterns of issue 20,
and Hypothesis checks that its reading of a pattern's nesting is exact and that whatever
it lets through compiles in bounded memory and time. The servers are real ``tmux-bridge
serve`` subprocesses; the one sent the 15 GB pattern runs under an address-space limit,
so a regression fails the test instead of eating the machine.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import json
import os
import re
import resource
import signal
import socket
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import anyio
import httpx2
import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

import tmux_bridge
from tmux_bridge.errors import InvalidRequest
from tmux_bridge.infra.patterns import check_pattern, compile_pattern, compile_timed, pattern_weight

from ..support.mcp_client import CLIENT
from ..support.pane import WAIT, MakeBridge, TestPane
from ..support.serve import TOKEN, Server, running

# The bounds as docs/http-api.md and the module's docstring state them, written out.
MAX_PATTERN = 256
MAX_REPEAT = 1000
MAX_WEIGHT = 10_000
REQUEST_TIME = 10.0  # seconds for a request's head and body
MAX_PENDING = 256  # connections sending a request at once
MAX_WAITING = 64  # /ws connections waiting to give their token
BOMB = "(?:x{65535}){65535}"  # the 19 characters that asked regex for 15 GB
ADDRESS_SPACE = 2 << 30  # bytes the server under test may map: far below 15 GB
READ_ONLY = "read-only-token-0123456789-abcdef"
SOURCE = Path(tmux_bridge.__file__).parent


# --- the pattern check, pure ---------------------------------------------------------------


@contextlib.contextmanager
def address_space_guard(extra: int = 1 << 30) -> Iterator[None]:
    """While inside: this process may map at most ``extra`` bytes more than now, so a
    pattern that expands without end raises MemoryError instead of eating the machine."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = int(Path("/proc/self/statm").read_text().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = size + extra if hard == resource.RLIM_INFINITY else min(size + extra, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def outcome(pattern: str) -> str:
    """ "refused" (by the check), "invalid" (the engine's compile error, as a sentence) or
    "compiled"; any other exception fails the test."""
    try:
        check_pattern(pattern, "wait_for")
    except InvalidRequest:
        return "refused"
    try:
        compile_timed(pattern, "wait_for", 0.1)
    except InvalidRequest:
        return "invalid"
    return "compiled"


CODES = [*range(0x100), 0x85, 0x9B, 0x2028, 0xD800, 0xDBFF, 0xDC80, 0xDFFF, 0xFEFF]
TEMPLATES = ["{c}", "a{c}b", "(?:a{c}){{3}}", "[{c}]", "^{c}$", "x{{2}}{c}", "({c})"]


@pytest.mark.parametrize("code", CODES, ids=[f"{c:#06x}" for c in CODES])
def test_every_character_alone_and_inside_a_pattern(code: int) -> None:
    """Nothing but a refusal, a compile error (both InvalidRequest) or a pattern; and the
    character escaped always passes and matches exactly itself, in both engines."""
    char = chr(code)
    for template in TEMPLATES:
        outcome(template.format(c=char))
    escaped = re.escape(char)
    check_pattern(escaped, "wait_for")
    assert compile_timed(escaped, "wait_for", 0.1).match(char).group() == char
    assert compile_pattern(escaped, "wait_for").match(char).group() == char


class HostileCase(NamedTuple):
    test_id: str
    pattern: str
    says: str  # in the refusal


# Each would make an engine expand without bound, or is syntax whose nesting a reader
# could take wrongly (so that a count hides from it): refused before any compile.
HOSTILE = [
    HostileCase("bomb", BOMB, "repeat count of 65535"),
    HostileCase("one-huge-count", "x{4294967294}", "repeat count"),
    HostileCase("nested-product", "(?:x{1000}){1000}", "1000000 atoms"),
    HostileCase("three-levels", "(?:(?:x{100}){10}){11}", "11000 atoms"),
    HostileCase("stacked-counts", "x{10}{10}{10}{11}", "11000 atoms"),
    HostileCase("paren-in-a-set", "(?:[)]x{1000}){1000}", "1001000 atoms"),
    HostileCase("verbose-comment", "(?x)(?:x{1000} # )\n){1000}", "(?x)"),
    HostileCase("comment-group", "(?#(()(?:x{1000}){1000}", "(?#("),
    HostileCase("posix-class", "[[:alpha:](](?:x{100}){101}", "inside a set"),
    HostileCase("nested-set-v1", "(?V1)[[a](](?:x{100}){101}", "(?V1"),
    HostileCase("fuzzy", "(?:x{100}){e<=100}", "starts no count"),
    HostileCase("recursion", "(?R)", "(?R)"),
    HostileCase("subroutine", "(x)(?1)", "(?1)"),
    HostileCase("named-call", "(?P<a>x)(?&a)", "(?&a"),
    HostileCase("branch-reset", "(?|a|b)", "(?|a"),
    HostileCase("conditional", "(x)?(?(1)a|b)", "(?(1"),
    HostileCase("name-hides-counts", "(?<x)(?:y{1000}){1000}>", "(?<x"),
    HostileCase("escape-hides-counts", r"\N{(?:x{1000}){1000}}", "starts no count"),
    HostileCase("tmux-format", "#{pane_id}", "starts no count"),
    HostileCase("unclosed", "(" * 200, "not closed"),
    HostileCase("too-long", "a" * (MAX_PATTERN + 1), "too long"),
]


@pytest.mark.parametrize("case", HOSTILE, ids=[c.test_id for c in HOSTILE])
def test_hostile_patterns_are_refused_before_compiling(case: HostileCase) -> None:
    with pytest.raises(InvalidRequest) as refused:
        check_pattern(case.pattern, "wait_for")
    assert case.says in str(refused.value)
    assert str(refused.value).startswith("wait_for ")


@pytest.mark.parametrize(
    "payload",
    ["#(touch /tmp/x)", "#[fg=red]", "\x1b[201~", "\x1b]52;c;aGk=\x07", "\r\x1b[2K", "\x9b2K"],
)
def test_terminal_and_tmux_payloads_are_only_text_to_the_engine(payload: str) -> None:
    """Patterns are never typed or expanded anywhere: escaped, each matches itself."""
    pattern = re.escape(payload)
    assert compile_timed(pattern, "wait_for", 0.1).search(f"a{payload}b").group() == payload


def test_the_largest_patterns_let_through_are_cheap() -> None:
    """At the weight limit, with the costliest atoms measured (sets, properties, case
    folding): milliseconds and a few MB to compile."""
    largest = [
        "(?:x{100}){100}",
        r"(?:[\p{L}\p{N}]{100}){100}",
        "(?i)(?:[a-zß]{100}){100}",
        "(?:(?:(?:x{10}){10}){10}){10}",
        "(?:(a)|(b)|(c)|(d)){1000}",
    ]
    for pattern in largest:
        assert pattern_weight(pattern, "wait_for") <= MAX_WEIGHT
        regex.purge()
        with address_space_guard():
            tracemalloc.start()
            started = time.thread_time()  # CPU time: other helpers' load does not count
            compile_timed(pattern, "wait_for", 0.1)
            elapsed = time.thread_time() - started
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        assert elapsed < 0.5 and peak < 32 << 20, (pattern, elapsed, peak)


def test_a_search_that_backtracks_gives_up_in_time() -> None:
    compiled = compile_timed("(x+x+)+y", "wait_for", 0.1)
    started = time.monotonic()
    with pytest.raises(InvalidRequest, match=r"took more than 0\.1 s"):
        compiled.search("x" * 5000)
    assert time.monotonic() - started < 2


# A pattern as a tree, rendered to text, with the weight the tree says it has.
class Tree(NamedTuple):
    text: str
    weight: int
    counts: tuple[int, ...]  # every count written in it


ATOMS = ["x", "y", ".", r"\d", "[ab]", r"\.", "[]x]", r"[\]]", "[^)(]", r"\{", r"\p{L}"]
OPENERS = ["(", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?>", "(?i:", "(?s-i:", "(?P<g>", "(?<n>"]


def _atom(text: str) -> Tree:
    return Tree(text, 1, ())


def _group(pair: tuple[str, list[Tree]]) -> Tree:
    opener, alternatives = pair
    inner = "|".join(t.text for t in alternatives)
    total = sum(t.weight for t in alternatives)
    counts = tuple(n for t in alternatives for n in t.counts)
    return Tree(f"{opener}{inner})", max(total, 1), counts)


def _sequence(items: list[Tree]) -> Tree:
    counts = tuple(n for t in items for n in t.counts)
    return Tree("".join(t.text for t in items), sum(t.weight for t in items), counts)


@st.composite
def _quantified(draw: st.DrawFn, item: st.SearchStrategy[Tree]) -> Tree:
    tree = draw(item)
    low = draw(st.integers(0, 1500))
    high = draw(st.integers(low, 2000))
    kind = draw(st.sampled_from(["*", "+", "?", "{m}", "{m,}", "{m,n}", "{,n}", "", "+?"]))
    if kind in ("", "*", "+", "?", "+?"):
        return Tree(tree.text + kind, tree.weight, tree.counts)
    written = {"{m}": (low,), "{m,}": (low,), "{m,n}": (low, high), "{,n}": (high,)}[kind]
    text = kind.replace("m", str(low)).replace("n", str(high))
    return Tree(tree.text + text, tree.weight * max(1, *written), tree.counts + written)


def _extend(inner: st.SearchStrategy[Tree]) -> st.SearchStrategy[Tree]:
    """An item quantified, or a group of alternatives, each a sequence of items."""
    sequence = st.lists(inner, min_size=1, max_size=3).map(_sequence)
    alternatives = st.lists(sequence, min_size=1, max_size=3)
    return _quantified(
        st.one_of(inner, st.tuples(st.sampled_from(OPENERS), alternatives).map(_group))
    )


ITEMS = st.recursive(st.sampled_from(ATOMS).map(_atom), _extend, max_leaves=12)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(ITEMS, min_size=1, max_size=4).map(_sequence))
def test_the_check_reads_nesting_exactly_and_what_it_passes_compiles_cheaply(tree: Tree) -> None:
    """The weight the check reads is the tree's own (no count hides from it in a set,
    an escape or a group); a pattern it lets through compiles in under 32 MB and 0.5 s of CPU."""
    if any(n > MAX_REPEAT for n in tree.counts):
        with pytest.raises(InvalidRequest, match="repeat count"):
            pattern_weight(tree.text, "wait_for")
        return
    assert pattern_weight(tree.text, "wait_for") == tree.weight
    if tree.weight > MAX_WEIGHT or len(tree.text) > MAX_PATTERN:
        with pytest.raises(InvalidRequest):
            check_pattern(tree.text, "wait_for")
        return
    regex.purge()
    with address_space_guard():
        tracemalloc.start()
        started = time.thread_time()  # CPU time: the machine's load does not count
        with contextlib.suppress(InvalidRequest):  # a lookbehind the engine will not take
            compile_timed(tree.text, "wait_for", 0.1)
        elapsed = time.thread_time() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert elapsed < 0.5 and peak < 32 << 20, (tree.text, elapsed, peak)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_any_text_escaped_is_a_pattern_that_matches_it(text: str) -> None:
    """The round trip: ``re.escape`` of any text (control characters, C1, surrogates,
    braces, #) passes the check and matches exactly that text, in both engines."""
    pattern = re.escape(text)
    if len(pattern) > MAX_PATTERN:
        return
    found = compile_timed(pattern, "wait_for", 0.1).search(text)
    assert found is not None and found.group() == text
    assert compile_pattern(pattern, "wait_for").search(text).group() == text


def test_every_preset_prompt_passes_the_check() -> None:
    from tmux_bridge.text.presets import PRESETS

    for preset in PRESETS.values():
        check_pattern(preset.ready, "the prompt")


# --- by construction: no client pattern reaches an engine around patterns.py --------------

CLIENT_PATTERNS = {"ready", "prompt_re", "wait_for", "prompt"}  # names that carry one
TRUSTED = {"runtime.prompt", "runtime.ready_row"}  # agents/detect.py: RUNTIMES, data of ours
ENGINE_CALLS = {"compile", "search", "match", "fullmatch", "finditer", "findall", "sub", "split"}


def _sources() -> Iterator[tuple[Path, ast.Module]]:
    for path in sorted(SOURCE.rglob("*.py")):
        yield path, ast.parse(path.read_text(), str(path))


def test_only_patterns_py_imports_the_regex_package() -> None:
    importers = []
    for path, tree in _sources():
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(name.split(".")[0] == "regex" for name in names):
                importers.append(path.relative_to(SOURCE).as_posix())
    assert importers == ["infra/patterns.py"]


def test_no_client_pattern_is_compiled_around_patterns_py() -> None:
    """Every ``re.<engine call>(PATTERN, ...)`` outside patterns.py has a pattern that
    names no client's (a prompt, a preset's ``ready``, ``wait_for``)."""
    bypasses = []
    for path, tree in _sources():
        if path.name == "patterns.py":
            continue
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in ENGINE_CALLS
                and node.args
            ):
                continue
            if ast.unparse(node.args[0]) in TRUSTED:
                continue
            for part in ast.walk(node.args[0]):
                name = part.attr if isinstance(part, ast.Attribute) else getattr(part, "id", "")
                if name in CLIENT_PATTERNS:
                    bypasses.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert bypasses == []


# --- /mcp -----------------------------------------------------------------------------------


@pytest.fixture
def mcp_pane(make_bridge: MakeBridge) -> Iterator[TestPane]:
    bridge = make_bridge("bash")
    bridge.start()
    yield bridge


def test_an_mcp_prompt_that_backtracks_cannot_freeze_the_server(mcp_pane: TestPane) -> None:
    """start_repl through /mcp with a prompt pattern that backtracks without end against
    the line the command prints: a tool error (invalid_request) within seconds; /health
    answers and SIGTERM stops the server (``re`` held the interpreter for ever)."""
    line = "x" * 3000
    with running(mcp_pane.env) as server:

        async def go() -> Any:
            headers = {"Authorization": f"Bearer {TOKEN}"}
            with anyio.fail_after(30):
                async with (
                    httpx2.AsyncClient(headers=headers, timeout=30) as http,
                    Client(
                        streamable_http_client(server.base_url + "/mcp", http_client=http),
                        client_info=CLIENT,
                    ) as client,
                ):
                    arguments = {
                        "name": "xrepl",
                        "command": f"printf {line}; cat",
                        "prompt": "(x+x+)+y",
                    }
                    return await client.call_tool("start_repl", arguments)

        started = time.monotonic()
        result = anyio.run(go)
        assert result.is_error
        assert result.structured_content["error_code"] == "invalid_request"
        assert "took more than 0.1 s" in result.structured_content["error"]
        assert time.monotonic() - started < 20
        with server.client() as client:
            assert client.get("/health").status_code == 200
        assert server.stop(signal.SIGTERM, timeout=WAIT)[0] == 0
    # its control clients went with it (one left attached kept the tmux server from
    # ever exiting: kill-server then left it running, unreachable)
    mcp_pane.wait_for(
        lambda: "1" not in mcp_pane.tmux("list-clients", "-F", "#{client_control_mode}").split(),
        "the stopped server's control clients to be gone",
    )
    mcp_pane.tmux("send-keys", "-t", mcp_pane.target, "C-c")
    mcp_pane.wait_for_prompt()


# --- a real server: the bomb, the role before the fields -----------------------------------


@pytest.fixture(scope="module")
def server(pane: TestPane) -> Iterator[Server]:
    path = pane.root / "read-only-token"
    path.write_text(READ_ONLY + "\n")
    path.chmod(0o600)
    with running(
        pane.env,
        "--read-only-token-file",
        str(path),
        wrap=["prlimit", f"--as={ADDRESS_SPACE}", "--"],
    ) as started:
        yield started


def test_the_servers_compile_no_pattern_on_the_event_loop() -> None:
    """No ``async def`` in the servers calls a compiling function itself (nor
    ``parse_request``, which compiled wait_for): it hands it to a thread (as an argument
    of ``run_in_executor``), so the loop keeps answering."""
    compiling = {"screen_matcher", "compile_pattern", "compile_timed", "compile", "parse_request"}
    found = []
    for path, tree in _sources():
        if path.parent.name not in ("server", "mcp"):
            continue
        for function in ast.walk(tree):
            if not isinstance(function, ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Call):
                    func = node.func
                    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                    if name in compiling:
                        found.append(f"{path.relative_to(SOURCE)}:{node.lineno}")
    assert found == []


def test_reading_the_fields_compiles_nothing() -> None:
    """``parse_fields`` checks wait_for's bounds only: a pattern within them that the
    engine refuses (``x{2,1}``) passes it, and fails only when compiled."""
    from tmux_bridge.server import contract

    body = {"action": "send_and_capture", "session": "s", "text": "x", "wait_for": "x{2,1}"}
    assert contract.parse_fields("send_and_capture", body).wait_for == "x{2,1}"
    with pytest.raises(InvalidRequest, match="not a valid regular expression"):
        contract.screen_matcher("x{2,1}")


def test_the_http_handler_checks_the_role_before_reading_fields() -> None:
    """In app.py, the role is compared in the handler before ``parse_fields`` is
    called, and ``parse_request`` (fields with no role between) is not used there."""
    tree = ast.parse((SOURCE / "server" / "app.py").read_text())
    calls = {
        getattr(node.func, "id", ""): node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
    }
    role_checks = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare) and "ROLE" in ast.unparse(node)
    ]
    assert "parse_request" not in calls
    assert role_checks and calls["decode"] < min(role_checks) < calls["parse_fields"]


def post(server: Server, token: str | None, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    content = json.dumps(body).encode()  # ASCII: a lone surrogate goes as "\ud800"
    headers = {"Content-Type": "application/json"}
    with server.client(token, timeout=WAIT, headers=headers) as client:
        response = client.post("/v1/tmux", content=content)
    return response.status_code, response.json()


@pytest.mark.tmux
def test_the_bomb_gets_a_clear_error_fast_and_the_server_stays(pane: TestPane) -> None:
    """With the read-only token (refused for its role before wait_for is looked at), on
    an action it may call (refused for its size, never compiled) and with the full
    token: each answer within a second, /health answers, and SIGTERM stops the server.
    Under a 2 GiB address space, which the old compile on the event loop blew."""
    path = pane.root / "read-only-token-bomb"
    path.write_text(READ_ONLY + "\n")
    path.chmod(0o600)
    server = Server.start(
        pane.env,
        "--read-only-token-file",
        str(path),
        wrap=["prlimit", f"--as={ADDRESS_SPACE}", "--"],
    )
    try:
        sac = {"action": "send_and_capture", "session": pane.session, "text": "x"}
        asked = [
            (READ_ONLY, sac, 403, "read_only"),
            (READ_ONLY, {**sac, "action": "capture_pane"}, 400, "invalid_request"),
            (TOKEN, sac, 400, "invalid_request"),
        ]
        for token, body, status, error_code in asked:
            started = time.monotonic()
            got = post(server, token, {**body, "wait_for": BOMB})
            assert (got[0], got[1]["metadata"]["error_code"]) == (status, error_code), got
            assert time.monotonic() - started < 1.0
            if status == 400:
                assert "repeat count of 65535" in got[1]["error"]
        with server.client() as client:
            assert client.get("/health").json()["ok"] is True
        started = time.monotonic()
        code, out, _err = server.stop(signal.SIGTERM, timeout=WAIT)
        assert (code, out.strip().splitlines()[-1]) == (0, "tmux-bridge serve: stopped.")
        assert time.monotonic() - started < 10  # it takes 2 s unloaded, as before
    finally:
        server.kill()
    assert pane.send_text("--", "true")[0] == 0  # nothing was typed into the pane


@pytest.mark.tmux
def test_the_bomb_in_stub_mode_without_a_token(pane: TestPane) -> None:
    """Stub mode asks no token: any local user may send it. Refused at once."""
    env = {**pane.env, "TMUX_BRIDGE_MODE": "stub"}
    wrap = ["prlimit", f"--as={ADDRESS_SPACE}", "--"]
    with running(env, token=None, wrap=wrap) as server:
        post(server, None, {"action": "create_session", "session": "bomb"})
        body = {"action": "send_and_capture", "session": "bomb", "text": "x", "wait_for": BOMB}
        started = time.monotonic()
        status, document = post(server, None, body)
        assert (status, document["metadata"]["error_code"]) == (400, "invalid_request")
        assert time.monotonic() - started < 1.0
        assert post(server, None, {"action": "list_sessions"})[0] == 200


@pytest.mark.tmux
@pytest.mark.parametrize(
    "body",
    [
        {"action": "run", "command": "x" * (128 * 1024 + 1)},
        {"action": "run", "command": "echo \ud800"},
        {"action": "run", "command": "true", "bogus": 1},
        {"action": "send_and_capture", "session": "s", "text": "x", "wait_for": "(?R)"},
        {"action": "create_session", "session": "bad name"},
    ],
    ids=["oversize", "surrogate", "unknown-field", "pattern", "session-name"],
)
def test_the_read_only_token_is_refused_before_any_field_is_read(
    server: Server, body: dict[str, Any]
) -> None:
    """The role and the action decide first: 403 read_only, whatever the fields hold."""
    status, document = post(server, READ_ONLY, body)
    assert (status, document["metadata"]["error_code"]) == (403, "read_only"), document


# --- lone surrogates, every field and face --------------------------------------------------

SURROGATE = "\ud800"
SURROGATE_FIELDS = [
    {"action": "create_session", "session": SURROGATE},
    {"action": "create_session", "session": "sur-cwd", "cwd": f"/tmp/{SURROGATE}"},
    {"action": "send_keys", "session": "{s}", "text": f"echo {SURROGATE}"},
    {"action": "send_keys", "session": "{s}", "keys": [SURROGATE]},
    {"action": "send_and_capture", "session": "{s}", "text": "x", "wait_for": SURROGATE},
    {"action": "capture_pane", "session": "{s}", "pane": SURROGATE},
    {"action": "run", "command": f"echo {SURROGATE}"},
    {"action": "run", "command": ["echo", SURROGATE]},
    {"action": "start_repl", "name": SURROGATE, "command": "python3"},
    {"action": "start_repl", "name": "python", "command": SURROGATE},
    {"action": "evaluate", "name": "python", "code": f"'{SURROGATE}'"},
]
SURROGATE_IDS = [
    "session", "cwd", "text", "keys", "wait_for", "pane", "command", "command-word",
    "name", "repl-command", "code",
]  # fmt: skip


@pytest.mark.tmux
@pytest.mark.parametrize("fields", SURROGATE_FIELDS, ids=SURROGATE_IDS)
def test_a_lone_surrogate_in_any_field_is_a_clear_400(
    pane: TestPane, server: Server, fields: dict[str, Any]
) -> None:
    body = json.loads(json.dumps(fields).replace("{s}", pane.session))
    before = pane.history()
    status, document = post(server, TOKEN, body)
    assert (status, document["metadata"]["error_code"]) == (400, "invalid_request"), document
    assert "lone surrogate (U+D800" in document["error"]
    assert pane.history() == before  # nothing was typed


@pytest.mark.tmux
def test_names_that_are_no_utf8_come_back_escaped_not_as_500(
    pane: TestPane, server: Server
) -> None:
    """A directory called with byte 0xff: tmux's text for it holds a surrogate escape;
    the reply is still JSON (the byte as ``\\udcff``), not a 500."""
    odd = pane.root / "odd-\udcff"
    os.mkdir(os.fsencode(str(odd)))
    assert pane.send_text("--", f"cd {pane.root}/odd-$(printf '\\377')")[0] == 0
    try:
        for token in (READ_ONLY, TOKEN):
            status, document = post(server, token, {"action": "status"})
            assert status == 200, document
            # (compared as bytes: a failure's report with a lone surrogate in it would
            # crash pytest-xdist's channel instead of showing)
            assert os.fsencode(document["metadata"]["cwd"]) == os.fsencode(odd), ascii(document)
    finally:
        pane.send_text("--", "cd")


def test_an_mcp_call_with_a_lone_surrogate_is_a_json_rpc_error(mcp_pane: TestPane) -> None:
    """The SDK's JSON reader refuses ``\\ud800`` itself: a 4xx JSON-RPC error, nothing
    run, and the server answers the next request."""
    marker = mcp_pane.root / "ran"
    headers = {"Accept": "application/json, text/event-stream"}
    init = {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "0"}},
    }  # fmt: skip
    call = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "run", "arguments": {"command": f"touch {marker} # \ud800"}},
        }
    )
    with running(mcp_pane.env) as server, server.client(headers=headers) as http:
        answer = http.post("/mcp", content=call, headers={"Content-Type": "application/json"})
        assert 400 <= answer.status_code < 500, answer.text
        assert "error" in answer.json()
        assert http.post("/mcp", json=init).status_code == 200
    assert not marker.exists()


# --- slowloris ------------------------------------------------------------------------------


def _port(server: Server) -> int:
    return int(server.base_url.rsplit(":", 1)[1])


def _answer(sock: socket.socket, deadline: float) -> tuple[bytes, float]:
    """What the server sends until it closes the connection, and when it closed it (a
    reset counts: a connection closed before its bytes were read is reset)."""
    data = b""
    while time.monotonic() < deadline:
        sock.settimeout(max(deadline - time.monotonic(), 0.01))
        try:
            chunk = sock.recv(4096)
        except TimeoutError:
            break
        except ConnectionResetError:
            return data, time.monotonic()
        if not chunk:
            return data, time.monotonic()
        data += chunk
    pytest.fail(f"the server did not close the connection in time; it sent {data!r}")


@pytest.mark.tmux
def test_requests_that_never_finish_are_closed_within_the_bound(server: Server) -> None:
    """Half a head, half a body, and half a second request on a kept-alive connection:
    each gets 408 request_timeout and is closed within REQUEST_TIME."""
    port = _port(server)
    health = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    slow: list[socket.socket] = []
    try:
        started = time.monotonic()
        head = socket.create_connection(("127.0.0.1", port))
        head.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        body = socket.create_connection(("127.0.0.1", port))
        body.sendall(
            b"POST /v1/tmux HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        again = socket.create_connection(("127.0.0.1", port))
        again.sendall(health)
        first = b""
        while b'{"ok":true}' not in first:
            first += again.recv(4096)
        again.sendall(b"GET /health HTTP/1.1\r\n")
        slow = [head, body, again]
        deadline = started + REQUEST_TIME + 5
        for sock in slow:
            data, closed = _answer(sock, deadline)
            assert data.startswith(b"HTTP/1.1 408 "), data
            assert json.loads(data.split(b"\r\n\r\n", 1)[1])["metadata"]["error_code"] == (
                "request_timeout"
            )
            assert closed - started < REQUEST_TIME + 3
    finally:
        for sock in slow:
            sock.close()


@pytest.mark.tmux
def test_the_connections_still_sending_a_request_are_bounded(server: Server) -> None:
    """One connection more than MAX_PENDING closes the longest-waiting one at once;
    requests that arrive whole are answered meanwhile."""
    port = _port(server)
    socks = []
    try:
        oldest = socket.create_connection(("127.0.0.1", port))
        oldest.sendall(b"GET /health HTTP/1.1\r\n")  # accepted first: the oldest
        for _ in range(MAX_PENDING):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(b"GET /health HTTP/1.1\r\n")
            socks.append(sock)
        data, _closed = _answer(oldest, time.monotonic() + 3)
        assert data == b"" or data.startswith(b"HTTP/1.1 408 "), data  # or reset
        newest = socks[-1]
        newest.setblocking(False)
        with pytest.raises(BlockingIOError):
            newest.recv(1)  # still open, nothing sent
        with server.client() as client:
            assert client.get("/health").status_code == 200
    finally:
        for sock in [oldest, *socks]:
            sock.close()


# --- /ws ------------------------------------------------------------------------------------


def _ws_url(server: Server) -> str:
    return server.base_url.replace("http://", "ws://") + "/ws"


async def _next_reply(ws: Any, request_id: str | None = None) -> dict[str, Any]:
    while True:
        message = await asyncio.wait_for(ws.recv(), WAIT)
        if isinstance(message, str):
            document = dict(json.loads(message))
            if request_id is None or document.get("id") == request_id:
                return document


@pytest.mark.tmux
def test_ws_refuses_a_lone_surrogate_and_reads_no_frame_before_the_role(
    server: Server,
) -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        headers = {"Authorization": f"Bearer {READ_ONLY}"}
        async with connect(_ws_url(server), additional_headers=headers) as ws:
            await ws.send('{"id": "s", "type": "subscribe-output", "agent": "\\ud800"}')
            surrogate = await _next_reply(ws, "s")
            await ws.send(b"\x02")  # no name, no payload: the role answers first
            frame = await _next_reply(ws)
            await ws.send(json.dumps({"id": "big", "type": "list-panes", "pad": "x" * 300_000}))
            big = await _next_reply(ws)
            return surrogate, frame, big

    surrogate, frame, big = asyncio.run(scenario())
    assert (surrogate["ok"], surrogate["code"]) == (False, "invalid_request"), surrogate
    assert "lone surrogate" in surrogate["error"]
    assert frame["ok"] is False and "watch only" in frame["error"], frame
    assert (big["ok"], big["code"]) == (False, "invalid_request"), big


@pytest.mark.tmux
def test_ws_connections_waiting_for_their_token_are_bounded(server: Server) -> None:
    """At most MAX_WAITING connections may wait to send their token; the next is refused
    (403) and one with the token in its header still gets in."""

    async def scenario() -> tuple[int, dict[str, Any]]:
        async with contextlib.AsyncExitStack() as stack:
            for _ in range(MAX_WAITING):
                await stack.enter_async_context(connect(_ws_url(server)))
            with pytest.raises(InvalidStatus) as refused:
                async with connect(_ws_url(server)):
                    pass
            headers = {"Authorization": f"Bearer {TOKEN}"}
            async with connect(_ws_url(server), additional_headers=headers) as ws:
                await ws.send(json.dumps({"id": "p", "type": "list-panes"}))
                panes = await _next_reply(ws, "p")
            return refused.value.response.status_code, panes

    status, panes = asyncio.run(scenario())
    assert status == 403 and panes["ok"] is True
