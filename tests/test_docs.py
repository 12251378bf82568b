"""Every command and every setting is documented (a feature nobody can find is missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tidings.cli import cli
from tidings.settings import setting_help

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.mark.parametrize("name", sorted(setting_help()))
def test_every_setting_is_documented(name: str) -> None:
    text = (DOCS / "settings.md").read_text("utf-8")
    assert f"`{name}`" in text and f"`TIDINGS_{name.upper()}`" in text


@pytest.mark.parametrize("command", sorted(cli.commands))
def test_every_command_is_documented(command: str) -> None:
    text = (DOCS / "cli.md").read_text("utf-8")
    assert f"tidings {command}" in text


def test_every_setting_has_help_text() -> None:
    assert all(len(h) > 10 for h in setting_help().values())
