"""What a model reads: the tool table, each tool's description, the server's
instructions, and the advice added to a tool error by its ``error_code``.

Pure text (no SDK): the tool list in docs/mcp.md is compared with :data:`TOOLS` by a test.
"""

from __future__ import annotations

from ..errors import BridgeError, NoBridgeSession, ReplError
from ..tuples import NamedTuple

NO_BRIDGE = (
    "If it fails with error_code no_bridge, no bridge terminal runs: tell the person to "
    "start one by running `tmux-bridge` in their own terminal (do not try to start it "
    "yourself), then call the tool again."
)
LONG = (
    "A long output is cut to fit max_output (the whole result, default 32 KiB): stdout keeps "
    "its head, one cut line and its tail; stdout_file (before the text) holds all of it: "
    "read the rest with read_output."
)
PANE = (
    "pane picks the terminal: a label, a pane id (%3), WINDOW.PANE or SESSION:WINDOW.PANE "
    "(default: the bridge pane); list_panes shows them."
)


class ToolText(NamedTuple):
    """One tool: its name, whether it only reads (``--readonly`` serves only those),
    whether it may destroy what was there, its title and its description."""

    name: str
    read_only: bool
    destructive: bool
    title: str
    description: str


TOOLS: tuple[ToolText, ...] = (
    ToolText(
        "run",
        False,
        True,
        "Run a command in the person's terminal",
        "Run a shell command in the terminal a person watches (the tmux-bridge pane), in "
        "that pane's own shell, as if you ran it yourself: cd, export and functions persist "
        "between calls, sudo can ask the person for a password, ssh reaches what the person "
        "can reach. Returns the command's exact stdout, its stderr separately and its exit "
        "status (exit_status: the command's own; 124 when a timeout interrupted it, 130 "
        "when it was cancelled). Output arrives as progress notifications while it runs; "
        "cancelling the call interrupts the command like Ctrl-C. Use it for the commands "
        "the person should see or may need to answer; for full-screen programs (vim, top) "
        "use type_text, send_keys and read_screen instead. timeout is the idle timeout "
        "(seconds without output), max_time the overall one. "
        + LONG
        + " "
        + PANE
        + " "
        + NO_BRIDGE,
    ),
    ToolText(
        "start_repl",
        False,
        False,
        "Start a REPL in the person's terminal",
        "Start an interactive interpreter (a REPL) in the pane and wait for its prompt: "
        "name is a preset (python, node, psql, sqlite3, ...) or any name with prompt, a "
        "regex for its prompt line; command is the shell command that starts it (python3, "
        "psql -h db). Then send code with evaluate and quit with close_repl. Use it when "
        "state must live on between snippets (a database session, a loaded dataset). "
        "When the pane's shell has ssh, su or sudo -i open at a far prompt, python and node "
        "start on that far side (the other presets are refused there). " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "evaluate",
        False,
        True,
        "Evaluate code in the open REPL",
        "Evaluate code in the REPL start_repl opened in the pane (name must match it). "
        "stdout is what the REPL printed in response, without the echo and prompts; "
        "exit_status 0, or 1 when the REPL reported an error. Output arrives as progress "
        "notifications; cancelling interrupts the evaluation like Ctrl-C and the REPL stays "
        "open. " + LONG + " " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "close_repl",
        False,
        False,
        "Quit the open REPL",
        "Quit the REPL start_repl opened in the pane, the way it expects (exit(), \\q, "
        "...), back to the shell. Nothing is typed when none is open. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "send_keys",
        False,
        True,
        "Press keys in the person's terminal",
        "Send tmux key names to whatever is in front in the pane (C-c, Enter, Escape, Up, "
        "q, y, F1, ...) and return the screen once it settles. Use it to answer a prompt, "
        "leave a pager or interrupt a program; it takes no lock and does not wait for a "
        "command. Literal text goes through type_text. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "type_text",
        False,
        True,
        "Type text into the person's terminal",
        "Type text literally into whatever is in front in the pane (no control "
        "characters; keys such as Enter or C-c go through send_keys), then Enter when "
        "enter is true; returns the screen once it settles. Use it for answers to "
        "programs that ask (a [Y/n], a menu), not for shell commands: run those with run, "
        "which returns their output. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "read_screen",
        True,
        False,
        "Read the person's terminal",
        "The text on the pane's screen now (with lines=N, also the N lines of history "
        "above it): to see what a program in front shows, what the person did, or why a "
        "call was refused (pane_busy). Changes nothing. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "status",
        True,
        False,
        "Whether the bridge runs and what is in front",
        "Whether the bridge session runs (running false: ask the person to start it with "
        "`tmux-bridge`), the pane's shell and directory, the program in front (foreground "
        "null: the shell waits at its prompt), the open REPL and a call in flight. Cheap; "
        "call it first when unsure. Changes nothing. " + PANE,
    ),
    ToolText(
        "list_panes",
        True,
        False,
        "List the bridge's panes",
        "Every pane of the bridge session (every_session: of the tmux server): its target "
        "and label (what the pane parameter of the other tools takes), shell, user, host, "
        "directory, what is in front, a call in flight, and the platform and last command "
        "remembered for it. Changes nothing. " + NO_BRIDGE,
    ),
    ToolText(
        "pane_info",
        True,
        False,
        "The platform of a pane's shell",
        "The platform of the pane's shell (os, kernel, architecture, distribution, host, "
        "user, shell and its version, directory) and its host's tools (grep, sed, awk, date, "
        "stat, find, xargs, tar: gnu, bsd or busybox; gnu_tools; package_manager), found "
        "by one short probe command run in that shell (so it sees through ssh); in info. "
        "Use it before commands that differ "
        "between systems. Changes nothing on the system. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "read_file",
        True,
        False,
        "Read a file through the person's terminal",
        "Read a file through the pane's shell, as its user and on its machine (through "
        "ssh too): stdout holds the exact content (stdout_b64 when it is not UTF-8), file "
        "its size, mode, mtime and SHA-256, checked end to end. path is relative to the "
        "shell's directory. Changes nothing. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "write_file",
        False,
        True,
        "Write a file through the person's terminal",
        "Write content to a file through the pane's shell, as its user and on its machine: "
        "SHA-256 checked there, moved into place atomically, an existing file first copied "
        "to a backup (file.backup) unless backup is false. path is relative to the shell's "
        "directory. For a change inside a file prefer edit_file. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "edit_file",
        False,
        True,
        "Edit a file through the person's terminal",
        "Replace the one occurrence of old with new in a file, through the pane's shell "
        "(none or several occurrences: an error, the file untouched), after a backup unless "
        "backup is false; stdout is the unified diff. old must be the file's exact text, "
        "spaces and line ends included (read_file shows it). " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "read_output",
        True,
        False,
        "Read a saved output page by page",
        "Read a page of lines of a saved output: when a result was too long, its stdout "
        "(stderr) holds the head, one cut line `[tmux-bridge: N lines (M bytes) of stdout "
        "not shown (truncated); all of it is in PATH]` and the tail, and stdout_file "
        "(stderr_file) is PATH. Pass that path (or the call's id) as output, offset (the "
        "first line, from 0) and limit (lines); more and next_offset say whether lines "
        "follow. Saved outputs are kept a day. Changes nothing.",
    ),
    ToolText(
        "list_agents",
        True,
        False,
        "List the AI agents in tmux panes",
        "The AI agents running in panes of the tmux server (Claude Code, Codex, Gemini and "
        "other agent CLIs, or sessions that declare one): name (what send_prompt and "
        "send_message take), runtime, role, rig, workDir, attached (a person watches), pane, "
        "target, state (working, idle, needs_person, starting, unknown), question (what "
        "the person must answer) and aliases: what `tmux-bridge agents` shows the person. "
        "Changes nothing.",
    ),
    ToolText(
        "send_prompt",
        False,
        True,
        "Send a prompt to another agent",
        "Put text into another agent's input box and submit it, as if the person typed it; "
        "returns delivered true only once that agent showed it took it (its box emptied and "
        "the text appears, or it started working), with the Enter presses it needed. It "
        "waits up to timeout seconds for a working agent; a draft someone left in the box "
        "is refused (error_code draft_in_input) unless replace_draft. For work to hand "
        "over, prefer send_message, which says the text comes from you, not the person. "
        "The person sees it in `tmux-bridge log`.",
    ),
    ToolText(
        "send_message",
        False,
        True,
        "Send a message to another agent",
        "Send a message to another agent (a name from list_agents), marked as from you "
        "(sender: 1-40 of A-Z a-z 0-9 _ . -, default your agent's name; a name given "
        "outside any agent's pane arrives as from NAME (unverified)), not from the "
        "person. It is kept in the inbox and delivered as a prompt when that agent is idle: "
        "state delivered, or pending (it is delivered later, without you, to the same "
        "program, for up to a day; then expired) or failed. Control characters in text "
        "arrive as visible symbols, never as keys. With wait_reply, waits until the agent "
        "has answered (up to timeout seconds) and returns its answer in reply. The person "
        "sees messages with `tmux-bridge inbox` and a notice on their status line.",
    ),
)
JOB_TOOLS: tuple[ToolText, ...] = (
    ToolText(
        "start_job",
        False,
        True,
        "Start a job in the person's terminal",
        "Start a shell command as a job: it runs on in the pane (the person watches it) "
        "after this returns, which is once it runs. Returns the job document; its job is "
        "the id read_job, wait_job and kill_job take. Use it for builds, installs, test "
        "suites and servers, anything that may run long or stay quiet, instead of run with "
        "a long timeout. While it runs the pane refuses other calls (pane_busy names the "
        "job): use another pane. max_time is how long to wait for the pane. "
        + PANE
        + " "
        + NO_BRIDGE,
    ),
    ToolText(
        "read_job",
        True,
        False,
        "Read a job's new output",
        "A job's state and what it printed since the last read of it (all: everything "
        "from the start): stdout and stderr apart, exact; every byte is handed out once. "
        "exit_status is null while it runs, then the command's own. The person watches the "
        "job run in their tmux-bridge pane.",
    ),
    ToolText(
        "wait_job",
        True,
        False,
        "Wait for a job to end",
        "Wait until a job ends and return what it printed that was not read yet; new "
        "output arrives as progress notifications. timeout (seconds without new output) "
        "and max_time end the wait, not the job (timed_out says so; wait again). "
        "Cancelling the call leaves the job running in the tmux-bridge pane.",
    ),
    ToolText(
        "kill_job",
        False,
        True,
        "Interrupt a job",
        "Interrupt a job as a timeout would (Ctrl-C, then Ctrl-\\ after 3 s) and return it "
        "once it ended (state interrupted), as the person would with Ctrl-C in their "
        "tmux-bridge pane. A job that ended already is returned as it is.",
    ),
    ToolText(
        "list_jobs",
        True,
        False,
        "List the jobs",
        "Every job known in the runtime directory, oldest first, without output: id, pane, "
        "command, state, exit status, bytes so far, start and end: what `tmux-send --jobs` "
        "shows the person of their tmux-bridge panes. Changes nothing.",
    ),
)
TOOLS = TOOLS + JOB_TOOLS
# the files' keeping and checks (stat, backups, restore, line edits, checks by kind)
FILE_TOOLS: tuple[ToolText, ...] = (
    ToolText(
        "stat_file",
        True,
        False,
        "A file's size, mode, mtime and checksums",
        "The facts of a file through the pane's shell, as its user and on its machine: "
        "file holds its size, mode, mtime, SHA-256 and MD5; its content does not travel. "
        "Use the sha256 as if_sha256 of a later write or edit. Changes nothing. "
        + PANE
        + " "
        + NO_BRIDGE,
    ),
    ToolText(
        "list_backups",
        True,
        False,
        "List the backups of files",
        "The backups kept on the pane's host (a write, edit or restore keeps the old "
        "content in ~/.cache/tmux-bridge/backups there): backups lists each (id, time, "
        "path, size, sha256), oldest first; all, or those of path. Changes nothing. "
        + PANE
        + " "
        + NO_BRIDGE,
    ),
    ToolText(
        "restore_file",
        False,
        True,
        "Put a file's backup back",
        "Put back the newest backup of a file (or the backup named by backup, an id from "
        "list_backups), through the pane's shell; the current content is backed up first, "
        "so a restore can be undone. With if_sha256 the file must still have that SHA-256. "
        + PANE
        + " "
        + NO_BRIDGE,
    ),
    ToolText(
        "edit_lines",
        False,
        True,
        "Edit a file by line number",
        "Replace, insert before or delete line `line` (from 1) of a file, or append text "
        "to its end (action append), through the pane's shell, after a backup unless "
        "backup is false; stdout is the unified diff. A line the file does not have is an "
        "error (edit_no_line), the file untouched. Pass the sha256 you last saw as "
        "if_sha256 so a file changed since is not edited. " + PANE + " " + NO_BRIDGE,
    ),
    ToolText(
        "check_content",
        True,
        False,
        "Check a text by kind before writing or running it",
        "Whether content is valid json, yaml, toml, python, jq, sh, bash, zsh or fish "
        "(kind; or by the extension of name), judged by the validators of the pane's host "
        "(validator: which; null when it has none, and then valid is null): valid, and "
        "error with line, column and message. Nothing is written or run. " + PANE + " " + NO_BRIDGE,
    ),
)
TOOLS = TOOLS + FILE_TOOLS
TOOL_NAMES = tuple(tool.name for tool in TOOLS)
READ_ONLY = frozenset(tool.name for tool in TOOLS if tool.read_only)

