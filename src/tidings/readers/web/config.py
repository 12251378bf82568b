"""The keys of a ``web_list`` source (R-WEB-1...4), checked when the source is saved.

One kind, four modes: ``html`` reads the page with CSS selectors, ``markdown``
reads the page as a rendering service returns it, ``changelog`` reads a
Docusaurus-style page of dated sections, ``script`` hands the page to a named
adapter. Keys that only one mode reads are refused in the others, so a rule
that could never apply is caught at save time rather than ignored at run time.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictBool, StrictInt, StrictStr, model_validator

from tidings.readers.options import ReaderConfig
from tidings.readers.selectors import Selector
from tidings.readers.web.adapters import check_options

_HTML_KEYS = ("item", "link", "title", "date", "summary", "links_start_line")


class WebListConfig(ReaderConfig):
    """``mode`` and the keys of each mode (see docs/readers.md for examples)."""

    mode: Literal["html", "markdown", "changelog", "script"] = "html"
    item: Selector | None = None  # one element per entry; without it, every link is one
    link: Selector | None = None  # inside an item (default: the item if it is a link, else a[href])
    title: Selector | None = None
    date: Selector | None = None
    summary: Selector | None = None
    links_start_line: Annotated[StrictInt, Field(ge=1)] | None = None
    nav_filter: StrictBool = True
    same_site: StrictBool = False  # keep only links to the page's own host
    provider: StrictStr = "jina"  # markdown: the [providers.NAME] that renders pages
    adapter: StrictStr | None = None  # script: the adapter's registered name
    adapter_options: dict[StrictStr, Any] = Field(default_factory=dict)  # script: its keys

    @model_validator(mode="after")
    def _mode_keys(self) -> WebListConfig:
        if self.mode == "script" and not self.adapter:
            raise ValueError("mode 'script' needs 'adapter' (the adapter's name)")
        if self.mode != "script" and (self.adapter or self.adapter_options):
            raise ValueError("'adapter' and 'adapter_options' are only read in mode 'script'")
        if self.mode == "script" and self.adapter:
            check_options(self.adapter, self.adapter_options)
        if self.mode in ("changelog", "script"):
            set_keys = [k for k in _HTML_KEYS if getattr(self, k) is not None]
            if set_keys:
                raise ValueError(f"{', '.join(set_keys)}: not read in mode {self.mode!r}")
        if self.mode == "markdown":
            css = [k for k in ("item", "link", "title", "date", "summary")
                   if getattr(self, k) is not None]
            if css:
                raise ValueError(f"{', '.join(css)}: CSS selectors are not read in mode "
                                 "'markdown' (the page arrives as Markdown)")
        return self
