"""``/mcp`` in ``serve`` loads the MCP SDK on its first request, not at start (an idle
server's memory): a fresh interpreter builds serve's app as ``serve`` does, runs its
lifespan, and looks at ``sys.modules`` before and after an MCP ``initialize``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..support.pane import WAIT, TestPane

pytestmark = pytest.mark.tmux

SCRIPT = r"""
import json, sys
from starlette.testclient import TestClient
from tmux_bridge.server import serve
from tmux_bridge.server.app import create_app
from tmux_bridge.web.security import Gates

options = serve.ServeOptions()
mount = serve.make_mcp(options)
seen = {"path": mount.path, "at_start": "mcp" in sys.modules}
token = "t" * 32
app = create_app(serve.make_backend(options), Gates(token=token), serve.Calls(), mount)
initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "lazy", "version": "0"}}}
headers = {"Authorization": "Bearer " + token, "Accept": "application/json, text/event-stream"}
with TestClient(app, base_url="http://127.0.0.1", client=("127.0.0.1", 5000)) as client:
    seen["after_lifespan"] = "mcp" in sys.modules
    reply = client.post("/mcp", json=initialize, headers=headers)
    seen["status"] = reply.status_code
    seen["answer"] = reply.text
    seen["after_request"] = "mcp" in sys.modules
from tmux_bridge.mcp.http import PATH
seen["sdk_path"] = PATH
print(json.dumps(seen))
"""


def test_serve_imports_the_sdk_on_the_first_mcp_request(pane: TestPane) -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=pane.env, capture_output=True, timeout=WAIT * 2
    )
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout.decode().strip().splitlines()[-1])
    assert (seen["at_start"], seen["after_lifespan"]) == (False, False)
    assert seen["status"] == 200, seen["answer"]
    assert '"serverInfo"' in seen["answer"]
    assert seen["after_request"] is True
    assert seen["path"] == seen["sdk_path"]  # serve's path for /mcp is the SDK mount's
