"""A fake model API on loopback, so the real agent CLIs answer offline.

One HTTP server speaks just enough of two APIs: Anthropic's Messages API (``POST
/v1/messages``, streamed or not: what Claude Code calls through ``ANTHROPIC_BASE_URL``)
and OpenAI's Responses API (``POST /v1/responses``, streamed: what Codex calls through a
provider's ``base_url``). Every request is answered with :func:`answer` of the last
text the user sent, and recorded in :attr:`ModelApi.prompts`, so a test learns what
reached the model from the server itself. A prompt containing ``HOLD`` is answered only
once :attr:`ModelApi.release` is set (or after a minute): the agent works meanwhile.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def answer(prompt: str) -> str:
    """The model's reply to ``prompt``: recognisable, and not a copy of it."""
    return "ANSWER " + " ".join(prompt.split()[:6]).upper()


class ModelApi:
    """The running server: its base URL and the user texts it was sent, in order."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.prompts: list[str] = []
        self.lock = threading.Lock()
        self.release = threading.Event()

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"


def _last_text(content: Any) -> str:
    """The last text block of a message's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    texts = [
        block.get("text", "")
        for block in content or []
        if isinstance(block, dict) and block.get("type") in ("text", "input_text")
    ]
    texts = [t for t in texts if not t.lstrip().startswith("<")]  # reminders, context
    return texts[-1] if texts else ""


def _user_text(items: list[Any]) -> str:
    for item in reversed(items):
        if isinstance(item, dict) and item.get("role") == "user":
            text = _last_text(item.get("content"))
            if text:
                return text
    return ""


def _sse(events: list[dict[str, object]]) -> bytes:
    """Server-sent events, each named by its ``type``."""
    return b"".join(
        f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events
    )


def _anthropic(text: str, stream: bool) -> tuple[str, bytes]:
    message: dict[str, object] = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "claude-fake",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    block = {"type": "text", "text": text}
    delta = {"type": "text_delta", "text": text}
    if not stream:
        whole = {**message, "content": [block], "stop_reason": "end_turn"}
        return "application/json", json.dumps(whole).encode()
    return "text/event-stream", _sse(
        [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": {**block, "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 2},
            },
            {"type": "message_stop"},
        ]
    )


def _responses(text: str) -> tuple[str, bytes]:
    item = {
        "type": "message",
        "role": "assistant",
        "id": "msg_fake",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {
        "input_tokens": 1,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 1,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 2,
    }
    return "text/event-stream", _sse(
        [
            {"type": "response.created", "response": {"id": "resp_fake"}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": "resp_fake", "usage": usage}},
        ]
    )


def _handler(api: ModelApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:  # model lists and the like: nothing to offer
            self._send(200, "application/json", b'{"data": [], "models": []}')

        def do_HEAD(self) -> None:
            self._send(200, "application/json", b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                body = {}
            path = self.path.split("?")[0]
            if path.endswith("/messages/count_tokens"):
                self._send(200, "application/json", b'{"input_tokens": 1}')
                return
            if path.endswith("/messages"):
                prompt = _user_text(body.get("messages", []))
                kind, data = _anthropic(answer(prompt), bool(body.get("stream")))
            elif path.endswith("/responses"):
                items = body.get("input", [])
                prompt = _user_text(items if isinstance(items, list) else [])
                kind, data = _responses(answer(prompt))
            else:
                self._send(404, "application/json", b"{}")
                return
            with api.lock:
                api.prompts.append(prompt)
            if "HOLD" in prompt:
                api.release.wait(60)
            self._send(200, kind, data)

        def _send(self, status: int, kind: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def model_api() -> Iterator[ModelApi]:
    """The fake API on a free loopback port, for the duration of the block."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    api = ModelApi(server)
    server.RequestHandlerClass = _handler(api)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
