"""The reader's listening socket, bound before anything else starts.

``tidings serve`` binds here first so that a busy port is one line and an exit,
before the scheduler has leased a single source (issue 15).
"""

from __future__ import annotations

import errno
import socket

from tidings.errors import ConfigError


def listen_socket(host: str, port: int) -> socket.socket:
    """The reader's listening socket, bound now, or one line saying why it cannot be."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host!r}: {exc.strerror}") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(f"port {port} is in use (another tidings?); "
                              f"try --port {port + 1 if port < 65535 else 8080}") from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock
