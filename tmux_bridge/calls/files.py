"""Files through the pane: write, read and edit a file as the pane's shell user, in its
directory, with SHA-256 checks on the far side.

The work is done by :data:`SCRIPT`, a POSIX sh script that the pane's shell runs with
``/bin/sh -c`` through the same runner as any command (so bash, zsh, fish and sh panes
alike, and the person sees a one-line summary in the pane). It takes the bytes to write
on its stdin and gives a header and the bytes read on its stdout; it checks SHA-256 with
whichever tool the far side has (``sha256sum``, ``shasum -a 256``, ``openssl``), and
writes through a temporary file beside the target that is moved into place once its
digest matches, after copying an existing file to the host's backup directory
(``$HOME/.cache/tmux-bridge/backups``, with an index); bytes equal to the file's change
nothing.
Nothing in it assumes the shell is on this machine; only the transport of the bytes
does, and that is a :class:`Transport`: here, :class:`LocalTransport` (two 0600 files
in the pane's runtime directory, like the runner's per-call files).

An edit reads the file, replaces the one occurrence of the old text here, and writes
the result back under the same lock, on condition that the file still has the SHA-256
it was read with.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import Any, BinaryIO, Literal, Protocol

from ..cancel import Cancel
from ..errors import (
    ChecksumMismatch,
    EditAmbiguous,
    EditNoMatch,
    FileChanged,
    FileError,
    FileNotFound,
    FileTooLarge,
    InvalidRequest,
    NoChecksumTool,
    ReadFailed,
    WriteFailed,
)
from ..infra.runtime import remove_quietly, write_private_file
from ..pane.front import FarShell, pane_front
from ..pane.info import find_pane
from ..pane.records import PaneDir
from ..results import MAX_FILE_BYTES, CallRecord, FileFacts, RunOptions, new_call_id
from ..target import Target
from ..text.seams import printf_text, sh_backup_file, sh_lock_link, sh_temp_beside
from ..text.transfer import NO_TRANSFER
from ..tuples import NamedTuple
from .command import run_in_frame
from .frame import CallFrame, Notice, pane_call, shell_front

Op = Literal["write", "read", "edit", "stat", "restore"]

# The script's own statuses (see its header comment).
_FAILED, _MISSING, _TOO_LARGE, _MISMATCH, _NO_TOOL, _CHANGED = 80, 81, 82, 83, 84, 85
_MAGIC = b"tmux-send-file 2"
# the magic, the absolute path, size, SHA-256, mode, mtime, backup, status, MD5
_HEADER_FIELDS = 9

# Backups kept on each host (in $HOME/.cache/tmux-bridge/backups there): pruned after
# each new one, oldest first, to these (the newest is always kept).
BACKUP_DAYS = 30
BACKUP_BYTES = 256 * 1024 * 1024
_HEADER_MAX = 3 * 4096 + 256  # two paths of at most PATH_MAX, and the rest

SCRIPT = (
    r"""# tmux-send's file operations, run by /bin/sh in the pane's shell: data on
# stdin, results on stdout, a line for the person on stderr.
#   read PATH MAX                 the header, then the file's bytes
#   stat PATH                     the header alone, with the MD5
#   write PATH SHA256 BACKUP OLD DAYS BYTES [FROM]
#                                 stdin (or the file FROM) into PATH, then the header.
#                                 BACKUP is 1 or 0; OLD the SHA-256 the file must still
#                                 have, or - for any; DAYS and BYTES the backups kept.
#   backups PATH                  the backup directory, PATH resolved (empty PATH:
#                                 none), then the index lines of the backups there
# The header: tmux-send-file 2, the absolute path, size, SHA-256, mode (octal), mtime,
# backup path, status (created, updated, unchanged) and MD5, each ended by a NUL.
# Backups: $HOME/.cache/tmux-bridge/backups/ID (ID: the time in seconds, -XXXXXX), and
# one line each in its file index: ID TIME SHA256 SIZE PATH (PATH in hex).
# Status: 0 done, 81 no such file or directory, 82 too large, 83 SHA-256 mismatch,
# 84 no SHA-256 tool, 85 changed since it was read, 80 anything else.
op=$1 p=$2 tmp= bk= done= cur= state= locked= bdir=
case $p in -*) p=./$p ;; esac  # never an option, and cat takes - for stdin
say() { printf 'tmux-send: %s\n' "$*" >&2; }
die() { status=$1; shift; say "$*"; exit "$status"; }
trap 'if [ -z "$done" ]; then rm -f -- "$tmp" "$bk"; fi
      [ -z "$locked" ] || rm -f -- "$bdir/index.lock"' EXIT
trap 'exit 129' HUP; trap 'exit 130' INT; trap 'exit 143' TERM
if command -v sha256sum >/dev/null 2>&1; then
    sha() { sha256sum | { read -r h _ && printf %s "$h"; }; }
