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

_LINK_RULES = frozenset({"links_start_line", "nav_filter", "same_site"})
_MODE_KEYS: dict[str, frozenset[str]] = {
    "html": _LINK_RULES | {"item", "link", "title", "date", "summary"},
    "markdown": _LINK_RULES | {"provider"},
    "changelog": frozenset(),
    "script": frozenset({"adapter", "adapter_options"}),
}


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
        own = self.model_fields_set & set(WebListConfig.model_fields)  # not the common keys
        stray = sorted(own - _MODE_KEYS[self.mode] - {"mode"})
        if stray:
            raise ValueError(f"{', '.join(stray)}: not read in mode {self.mode!r} (its keys: "
                             f"{', '.join(sorted(_MODE_KEYS[self.mode])) or 'none'})")
        if self.mode == "script":
            if not self.adapter:
                raise ValueError("mode 'script' needs 'adapter' (the adapter's name)")
            check_options(self.adapter, self.adapter_options)
        return self
