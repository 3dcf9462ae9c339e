"""The reply to an error over HTTP, and the one table of HTTP statuses by error code.

Shared by the gates (:mod:`tmux_bridge.web.security`), which refuse before any action
runs, and the server (:mod:`tmux_bridge.server`), which answers an action's error.
"""

from __future__ import annotations

from typing import Any

# Every error code (the core's and the gates') -> the HTTP status of its reply.
HTTP_STATUS: dict[str, int] = {
    "invalid_request": 400,
    "label_taken": 400,
    "ambiguous_pane": 400,
    "repl_error": 400,
    "unauthorized": 401,
    "forbidden_peer": 403,
    "forbidden_host": 403,
    "forbidden_origin": 403,
    "read_only": 403,
    "not_found": 404,
    "no_bridge": 404,
    "no_such_pane": 404,
    "no_such_job": 404,
    "session_closed": 404,
    "method_not_allowed": 405,
    "wait_timeout": 408,
    "request_timeout": 408,  # the request's head and body did not arrive in time (serve.py)
    "session_exists": 409,
    "pane_not_ready": 409,
    "pane_busy": 409,
    "pane_not_at_prompt": 409,
    "half_typed_line": 409,
    "lock_timeout": 409,
    "repl_not_open": 409,
    "repl_mismatch": 409,
    "far_repl_unsupported": 409,
    "pane_piped": 409,
    # files through the pane (the file actions)
    "file_not_found": 404,
    "edit_no_match": 409,
    "edit_ambiguous": 409,
    "edit_no_line": 409,
    "backup_not_found": 404,
    "file_changed": 409,
    "file_too_large": 413,
    "file_error": 500,
    "read_failed": 500,
    "write_failed": 500,
    "checksum_mismatch": 500,
    "no_checksum_tool": 500,
    # saved output (the pager, MCP's read_output)
    "no_saved_output": 404,
    # agents and messages (the WebSocket's send-prompt; no HTTP action yet)
    "self_send": 400,
    "invalid_sender": 400,
    "no_such_agent": 404,
    "not_delivered": 409,
    "agent_busy": 409,
    "no_input_box": 409,
    "draft_in_input": 409,
    "prompt_not_taken": 409,
    "agent_changed": 409,
    "unconfirmed": 409,
    "ambiguous_agent": 409,
    "inbox_error": 500,
    "inbox_corrupt": 500,
    "body_too_large": 413,
    "bridge_error": 500,
    "runtime_dir_unsafe": 500,
    "internal_error": 500,
    "far_shell_lost": 500,
    "cancelled": 503,
    "tmux_failed": 504,
    "tmux_timeout": 504,
    "tmux_not_found": 504,
}


# What a client is told when a request failed by a fault of the server's own (an
# exception no rule of the core raises): the log has the traceback.
SERVER_FAILED = "the server failed; its log says why."


def http_status(code: str) -> int:
    """The HTTP status for an error code (500 for a code the table does not know)."""
    return HTTP_STATUS.get(code, 500)


def error_reply(
    action: str | None, code: str, message: str, metadata: dict[str, Any] | None = None
) -> tuple[int, dict[str, Any]]:
    """The HTTP status and reply of an error: ``ok`` false, the message, and the error's
    stable code in ``metadata.error_code``."""
    document: dict[str, Any] = {"ok": False, "action": action, "error": message}
    document["metadata"] = {"error_code": code, **(metadata or {})}
    return http_status(code), document
