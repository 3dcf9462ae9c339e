"""The tools: each one call of :class:`tmux_bridge.api.Bridge` on a worker thread.

Their structured content is the document the command line prints with ``--json``
(:func:`tmux_bridge.report.to_document`, ``tmux-bridge status --json``, ``tmux-bridge
panes --json`` as ``panes``), each stream capped (:mod:`.cap`). A :class:`BridgeError`
becomes a tool error: a sentence for the model with what to do or ask the person and
the ``error_code``, and the error document as structured content. The facade keeps the
audit log, with the client's name from its initialize request.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import Field

from ..api import NO_ORIGIN, Bridge, Origin
from ..cancel import Cancel
from ..errors import BridgeError, InvalidRequest
from ..report import check_document, error_document, to_document
from ..results import CallResult, JobResult, LineEdit, RunOptions
from ..target import Target
from .cap import DEFAULT_CAP, MAX_CAP, MIN_CAP
from .progress import Calls, Key, Live, Report, in_thread
from .schemas import (
    AgentsDocument,
    CheckDocument,
    JobDocument,
    JobsDocument,
    MessageDocument,
    OutputPageDocument,
    PanesDocument,
    ReceiptDocument,
    ResultDocument,
    StatusDocument,
)
from .texts import advice, error_text

Ctx = Context[Any, Any]
MAX_COMMAND = 128 * 1024  # characters of a command or of REPL code
MAX_TEXT = 8000  # characters typed at once
MAX_CONTENT = 8 * 1024 * 1024  # characters of a file written
MAX_SECONDS = 3600.0
MAX_KEYS = 200
IDLE, MAX_TIME = RunOptions().idle_timeout, RunOptions().max_time  # tmux-send's defaults
MODES = {  # the mode an error document names, as the result's would
    "run": "command", "start_repl": "repl_start", "evaluate": "repl_eval",
    "close_repl": "repl_close", "send_keys": "keys", "type_text": "type",
    "read_screen": "screen", "pane_info": "command", "read_file": "read",
    "write_file": "write", "edit_file": "edit", "status": "status", "list_panes": "panes",
    "list_agents": "agents", "send_prompt": "prompt", "send_message": "message",
    "start_job": "job", "read_job": "job", "wait_job": "job", "kill_job": "job",
    "list_jobs": "job",
    "read_output": "output",
    "stat_file": "stat", "list_backups": "backups", "restore_file": "restore",
    "edit_lines": "edit", "check_content": "check",
}  # fmt: skip

Pane = Annotated[
    str | None,
    Field(
        max_length=128,
        description="The pane: a label, a pane id (%3), WINDOW.PANE or SESSION:WINDOW.PANE; "
        "default: the bridge pane.",
    ),
]
Timeout = Annotated[
    float,
    Field(gt=0, le=MAX_SECONDS, description="Seconds without output before it is interrupted."),
]
MaxTime = Annotated[
    float,
    Field(gt=0, le=MAX_SECONDS, description="Seconds in all (waiting for the pane included)."),
]
MaxOutput = Annotated[
    int,
    Field(
        ge=MIN_CAP,
        le=MAX_CAP,
        description="Bytes of the whole result (its JSON text) at most; beyond it stdout and "
        "stderr keep their head and tail around a cut line, and the whole stream is saved in "
        "a file (stdout_file, stderr_file) that read_output pages through.",
    ),
]
Code = Annotated[str, Field(min_length=1, max_length=MAX_COMMAND)]
ReplName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=32,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="A preset (python, node, psql, sqlite3, ...) or any name with prompt.",
    ),
]
Prompt = Annotated[
    str | None,
    Field(
        max_length=256,
        description="A regex for the REPL's prompt line (no preset needed; counts up to 1000).",
    ),
]
Path = Annotated[str, Field(min_length=1, max_length=4096, description="Relative to the shell.")]
Backup = Annotated[bool, Field(description="Copy an existing file to a backup first.")]
Result = Annotated[CallToolResult, ResultDocument]
Make = Callable[[Bridge, Cancel, list[str]], CallResult]


def client_name(ctx: Ctx) -> str:
    """The client's name from its initialize request (``mcp`` when it gave none)."""
    params = ctx.request_context.session.client_params
    return params.client_info.name if params is not None else "mcp"