elif command -v shasum >/dev/null 2>&1; then
    sha() { shasum -a 256 | { read -r h _ && printf %s "$h"; }; }
elif command -v openssl >/dev/null 2>&1; then
    sha() { openssl dgst -sha256 | { read -r h && printf %s "${h##* }"; }; }
else
    die 84 "no SHA-256 tool here (sha256sum, shasum or openssl)"
fi
md5() {  # the MD5 of stdin, or - when no tool here makes one
    if command -v md5sum >/dev/null 2>&1; then md5sum | { read -r h _ && printf %s "$h"; }
    elif command -v md5 >/dev/null 2>&1; then md5 | { read -r h && printf %s "${h##* }"; }
    elif command -v openssl >/dev/null 2>&1; then
        openssl dgst -md5 | { read -r h && printf %s "${h##* }"; }
    else printf -; fi
}
facts() {  # "MODE MTIME": GNU or busybox stat, else BSD stat
    stat -c '%a %Y' -- "$1" 2>/dev/null || stat -f '%Lp %m' -- "$1" 2>/dev/null || echo - -
}
absolute() {  # $abs: $1 from the current directory (empty stays empty; ./-x is -x)
    case $1 in /* | "") abs=$1 ;; ./-*) abs=$PWD/${1#./} ;; *) abs=$PWD/$1 ;; esac
}
header() {  # PATH SIZE SHA256 BACKUP STATUS MD5
    st=$(facts "$1")
    absolute "$1"; a=$abs; absolute "$4"
    printf 'tmux-send-file 2\0%s\0%s\0%s\0%s\0%s\0%s\0%s\0%s\0' \
        "$a" "$2" "$3" "${st% *}" "${st#* }" "$abs" "$5" "$6"
}
short() { printf %.12s "$1"; }
size_of() { size=$(wc -c <"$1") || die 80 "cannot read the file"; size=$(( size )); }
do_read() {  # MAX
    [ -e "$p" ] || die 81 "no such file"
    [ -f "$p" ] || die 80 "not a regular file"
    size_of "$p"
    [ "$size" -le "$1" ] || die 82 "the file holds $size bytes, more than $1"
    h=$(sha <"$p")
    [ -n "$h" ] || die 80 "cannot compute the SHA-256 of the file"
    header "$p" "$size" "$h" "" "" "" && cat -- "$p" || die 80 "cannot read the file"
    say "read $size bytes, SHA-256 $(short "$h")..."
}
do_stat() {
    [ -e "$p" ] || die 81 "no such file"
    [ -f "$p" ] || die 80 "not a regular file"
    size_of "$p"
    h=$(sha <"$p") m=$(md5 <"$p")
    [ -n "$h" ] || die 80 "cannot compute the SHA-256 of the file"
    header "$p" "$size" "$h" "" "" "$m"
    say "stat: $size bytes, SHA-256 $(short "$h")..."
}
resolve() {  # a symbolic link: write to the file it points to
    [ -L "$p" ] || return 0
    t=$(readlink -f -- "$p" && echo x) || die 80 "cannot resolve the symbolic link"
    t=${t%x}; p=${t%?}
}
dir_of() {  # $dir: the directory of $p
    case $p in */*) dir=${p%/*}; dir=${dir:-/} ;; *) dir=. ;; esac
}
where() {  # $dir, and $real: $p with that directory resolved
    dir_of
    real=$(cd -P -- "$dir" 2>/dev/null && pwd -P && echo x) || real="$PWD/$dir/x"
    real=${real%?x}; real=${real%/}/${p##*/}
}
check_target() {  # OLD; $cur: the file's SHA-256 when it exists
    case $p in */) die 80 "the path names a directory" ;; esac
    dir_of
    [ -d "$dir" ] || die 81 "no such directory"
    if [ -e "$p" ]; then
        [ -f "$p" ] || die 80 "not a regular file"
        [ -w "$p" ] || die 80 "the file is read-only"
        cur=$(sha <"$p")
        [ "$1" = - ] || [ "$cur" = "$1" ] || die 85 "the file changed since it was read"
    else
        [ "$1" = - ] || die 85 "the file was removed since it was read"
    fi
}
make_temp() {  # a new private file beside the target, its name unguessable: $tmp
    command -v mktemp >/dev/null 2>&1 || die 80 "no mktemp here to make the new file with"
    base=${p##*/}
    t=$({make_temp} 2>&1) || die 80 "cannot create a file in the directory: ${t##*: }"
    tmp=$t
}
backup_dir() {  # $bdir, made private when MAKE is 1
    [ -n "$HOME" ] || die 80 "no HOME to keep the backups in"
    bdir=$HOME/.cache/tmux-bridge/backups
    [ "$1" = 1 ] || return 0
    [ -d "$bdir" ] || (umask 077 && mkdir -p -- "$bdir") 2>/dev/null \
        || die 80 "cannot create the backup directory $bdir"
}
make_backup() {  # a copy of the file in the backup directory: $bk, with its mode ($mode)
    backup_dir 1
    now=$(date +%s)
    t=$({make_backup} 2>&1) || die 80 "cannot create the backup: ${t##*: }"
    bk=$t
    cat -- "$p" >"$bk" || die 80 "cannot copy the file to the backup"
    [ "$mode" = - ] || chmod "$mode" "$bk" || die 80 "cannot set the mode of the backup"
}
stale_lock() {  # the index's lock names a process that is gone, or is over a minute
    lk=$(readlink -- "$bdir/index.lock" 2>/dev/null) || return 1  # old: taken away (0)
    lk_pid=${lk%%-*} lk_time=${lk#*-}
    case $lk_pid$lk_time in "" | *[!0-9]*) return 1 ;; esac
    ! kill -0 "$lk_pid" 2>/dev/null || [ "$(( $(date +%s) - lk_time ))" -gt 60 ] || return 1
    [ "$(readlink -- "$bdir/index.lock" 2>/dev/null)" = "$lk" ] && rm -f -- "$bdir/index.lock"
}
lock_index() {  # the index to ourselves: a link naming our process and the time, made
    lk_end=$(( $(date +%s) + 5 ))  # whole or not at all; waited for 5 s at most (1: not had)
    until lk_now=$(date +%s) && {lock_index} 2>/dev/null; do
        stale_lock && continue
        [ "$lk_now" -lt "$lk_end" ] || return 1
        sleep 0.05 2>/dev/null || sleep 1
    done
    locked=1
}
record() {  # DAYS BYTES: the backup in the index, then the old ones pruned, the index
    size_of "$bk"; where  # held the while (two writers pruning at once lose lines)
    hex=$(printf %s "$real" | od -An -v -tx1 | tr -d ' \n')
    lock_index || say "the backup index stayed locked; added without pruning"
    printf '%s %s %s %s %s\n' "${bk##*/}" "$now" "$cur" "$size" "$hex" >>"$bdir/index" \
        || { say "could not add the backup to $bdir/index"; unlock_index; return 0; }
    [ -z "$locked" ] || (prune "$(( now - $1 * 86400 ))" "$2") 2>/dev/null \
        || say "could not prune the old backups"
    unlock_index
}
unlock_index() { [ -z "$locked" ] || rm -f -- "$bdir/index.lock"; locked=; }
prune() {  # CUT BYTES: out with backups older than CUT, then the oldest while over BYTES
    total=0
    while read -r i t h s x; do
        case $t$s in *[!0-9]* | "") continue ;; esac
        [ -e "$bdir/$i" ] || continue
        if [ "$t" -lt "$1" ] && [ "$i" != "${bk##*/}" ]; then rm -f -- "$bdir/$i"
        else total=$(( total + s )); fi
    done <"$bdir/index"
    : >"$bdir/index.new" || return 1
    while read -r i t h s x; do
        case $t$s in *[!0-9]* | "") continue ;; esac
        [ -e "$bdir/$i" ] || continue
        if [ "$total" -gt "$2" ] && [ "$i" != "${bk##*/}" ]; then
            rm -f -- "$bdir/$i"; total=$(( total - s ))
        else printf '%s %s %s %s %s\n' "$i" "$t" "$h" "$s" "$x"; fi
    done <"$bdir/index" >>"$bdir/index.new"
    mv -f -- "$bdir/index.new" "$bdir/index"
}
fill() {  # FROM: the new content into $tmp, from stdin or the file FROM
    if [ -n "$1" ]; then
        [ -f "$1" ] || die 81 "no such backup: $1"
        cat -- "$1" >"$tmp" || die 80 "cannot copy the backup"
    else
        cat >"$tmp" || die 80 "cannot write the new content (is the disk full?)"
    fi
}
do_write() {  # SHA256 BACKUP OLD DAYS BYTES FROM
    resolve
    check_target "$3"
    if [ -n "$cur" ] && [ "$cur" = "$1" ]; then
        done=1; size_of "$p"
        header "$p" "$size" "$cur" "" unchanged ""
        say "unchanged: the file already holds these $size bytes (SHA-256 $(short "$cur")...)"
        return 0
    fi
    mask=$(umask)
    umask 077
    make_temp
    fill "$6"
    got=$(sha <"$tmp")
    [ "$got" = "$1" ] || die 83 "SHA-256 mismatch: got $(short "$got")..., sent $(short "$1")..."
    if [ -e "$p" ]; then
        st=$(facts "$p"); mode=${st% *}; state=updated
    elif [ -n "$6" ]; then
        st=$(facts "$6"); mode=${st% *}; state=created
    else
        mode=$(printf %o $(( 0666 & ~0$mask ))); state=created
    fi
    [ "$mode" = - ] || chmod "$mode" "$tmp" || die 80 "cannot set the mode of the new file"
    [ "$2" = 0 ] || [ ! -e "$p" ] || make_backup
    mv -f -- "$tmp" "$p" || die 80 "cannot move the new file into place"
    done=1
    [ -z "$bk" ] || record "$4" "$5"
    size_of "$p"
    header "$p" "$size" "$got" "$bk" "$state" ""
    say "wrote $size bytes, SHA-256 $(short "$got")... checked${bk:+; the old file is in $bk}"
}
do_backups() {  # the directory, PATH resolved, then the index lines of the backups kept
    backup_dir 0
    real=
    if [ -n "$p" ]; then resolve; where; fi
    printf 'tmux-send-backups 1\0%s\0%s\0' "$bdir" "$real"
    [ -f "$bdir/index" ] || return 0
    while read -r i t h s x; do
        [ ! -e "$bdir/$i" ] || printf '%s %s %s %s %s\n' "$i" "$t" "$h" "$s" "$x"
    done <"$bdir/index"
}
case $op in
    read) do_read "$3" ;;
    stat) do_stat ;;
    write) do_write "$3" "$4" "$5" "$6" "$7" "$8" ;;
    backups) do_backups ;;
    *) die 80 "unknown operation: $op" ;;
