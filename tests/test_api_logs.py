"""Credentials in a query string stay out of the access log (issue 29 item 5): a client
logging in with GET ``ClientLogin?Passwd=<token>``, Fever's ``api_key`` in the address,
a feed's ``key``. The real uvicorn server logs at info level; every line it writes is
captured."""

from __future__ import annotations

import hashlib
import logging
import threading
import time

import httpx
import uvicorn

from test_web_support import add_source, free_port, open_archive, run
from tidings.settings import Settings
from tidings.web import auth, create_app
from tidings.web.logredact import redact


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_no_token_in_any_access_log_line(settings: Settings) -> None:
    tid = open_archive(settings)
    add_source(tid, "alpha", "Alpha")
    token_id, token, digest = auth.new_token()
    run(lambda: tid.tokens.add(token_id, "client", digest))
    run(lambda: tid.compat.remember_fever_key(token_id, token))
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(tid, settings), host="127.0.0.1",
                                           port=port, log_level="info", lifespan="off"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    captured = Lines()
    logging.getLogger("uvicorn.access").addHandler(captured)
    key = hashlib.md5(f"admin:{token}".encode()).hexdigest()
    try:
        base = f"http://127.0.0.1:{port}"
        login = httpx.get(f"{base}/api/greader/accounts/ClientLogin",
                          params={"Email": "admin", "Passwd": token})
        assert login.status_code == 200  # served: refusing would break such clients
        assert httpx.get(f"{base}/api/fever/?api&api_key={key}").json()["auth"] == 1
        httpx.get(f"{base}/feeds/all.atom?key=0123456789abcdef&limit=5")
    finally:
        logging.getLogger("uvicorn.access").removeHandler(captured)
        server.should_exit = True
        thread.join(10)
        tid.close()
    assert len(captured.lines) == 3
    assert not [line for line in captured.lines if token in line or key in line
                or "0123456789abcdef" in line]
    assert "Passwd=***" in captured.lines[0] and "Email=admin" in captured.lines[0]


def test_redaction_keeps_the_names_and_other_parameters() -> None:
    assert redact("GET /x?Email=a&Passwd=tdg_1&n=5") == "GET /x?Email=a&Passwd=***&n=5"
    assert redact("/api/fever?api&api_key=abc&items") == "/api/fever?api&api_key=***&items"
    assert redact("/reader/api/0/stream/contents?T=t0k&c=n1.2") == (
        "/reader/api/0/stream/contents?T=***&c=n1.2")
    assert redact("/feeds/all.atom?limit=5") == "/feeds/all.atom?limit=5"
