"""CSS selectors for the readers of pages: compiled once, checked when a config is saved.

cssselect (on lxml) does the matching, compiled once per selector
(``tidings.htmlpolicy.compile_css``); a selector that does not compile is a
``ValueError`` that pydantic reports under the config key.
"""

from __future__ import annotations

from typing import Annotated

from lxml.html import HtmlElement
from pydantic import AfterValidator, StrictStr

from tidings.htmlpolicy import compile_css

compiled = compile_css


def select_all(root: HtmlElement, selector: str) -> list[HtmlElement]:
    """Elements under ``root`` (itself included) matching ``selector``."""
    found = compiled(selector)(root)
    return [el for el in found if isinstance(el, HtmlElement)] if isinstance(found, list) else []


def _check(selector: str) -> str:
    if not selector:
        raise ValueError("an empty CSS selector")
    compiled(selector)
    return selector


Selector = Annotated[StrictStr, AfterValidator(_check)]