esac
""".replace("{make_temp}", sh_temp_beside("dir", "base"))
    .replace("{make_backup}", sh_backup_file("bdir", "now"))
    .replace("{lock_index}", sh_lock_link("bdir", "lk_now"))
)


class Transport(Protocol):
    """How the script's stdin and stdout travel between tmux-send and the pane's shell.

    :meth:`words` gives the command that runs ``script`` with its arguments, its stdin
    holding ``data`` (nothing when ``None``) and its stdout kept for :meth:`output`;
    :meth:`close` removes whatever the transport left."""

    def words(self, script: str, arguments: list[str], data: bytes | None) -> list[str]: ...

    def output(self) -> BinaryIO: ...

    def close(self) -> None: ...


class LocalTransport:
    """For a shell on this machine: the bytes in ``<id>.in`` and ``<id>.out`` in the
    pane's runtime directory (0700), the script's stdin and stdout. The input file is
    ours (0600, O_EXCL); the shell creates the output file. Both are removed after the
    call, or swept up by the next call after a killed one."""

    # The script's first lines: its stdin and stdout from and to the two files.
    PRELUDE = 'exec <"$1" >"$2" || exit 80\nshift 2\n'

    def __init__(self, records: PaneDir, call_id: str) -> None:
        self.in_path = records.file(call_id + ".in")
        self.out_path = records.file(call_id + ".out")

    def words(self, script: str, arguments: list[str], data: bytes | None) -> list[str]:
        source = os.devnull
        if data is not None:
            write_private_file(self.in_path, data)
            source = self.in_path
        script = self.PRELUDE + script
        return ["/bin/sh", "-c", script, "tmux-send-file", source, self.out_path, *arguments]

    def output(self) -> BinaryIO:
        return open(self.out_path, "rb")  # the caller closes it

    def close(self) -> None:
        remove_quietly(self.in_path)
        remove_quietly(self.out_path)


class FarTransport:
    """For a far shell (through ssh, su, sudo): nothing of ours exists there, so the
    data to write travels in the command itself (a ``printf`` format, at most
    :data:`FAR_DATA_LIMIT` characters: one argument of ``/bin/sh``), into a far
    temporary file; the script's stdout goes to another one, printed afterwards as hex
    by ``od`` (POSIX) into the pane's stream, where :meth:`sink` collects it."""

    WRAPPER = (
        # stdin through a pipe from printf, stdout through a pipe to od on the terminal (fd
        # 4), the script's status through the command substitution (fd 3): no file at all
        'd=$1; shift\n{ s=$( { { if [ -n "$d" ]; then printf "$d" 2>/dev/null; fi | (\n'
        "{script}\n"
        '); echo "$?" >&3; } | od -An -v -tx1 >&4; } 3>&1 ); } 4>&1\n'
        'exit "${s:-80}"\n'
    )

    def __init__(self) -> None:
        self.collected = bytearray()

    def sink(self, chunk: bytes) -> None:
        self.collected += chunk

    def words(self, script: str, arguments: list[str], data: bytes | None) -> list[str]:
        text = "" if data is None else printf_text(data)
        if len(text) > FAR_DATA_LIMIT:
            raise FileTooLarge(
                f"{len(data or b'')} bytes are more than tmux-send writes through a far "
                f"shell (at most {FAR_DATA_LIMIT} characters once written as a printf "
                "format: about 100 KB of text); copy a file that large another way."
            )
        wrapper = self.WRAPPER.replace("{script}", script)
        return ["/bin/sh", "-c", wrapper, "tmux-send-file", text, *arguments]

    def output(self) -> BinaryIO:
        """The script's stdout from the lines ``od`` printed. Only whole ``od`` lines
        count: where the far shell has no stderr file, the script's messages share the
        terminal (and, written between two of od's writes, spoil a line, which the
        SHA-256 check then reports)."""
        import io

        lines = bytes(self.collected).replace(b"\r", b"").split(b"\n")
        digits = b"".join(b"".join(line.split()) for line in lines if _od_line(line))
        return io.BytesIO(bytes.fromhex(digits.decode("ascii")))

    def close(self) -> None:
        pass


