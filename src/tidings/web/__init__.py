"""The web reader and JSON API (SPEC section 10): ``create_app``, ``serve``."""

from tidings.web.server import check_listen, create_app, serve

__all__ = ["check_listen", "create_app", "serve"]
