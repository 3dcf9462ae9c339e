"""The gates of ``tmux-bridge serve``, each tried with what an attacker would send: forged
Host and Origin headers, missing and wrong tokens, oversize bodies and fields, and the
ways the server refuses to start unsafely. Every refused request is also checked to
have run nothing (a ``run`` that would create a file)."""

from __future__ import annotations

import json
import os
import signal
import ssl
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import httpx
import pytest

from ..support.pane import BIN, TestPane
from ..support.serve import TOKEN, Server, running

pytestmark = pytest.mark.tmux

MAX_BODY = 256 * 1024  # the bounds, written out
MAX_COMMAND = 128 * 1024


def touch_request(marker: Path) -> dict[str, Any]:
    """A run that leaves ``marker`` behind if it runs."""
    return {"action": "run", "command": f"touch {marker}"}


def refused(response: httpx.Response, status: int, code: str) -> None:
    body = response.json()
    assert (response.status_code, body["ok"], body["metadata"]["error_code"]) == (
        status,
        False,
        code,
    ), body


class HostCase(NamedTuple):
    test_id: str
    host: str
    allowed: bool


HOSTS = [
    HostCase("ipv4-port", "127.0.0.1:3337", True),
    HostCase("ipv4", "127.0.0.1", True),
    HostCase("localhost-port", "localhost:80", True),
    HostCase("localhost-upper", "LOCALHOST:1", True),
    HostCase("ipv6", "[::1]:3337", True),
    HostCase("rebinding", "evil.example:3337", False),
    HostCase("rebinding-no-port", "evil.example", False),
    HostCase("suffix", "127.0.0.1.evil.example:3337", False),
    HostCase("prefix", "localhost.evil.example", False),
    HostCase("other-loopback", "127.0.0.2:3337", False),
    HostCase("port-junk", "localhost:80@evil.example", False),
]


@pytest.mark.parametrize("case", HOSTS, ids=[c.test_id for c in HOSTS])
def test_host_allow_list(server: Server, pane: TestPane, case: HostCase) -> None:
    marker = pane.root / f"host-{case.test_id}"
    with server.client(headers={"Host": case.host}) as client:
        response = client.post("/v1/tmux", json=touch_request(marker))
    if case.allowed:
        assert response.status_code == 200, response.text
        assert marker.exists()
    else:
        refused(response, 403, "forbidden_host")
        assert not marker.exists()


@pytest.mark.parametrize("origin", ["https://evil.example", "null", "http://127.0.0.1:3337"])
def test_origin_not_allowed(server: Server, pane: TestPane, origin: str) -> None:
    """Even with the right token and Host: a browser page of another origin gets 403."""
    marker = pane.root / "origin"
    with server.client(headers={"Origin": origin}) as client:
        response = client.post("/v1/tmux", json=touch_request(marker))
        refused(response, 403, "forbidden_origin")
        assert "access-control-allow-origin" not in response.headers
        refused(client.get("/health"), 403, "forbidden_origin")
    assert not marker.exists()


def test_the_page_gets_its_own_fonts_and_nothing_more(server: Server, pane: TestPane) -> None:
    """A browser fetches a font in CORS mode, with ``Origin``, even from the page's own
    server: the page's own origin may GET its files under ``/vendor/`` (no CORS header
    given), another origin may not, and its own origin still may not run anything."""
    own = server.base_url
    font = "/vendor/fonts/dejavu/DejaVuSansMono.ttf"
    with server.client(token=None, headers={"Origin": own}) as client:
        got = client.get(font)
        assert got.status_code == 200 and got.content[:4] == b"\x00\x01\x00\x00", got.status_code
        assert "access-control-allow-origin" not in got.headers
    with server.client(token=None, headers={"Origin": "http://evil.example"}) as client:
        refused(client.get(font), 403, "forbidden_origin")
    marker = pane.root / "own-origin"
    with server.client(headers={"Origin": own}) as client:
        refused(client.post("/v1/tmux", json=touch_request(marker)), 403, "forbidden_origin")
        refused(client.get("/health"), 403, "forbidden_origin")
    assert not marker.exists()


class TokenCase(NamedTuple):
    test_id: str
    header: str | None


BAD_TOKENS = [
    TokenCase("missing", None),
    TokenCase("wrong", "Bearer not-the-token-at-all-000000"),
    TokenCase("prefix", f"Bearer {TOKEN[:-1]}"),
    TokenCase("longer", f"Bearer {TOKEN}x"),
    TokenCase("no-scheme", TOKEN),
    TokenCase("basic", f"Basic {TOKEN}"),
    TokenCase("scheme-only", "Bearer"),
]


@pytest.mark.parametrize("case", BAD_TOKENS, ids=[c.test_id for c in BAD_TOKENS])
def test_bad_token(server: Server, pane: TestPane, case: TokenCase) -> None:
    marker = pane.root / f"token-{case.test_id}"
    headers = {"Authorization": case.header} if case.header is not None else {}
    with server.client(token=None, headers=headers) as client:
        response = client.post("/v1/tmux", json=touch_request(marker))
    refused(response, 401, "unauthorized")
    assert response.headers["www-authenticate"] == "Bearer"
    assert not marker.exists()


def test_token_scheme_case_does_not_matter(server: Server) -> None:
    with server.client(token=None, headers={"Authorization": f"bearer {TOKEN}"}) as client:
        assert client.post("/v1/tmux", json={"action": "list_sessions"}).status_code == 200


def test_health_tells_nothing_without_the_token(server: Server) -> None:
    with server.client(token=None) as anonymous:
        bare = anonymous.get("/health")
        wrong = anonymous.get("/health", headers={"Authorization": "Bearer wrong-token-000000"})
    with server.client() as client:
        full = client.get("/health").json()
    assert (bare.status_code, bare.json()) == (200, {"ok": True})
    refused(wrong, 401, "unauthorized")
    assert (full["ok"], full["mode"]) == (True, "tmux")


def test_allowed_origin_gets_cors_and_preflight(pane: TestPane) -> None:
    """A browser add-in's origin, allowed through ALLOWED_ORIGINS: its preflight is
    answered without a token, its requests get CORS headers; others still get 403."""
    origin = "https://addin.example:3000"
    env = {**pane.env, "ALLOWED_ORIGINS": f"https://other.example, {origin}"}
    preflight = {
        "Origin": origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
        "Access-Control-Request-Private-Network": "true",
    }
    with running(env) as server, server.client(token=None) as client:
        answer = client.options("/v1/tmux", headers=preflight)
        assert answer.status_code == 204, answer.text
        assert answer.headers["access-control-allow-origin"] == origin
        assert "authorization" in answer.headers["access-control-allow-headers"].lower()
        assert answer.headers["access-control-allow-private-network"] == "true"
        evil = client.options("/v1/tmux", headers={**preflight, "Origin": "https://evil.example"})
        refused(evil, 403, "forbidden_origin")
        listed = client.post(
            "/v1/tmux",
            json={"action": "list_sessions"},
            headers={"Origin": origin, "Authorization": f"Bearer {TOKEN}"},
        )
        assert listed.status_code == 200, listed.text
        assert listed.headers["access-control-allow-origin"] == origin


def test_token_file_is_made_private_and_kept(pane: TestPane) -> None:
    """Without TMUX_BRIDGE_TOKEN, tmux mode makes `token` in the runtime directory
    (mode 0600) on first start, says where it is, and uses the same one next time."""
    path = pane.runtime / "token"
    assert not path.exists()
    with running(pane.env, token=None) as first:
        assert any(str(path) in line for line in first.banner), first.banner
        token = path.read_text().strip()
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert len(token) >= 32
        assert first.post(token=token, action="list_sessions").status_code == 200
        assert first.post(token=None, action="list_sessions").status_code == 401
    with running(pane.env, token=None) as second:
        assert path.read_text().strip() == token
        assert second.post(token=token, action="list_sessions").status_code == 200


def test_token_file_open_to_others_is_refused(pane: TestPane) -> None:
    path = pane.root / "open-token"
    path.write_text("a-token-that-others-can-read-000\n")
    path.chmod(0o644)
    result = _serve(pane, "--token-file", str(path))
    assert result.returncode == 125, result.stderr
    assert f"chmod 600 {path}" in result.stderr


class StartCase(NamedTuple):
    test_id: str
    args: tuple[str, ...]
    says: str  # a phrase of the refusal


UNSAFE_STARTS = [
    StartCase("no-token-on-tcp", ("--no-token",), "--no-token needs --uds"),
    StartCase("all-interfaces", ("--host", "0.0.0.0"), "not a loopback address"),
    StartCase("lan-address", ("--host", "192.0.2.1"), "not a loopback address"),
    StartCase("any-host", ("--allowed-hosts", "*"), "DNS rebinding"),
    StartCase("cert-without-key", ("--tls-cert", "/etc/hostname"), "go together"),
]