def _od_line(line: bytes) -> bool:
    """Whether ``line`` is one ``od -An -v -tx1`` prints: two-digit hex numbers only
    (spaced as that od spaces them: GNU, busybox and BSD differ)."""
    words = line.split()
    return bool(words) and all(
        len(word) == 2 and all(c in b"0123456789abcdef" for c in word) for word in words
    )


FAR_DATA_LIMIT = 120_000  # characters; one argument may hold 128 KiB (MAX_ARG_STRLEN)


class _Run(NamedTuple):
    """One run of the script: the command call's record, what the script said on stderr,
    and, when it succeeded, its header and the bytes that followed it."""

    record: CallRecord
    messages: str
    header: FileFacts | None
    data: bytes


class _Call(NamedTuple):
    """What every run of the script in one call shares."""

    target: Target
    frame: CallFrame
    path: str
    options: RunOptions
    notice: Notice
    cancel: Cancel | None


# --- the three operations ------------------------------------------------------------------


def write_file(
    target: Target,
    path: str,
    data: bytes,
    backup: bool,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
    if_sha256: str | None = None,
) -> CallRecord:
    """Write ``data`` to ``path`` (relative to the shell's directory) as the pane's shell
    user: into a temporary file beside it, checked against its SHA-256, then moved into
    place, after copying an existing file to a backup (in the host's backup
    directory) unless ``backup`` is false. Bytes equal to the file's change nothing
    (``file.status`` ``unchanged``, no backup). With ``if_sha256`` the file must still
    have that SHA-256 (else :class:`FileChanged`). A symbolic link is written through.
    The file keeps its mode; a new one gets the shell's umask.

    The result's ``file`` has the facts of the new file and the backup's path; its
    stdout is a one-line summary. Raises :class:`FileNotFound` (no such directory),
    :class:`WriteFailed`, :class:`ChecksumMismatch`, :class:`NoChecksumTool`,
    :class:`FileTooLarge` (more than :data:`MAX_FILE_BYTES`), and what
    :func:`tmux_bridge.calls.command.run_command` raises. A timeout or a cancellation returns
    the record as command mode does: the file is then either as it was or all new.
    """
    _check_path(path)
    _check_size(path, len(data))
    guard = check_sha256(if_sha256)
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, path, options, notice, cancel)
        run = _write(call, data, backup, guard, f"write {_visible(path)} ({len(data)} bytes)")
        return _finish(call, "write", run, _write_summary(run))