def http_key(ctx: Ctx) -> Key | None:
    """The MCP session and request id of a call that came over HTTP (None on stdio)."""
    headers = getattr(ctx.request_context.request, "headers", None)
    session = headers.get("mcp-session-id") if headers is not None else None
    return (session, ctx.request_id) if isinstance(session, str) else None


def success(document: dict[str, Any]) -> CallToolResult:
    """The document as structured content, and as JSON text for clients that show text."""
    text = json.dumps(document, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=document
    )


def failure(error: BridgeError, tool: str, shown: str, notes: list[str]) -> CallToolResult:
    """A tool error: the sentence for the model, and the error document ``tmux-send
    --json`` prints (its hint among the notes)."""
    hint = advice(error, tool)
    document = error_document(error, shown, MODES[tool], [*notes, *([hint] if hint else [])])
    text = error_text(error, tool)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=document, is_error=True
    )


class Tools:
    """The tools, on the tmux server, session and runtime directory of ``base``."""

    def __init__(self, base: Target, calls: Calls, origin: Origin = NO_ORIGIN) -> None:
        self.base = base
        self.calls = calls
        self.origin = origin  # who sends a message that names no sender

    def _bridge(self, ctx: Ctx, pane: str | None) -> Bridge:
        return Bridge(self.base.with_pane(pane), client_name(ctx))

    async def _call(
        self,
        ctx: Ctx,
        tool: str,
        shown: str,
        pane: str | None,
        make: Make,
        max_output: int = DEFAULT_CAP,
        live: Live | None = None,
    ) -> CallToolResult:
        """Make one call that gives a :class:`CallResult`; its document, capped."""
        bridge, notes = self._bridge(ctx, pane), list[str]()

        def work(cancel: Cancel) -> CallResult:
            return make(bridge, cancel, notes)

        try:
            result = await in_thread(self.calls, work, live, http_key(ctx))
        except BridgeError as exc:
            return failure(exc, tool, shown, notes)
        out = bytes(live.stdout) if live is not None else result.stdout or b""
        err = bytes(live.stderr) if live is not None else result.stderr or b""
        document = to_document(result, stdout=out, stderr=err, notes=notes)
        bridge.fit_document_within(document, {"stdout": out, "stderr": err}, max_output)
        return success(document)

    async def _plain(
        self, ctx: Ctx, tool: str, pane: str | None, make: Callable[[Bridge], dict[str, Any]]
    ) -> CallToolResult:
        """Make one call that gives a document of its own (status, panes)."""
        bridge = self._bridge(ctx, pane)
        try:
            document = await in_thread(self.calls, lambda _cancel: make(bridge))
        except BridgeError as exc:
            return failure(exc, tool, "", [])
        return success(document)

    # --- commands and REPLs --------------------------------------------------------------

    async def run(
        self,
        command: Annotated[str, Field(min_length=1, max_length=MAX_COMMAND)],
        ctx: Ctx,
        pane: Pane = None,
        timeout: Timeout = IDLE,
        max_time: MaxTime = MAX_TIME,
        raw: Annotated[bool, Field(description="Keep terminal control sequences.")] = False,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Result:
        options, live = (
            agent_named(ctx, self.origin, RunOptions(timeout, max_time, raw)),
            Live(_reporter(ctx)),
        )

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.run(
                command,
                options,
                stdout=live.out,
                stderr=live.err,
                notice=notes.append,
                cancel=cancel,
            )

        return await self._call(ctx, "run", command, pane, make, max_output, live)

    async def start_repl(
        self,
        name: ReplName,
        command: Annotated[str, Field(min_length=1, max_length=MAX_COMMAND)],
        ctx: Ctx,
        prompt: Prompt = None,
        pane: Pane = None,
        timeout: Timeout = IDLE,
        max_time: MaxTime = MAX_TIME,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Result:
        limits = agent_named(ctx, self.origin, RunOptions(timeout, max_time))
        return await self._repl(ctx, "start_repl", name, command, prompt, pane, limits, max_output)

    async def evaluate(
        self,
        name: ReplName,
        code: Code,
        ctx: Ctx,
        prompt: Prompt = None,
        pane: Pane = None,
        timeout: Timeout = IDLE,
        max_time: MaxTime = MAX_TIME,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Result:
        limits = agent_named(ctx, self.origin, RunOptions(timeout, max_time))
        return await self._repl(ctx, "evaluate", name, code, prompt, pane, limits, max_output)

    async def _repl(
        self,
        ctx: Ctx,
        tool: str,
        name: str,
        text: str,
        prompt: str | None,
        pane: str | None,
        options: RunOptions,
        max_output: int,
    ) -> Result:
        """``start_repl`` or ``evaluate``: the same call but for the facade's method."""
        live = Live(_reporter(ctx))

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            method = bridge.start_repl if tool == "start_repl" else bridge.evaluate
            return method(
                name, text, options, prompt=prompt, stdout=live.out, notice=notes.append,
                cancel=cancel,
            )  # fmt: skip

        return await self._call(ctx, tool, text, pane, make, max_output, live)

    async def close_repl(self, ctx: Ctx, pane: Pane = None, max_time: MaxTime = MAX_TIME) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.close_repl(options, notice=notes.append, cancel=cancel)

        return await self._call(ctx, "close_repl", "", pane, make)

    # --- keys and the screen -------------------------------------------------------------

    async def send_keys(
        self,
        keys: Annotated[
            list[Annotated[str, Field(min_length=1, max_length=64)]],
            Field(min_length=1, max_length=MAX_KEYS, description="tmux key names, in order."),
        ],
        ctx: Ctx,
        pane: Pane = None,
    ) -> Result:
        def make(bridge: Bridge, _cancel: Cancel, _notes: list[str]) -> CallResult:
            return bridge.send_keys(keys)

        return await self._call(ctx, "send_keys", " ".join(keys), pane, make)

    async def type_text(
        self,
        text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT)],
        ctx: Ctx,
        enter: Annotated[bool, Field(description="Press Enter after the text.")] = False,
        pane: Pane = None,
    ) -> Result:
        def make(bridge: Bridge, _cancel: Cancel, _notes: list[str]) -> CallResult:
            return bridge.type_text(text, enter)

        return await self._call(ctx, "type_text", text, pane, make)

    async def read_screen(
        self,
        ctx: Ctx,
        pane: Pane = None,
        lines: Annotated[
            int, Field(ge=0, le=50_000, description="0: the visible screen; N: the last N lines.")
        ] = 0,
        join_wrapped: Annotated[bool, Field(description="Join wrapped lines.")] = True,
    ) -> Result:
        def make(bridge: Bridge, _cancel: Cancel, _notes: list[str]) -> CallResult:
            return bridge.screen(lines, join_wrapped)

        return await self._call(ctx, "read_screen", "", pane, make, MAX_CAP)

    async def status(
        self, ctx: Ctx, pane: Pane = None
    ) -> Annotated[CallToolResult, StatusDocument]:
        return await self._plain(ctx, "status", pane, lambda bridge: bridge.status().document())

    async def list_panes(
        self,
        ctx: Ctx,
        every_session: Annotated[bool, Field(description="Every session's panes.")] = False,
    ) -> Annotated[CallToolResult, PanesDocument]:
        return await self._plain(
            ctx,
            "list_panes",
            None,
            lambda bridge: {"panes": [e.document() for e in bridge.panes(every_session)]},
        )

    async def pane_info(self, ctx: Ctx, pane: Pane = None, max_time: MaxTime = MAX_TIME) -> Result:
        options, facts = RunOptions(max_time=max_time), dict[str, Any]()

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            result, found = bridge.info(options, notice=notes.append, cancel=cancel)
            facts.update(found)
            return result

        result = await self._call(ctx, "pane_info", "", pane, make)
        if not result.is_error and isinstance(result.structured_content, dict):
            return success({**result.structured_content, "info": facts})
        return result

    async def read_output(
        self,
        ctx: Ctx,
        output: Annotated[
            str,
            Field(
                min_length=1,
                max_length=4096,
                description="A stdout_file or stderr_file path, or a call's id (ID for its "
                "stdout, ID.stderr).",
            ),
        ],
        offset: Annotated[int, Field(ge=0, description="The first line (from 0).")] = 0,
        limit: Annotated[int, Field(ge=1, le=100_000, description="Lines at most.")] = 200,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Annotated[CallToolResult, OutputPageDocument]:
        bridge = self._bridge(ctx, None)

        def page(_cancel: Cancel) -> dict[str, Any]:
            found = bridge.read_output(output, offset, limit)
            text = found.data.decode("utf-8", "replace")
            cut = len(text) > max_output // 2  # a page of very long lines
            return {
                "path": found.path, "offset": found.offset, "lines": found.lines,
                "total_lines": found.total_lines, "total_bytes": found.total_bytes,
                "more": found.more,
                "next_offset": found.offset + found.lines if found.more else None,
                "text": text[: max_output // 2] if cut else text, "text_cut": cut,
            }  # fmt: skip

        try:
            document = await in_thread(self.calls, page)
        except BridgeError as exc:
            return failure(exc, "read_output", output, [])
        return success(document)

    # --- files ---------------------------------------------------------------------------

    async def read_file(
        self,
        path: Path,
        ctx: Ctx,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.read_file(path, options=options, notice=notes.append, cancel=cancel)

        return await self._call(ctx, "read_file", path, pane, make, max_output)

    async def write_file(
        self,
        path: Path,
        content: Annotated[str, Field(max_length=MAX_CONTENT, description="The text (UTF-8).")],
        ctx: Ctx,
        backup: Backup = True,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            try:
                data = content.encode("utf-8")
            except UnicodeEncodeError:
                raise InvalidRequest("content holds a lone surrogate: no UTF-8 for it.") from None
            return bridge.write_file(
                path, data, backup=backup, options=options, notice=notes.append, cancel=cancel
            )

        return await self._call(ctx, "write_file", path, pane, make)

    async def edit_file(
        self,
        path: Path,
        old: Annotated[str, Field(min_length=1, max_length=MAX_CONTENT)],
        new: Annotated[str, Field(max_length=MAX_CONTENT)],
        ctx: Ctx,
        backup: Backup = True,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.edit_file(
                path, old, new, backup=backup, options=options, notice=notes.append, cancel=cancel
            )

        return await self._call(ctx, "edit_file", path, pane, make, max_output)


JobId = Annotated[
    str, Field(min_length=1, max_length=64, description="The job's id, as start_job gave it.")
]
JobReply = Annotated[CallToolResult, JobDocument]


Sha256 = Annotated[
    str | None,
    Field(
        min_length=64,
        max_length=64,
        description="The SHA-256 the file must still have (the one a read, stat or write "
        "gave); else file_changed and nothing is done.",
    ),
]
Kind = Literal["json", "yaml", "toml", "python", "jq", "sh", "bash", "zsh", "fish"]


class FileTools(Tools):
    """The files' keeping and checks: stat, backups, restore, line edits, checks by kind."""

    async def stat_file(
        self, path: Path, ctx: Ctx, pane: Pane = None, max_time: MaxTime = MAX_TIME
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.stat_file(path, options=options, notice=notes.append, cancel=cancel)

        return await self._call(ctx, "stat_file", path, pane, make)

    async def list_backups(
        self,
        ctx: Ctx,
        path: Annotated[
            str | None, Field(max_length=4096, description="Only this file's backups.")
        ] = None,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.list_backups(path, options=options, notice=notes.append, cancel=cancel)

        return await self._call(ctx, "list_backups", path or "", pane, make, MAX_CAP)

    async def restore_file(
        self,
        path: Path,
        ctx: Ctx,
        backup: Annotated[
            str | None, Field(max_length=64, description="A backup's id (list_backups).")
        ] = None,
        if_sha256: Sha256 = None,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            return bridge.restore_file(
                path, backup, options=options, notice=notes.append, cancel=cancel,
                if_sha256=if_sha256,
            )  # fmt: skip

        return await self._call(ctx, "restore_file", path, pane, make)

    async def edit_lines(
        self,
        path: Path,
        action: Literal["replace", "insert", "delete", "append"],
        ctx: Ctx,
        line: Annotated[int, Field(ge=0, description="The line, from 1 (append: unused).")] = 0,
        text: Annotated[str, Field(max_length=MAX_CONTENT)] = "",
        if_sha256: Sha256 = None,
        backup: Backup = True,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> Result:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel, notes: list[str]) -> CallResult:
            edit = LineEdit(action, line, _utf8(text))
            return bridge.edit_lines(
                path, edit, backup=backup, options=options, notice=notes.append,
                cancel=cancel, if_sha256=if_sha256,
            )  # fmt: skip

        return await self._call(ctx, "edit_lines", path, pane, make, max_output)

    async def check_content(
        self,
        content: Annotated[str, Field(max_length=MAX_CONTENT, description="The text (UTF-8).")],
        ctx: Ctx,
        kind: Kind | None = None,
        name: Annotated[
            str, Field(max_length=4096, description="A path whose extension tells the kind.")
        ] = "-",
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
    ) -> Annotated[CallToolResult, CheckDocument]:
        options = RunOptions(max_time=max_time)

        def make(bridge: Bridge, cancel: Cancel) -> dict[str, Any]:
            notes: list[str] = []
            result = bridge.check_content(
                _utf8(content), kind, name, options, notice=notes.append, cancel=cancel
            )
            return check_document(result, notes)

        bridge = self._bridge(ctx, pane)
        try:
            document = await in_thread(self.calls, lambda cancel: make(bridge, cancel))
        except BridgeError as exc:
            return failure(exc, "check_content", name, [])
        return success(document)


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRequest("the text holds a lone surrogate: no UTF-8 for it.") from None


class JobTools(FileTools):
    """The tools for jobs: commands that run on after the call that started them."""

    async def start_job(
        self,
        command: Annotated[str, Field(min_length=1, max_length=MAX_COMMAND)],
        ctx: Ctx,
        pane: Pane = None,
        max_time: MaxTime = MAX_TIME,
    ) -> JobReply:
        options = agent_named(ctx, self.origin, RunOptions(max_time=max_time))
        return await self._job(
            ctx, "start_job", command, pane, lambda b, _c: b.start_job(command, options)
        )

    async def read_job(
        self,
        job: JobId,
        ctx: Ctx,
        all: Annotated[bool, Field(description="Everything from the start.")] = False,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> JobReply:
        return await self._job(
            ctx, "read_job", job, None, lambda b, _c: b.job(job, everything=all), max_output
        )

    async def wait_job(
        self,
        job: JobId,
        ctx: Ctx,
        timeout: Annotated[
            float, Field(gt=0, le=MAX_SECONDS, description="Seconds without new output.")
        ] = 60.0,
        max_time: MaxTime = MAX_TIME,
        max_output: MaxOutput = DEFAULT_CAP,
    ) -> JobReply:
        options, live = RunOptions(timeout, max_time), Live(_reporter(ctx))

        def make(bridge: Bridge, cancel: Cancel) -> JobResult:
            result = bridge.wait_job(job, options, stdout=live.out, stderr=live.err, cancel=cancel)
            return result._replace(stdout=bytes(live.stdout), stderr=bytes(live.stderr))

        return await self._job(ctx, "wait_job", job, None, make, max_output, live)

    async def kill_job(self, job: JobId, ctx: Ctx) -> JobReply:
        return await self._job(ctx, "kill_job", job, None, lambda b, _c: b.kill_job(job))

    async def list_jobs(self, ctx: Ctx) -> Annotated[CallToolResult, JobsDocument]:
        return await self._plain(
            ctx, "list_jobs", None, lambda bridge: {"jobs": [j.document() for j in bridge.jobs()]}
        )

    async def _job(
        self,
        ctx: Ctx,
        tool: str,
        shown: str,
        pane: str | None,
        make: Callable[[Bridge, Cancel], JobResult],
        max_output: int = DEFAULT_CAP,
        live: Live | None = None,
    ) -> CallToolResult:
        """One job call; its document cut to ``max_output`` as a call's is (the job's
        byte totals kept)."""
        bridge = self._bridge(ctx, pane)
        try:
            result = await in_thread(
                self.calls, lambda cancel: make(bridge, cancel), live, http_key(ctx)
            )
        except BridgeError as exc:
            return failure(exc, tool, shown, [])
        document = result.document()
        totals = {name: document[name + "_bytes"] for name in ("stdout", "stderr")}
        streams = {"stdout": result.stdout, "stderr": result.stderr}
        bridge.fit_document_within(document, streams, max_output)
        for name, total in totals.items():  # a job's totals so far, not this read's
            document[name + "_bytes"] = total
        return success(document)


Agent = Annotated[str, Field(min_length=1, max_length=128, description="A name from list_agents.")]
Text = Annotated[str, Field(min_length=1, max_length=MAX_COMMAND)]
Wait = Annotated[float, Field(gt=0, le=MAX_SECONDS, description="Seconds to wait at most.")]


class AgentTools(JobTools):
    """The tools for agents talking to agents."""

    async def list_agents(self, ctx: Ctx) -> Annotated[CallToolResult, AgentsDocument]:
        return await self._plain(
            ctx,
            "list_agents",
            None,
            lambda bridge: {"agents": [a.document() for a in bridge.agents()]},
        )

    async def send_prompt(
        self,
        ctx: Ctx,
        agent: Agent,
        text: Text,
        replace_draft: Annotated[bool, Field(description="Clear a draft in the box.")] = False,
        timeout: Wait = 30.0,
    ) -> Annotated[CallToolResult, ReceiptDocument]:
        def make(bridge: Bridge, cancel: Cancel) -> dict[str, Any]:
            receipt = bridge.send_prompt(
                agent, text, replace_draft=replace_draft, timeout=timeout, cancel=cancel
            )
            return receipt.document()

        return await self._agent_call(ctx, "send_prompt", text, make)

    async def send_message(
        self,
        ctx: Ctx,
        to: Agent,
        text: Text,
        sender: Annotated[
            str | None,
            Field(max_length=128, description="Your name: 1-40 of A-Z a-z 0-9 _ . -"),
        ] = None,
        wait_reply: Annotated[bool, Field(description="Wait for the answer.")] = False,
        timeout: Wait = 300.0,
    ) -> Annotated[CallToolResult, MessageDocument]:
        def make(bridge: Bridge, cancel: Cancel) -> dict[str, Any]:
            sent = bridge.send_message(
                to, text, sender=sender, origin=self.origin, wait_reply=wait_reply,
                timeout=timeout, cancel=cancel,
            )  # fmt: skip
            return sent.document()

        return await self._agent_call(ctx, "send_message", text, make)

    async def _agent_call(
        self, ctx: Ctx, tool: str, shown: str, make: Callable[[Bridge, Cancel], dict[str, Any]]
    ) -> CallToolResult:
        bridge = self._bridge(ctx, None)
        try:
            document = await in_thread(
                self.calls, lambda cancel: make(bridge, cancel), key=http_key(ctx)
            )
        except BridgeError as exc:
            return failure(exc, tool, shown, [])
        return success(document)


def agent_named(ctx: Ctx, origin: Origin, options: RunOptions) -> RunOptions:
    """``options`` with the calling agent's name, for the header the person sees in the
    pane: the name the stdio server's environment declares (``$TMUX_BRIDGE_AGENT``, as
    for tmux-send), else the name the MCP client gave for itself when it connected
    (``clientInfo.name`` of its ``initialize`` request). A name that is no name
    (1 to 40 of A-Z a-z 0-9 _ . -) is left out of the header by the core."""
    params = ctx.request_context.session.client_params
    return options._replace(agent=origin.name or (params.client_info.name if params else None))


def _reporter(ctx: Ctx) -> Report:
    """Progress for this request: the bytes of output so far, and the new text."""

    async def report(progress: float, text: str) -> None:
        await ctx.report_progress(progress, None, text)

    return report
