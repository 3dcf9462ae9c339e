"""The server's pieces that need no tmux: the gates in process (a peer address no
packet could carry here), the token file, the one table of HTTP statuses."""

from __future__ import annotations

import asyncio
import importlib
import os
import pkgutil
import stat
from pathlib import Path

import httpx
import pytest

import tmux_bridge
from tmux_bridge.errors import BridgeError, RuntimeDirError
from tmux_bridge.server.app import Calls, create_app
from tmux_bridge.server.stub import StubBackend
from tmux_bridge.web.replies import HTTP_STATUS
from tmux_bridge.web.security import Gates, load_token

TOKEN = "test-token-0123456789-abcdefghij"

# The contract's statuses (and 405 for a wrong method, 500 for a broken server, 503 for
# a call cancelled by a stop): nothing else may come out of the table.
CONTRACT_STATUSES = {400, 401, 403, 404, 405, 408, 409, 413, 500, 503, 504}


def _all_subclasses(cls: type[BridgeError]) -> set[type[BridgeError]]:
    found: set[type[BridgeError]] = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _all_subclasses(sub)
    return found


def test_every_error_code_has_an_http_status() -> None:
    for module in pkgutil.walk_packages(tmux_bridge.__path__, "tmux_bridge."):
        importlib.import_module(module.name)
    codes = {cls.code for cls in _all_subclasses(BridgeError) | {BridgeError}}
    assert codes <= set(HTTP_STATUS), codes - set(HTTP_STATUS)
    assert set(HTTP_STATUS.values()) <= CONTRACT_STATUSES


def test_statuses_the_contract_names() -> None:
    assert (HTTP_STATUS["invalid_request"], HTTP_STATUS["unauthorized"]) == (400, 401)
    assert (HTTP_STATUS["forbidden_host"], HTTP_STATUS["no_bridge"]) == (403, 404)
    assert (HTTP_STATUS["wait_timeout"], HTTP_STATUS["session_exists"]) == (408, 409)
    assert (HTTP_STATUS["pane_busy"], HTTP_STATUS["body_too_large"]) == (409, 413)
    assert HTTP_STATUS["tmux_timeout"] == 504


@pytest.mark.parametrize(
    ("peer", "allowed"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("10.1.2.3", False),
        ("::ffff:10.1.2.3", False),
        ("2001:db8::1", False),
    ],
)
def test_peer_must_be_on_loopback(peer: str, allowed: bool) -> None:
    """The peer address as the ASGI server reports it (in process: no packet is sent)."""
    app = create_app(StubBackend("tb-test"), Gates(TOKEN), Calls())
    transport = httpx.ASGITransport(app=app, client=(peer, 40000))
    headers = {"Authorization": f"Bearer {TOKEN}"}

    async def ask() -> httpx.Response:
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:3337") as c:
            return await c.post("/v1/tmux", json={"action": "list_sessions"}, headers=headers)

    response = asyncio.run(ask())
    if allowed:
        assert response.status_code == 200, response.text
    else:
        body = response.json()
        assert (response.status_code, body["metadata"]["error_code"]) == (403, "forbidden_peer")


def test_a_new_token_file_is_private(tmp_path: Path) -> None:
    directory = tmp_path / "run"
    token = load_token(str(directory / "token"), create=True, private_dir=str(directory))
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    assert stat.S_IMODE((directory / "token").stat().st_mode) == 0o600
    assert len(token) >= 32
    assert load_token(str(directory / "token"), create=True) == token
    elsewhere = tmp_path / "token"  # a --token-file of the person's choosing
    assert len(load_token(str(elsewhere), create=True)) >= 32
    assert stat.S_IMODE(elsewhere.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("mode", "content", "says"),
    [
        (0o640, "a-token-long-enough-00000", "other users may read it"),
        (0o600, "short", "shorter than 16"),
    ],
)
def test_a_bad_token_file_is_refused(tmp_path: Path, mode: int, content: str, says: str) -> None:
    path = tmp_path / "token"
    path.write_text(content)
    path.chmod(mode)
    with pytest.raises(RuntimeDirError, match=says):
        load_token(str(path), create=False)


def test_a_token_file_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.write_text("a-token-long-enough-00000")
    real.chmod(0o600)
    os.symlink(real, tmp_path / "token")
    with pytest.raises(RuntimeDirError, match="cannot read the token file"):
        load_token(str(tmp_path / "token"), create=True)
