"""Shared fixtures. Every server a test talks to is started here on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

import storage_contract
from tidings.settings import Settings, load_settings
from tidings.store.base import Storage

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Settings on a fresh data dir that may reach the test servers on 127.0.0.1."""
    return load_settings(
        tmp_path / "data",
        env={},
        overrides={"allow_private_hosts": "127.0.0.1", "per_host_delay": 0},
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI nothing may skip: a skipped test there means a missing install step."""
    if not IN_CI:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(f"CI: {len(skipped)} tests skipped; nothing may skip in CI", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(params=sorted(storage_contract.BACKENDS))
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Storage]:
    """An empty storage of each backend in tests/storage_contract.py (contract tests)."""
    opened = storage_contract.BACKENDS[request.param](tmp_path)
    yield opened
    opened.close()


@pytest.fixture(scope="session")
def shared_dir() -> Iterator[Path]:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} not found: clone next to the shared/ folder of the project")
    yield SHARED