def read_file(
    target: Target, path: str, options: RunOptions, notice: Notice, cancel: Cancel | None
) -> CallRecord:
    """Read the file at ``path`` (relative to the shell's directory) as the pane's shell
    user: the result's ``stdout`` holds its exact bytes, checked against the SHA-256 the
    far side computed, and ``file`` its size, mode, mtime and SHA-256.

    Raises :class:`FileNotFound`, :class:`ReadFailed` (not a regular file, no
    permission), :class:`FileTooLarge` (more than :data:`MAX_FILE_BYTES`),
    :class:`ChecksumMismatch` (it changed while it was read), :class:`NoChecksumTool`,
    and what :func:`tmux_bridge.calls.command.run_command` raises.
    """
    _check_path(path)
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, path, options, notice, cancel)
        run = _read(call, f"read {_visible(path)}")
        return _finish(call, "read", run, run.data)


def edit_file(
    target: Target,
    path: str,
    change: Change,
    backup: bool,
    options: RunOptions,
    notice: Notice,
    cancel: Cancel | None,
    if_sha256: str | None = None,
) -> CallRecord:
    """Change the file at ``path`` with ``change`` (its bytes to the new bytes, or an
    error): read it, change it here, and write it back as :func:`write_file` does, on
    condition that it still has the SHA-256 it was read with (both under the pane's
    lock), and, with ``if_sha256``, that it had that SHA-256 when read. The result's
    ``stdout`` is the unified diff; ``file`` the facts of the new file and the backup.

    Raises :class:`FileChanged` when the file changed in between or does not have
    ``if_sha256`` (the file is then untouched), what ``change`` raises
    (:func:`replace_once`: :class:`EditNoMatch`, :class:`EditAmbiguous`;
    :func:`line_change`: :class:`EditNoLine`), and what :func:`read_file` and
    :func:`write_file` raise.
    """
    _check_path(path)
    guard = check_sha256(if_sha256)
    options = _file_options(options)
    with pane_call(target, options, cancel, notice) as frame:
        call = _Call(target, frame, path, options, notice, cancel)
        first = _read(call, f"edit {_visible(path)}: read")
        if first.header is None:
            return _finish(call, "edit", first, b"")
        if guard != "-" and first.header.sha256 != guard:
            raise _changed(path, guard, first.header.sha256)
        before = first.data
        after = change(path, before)
        _check_size(path, len(after))
        call = _again(call)
        shown = f"edit {_visible(path)}: write ({len(after)} bytes)"
        run = _write(call, after, backup, first.header.sha256, shown)
        diff = unified_diff(path, before, after) if run.header is not None else b""
        return _finish(call, "edit", run, diff)


