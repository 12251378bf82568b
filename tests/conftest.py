"""Shared fixtures. Every server a test talks to is started here on 127.0.0.1."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from argon2 import PasswordHasher, profiles

import pgserver
import storage_contract
from tidings.app import passwords
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


#: the markers ``--fast`` leaves out: each costs seconds to minutes per test
HEAVY = ("slow", "browser", "postgres")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast", action="store_true",
        help="leave out the slow, browser and PostgreSQL tests: the quick subset for the "
             "edit-and-test loop (the README's command runs everything)")


#: processes of a ``--fast`` run. Its tests wait more than they compute (subprocesses
#: and servers starting, sockets, timeouts): on 2 cores, two workers overlap each one's
#: waits with the other's work. Every test has its own tmp_path, ports come from the OS
#: and PostgreSQL (not in the subset) gives each test its own schema.
FAST_WORKERS = 2


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """``--fast`` over the whole suite runs in FAST_WORKERS processes (pytest-xdist)
    unless ``-n`` says otherwise (``-n 0``: one process). Named files or folders run in
    one, as does the whole suite unless asked: starting a worker costs seconds."""
    wanted = (config.getoption("--fast") and config.pluginmanager.hasplugin("xdist")
              and config.args_source == pytest.Config.ArgsSource.TESTPATHS
              and not hasattr(config, "workerinput")  # a worker itself
              and config.getoption("numprocesses", None) is None
              and not config.getoption("collectonly") and not config.getoption("usepdb"))
    if wanted:
        config.option.numprocesses = FAST_WORKERS  # what xdist's `-n 2 --dist worksteal` sets
        config.option.dist = "worksteal"  # an idle worker takes tests from the busy one
        config.option.tx = ["popen"] * FAST_WORKERS


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Contract tests on the PostgreSQL backend are marked ``postgres`` by their
    parameter; with ``--fast`` every heavy test is deselected, not skipped, so a fast
    run reports what it ran and nothing else."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "postgresql" in callspec.params.values():
            item.add_marker(pytest.mark.postgres)
    if not config.getoption("--fast"):
        return
    kept = [item for item in items if not any(item.get_closest_marker(m) for m in HEAVY)]
    dropped = [item for item in items if item not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(autouse=True)
def _postgres_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test reaching PostgreSQL without the ``postgres`` marker fails: it would slow
    the ``--fast`` subset down unseen."""
    pgserver.CURRENT["marked"] = request.node.get_closest_marker("postgres") is not None
    yield
    pgserver.CURRENT.pop("marked", None)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """In CI nothing may skip: a skipped test there means a missing install step."""
    if not IN_CI or hasattr(session.config, "workerinput"):  # workers: the controller counts
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter else []
    if skipped:
        reporter.write_line(f"CI: {len(skipped)} tests skipped; nothing may skip in CI", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session", autouse=True)
def production_hasher() -> Iterator[PasswordHasher]:
    """The suite hashes passwords with argon2's cheapest parameters (``CHEAPEST``, the
    profile argon2-cffi keeps for tests): at the production cost (64 MiB, 3 passes, 4
    lanes) every login and ``set-password`` took 0.1 s of CPU and up to 0.6 s on a busy
    machine, seconds per test. Hashes carry their parameters, so either verifies the
    other's. Yields the production hasher to the test that checks the stored cost."""
    real = passwords._hasher
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(passwords, "_hasher", PasswordHasher.from_parameters(profiles.CHEAPEST))
        yield real


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