INSTRUCTIONS = (
    "tmux-bridge runs your commands in a terminal a person watches and can type into "
    "(their own shell, in tmux), and returns exact stdout, stderr and exit status. Use "
    "run for commands, start_repl/evaluate/close_repl for interpreters, type_text and "
    "send_keys to answer what a program asks, read_screen to look. The person may be "
    "using the terminal too: when a call is refused (pane_busy, half_typed_line), look "
    "with read_screen and ask them rather than forcing it. If no bridge runs "
    "(error_code no_bridge, or status says running false), ask the person to start it by "
    "running `tmux-bridge` in their terminal. To hand work to another AI agent in a tmux "
    "pane, list_agents, then send_message (or send_prompt)."
)

# What to do about an error, in terms of the tools (the core's messages name no flags).
ADVICE = {
    "no_bridge": "Tell the person to start it by running `tmux-bridge` in their own "
    "terminal (do not try to start it yourself), then call the tool again.",
    "pane_busy": "If a job runs there (the message names it), wait_job waits for it; "
    "use another pane meanwhile. Otherwise look with read_screen. Answer what the "
    "program asks with type_text or send_keys, or ask the person to finish or stop it; "
    "interrupt it (send_keys C-c) only if it is yours or the person agrees.",
    "half_typed_line": "The person has typed at the prompt and not run it: ask them to run "
    "or clear their line; do not clear it yourself.",
    "pane_not_at_prompt": "Ask the person to bring the pane back to a shell prompt "
    "(read_screen shows what is there).",
    "pane_not_ready": "Look with read_screen and ask the person to bring the pane back to "
    "its prompt.",
    "lock_timeout": "Another call holds the pane; call again later, or pass a larger "
    "max_time to wait longer.",
    "no_such_pane": "list_panes shows the panes with their targets and labels.",
    "no_such_job": "list_jobs shows the jobs that are known.",
    "ambiguous_pane": "list_panes shows the panes with their targets and labels; name the "
    "pane by its id (%N).",
    "repl_not_open": "Start it with start_repl first.",
    "pane_piped": "Ask the person to stop the pipe-pane they set up on this pane.",
    "far_repl_unsupported": "Only python and node REPLs go into a far shell; run that "
    "REPL's statements through run (its command line) instead.",
    "edit_no_match": "old must be the file's exact text, spaces and line ends included; "
    "read_file shows it.",
    "edit_ambiguous": "Give an old that takes in more of the neighbouring lines, so that it "
    "occurs once.",
    "file_changed": "Call edit_file again: it reads the file anew.",
    "tmux_not_found": "Ask the person to install tmux.",
    "tmux_timeout": "Ask the person whether their tmux server is stopped or overloaded.",
    "runtime_dir_unsafe": "Ask the person to fix the runtime directory as the message says.",
    "session_closed": "Ask the person whether they closed the bridge; `tmux-bridge` "
    "starts it again.",
    "far_shell_lost": "The far shell (ssh, su, a container) went away mid-command; read_screen "
    "shows where the pane is now. Ask the person to reconnect before calling again.",
    "cancelled": "Nothing was typed; call again when you want it done.",
    "no_such_agent": "list_agents shows the agents that run now.",
    "self_send": "Send it to another agent.",
    "agent_busy": "The agent is still working: send_message queues the text until it is "
    "idle, or call again later.",
    "no_input_box": "The agent shows a question or a menu, likely for the person: tell them.",
    "draft_in_input": "Someone (likely the person) is typing to that agent: ask them, or "
    "call again with replace_draft only if they agree.",
    "prompt_not_taken": "Look at the agent with read_screen (its pane) before trying again.",
    "agent_changed": "Its pane runs something else now: list_agents shows whether the agent "
    "is back, read_screen what runs there.",
    "unconfirmed": "It was submitted and may well have been taken: do not send it again; "
    "read_screen (its pane) shows whether the agent works on it.",
    "ambiguous_agent": "Call again with one of the names the message lists (a pane id is "
    "never ambiguous).",
    "invalid_sender": "Give sender as your own name: 1 to 40 letters, digits, '_', '.' or '-'.",
    "inbox_error": "Ask the person to look at the inbox file the message names.",
    "inbox_corrupt": "Tell the person: the message names the file their old inbox was moved "
    "to. Sending again uses a new inbox.",
}