Change = Callable[[str, bytes], bytes]  # (the path, the file's bytes) -> the new bytes


def replace_once(old: bytes, new: bytes) -> Change:
    """The change that replaces the one occurrence of ``old`` with ``new`` (overlapping
    occurrences count; none or several: :class:`EditNoMatch`, :class:`EditAmbiguous`).
    Raises :class:`InvalidRequest` at once for an empty ``old`` or ``new == old``."""
    if not old:
        raise InvalidRequest("the text to replace is empty; give the text the file holds now.")
    if old == new:
        raise InvalidRequest("the new text is the same as the old text; nothing would change.")

    def replace(path: str, before: bytes) -> bytes:
        at = _only_occurrence(path, before, old)
        return before[:at] + new + before[at + len(old) :]

    return replace


def _again(call: _Call) -> _Call:
    """The call with the pane looked at anew, for a second run of the script in it (in a
    far shell, the run waits for the prompt the first left coming, as any far call
    right after one of ours does: :func:`~tmux_bridge.calls.far.check_far_ready`)."""
    frame = call.frame
    view = find_pane(call.target.tmux, call.target.session, frame.view.pane.pane_id)
    front = pane_front(call.target.tmux, view.pane, frame.records)
    return call._replace(frame=frame._replace(view=view, front=front))


def check_sha256(digest: str | None) -> str:
    """``digest`` (a SHA-256 in hex, any case) as the script takes it, ``-`` for none;
    raises :class:`InvalidRequest` for anything else."""
    if digest is None:
        return "-"
    text = digest.strip().lower()
    if len(text) != 64 or not all(c in "0123456789abcdef" for c in text):
        raise InvalidRequest(
            f"{digest!r} is not a SHA-256 (64 hex digits); give the sha256 a --read, "
            "--stat or --write reported."
        )
    return text


def _changed(path: str, wanted: str, found: str) -> FileChanged:
    return FileChanged(
        f"{path} has SHA-256 {found}, not the {wanted} it was to have (--if-sha256), so "
        "it was not changed. Read it again (or --stat it) and retry."
    )


# --- running the script --------------------------------------------------------------------


def _read(call: _Call, shown: str) -> _Run:
    run = _run_script(call, ["read", call.path, str(MAX_FILE_BYTES)], None, shown)
    if run.header is not None:
        _check_digest(call.path, run.header, run.data, "read")
    return run


def _write(call: _Call, data: bytes, backup: bool, old_sha: str, shown: str) -> _Run:
    digest = hashlib.sha256(data).hexdigest()
    run = _run_script(call, write_arguments(call.path, digest, backup, old_sha, ""), data, shown)
    if run.header is not None and (run.header.sha256, run.header.size) != (digest, len(data)):
        raise ChecksumMismatch(
            f"the pane's shell reports {call.path} with {run.header.size} bytes and SHA-256 "
            f"{run.header.sha256}, not the {len(data)} bytes sent (SHA-256 {digest}): it was "
            "changed right after it was written."
        )
    return run


def write_arguments(path: str, digest: str, backup: bool, old_sha: str, source: str) -> list[str]:
    """The script's arguments to write ``path``: the new bytes have SHA-256 ``digest``
    and come on stdin, or from the file ``source`` on the host (a backup)."""
    flag = "1" if backup else "0"
    keep = [str(BACKUP_DAYS), str(BACKUP_BYTES)]
    return ["write", path, digest, flag, old_sha, *keep, source]


Parse = Callable[[BinaryIO, str], "tuple[FileFacts | None, bytes]"]


