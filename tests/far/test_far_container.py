"""A far shell in a container: Debian's podman runs an image the fixture makes itself
from a root file system holding Debian's static busybox only (``podman import``: no
registry), and the person types ``podman run --rm -it IMAGE sh`` (or ``podman exec -it``)
in the pane. busybox sh is the far shell, the one a minimal container has.

Expected values come from running the same command with this machine's busybox, the very
binary copied into the image (``busybox sh -c CMD``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import itertools
import json
import os
import shutil
import struct
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from ..support.pane import TestPane, private_pane

pytestmark = pytest.mark.tmux

BUSYBOX = "/bin/busybox"
# This machine (a VM with cgroup v1 and no CAP_SYS_RESOURCE) needs runc rather than crun
# (which refuses cgroup "hybrid mode") and rlimits no higher than its own: a
# containers.conf of the test's own says so, in the pane's environment.
CONTAINERS_CONF = """\
[containers]
default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
[engine]
runtime = "runc"
"""


class Image(NamedTuple):
    name: str
    conf: Path  # the containers.conf the pane's podman reads


def _static(path: str) -> bool:
    """Whether the 64-bit ELF file at ``path`` needs no dynamic loader (no ``PT_INTERP``
    program header): it then runs alone in an empty root file system."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    if head[:5] != b"\x7fELF\x02":
        return False
    (phoff,) = struct.unpack_from("<Q", head, 0x20)
    size, count = struct.unpack_from("<HH", head, 0x36)
    types = [struct.unpack_from("<I", head, phoff + i * size)[0] for i in range(count)]
    return 3 not in types


def _rootfs_tar(folder: Path, busybox: str) -> Path:
    """A tarball of a root file system: busybox and a link per applet in /bin, root in
    /etc/passwd, a world-writable /tmp."""
    root = folder / "root"
    (root / "bin").mkdir(parents=True)
    (root / "etc").mkdir()
    (root / "root").mkdir()
    (root / "tmp").mkdir()
    (root / "tmp").chmod(0o1777)
    shutil.copy(busybox, root / "bin" / "busybox")
    applets = subprocess.run([busybox, "--list"], capture_output=True, text=True, check=True)
    for name in applets.stdout.split():
        if name != "busybox":
            (root / "bin" / name).symlink_to("busybox")
    (root / "etc" / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "group").write_text("root:x:0:\n")
    tar = folder / "rootfs.tar"
    with tarfile.open(tar, "w") as t:
        t.add(root, arcname=".")
    return tar


