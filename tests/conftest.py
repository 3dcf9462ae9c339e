"""The suite's root conftest: registers the one support plugin (tests/support/plugin.py),
which holds the fixtures; the helpers tests import are in tests/support/."""

from __future__ import annotations

pytest_plugins = ["tests.support.plugin"]