def _run_script(
    call: _Call,
    arguments: list[str],
    data: bytes | None,
    shown: str,
    parse: Parse | None = None,
    script: str = SCRIPT,
) -> _Run:
    """Run ``script`` (:data:`SCRIPT`) once in the pane's shell. A script that failed
    raises its error; an interrupted run (timeout, cancellation) comes back without a
    header. ``parse`` reads its stdout (default: the header, then the bytes). A far
    shell's bytes travel through the pane's stream (:mod:`tmux_bridge.calls.transfer`),
    or, where the far side lacks the tools for that, in the command and as hex."""
    how = (arguments, data, shown, parse or _parse, script)
    if not isinstance(shell_front(call.frame), FarShell):
        run = _run_with(call, LocalTransport(call.frame.records, new_call_id()), *how)
        assert run is not None  # only a far transfer is refused
        return run
    from .transfer import StreamTransport, transfer_call

    stream = StreamTransport(call.target.tmux, call.frame.view.pane.pane_id)
    run = _run_with(call, stream, *how, far_call=transfer_call(stream))
    if run is not None:
        return run
    slow = _run_with(_again(call), FarTransport(), *how)
    assert slow is not None
    slow.record.notes.append(
        f"the far side could not take the bytes through the pane's stream "
        f"({stream.refused or 'it lacks base64, head -c, stty or awk'}): they went the "
        "slow way, in the command and back as hex (at most about 100 KB)."
    )
    return slow


def _run_with(
    call: _Call,
    transport: Transport,
    arguments: list[str],
    data: bytes | None,
    shown: str,
    parse: Parse,
    script: str,
    far_call: Callable[..., Any] | None = None,
) -> _Run | None:
    """:func:`_run_script` through ``transport``; ``None`` when a far transfer was
    refused by the far side (nothing was done there)."""
    sink = transport.sink if isinstance(transport, FarTransport) else _discard
    messages = bytearray()
    try:
        words = transport.words(script, arguments, data)
        record = run_in_frame(
            call.target, call.frame, words, call.options,
            (sink, messages.extend), call.notice, call.cancel, shown, far_call,
        )  # fmt: skip
        text = messages.decode("utf-8", "replace")
        if record.timed_out or record.cancelled is not None or record.status is None:
            return _Run(record, text, None, b"")
        if record.status == NO_TRANSFER and far_call is not None:
            return None
        if record.status != 0:
            raise _failure(arguments[0], call.path, record.status, text)
        with transport.output() as stream:
            header, body = parse(stream, call.path)
        return _Run(record, text, header, body)
    finally:
        transport.close()


def _discard(_chunk: bytes) -> None:
    pass  # the script's stdout is the transport's; nothing reaches the relay


def _parse(stream: BinaryIO, path: str) -> tuple[FileFacts | None, bytes]:
    """The script's header (the facts of the file at ``path``) and the bytes after it."""
    head = stream.read(_HEADER_MAX)
    fields = head.split(b"\0", _HEADER_FIELDS)
    if len(fields) <= _HEADER_FIELDS or fields[0] != _MAGIC:
        raise FileError(
            f"the pane's shell gave no account of {path}: its output was {head[:80]!r}."
        )
    stream.seek(sum(len(field) + 1 for field in fields[:_HEADER_FIELDS]))
    text = [field.decode("utf-8", "surrogateescape") for field in fields[1:_HEADER_FIELDS]]
    abs_path, size, digest, mode, mtime, backup, status, md5 = text
    header = FileFacts(
        path,
        abs_path,
        int(size),
        digest,
        int(mode, 8) if mode.isdigit() else None,
        int(mtime) if mtime.lstrip("-").isdigit() else None,
        backup or None,
        status or None,
        md5 if md5 not in ("", "-") else None,
    )
    return header, stream.read()


def _check_digest(path: str, header: FileFacts, data: bytes, what: str) -> None:
    digest = hashlib.sha256(data).hexdigest()
    if (len(data), digest) != (header.size, header.sha256):
        raise ChecksumMismatch(
            f"the {len(data)} bytes {what} from {path} have SHA-256 {digest}, not the "
            f"{header.sha256} of the {header.size} bytes the pane's shell read: the file "
            "changed while it was read, or the bytes were damaged on the way. Try again."
        )


def _failure(op: str, path: str, status: int, messages: str) -> FileError:
    """The error for a script that ended with ``status``, saying ``messages``."""
    said = "; ".join(
        line.removeprefix("tmux-send: ").strip() for line in messages.splitlines() if line.strip()
    )
    detail = f" (the pane's shell said: {said})" if said else ""
    if status == _MISSING and op in ("read", "stat"):
        return FileNotFound(
            f"{path} does not exist (relative paths start at the directory of the pane's shell)."
        )
    if status == _MISSING:
        return FileNotFound(f"the directory to write {path} in does not exist{detail}.")
    if status == _TOO_LARGE:
        return FileTooLarge(f"{path} is larger than {_limit()}{detail}.")
    if status == _MISMATCH:
        return ChecksumMismatch(
            f"the bytes that reached the pane's shell do not have the SHA-256 of the bytes "
            f"sent, so {path} was not changed{detail}. Try again."
        )
    if status == _NO_TOOL:
        return NoChecksumTool(
            "the pane's side has none of sha256sum, shasum or openssl to check the bytes "
            f"with; {path} was not touched."
        )
    if status == _CHANGED:
        return FileChanged(
            f"{path} changed since it was read (it no longer has the SHA-256 it was to "
            "have), so it was not changed. Read it again and retry."
        )
    if op in ("read", "stat", "backups"):
        return ReadFailed(f"could not read {path}{detail}.")
    return WriteFailed(f"could not write {path}; it is as it was{detail}.")


# --- results -------------------------------------------------------------------------------


def _finish(call: _Call, op: Op, run: _Run, stdout: bytes) -> CallRecord:
    """The call's record from the (last) run of the script: the file's facts, ``stdout``,
    and the backup in a note; an interrupted run keeps what command mode reports."""
    record = run.record
    record.mode = op
    record.command = call.path
    header = run.header
    if header is None:
        record.stdout = b""
        record.stderr = run.messages.encode("utf-8", "surrogateescape")
        if op not in ("read", "stat"):
            record.notes.append(
                f"the file operation was interrupted: {call.path} is either as it was or "
                "completely written; no temporary file is left."
            )
        return record
    record.file = header
    record.stdout = stdout
    record.stderr = b""
    record.stdout_bytes = len(stdout)
    if op == "edit" and header.backup:
        record.notes.append(f"the old content of {call.path} is in {header.backup}")
    return record


def _write_summary(run: _Run) -> bytes:
    header = run.header
    if header is None:
        return b""
    if header.status == "unchanged":
        text = f"unchanged: {header.abs_path} already holds these {header.size} bytes"
        return f"{text} (SHA-256 {header.sha256})\n".encode("utf-8", "surrogateescape")
    text = f"wrote {header.size} bytes to {header.abs_path} (SHA-256 {header.sha256} checked)"
    if header.backup:
        text += f"; the old content is in {header.backup}"
    return (text + "\n").encode("utf-8", "surrogateescape")


def unified_diff(path: str, before: bytes, after: bytes) -> bytes:
    """The unified diff (3 lines of context) from ``before`` to ``after`` as ``diff -u``
    writes it, with ``\\ No newline at end of file`` where a last line has none. Bytes
    that are not UTF-8 are kept as they are."""
    import difflib

    old = _lines(before.decode("utf-8", "surrogateescape"))
    new = _lines(after.decode("utf-8", "surrogateescape"))
    out: list[str] = []
    for line in difflib.unified_diff(old, new, path, path):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def _lines(text: str) -> list[str]:
    """``text`` split after each newline only (``str.splitlines`` also splits at form
    feeds, carriage returns and more, which ``diff`` does not)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    return [*lines, parts[-1]] if parts[-1] else lines


# --- checks --------------------------------------------------------------------------------


def _only_occurrence(path: str, data: bytes, old: bytes) -> int:
    """Where ``old`` occurs in ``data``, when it occurs exactly once (overlapping
    occurrences count); else raise :class:`EditNoMatch` or :class:`EditAmbiguous`."""
    found: list[int] = []
    start = data.find(old)
    while start >= 0 and len(found) < 1000:
        found.append(start)
        start = data.find(old, start + 1)
    if not found:
        raise EditNoMatch(f"the text to replace does not occur in {path}; it was not changed.")
    if len(found) > 1:
        lines = sorted({data.count(b"\n", 0, at) + 1 for at in found})
        shown = ", ".join(str(n) for n in lines[:10]) + (", ..." if len(lines) > 10 else "")
        count = f"{len(found)}{' or more' if start >= 0 else ''}"
        raise EditAmbiguous(
            f"the text to replace occurs {count} times in {path} (lines {shown}); it must "
            "occur exactly once, so the file was not changed. Include more of the "
            "surrounding text."
        )
    return found[0]


def _check_path(path: str) -> None:
    if not path or "\0" in path:
        raise InvalidRequest("a file path must be non-empty and hold no NUL character.")


def _check_size(path: str, size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise FileTooLarge(
            f"{size} bytes for {path} is more than the {_limit()} tmux-send moves through "
            "the pane; copy a file that large another way."
        )


def _limit() -> str:
    return f"{MAX_FILE_BYTES} bytes ({MAX_FILE_BYTES // (1024 * 1024)} MiB)"


def _file_options(options: RunOptions) -> RunOptions:
    """File operations print nothing until they are done, so only the overall timeout
    applies: the idle timeout is set to it."""
    return options._replace(idle_timeout=options.max_time, raw=False)


def _visible(path: str) -> str:
    """``path`` as one field on one line for the person (newlines shown as ``^J``)."""
    from ..text.seams import visible

    return visible(path)
