"""``tmux-send --guide``: instructions an AI agent can follow, fit for an AGENTS.md."""

from __future__ import annotations

GUIDE = """\
# Using tmux-send (a terminal the person watches)

`tmux-send` runs a command in a shell the person keeps open and watches (their
`tmux-bridge` terminal), and gives you its stdout, stderr and exit status as if you had
run it yourself. Use it when a command needs the person or their terminal: `sudo`
(password), `ssh` to hosts only they reach, installers that ask questions, anything
they should see. For everything else, prefer running commands yourself.

## Run a command
    tmux-send -- 'cd ~/project && make test'    # one argument is shell code
    tmux-send --timeout 60 -- sudo apt-get install -y jq
    tmux-send - < script.sh                     # long scripts on stdin
- It runs in the person's own shell: cd, export and functions persist between calls.
- Several arguments are one command and its exact arguments, as with sudo or env:
  `tmux-send -- grep "a b" f.txt`. One argument is shell code: `tmux-send -- 'a | b'`.
- --timeout N (default 10) is seconds without output; --max-time N (default 120) in
  all; each above 0, at most a week. When one fires: Ctrl-C, then Ctrl-\\ after 3 s,
  exit 124, output so far printed.
- Pagers do not wait for keys: PAGER, GIT_PAGER, MANPAGER, SYSTEMD_PAGER and PSQL_PAGER
  are `cat` for the command unless the person set them.
- The person sees your command (after `[tmux-send] `, or `[tmux-send: NAME] ` when
  TMUX_BRIDGE_AGENT=NAME is in your environment), its output, and `[exit N]` on failure.

## Long work: jobs
For builds, installs, test suites or servers that may run long or stay quiet, start a
job rather than raising --timeout:
    tmux-send --background -- make -j8      # prints the job id once it runs; exit 0
    tmux-send --job ID                      # what it printed since your last read
    tmux-send --wait ID --timeout 600       # wait for it; exit with its status
    tmux-send --kill ID                     # Ctrl-C, then Ctrl-\\
    tmux-send --jobs                        # every job and its state
--job exits 0 while the job runs, then with its status; reads never repeat or skip a
byte (--all: everything). A --wait that times out exits 124 and leaves the job running.
--on-timeout detach turns a call whose timeout fires into a job (exit 124, the id on
stderr). While a job runs, its pane refuses other calls (pane_busy names the job): use
another pane (`tmux-bridge split`). --first/--last/--max-bytes cut a --job or --wait
read as they cut a call (below).

## Long output
    tmux-send --first 20 --last 20 -- make test  # head, one cut line, tail
    tmux-send --max-bytes 20000 -- ./build.sh    # at most 20000 bytes of each stream
    tmux-send --output 3f6b2a91c0 --offset 200   # lines 201-400 of the whole stdout
- Each stream is cut apart; the cut line says how many lines and bytes were left out
  and the file that holds all of it (kept a day). --output pages through that file
  (a path, or the call's id; ID.stderr for stderr; --limit N lines, default 200).
- Set TMUX_SEND_FIRST, TMUX_SEND_LAST or TMUX_SEND_MAX_BYTES once to cut every call.
- --json adds stdout_truncated, stdout_file, stdout_lines, stdout_bytes (and stderr_...).

## Several panes
The person may keep several panes (an app server, a database shell, an ssh session).
    tmux-bridge panes                            # target, label, shell, what is in front
    tmux-send -p db -- 'psql -c "select 1"'     # -p: a label, %3, 1.0 or SESSION:1.0
    tmux-bridge split --label logs -- 'tail -f /var/log/app.log'
    tmux-send -p db --info     # OS, distro, host, user, shell; GNU/BSD/busybox grep sed awk...
Every mode takes -p (commands, --repl, --keys, --type, --screen). Without it: the
bridge pane. Calls to different panes run at once; calls to one pane wait in turn.
Label a pane you use often (`tmux-bridge label %3 db`); ask before splitting panes in
the person's terminal unless they asked for it.

## Shells inside shells (ssh, su, sudo -i, a nested shell)
When the person has `ssh host`, `su - user`, `sudo -i`, `docker exec -it c sh` or just
`bash` open in the pane, at its prompt, tmux-send runs the command in that far shell:
stdout exact, status exact, stderr apart (`stderr_merged` true in --json when not).
--json and --info say where it ran (`far`: via, user, host, os, shell). A password
prompt, vim/less or a REPL the person opened there is refused (exit 125). If the connection
drops mid-command: exit 125 (far_shell_lost), output so far printed. A container's
busybox sh works too. --write, --read and --edit work there too (files of many MB,
carried unseen through the pane's stream as base64, a progress line every 2 s), and
--repl python / node (`tmux-send --repl python -- python3` starts it on the far host;
other presets: 125).

## Exit status
- 0-255: the command's own (130 = interrupted by Ctrl-C).
- 124: a timeout fired. 125: tmux-send could not run the command (read stderr).
- 2: bad usage.

## When there is no bridge
tmux-send prints "No tmux-bridge session is running" and exits 125. Do not start it
yourself: ask the person to run `tmux-bridge` in a terminal they can see.

## When a command waits for the person
If a command asks for a password or a confirmation, tmux-send says on stderr that it
waits for input in the bridge terminal, and the idle timeout does not end it. Tell the
person what to type there. To answer a prompt yourself, from a second call:
    tmux-send --screen                 # what is on the screen now
    tmux-send --type 'yes' --enter     # literal text (no key names), then Enter
    tmux-send --keys q                 # tmux key names: C-c, Enter, Up, q, y
Never type a password you were not given by the person for that purpose.

## Check before you run
    tmux-send --check -- ./deploy.sh --prod     # runs nothing; exit 0: it would run
It says which shell would run the command, whether that shell parses it, what the first
word is there (alias, function, builtin, keyword, file, not_found) and whether the pane
is ready, and exits as the call would: 125 not ready, 127 first word not found, the
shell's parse-error status. The first word is looked up in the person's shell with one
short line they see. In a far shell (ssh, a container) it checks the far shell's syntax
(bash, zsh, fish or sh) and says so. It is a help, not a guarantee: the command can
still fail.
    tmux-send --check --as json - < config.json   # or yaml toml python jq sh bash zsh fish
    tmux-send --write app.toml --check < app.toml # by the extension; writes nothing
These use the validators of the pane's host (python3, jq, the shells' -n) and say which
(validator: null when there is none); --json gives valid and error {line, column,
message}; exit 1 when not valid.

## When tmux-send refuses (exit 125)
It will not type while the person runs a program in the pane, has a half-typed command
line, or a builtin such as `read` waits. Tell the person what the message says and try
again later; do not press keys to clear their work.

## REPLs
    tmux-send --repl python -- python3          # start; waits for the prompt
    tmux-send --repl python -- 'x = 41
    x + 1'                                      # stdout: 42; status 1 on a traceback
    tmux-send --close                           # quit it (exit(), \\q, .exit, ...)
Presets: python, node, psql, sqlite, nix. While a REPL is open, plain commands are
refused: evaluate with --repl NAME or --close first. Like a shell, the REPL is left
alone while the person uses it: text typed at its prompt, a statement begun there
(`...`), or their code running or reading input refuses the call (125).

## Files
    tmux-send --write app.conf < app.conf       # stdin to the file, exactly
    tmux-send --read /etc/os-release            # the file's exact bytes
    tmux-send --edit app.conf --old 'port = 80' --new 'port = 8080'   # prints the diff
    tmux-send --edit app.conf --line 3 --new 'x = 1'   # or --insert TEXT, --delete
    tmux-send --edit app.conf --append 'last line\n'
    tmux-send --stat app.conf                   # size, mode, mtime, sha256, md5 only
    tmux-send --backups app.conf                # backups kept on the pane's host
    tmux-send --restore app.conf [--backup ID]  # put the newest (or ID) back; undoable
- Done by the pane's shell, as its user; relative paths start at its directory (after
  your `cd`s). Nothing in PATH is expanded; a PATH such as `-` or `-x` is a file name.
- --write checks a SHA-256 on the far side and moves the file into place whole; an
  existing file keeps its mode and is first copied to the host's backup directory
  (~/.cache/tmux-bridge/backups there; reported; --no-backup skips it); a new file
  gets the mode the shell's umask gives. The same bytes again change nothing
  (--json file.status: created, updated or unchanged).
- --if-sha256 HEX (with --write, --edit, --restore) changes the file only if it still
  has the SHA-256 you last saw (else file_changed, exit 125): use it.
- --edit replaces --old only where it occurs exactly once, byte for byte; if it occurs
  no time or several times nothing changes (exit 125): --read the file, widen --old.
- --json --read adds size, mode, mtime and sha256; stdout_b64 when not UTF-8.
- At most 256 MiB; only --max-time applies. Prefer these over `cat > file` or heredocs.

## Machine-readable results
Add --json for one JSON object: stdout, stderr, exit_status, timed_out, signals_sent,
duration_s, error. Output that is not valid UTF-8 also comes as stdout_b64/stderr_b64.

## Other AI agents
Agents in other tmux panes (claude, codex, gemini ...) are listed by
`tmux-bridge agents` (name, runtime, state: working, idle, needs_person, starting,
unknown). NAME may also be the runtime (`--to codex` while one runs), a window name,
WINDOW.PANE or a pane id; an ambiguous one is refused (exit 2) listing the agents.
- `tmux-bridge message --to NAME "TEXT"` hands them work, marked as from you (not from
  the person): delivered when they are idle, else kept pending and delivered later
  (exit 0, "is pending" on stderr: do not send it again) for up to a day (--ttl), then
  expired. Add --wait-reply to wait for the answer and print it. From your agent's
  pane you are that agent; elsewhere your name (--from, 1-40 of A-Z a-z 0-9 _ . -)
  arrives as "from NAME (unverified)".
- `tmux-bridge prompt --to NAME "TEXT"` types a prompt as if the person did; exit 0 only
  once the agent took it, 1 not delivered (busy, a draft in its box: never force it
  with --replace-draft unless the person agrees), 3 unconfirmed (it may well have been
  taken: never send it again; look at the agent).
- Control characters in TEXT arrive as visible symbols (ESC as U+241B), never as keys.
- `tmux-bridge inbox [NAME]` shows the messages and their states; a long message
  arrives as one line: `tmux-bridge inbox --read N` prints its text.

## As MCP tools
If your client has the tmux-bridge MCP server (`tmux-bridge mcp`), its tools are the
same calls: run, start_repl, evaluate, close_repl, send_keys, type_text, read_screen,
status, list_panes, pane_info, read_file, write_file, edit_file, read_output,
list_agents, send_prompt, send_message, for files stat_file, list_backups,
restore_file, edit_lines, check_content, and for jobs start_job, read_job, wait_job,
kill_job, list_jobs. The person sees your client's name on each command's line (the
server's TMUX_BRIDGE_AGENT when set). Each returns the --json document; output streams
as progress; cancelling a call is Ctrl-C (cancelling wait_job leaves the job running).
A tool error ends with its error_code (no_bridge: ask the person to start
`tmux-bridge`). A result over max_output (32 KiB) keeps the head and tail of stdout
around a cut line; read the rest of stdout_file with read_output.
"""
