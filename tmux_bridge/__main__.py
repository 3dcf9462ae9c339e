"""``python -m tmux_bridge send|bridge ARGS``: both CLIs without their scripts on PATH.

The group lists its two commands without importing them: ``bridge_cli`` is imported only
for ``bridge``, so ``send`` starts as tmux-send does.
"""

from __future__ import annotations

import click

from .cli.common import exit_now, run_cli


class _Tools(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return ["bridge", "send"]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name == "send":
            from .cli.send_options import cli as send

            return send
        if cmd_name == "bridge":
            from .cli.bridge import cli as bridge

            return bridge
        return None


cli = _Tools(
    help="tmux-bridge's two commands: send is tmux-send, bridge is tmux-bridge.",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def main() -> None:
    exit_now(run_cli(cli))


if __name__ == "__main__":
    main()
