"""Secrets sent in a query string never reach the access log (issue 29).

Some clients put their credentials in the address: ClientLogin as a GET with
``Passwd=`` (an API token here), Fever's ``api_key``, a feed's ``key``, the edit
token ``T``. Refusing them would break those clients; logging them would hand
a token to whoever reads the log. So the access log's request line keeps the
parameter's name and loses its value.
"""

from __future__ import annotations

import logging
import re

#: query parameters whose value is a credential
_SECRET = re.compile(r"([?&](?:Passwd|api_key|key|auth|T|token|access_token)=)[^&\s\"]*",
                     re.IGNORECASE)


def redact(text: str) -> str:
    """``text`` with every credential parameter's value replaced by ``***``."""
    return _SECRET.sub(r"\1***", text) if "=" in text else text


class RedactSecrets(logging.Filter):
    """Rewrites the arguments of each record (uvicorn's access log passes the request
    line as one of them) before any handler formats it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(redact(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.msg, str):
            record.msg = redact(record.msg)
        return True


def install(logger_name: str = "uvicorn.access") -> None:
    """Add the filter to the access logger, once."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, RedactSecrets) for f in logger.filters):
        logger.addFilter(RedactSecrets())
