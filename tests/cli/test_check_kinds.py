"""Checks by kind: tmux-send --check --as KIND and --write PATH --check validate text
with the validators the pane's host has, and write or run nothing.

Expected results come from running the same validator here (python3's json, tomllib,
yaml and compile; jq; the shells' -n), never from the code under test.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ..support.files import listing
from ..support.pane import MakeBridge, TestPane


def check(bridge: TestPane, *args: str, data: bytes = b"") -> tuple[int, dict[str, Any]]:
    result = bridge.send("--json", "--check", *args, input=data)
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["would_exit"] == result.returncode, document
    return result.returncode, document


def python_error(kind: str, data: bytes, env: dict[str, str]) -> tuple[int, int] | None:
    """The line and column python3 (the pane's, by its PATH) reports for ``data``, or
    None when it is valid."""
    code = {
        "json": "import json,sys\ntry: json.loads(sys.stdin.buffer.read())\n"
        "except json.JSONDecodeError as e: print(e.lineno, e.colno)",
        "python": "import sys\ntry: compile(sys.stdin.buffer.read(), 't', 'exec')\n"
        "except SyntaxError as e: print(e.lineno, e.offset)",
        "yaml": "import sys, yaml\ntry: list(yaml.safe_load_all(sys.stdin.buffer.read()))\n"
        "except yaml.YAMLError as e: print(e.problem_mark.line + 1, e.problem_mark.column + 1)",
    }[kind]
    out = subprocess.run(
        ["python3", "-c", code], input=data, capture_output=True, env=env, timeout=30
    )
    assert out.returncode == 0, out.stderr
    words = out.stdout.split()
    return (int(words[0]), int(words[1])) if words else None


class Case(NamedTuple):
    test_id: str
    kind: str
    text: bytes


CASES = [
    Case("json-valid", "json", b'{"a": [1, 2]}\n'),
    Case("json-invalid", "json", b'{"a": 1,\n  "b": }\n'),
    Case("python-valid", "python", b"def f(x):\n    return x\n"),
    Case("python-invalid", "python", b"x = 1\ndef f(:\n    pass\n"),
    Case("yaml-invalid", "yaml", b"a: 1\nb: [1, 2\n"),
]


@pytest.mark.parametrize("case", CASES, ids=[c.test_id for c in CASES])
def test_python_validators(shared_bridge: TestPane, case: Case) -> None:
    has_module = (
        subprocess.run(
            ["python3", "-c", "import yaml"], env=shared_bridge.env, capture_output=True
        ).returncode
        == 0
        or case.kind != "yaml"
    )
    code, document = check(shared_bridge, "--as", case.kind, "-", data=case.text)
    assert document["kind"] == case.kind
    if not has_module:
        assert (code, document["validator"], document["valid"]) == (0, None, None), document
        return
    error = python_error(case.kind, case.text, shared_bridge.env)
    assert document["validator"] == "python3"
    assert document["valid"] is (error is None), document
    if error is None:
        assert (code, document["error"]) == (0, None)
    else:
        assert code == 1
        assert (document["error"]["line"], document["error"]["column"]) == error
        assert document["parses"] is False and document["parse_error"].startswith("line ")


def test_toml(shared_bridge: TestPane) -> None:
    text = b'a = 1\nb = "x"\n[t]\nc = \n'
    direct = subprocess.run(
        ["python3", "-c", "import sys, tomllib; tomllib.loads(sys.stdin.read())"],
        input=text, capture_output=True, env=shared_bridge.env, timeout=30,
    )  # fmt: skip
    assert direct.returncode == 1 and b"line 4, column 5" in direct.stderr
    code, document = check(shared_bridge, "--as", "toml", "-", data=text)
    assert (code, document["validator"], document["valid"]) == (1, "python3", False)
    assert (document["error"]["line"], document["error"]["column"]) == (4, 5)
    code, document = check(shared_bridge, "--as", "toml", "--", 'a = "ok"')
    assert (code, document["valid"]) == (0, True)


@pytest.mark.skipif(shutil.which("jq") is None, reason="no jq here (.ci/deps installs it)")
def test_jq_filters_are_compiled_not_run(shared_bridge: TestPane, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code, document = check(shared_bridge, "--as", "jq", "--", ".a | map(.b")
    direct = subprocess.run(["jq", "-n", ".a | map(.b"], capture_output=True, timeout=30)
    assert direct.returncode == 3  # jq's compile error
    assert (code, document["validator"], document["valid"]) == (1, "jq", False), document
    assert "syntax error" in document["error"]["message"]
    # valid, and never run: an endless filter, one that would read input, one that halts
    for good in ("[range(1e12)] | length", "input", f'"{marker}" | halt_error'):
        code, document = check(shared_bridge, "--as", "jq", "--", good)
        assert (code, document["valid"]) == (0, True), (good, document)
    assert not marker.exists()


SHELL_CASES = [("sh", b"if true; then echo\n"), ("bash", b"echo $((1 +\n"),
               ("zsh", b"if true; then\n"), ("fish", b"if true\necho\n")]  # fmt: skip


@pytest.mark.parametrize(("kind", "bad"), SHELL_CASES, ids=[k for k, _ in SHELL_CASES])
def test_shell_code(shared_bridge: TestPane, tmp_path: Path, kind: str, bad: bytes) -> None:
    marker = tmp_path / "ran"
    flag = "--no-execute" if kind == "fish" else "-n"
    direct = subprocess.run([kind, flag], input=bad, capture_output=True, timeout=30)
    assert direct.returncode != 0
    code, document = check(shared_bridge, "--as", kind, "-", data=bad)
    assert (code, document["validator"], document["valid"]) == (1, kind, False), document
    code, document = check(shared_bridge, "--as", kind, "--", f"touch {marker}")
    assert (code, document["validator"], document["valid"]) == (0, kind, True), document
    assert not marker.exists()  # parsed, not run


def test_write_check_writes_nothing(shared_bridge: TestPane, tmp_path: Path) -> None:
    target = tmp_path / "conf.json"
    code, document = check(shared_bridge, "--write", str(target), data=b'{"port": 80,}')
    assert (code, document["kind"], document["valid"]) == (1, "json", False), document
    assert document["command"] == str(target)
    code, document = check(shared_bridge, "--write", str(target), data=b'{"port": 80}')
    assert (code, document["valid"]) == (0, True)
    code, document = check(
        shared_bridge, "--as", "python", "--write", str(target), data=b"print(1)\n"
    )
    assert (code, document["kind"], document["valid"]) == (0, "python", True)
    code, document = check(shared_bridge, "--write", str(tmp_path / "notes.txt"), data=b"x")
    assert (code, document["kind"], document["validator"], document["valid"]) == (
        0, "unknown", None, None,
    )  # fmt: skip
    assert listing(tmp_path) == []
    text = shared_bridge.send("--check", "--write", str(target), input=b"{")
    assert text.returncode == 1
    assert b"validator   python3" in text.stdout and b"valid       no" in text.stdout


def test_none_available(make_bridge: MakeBridge, tmp_path: Path) -> None:
    """A host without the validator: the document says so, and nothing is judged (a
    bash pane: fish's runner itself needs tools from PATH)."""
    bridge = make_bridge("bash")
    bridge.start()
    empty = tmp_path / "bin"
    empty.mkdir()
    assert bridge.send_text("--", f"export PATH={empty}")[0] == 0
    code, document = check(bridge, "--as", "json", "--", "{")
    assert (code, document["validator"], document["valid"]) == (0, None, None), document
    assert "no python3 or jq" in document["parse_error"]


def test_usage(shared_bridge: TestPane) -> None:
    result = shared_bridge.send("--as", "json", "--", "x")
    assert result.returncode == 2 and b"--as KIND goes with --check" in result.stderr
    result = shared_bridge.send("--json", "--check", "--as", "xml", "--", "<a/>")
    assert json.loads(result.stdout)["error_code"] == "invalid_request"