def tool_table(readonly: bool = False) -> str:
    """The tools as a Markdown table (the list in docs/mcp.md): name, whether it only reads,
    and its title."""
    rows = ["| tool | read-only | what it does |", "| --- | --- | --- |"]
    for tool in TOOLS:
        if tool.read_only or not readonly:
            mark = "yes" if tool.read_only else ""
            rows.append(f"| `{tool.name}` | {mark} | {tool.title} |")
    return "\n".join(rows) + "\n"


def advice(error: BridgeError, tool: str) -> str:
    """What the model should do or ask the person about ``error``, in terms of the tools;
    empty when the message says all."""
    if isinstance(error, ReplError) and error.code == "repl_mismatch":
        if error.repl is None:
            return "No REPL is open: call run, or start_repl first."
        return (
            f"The REPL {error.repl} is open in the pane: evaluate code in it with "
            f"name={error.repl!r}, or quit it with close_repl first."
        )
    if error.code == "invalid_request" and tool == "type_text":
        return "Send keys such as Enter or C-c with send_keys."
    if error.code == "invalid_request" and tool == "send_keys":
        return "Type literal text with type_text."
    return ADVICE.get(error.code, "")


def error_text(error: BridgeError, tool: str) -> str:
    """The text of a tool error: what is in the way, what to do or ask the person, and
    the ``error_code`` (the same as ``tmux-send --json`` gives)."""
    if isinstance(error, NoBridgeSession):
        message = str(error) or "No tmux-bridge session is running, so there is no terminal."
    else:
        message = str(error)
    hint = advice(error, tool)
    return f"{message}{' ' + hint if hint else ''} (error_code: {error.code})"
