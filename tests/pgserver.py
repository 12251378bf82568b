"""The PostgreSQL the tests use: the server on 127.0.0.1:5432 (trust auth), a fresh
database per test run (``.ci/run`` makes one and names it in
``TIDINGS_TEST_DATABASE_URL``), a fresh schema per test.

``TIDINGS_TEST_PG`` names another server (a libpq URL without a database). Outside
CI a test needing PostgreSQL is skipped, with a hint, when nothing answers there;
in CI it fails (``.ci/run`` starts and waits for the server).
"""

from __future__ import annotations

import atexit
import os
import secrets
import socket
from urllib.parse import urlsplit

import psycopg
import pytest

SERVER = os.environ.get("TIDINGS_TEST_PG", "postgresql://postgres@127.0.0.1:5432")
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
_state: dict[str, str] = {}
#: whether the running test carries the ``postgres`` marker (set by conftest.py)
CURRENT: dict[str, bool] = {}


def _listening() -> bool:
    parts = urlsplit(SERVER)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 5432),
                                      timeout=1):
            return True
    except OSError:
        return False


def database_url() -> str:
    """This run's own database (created on first use, dropped when the run ends), or
    the fresh one ``.ci/run`` made (``TIDINGS_TEST_DATABASE_URL``)."""
    if CURRENT.get("marked") is False:
        pytest.fail("this test reaches PostgreSQL: mark it @pytest.mark.postgres so that "
                    "`--fast` leaves it out")
    if "url" in _state:
        return _state["url"]
    given = os.environ.get("TIDINGS_TEST_DATABASE_URL")
    if given:
        _state["url"] = given
        return given
    if not IN_CI and not _listening():
        pytest.skip(f"no PostgreSQL at {SERVER}: start one (trust auth) or set TIDINGS_TEST_PG")
    name = f"tidings_test_{secrets.token_hex(4)}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    _state["url"] = f"{SERVER}/{name}"
    atexit.register(_drop, name)
    return _state["url"]


def _drop(name: str) -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def schema_url() -> str:
    """A URL whose tables live in a new, empty schema of this run's database."""
    url = database_url()
    schema = f"t_{secrets.token_hex(6)}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    return f"{url}?options=-csearch_path%3D{schema}"