@pytest.mark.parametrize("case", UNSAFE_STARTS, ids=[c.test_id for c in UNSAFE_STARTS])
def test_unsafe_starts_are_refused(pane: TestPane, case: StartCase) -> None:
    result = _serve(pane, "--port", "0", *case.args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert case.says in result.stderr
    assert "listening" not in result.stdout


def _serve(pane: TestPane, *args: str) -> subprocess.CompletedProcess[str]:
    """``tmux-bridge serve ARGS`` that is expected to exit at once."""
    env = {k: v for k, v in pane.env.items() if k != "TMUX_BRIDGE_TOKEN"}
    return subprocess.run(
        [str(BIN / "tmux-bridge"), "serve", *args],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_unix_socket_without_token(pane: TestPane) -> None:
    """--no-token on a Unix socket: made 0600, answers without a token (httpx and curl),
    and is removed when the server stops on Ctrl-C."""
    path = pane.root / "http.sock"
    with running(pane.env, "--no-token", token=None, uds=str(path)) as server:
        assert stat.S_ISSOCK(path.stat().st_mode)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        ran = server.post(token=None, action="run", command="echo over-uds")
        assert ran.status_code == 200, ran.text
        assert ran.json()["output"] == "over-uds\n"
        curl = subprocess.run(
            ["curl", "-s", "--unix-socket", str(path), "http://localhost/health"],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert json.loads(curl.stdout)["mode"] == "tmux"  # no token: the full health
        code, out, _ = server.stop(signal.SIGINT)
    assert (code, out.strip().splitlines()[-1]) == (0, "tmux-bridge serve: stopped.")
    assert not path.exists()


def test_body_too_large(server: Server, pane: TestPane) -> None:
    marker = pane.root / "big"
    padding = "x" * (MAX_BODY - len(json.dumps(touch_request(marker))) - 20)
    fits = json.dumps({**touch_request(marker), "code": padding})
    assert len(fits) <= MAX_BODY
    big = json.dumps({**touch_request(marker), "code": padding + "x" * 40})
    assert len(big) > MAX_BODY
    with server.client(headers={"Content-Type": "application/json"}) as client:
        # at most 256 KiB is read; the field is too long for its own bound: 400, not 413
        refused(client.post("/v1/tmux", content=fits), 400, "invalid_request")
        refused(client.post("/v1/tmux", content=big), 413, "body_too_large")

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            for start in range(0, len(big), 8192):
                yield big[start : start + 8192].encode()

        refused(client.post("/v1/tmux", content=chunks()), 413, "body_too_large")
    assert not marker.exists()


class FieldCase(NamedTuple):
    test_id: str
    request: dict[str, Any]


OVERSIZE = [
    FieldCase("command", {"action": "run", "command": "x" * (MAX_COMMAND + 1)}),
    FieldCase("command-words", {"action": "run", "command": ["echo"] * 1001}),
    FieldCase("code", {"action": "evaluate", "name": "python", "code": "1" * (MAX_COMMAND + 1)}),
    FieldCase("keys", {"action": "send_keys", "session": "a", "keys": ["a"] * 201}),
    FieldCase("pane", {"action": "run", "command": "true", "pane": "p" * 129}),
    FieldCase("max-time", {"action": "run", "command": "true", "max_time_ms": 3_600_001}),
    FieldCase("timeout", {"action": "run", "command": "true", "timeout_ms": 120_001}),
    FieldCase("nul", {"action": "run", "command": "echo a\0b"}),
    FieldCase("bool-as-int", {"action": "run", "command": "true", "raw": 1}),
]


@pytest.mark.parametrize("case", OVERSIZE, ids=[c.test_id for c in OVERSIZE])
def test_oversize_or_malformed_fields(server: Server, case: FieldCase) -> None:
    refused(server.post(**case.request), 400, "invalid_request")


@pytest.mark.parametrize(
    "body", [b"[" * 100_000, b"not json", b"[1, 2]", b'"run"', '{"action": "\u00e9"'.encode()]
)
def test_malformed_bodies(server: Server, body: bytes) -> None:
    with server.client(headers={"Content-Type": "application/json"}) as client:
        refused(client.post("/v1/tmux", content=body), 400, "invalid_request")


def test_other_content_types_methods_and_paths(server: Server) -> None:
    with server.client() as client:
        form = client.post("/v1/tmux", data={"action": "list_sessions"})
        refused(form, 400, "invalid_request")
        refused(client.get("/v1/tmux"), 405, "method_not_allowed")
        refused(client.get("/v2/tmux"), 404, "not_found")
    refused(server.post(token=None, action="list_sessions"), 401, "unauthorized")


def test_https_with_a_certificate(pane: TestPane) -> None:
    """--tls-cert/--tls-key: HTTPS for a browser add-in, checked with httpx and curl
    against a certificate made here for localhost."""
    cert, key = pane.root / "cert.pem", pane.root / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-days", "1", "-subj", "/CN=localhost", "-addext",
         "subjectAltName=DNS:localhost,IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    args = ("--tls-cert", str(cert), "--tls-key", str(key))
    with running(pane.env, *args) as server:
        assert server.base_url.startswith("https://"), server.banner
        context = ssl.create_default_context(cafile=str(cert))
        with server.client(verify=context) as client:
            health = client.get("/health").json()
        assert (health["ok"], health["mode"]) == (True, "tmux")
        curl = subprocess.run(
            ["curl", "-s", "--cacert", str(cert), "-H", f"Authorization: Bearer {TOKEN}",
             f"{server.base_url}/health"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert json.loads(curl.stdout)["mode"] == "tmux", curl.stderr
        plain = subprocess.run(
            ["curl", "-s", "-o", os.devnull, "-w", "%{http_code}",
             server.base_url.replace("https://", "http://") + "/health"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        assert plain.stdout != "200"  # plain HTTP gets no answer from the TLS port
