"""The keys of a ``json_list`` source (R-JSON-1, R-JSON-2), checked when it is saved."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    model_validator,
)

from tidings.readers.jsonlist.paths import split_path, template_paths
from tidings.readers.options import ReaderConfig


def _path(value: str) -> str:
    split_path(value)
    return value


def _template(value: str) -> str:
    template_paths(value)
    if not value.startswith(("http://", "https://", "{raw:")):
        raise ValueError(f"url_template {value!r} must start with http:// or https://")
    return value


Path = Annotated[StrictStr, AfterValidator(_path)]
Template = Annotated[StrictStr, AfterValidator(_template)]
Name = Annotated[StrictStr, Field(pattern=r"^[A-Za-z_$][\w$]*$")]


class JsonListConfig(ReaderConfig):
    """Where the list is, and where each field is in an entry (docs/readers.md)."""

    items_path: Annotated[StrictStr, AfterValidator(_path)] = ""  # "": the value itself
    url: Path | None = None
    url_template: Template | None = None
    title: Path = "title"
    date: Path | None = None
    date_unit: Literal["iso", "epoch_s", "epoch_ms", "yyyymmdd"] = "iso"
    summary: Path | None = None
    id: Path | None = None  # a stable id of the entry (kept as its guid)
    author: Path | None = None
    require_boolean: dict[Path, StrictBool] = Field(default_factory=dict)
    min_numeric: dict[Path, StrictInt | StrictFloat] = Field(default_factory=dict)
    window_var: Name | None = None  # the page is HTML; the list is window.NAME = {…}
    json_key: StrictStr | None = None  # the page is HTML; the list is under this key

    @model_validator(mode="after")
    def _one_way(self) -> JsonListConfig:
        if (self.url is None) == (self.url_template is None):
            raise ValueError("give exactly one of 'url' (a field path) and 'url_template'")
        if self.window_var and self.json_key:
            raise ValueError("give at most one of 'window_var' and 'json_key'")
        return self