@pytest.fixture(scope="module")
def image() -> Iterator[Image]:
    if os.geteuid() != 0:
        pytest.skip("the container tests run podman as root")
    if shutil.which("podman") is None:
        pytest.skip("podman is not installed (bash .ci/deps installs it)")
    if not os.path.exists(BUSYBOX) or not _static(BUSYBOX):
        pytest.skip("a static busybox is not installed (busybox-static; bash .ci/deps)")
    folder = Path(tempfile.mkdtemp(prefix="tb-container-"))
    name = f"localhost/tmux-bridge-test-busybox:{os.getpid()}"
    conf = folder / "containers.conf"
    conf.write_text(CONTAINERS_CONF)
    env = {**os.environ, "CONTAINERS_CONF": str(conf)}
    try:
        tar = _rootfs_tar(folder, BUSYBOX)
        subprocess.run(["podman", "import", "-q", str(tar), name], env=env, check=True)
        trial = subprocess.run(
            ["podman", "run", "--rm", name, "sh", "-c", "echo ok"],
            env=env,
            capture_output=True,
            text=True,
        )
        assert (trial.returncode, trial.stdout) == (0, "ok\n"), trial.stderr
        yield Image(name, conf)
    finally:
        subprocess.run(["podman", "rmi", "-f", name], env=env, capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def in_container(image: Image) -> Iterator[TestPane]:
    """A bash pane in which the person ran ``podman run --rm -it IMAGE sh``."""
    with container_pane(image) as b:
        yield b


def container_pane(image: Image, options: str = "") -> contextlib.AbstractContextManager[TestPane]:
    name = f"tb-run-{os.getpid()}-{next(_COUNT)}"
    line = f"podman run --rm -it --name {name} {options}--hostname tbbox {image.name} sh"
    return _container_pane(image, line, name)


_COUNT = itertools.count()


@contextlib.contextmanager
def _container_pane(
    image: Image, line: str, name: str, docker_host: str | None = None
) -> Iterator[TestPane]:
    """A bash pane in which the person typed ``line``, busybox sh's prompt showing; the
    container ``name`` is removed at the end (killing the pane's podman leaves it)."""
    try:
        with private_pane("bash") as b:
            b.env["CONTAINERS_CONF"] = str(image.conf)
            if docker_host is not None:
                b.env["DOCKER_HOST"] = docker_host
            b.start()
            b.tmux("send-keys", "-t", b.target, line, "Enter")
            gate = line.split()[0]
            b.wait_for(lambda: b.foreground() == gate, f"{gate} to start")
            b.wait_for(lambda: b.screen().rstrip().endswith("#"), "busybox sh's prompt")
            yield b
    finally:
        _podman(image, "rm", "-f", "-t", "0", name)


def _podman(image: Image, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CONTAINERS_CONF": str(image.conf)}
    return subprocess.run(["podman", *args], env=env, capture_output=True, text=True)


def _busybox(command: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([BUSYBOX, "sh", "-c", command], capture_output=True, timeout=30)


CORPUS = [
    "echo hello",
    "printf 'no newline'",
    """printf '%s\\n' "it's" 'say "hi"' '$HOME' '#no'""",
    r"printf 'a\r\nb\r\n'",
    "echo 'héllo → 世界'",
    "for i in 1 2 3\ndo echo line $i\ndone",
    "printf '%0300d\\n' 0; seq 1 2000 | tail -n 2",
]


def test_busybox_sh_in_podman_run(in_container: TestPane) -> None:
    """The probe names a POSIX sh; stdout exact, stderr apart, the status, the far facts
    and state kept between calls."""
    b = in_container
    command = "echo out; echo 'é err' >&2; sh -c 'exit 7'"
    doc = json.loads(b.send("--json", "--", command).stdout)
    expected = _busybox(command)
    assert (doc["stdout"].encode(), doc["stderr"].encode(), doc["status"]) == (
        expected.stdout,
        expected.stderr,
        7,
    ), b.screen()
    assert (doc["shell"], doc["stderr_merged"]) == ("posix", False)
    far = doc["far"]
    assert (far["via"], far["shell"], far["user"], far["host"]) == (
        "podman",
        "posix",
        "root",
        "tbbox",
    )
    assert far["os"] == "Linux"
    for command in CORPUS:
        result = b.send("--raw", "--", command)
        assert (result.returncode, result.stdout, result.stderr) == (
            0,
            _busybox(command).stdout,
            b"",
        ), (command, b.screen())
    assert b.send_text("--", "cd /tmp && X=42") == (0, "", "")
    assert b.send_text("--", "pwd; echo $X") == (0, "/tmp\n42\n", "")
    # the far shell's private directory is all it made in /tmp, and the stderr file is gone
    code, out, _ = b.send_text("--", "ls -A /tmp")
    assert (code, out.startswith("tmux-send."), out.count("\n")) == (0, True, 1), out
    others = 'for f in "$__tmux_send_d"/*; do [ "$f" = "$__tmux_send_err" ] || echo "$f"; done'
    assert b.send_text("--", others) == (0, "", "")


def test_timeout_interrupts_in_the_container(in_container: TestPane) -> None:
    b = in_container
    result = b.send("--json", "-t", "1", "--", "echo started; sleep 30; echo never")
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["status"], doc["timed_out"]) == (124, 130, "idle"), b.screen()
    assert (doc["stdout"], doc["signals_sent"]) == ("started\n", ["SIGINT"])
    assert b.send_text("--", "echo still here") == (0, "still here\n", "")


def test_exit_ends_the_container_shell(in_container: TestPane) -> None:
    b = in_container
    code, out, err = b.send_text("--", "echo bye; exit 3")
    assert (code, out) == (3, "bye\n"), b.screen()
    assert "ended the far shell" in err
    b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")
    assert b.send_text("--", "echo local") == (0, "local\n", "")


def test_files_round_trip_in_the_container(in_container: TestPane) -> None:
    """--write then --read of binary data, checked with busybox's sha256sum on the far
    side (the file lives inside the container only)."""
    b = in_container
    data = bytes(range(256)) * 8 + "héllo\n".encode()
    digest = hashlib.sha256(data).hexdigest()
    doc = json.loads(b.send("--json", "--write", "/root/data.bin", input=data).stdout)
    assert doc["exit_status"] == 0, (doc["error"], b.screen())
    assert (doc["file"]["sha256"], doc["file"]["size"]) == (digest, len(data))
    assert b.send_text("--", "sha256sum /root/data.bin") == (0, f"{digest}  /root/data.bin\n", "")
    assert b.send("--read", "/root/data.bin").stdout == data
    assert b.send("--edit", "/root/data.bin", "--old", "héllo", "--new", "bye").returncode == 0
    assert b.send("--read", "/root/data.bin").stdout == data.replace("héllo".encode(), b"bye")


def test_files_named_with_a_dash_in_the_container(in_container: TestPane) -> None:
    """Names and data that start with `-` through busybox sh: written twice (a backup),
    read, edited; a new file's mode from the far shell's umask (027: 640)."""
    b = in_container
    assert b.send_text("--", "cd /root; umask 027") == (0, "", "")
    for name in ("-", "-x"):
        for data in (b"- one\n", b"- two\n"):
            written = b.send("--write", name, input=data)
            assert written.returncode == 0, (written.stderr, b.screen())
        assert b.send("--read", name).stdout == b"- two\n"
        assert b.send("--edit", name, "--old", "two", "--new", "three").returncode == 0
    show = 'for f in ./-*; do printf \'%s %s \' "$f" $(stat -c %a "$f"); cat "$f"; done'
    expected = "".join(f"./{name} 640 - three\n" for name in ("-", "-x"))
    assert b.send_text("--", show) == (0, expected, "")
    for name in ("-", "-x"):  # the backups, in the container's backup directory
        listed = b.send("--json", "--backups", "--", name)
        assert listed.returncode == 0, (listed.stdout, listed.stderr, b.screen())
        doc = json.loads(listed.stdout)
        kept = [(entry["path"], entry["sha256"]) for entry in doc["backups"]]
        digests = [hashlib.sha256(text).hexdigest() for text in (b"- one\n", b"- two\n")]
        assert kept == [(f"/root/{name}", digest) for digest in digests], doc


def test_files_kept_safe_in_the_container(in_container: TestPane) -> None:
    """busybox's tools: the same bytes again are unchanged, --stat gives busybox's
    SHA-256 and MD5, a backup in /root/.cache/tmux-bridge/backups comes back with
    --restore, and a JSON check says no validator is there (no python3, no jq)."""
    b = in_container
    data, newer = b"kept\n", b"newer\n"
    for expected in ("created", "unchanged"):
        doc = json.loads(b.send("--json", "--write", "/root/k.txt", input=data).stdout)
        assert doc["file"]["status"] == expected, (doc, b.screen())
    doc = json.loads(b.send("--json", "--stat", "/root/k.txt").stdout)
    assert (doc["file"]["sha256"], doc["file"]["md5"]) == (
        hashlib.sha256(data).hexdigest(),
        hashlib.md5(data).hexdigest(),
    ), doc
    assert b.send("--write", "/root/k.txt", input=newer).returncode == 0
    doc = json.loads(b.send("--json", "--restore", "/root/k.txt").stdout)
    assert doc["file"]["status"] == "updated", (doc, b.screen())
    assert b.send("--read", "/root/k.txt").stdout == data
    shown = b.send_text("--", "ls /root/.cache/tmux-bridge/backups | wc -l")
    assert shown[0] == 0 and int(shown[1]) == 3, shown  # two backups and the index
    doc = json.loads(b.send("--json", "--check", "--as", "json", "--", "{").stdout)
    assert (doc["validator"], doc["valid"]) == (None, None), doc
    doc = json.loads(b.send("--json", "--check", "--as", "sh", "--", "if true").stdout)
    assert (doc["validator"], doc["valid"]) == ("sh", False), doc


def test_set_u_and_pipefail_in_the_container(in_container: TestPane) -> None:
    """The person's `set -u -o pipefail` in busybox sh, before the first call: the probe
    and the helpers work; an unset variable ends the command line, not the shell."""
    b = in_container
    b.tmux("send-keys", "-t", b.target, "set -u -o pipefail", "Enter")
    b.wait_for(lambda: b.screen().rstrip().endswith("pipefail\n/ #"), "the prompt back")
    assert b.send_text("--", "echo ok; false | true") == (1, "ok\n", ""), b.screen()
    code, out, err = b.send_text("--", "echo before; echo $tb_not_set; echo after")
    assert (code, out) == (2, "before\n") and "tb_not_set" in err, (code, err, b.screen())
    assert b.send_text("--", "case $- in *u*) echo still set;; esac") == (0, "still set\n", "")


def test_check_in_a_pane_not_ready(in_container: TestPane) -> None:
    """Text typed at a far prompt never seen before: the dry run refuses as the call
    would, types nothing, and cannot tell the far shell's kind (no probe was typed)."""
    b = in_container
    b.tmux("send-keys", "-t", b.target, "-l", "echo typed")
    b.wait_for(lambda: b.screen().rstrip().endswith("echo typed"), "the typed text")
    before = b.history()
    result = b.send("--check", "--json", "--", "echo hi")
    doc = json.loads(result.stdout)
    assert (result.returncode, doc["ready"], doc["parses"]) == (125, False, None), doc
    assert (doc["shell"], doc["far"]["kind_from"]) == (None, None)
    assert "not known yet" in doc["parse_error"]
    text = b.send_text("--check", "--", "echo hi")[1]
    assert "unknown: the far shell behind `podman` (its kind not known yet)" in text, text
    assert b.history() == before


def test_no_writable_tmp_merges_stderr(image: Image) -> None:
    """A read-only container without a /tmp mount: stderr goes to the terminal."""
    with container_pane(image, "--read-only --read-only-tmpfs=false ") as b:
        doc = json.loads(b.send("--json", "--", "echo out; echo err >&2; false").stdout)
        assert (doc["status"], doc["stdout"], doc["stderr"]) == (1, "out\nerr\n", ""), b.screen()
        assert doc["stderr_merged"] is True
        assert any("private temporary directory" in note for note in doc["notes"])
        # files need no temporary directory: reading works there
        read = b.send("--read", "/etc/group")
        assert (read.returncode, read.stdout) == (0, b"root:x:0:\n"), read.stderr


def test_podman_exec(image: Image) -> None:
    """``podman exec -it CONTAINER sh`` into a running container."""
    name = f"tb-exec-{os.getpid()}"
    started = _podman(image, "run", "-d", "--rm", "--name", name, image.name, "sleep", "300")
    assert started.returncode == 0, started.stderr
    with _container_pane(image, f"podman exec -it {name} sh", name) as b:
        doc = json.loads(b.send("--json", "--", "echo in; echo err >&2; false").stdout)
        assert (doc["status"], doc["stdout"], doc["stderr"]) == (1, "in\n", "err\n")
        assert doc["far"]["via"] == "podman"


@pytest.fixture(scope="module")
def docker_host(image: Image) -> Iterator[str]:
    """podman's Docker-compatible API on a socket of its own, for the docker client
    (the machine has the client, no daemon): the pane's ``docker`` talks to podman."""
    if shutil.which("docker") is None:
        pytest.skip("no docker client (the docker test drives podman through it)")
    folder = Path(tempfile.mkdtemp(prefix="tb-docker-"))
    sock = folder / "podman.sock"
    env = {**os.environ, "CONTAINERS_CONF": str(image.conf)}
    service = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{sock}"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        host = f"unix://{sock}"
        deadline = time.monotonic() + 15
        while not _answers(host):
            assert time.monotonic() < deadline and service.poll() is None, "podman's API"
            time.sleep(0.05)
        yield host
    finally:
        service.terminate()
        service.wait(10)
        shutil.rmtree(folder, ignore_errors=True)


def _answers(host: str) -> bool:
    version = ["docker", "version", "--format", "{{.Server.Version}}"]
    done = subprocess.run(version, env={**os.environ, "DOCKER_HOST": host}, capture_output=True)
    return done.returncode == 0


def test_docker_exec(image: Image, docker_host: str) -> None:
    """``docker exec -it CONTAINER sh``, as the issue names it: the docker client in
    front of the pane's shell, busybox sh behind it; an interrupt and `exit` too."""
    name = f"tb-docker-{os.getpid()}"
    started = _podman(image, "run", "-d", "--rm", "--name", name, image.name, "sleep", "300")
    assert started.returncode == 0, started.stderr
    with _container_pane(image, f"docker exec -it {name} sh", name, docker_host) as b:
        doc = json.loads(b.send("--json", "--", "echo in; echo err >&2; false").stdout)
        assert (doc["status"], doc["stdout"], doc["stderr"]) == (1, "in\n", "err\n"), b.screen()
        assert (doc["far"]["via"], doc["shell"]) == ("docker", "posix")
        result = b.send("--json", "-t", "1", "--", "echo started; sleep 30")
        assert (result.returncode, json.loads(result.stdout)["status"]) == (124, 130)
        assert b.send_text("--", "exit 3")[0] == 3
        b.wait_for(lambda: b.foreground() == "bash", "the local shell back in front")


def test_check_in_the_container(in_container: TestPane) -> None:
    """--check before any call in the container: the probe names a POSIX sh, whose
    syntax this machine's sh checks (not the pane's bash); a parse error predicts the
    real call's status."""
    b = in_container
    loop = "for i in 1 2; do echo $i; done"
    doc = json.loads(b.send("--check", "--json", "--", loop).stdout)
    assert (doc["shell"], doc["parses"], doc["would_exit"]) == ("posix", True, 0), doc
    assert (doc["far"]["via"], doc["far"]["kind_from"]) == ("podman", "probe")
    assert Path(doc["parsed_by"]).name == "sh"
    assert (doc["resolves_as"], doc["typed_lookup"]) == ("keyword", True)
    word = json.loads(b.send("--check", "--json", "--", "sha256sum /dev/null").stdout)
    assert (word["resolves_as"], word["far"]["kind_from"]) == ("file", "last_call")
    bad = "[[ -n x ]] && echo (x"
    doc = json.loads(b.send("--check", "--json", "--", bad).stdout)
    assert doc["parses"] is False
    assert doc["would_exit"] == b.send("--", bad).returncode != 0, b.screen()


def test_megabytes_in_the_container(in_container: TestPane) -> None:
    """busybox's base64, head, dd, stty and awk carry 2 MB each way (twenty times what
    fits in a command), exact, checked by busybox's sha256sum, never drawn in the pane."""
    b = in_container
    data = os.urandom(2 * 1024 * 1024)
    digest = hashlib.sha256(data).hexdigest()
    doc = json.loads(b.send("--json", "--write", "/root/big.bin", input=data).stdout)
    assert (doc["exit_status"], doc["file"]["sha256"]) == (0, digest), (doc, b.screen())
    assert b.send_text("--", "sha256sum /root/big.bin") == (0, f"{digest}  /root/big.bin\n", "")
    assert b.send("--read", "/root/big.bin").stdout == data
    shown = b.history()
    encoded = base64.b64encode(data).decode()
    assert all(encoded[at : at + 40] not in shown for at in (0, len(encoded) // 2)), shown[-2000:]


def test_info_tells_the_busybox_tools(in_container: TestPane) -> None:
    """--info in the container: every common tool is busybox's applet (as the image's
    busybox lists them), no GNU variant, no package manager."""
    b = in_container
    result = b.send("--json", "--info")
    info = json.loads(result.stdout)["info"]
    listed = subprocess.run([BUSYBOX, "--list"], capture_output=True, text=True)
    applets = set(listed.stdout.split())
    tools = ("grep", "sed", "awk", "date", "stat", "find", "xargs", "tar")
    assert {t: info[t] for t in tools} == {t: "busybox" if t in applets else None for t in tools}
    assert (info["gnu_tools"], info["package_manager"], info["via"]) == (None, None, "podman"), info
    assert info["hostname"] == "tbbox" and info["tools_at"], info
