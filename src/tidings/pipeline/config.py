"""A source's config: one schema per kind, checked when it is saved (R-SCHED-2, R-SCHED-9).

The keys every kind shares are defined here, because the pipeline interprets
them: entry rules (``filters``, ``url_allow``, ``url_rewrite``), batch ``limits``,
request options (``user_agent``, ``headers``, ``cookie``, ``proxy``), storage
choices (``summary_only``, ``extract``) and the ``detail`` rule (R-WEB-5). A
reader adds the keys of its own kind (``Reader.config_model``). Both go into one
pydantic model per kind, so the CLI, the web form, the API and OPML import all
refuse the same things with the same one-line reason: an unknown key (named),
a wrong type, a regular expression or CSS selector that does not compile. A
stored config that no longer validates (a key a newer version dropped) fails
the source's runs with that reason instead of being half-applied.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from functools import cache
from typing import Annotated, Any, Literal, cast
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    create_model,
)

from tidings.errors import BadValueError, ConfigError
from tidings.model import CostClass, IdentityMode, SourceKind
from tidings.readers import get_reader, kind_of
from tidings.readers.options import ReaderConfig, RequestOptions


def _regex(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"bad regular expression {pattern!r} ({exc})") from None
    return pattern


def _css(selector: str) -> str:
    from tidings.extract.clean import compile_selector  # loads lxml's cssselect on use

    if not selector:
        raise ValueError("an empty CSS selector")
    try:
        compile_selector(selector)
    except ConfigError as exc:
        raise ValueError(exc.message.splitlines()[0]) from None
    return selector


def _one_line(value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError("must be one line")
    return value


def _header_name(name: str) -> str:
    if not re.fullmatch(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+", name):
        raise ValueError(f"{name!r} is not a header name")
    return name


# Strict scalars: "yes" is not true and 5 is not a user agent; a config is written by a
# person, and a value of the wrong type is more likely a mistake than a shorthand.
Regex = Annotated[StrictStr, AfterValidator(_regex)]
Css = Annotated[StrictStr, AfterValidator(_css)]
OneLine = Annotated[StrictStr, AfterValidator(_one_line)]
HeaderName = Annotated[StrictStr, AfterValidator(_header_name)]
Count = StrictInt


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True,
                              populate_by_name=True)


class Rule(_Table):
    field: Literal["title", "url", "author", "category", "content"]
    pattern: Regex


class Filters(_Table):
    """Block / keep rules by regex on a field, and by date (R-SCHED-9)."""

    block: tuple[Rule, ...] = ()
    keep: tuple[Rule, ...] = ()
    max_age_days: Annotated[Count, Field(ge=1, le=36500)] | None = None
    drop_future: StrictBool = False


class Rewrite(_Table):
    old: StrictStr = Field(alias="from", min_length=1)
    new: StrictStr = Field(alias="to")


class Limits(_Table):
    """Per-source batch limits, instead of the settings' (first run, later runs)."""

    first: Annotated[Count, Field(ge=1, le=1000)] | None = None
    first_months: Annotated[Count, Field(ge=1, le=1200)] | None = None
    later: Annotated[Count, Field(ge=1, le=1000)] | None = None


class Extract(_Table):
    """Per-source extraction overrides (R-EXTRACT-1)."""

    body_selector: Css | None = None
    remove_selectors: tuple[Css, ...] = ()


class Detail(_Table):
    """Fetch the page of entries not stored yet to fill date, title and summary (R-WEB-5).

    Selectors name where each field is on the page; without one, the date falls
    back to meta tags, JSON-LD (``@graph`` included) and the first
    ``<time datetime>``, the title to the page's own, the summary to its
    description. ``*_authoritative`` makes what the page says win over the list:
    a title from the page is never changed back by a later listing, and with no
    date found by ``date_selector`` no other timestamp on the page stands in.
    """

    max_fetches: Annotated[Count, Field(ge=0, le=100)] = 10
    title_selector: Css | None = None
    date_selector: Css | None = None
    summary_selector: Css | None = None
    title_authoritative: StrictBool = False
    published_authoritative: StrictBool = False


class CommonConfig(ReaderConfig):
    """The keys every kind accepts; the pipeline interprets them."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True,
                              populate_by_name=True)

    filters: Filters = Filters()
    url_allow: tuple[Regex, ...] = ()
    url_rewrite: tuple[Rewrite, ...] = ()
    limits: Limits = Limits()
    user_agent: OneLine | None = None
    cookie: OneLine | None = None
    headers: dict[HeaderName, OneLine] = Field(default_factory=dict)
    proxy: StrictBool | None = None
    summary_only: StrictBool = False
    extract: Extract = Extract()
    detail: Detail | None = None

    def request_options(self) -> RequestOptions:
        headers = dict(self.headers)
        if self.cookie:
            headers["Cookie"] = self.cookie
        return RequestOptions(headers=headers, user_agent=self.user_agent or None,
                              proxy=self.proxy)

    def request_for(self, source_url: str, url: str, accept: str) -> RequestOptions:
        """Options for a page of the source (an article, a detail page): its cookie,
        headers and user agent only go to the source's own host; its proxy choice
        to every page."""
        options = self.request_options()
        if urlsplit(url).hostname != urlsplit(source_url).hostname:
            return RequestOptions(headers={"Accept": accept}, proxy=options.proxy)
        return RequestOptions(headers={"Accept": accept, **options.headers},
                              user_agent=options.user_agent, proxy=options.proxy)


@cache
def config_model(kind: SourceKind) -> type[CommonConfig]:
    """The whole schema of one kind: the common keys and the reader's own."""
    if not kind_of(kind).fetched:  # pushed to, never fetched: no reader of its own
        return CommonConfig
    bases = cast("tuple[type[CommonConfig], ...]", (CommonConfig, get_reader(kind).config_model))
    model: type[CommonConfig] = create_model(f"{kind.title()}Config", __base__=bases)
    return model


def parse_config(kind: SourceKind, config: Mapping[str, Any]) -> CommonConfig:
    """The validated config of a source of ``kind``; ConfigError naming the bad key."""
    model = config_model(kind)
    try:
        return model.model_validate(dict(config))
    except ValidationError as exc:
        raise _one_line_error(kind, model, exc) from None


def validate_config(kind: SourceKind, config: Mapping[str, Any]) -> dict[str, Any]:
    """The config as it is stored: validated, normalized, only the keys that are set."""
    parsed = parse_config(kind, config)
    return parsed.model_dump(mode="json", by_alias=True, exclude_defaults=True)


def cost_class_of(kind: SourceKind, config: Mapping[str, Any]) -> CostClass:
    """What reading a source costs (R-SCHED-5 clamps its interval by it), as its kind
    declares it for its config."""
    return kind_of(kind).cost(config)


def identity_mode_of(kind: SourceKind, config: Mapping[str, Any]) -> IdentityMode:
    """How a new source's entries are keyed, as its kind declares it for its config (a
    kind whose entries have no GUIDs starts on URLs instead of degrading to them with
    a warning on its first run)."""
    return kind_of(kind).identity(config)


def parse_global_filters(filters: Mapping[str, Any]) -> Filters:
    """The ``[filters]`` table of the settings file: rules for every source."""
    try:
        return Filters.model_validate(dict(filters))
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in ("filters", *first["loc"]) if p != "[key]")
        raise ConfigError(f"setting {where}: {_reason(first)}") from None


def _one_line_error(kind: SourceKind, model: type[BaseModel],
                    exc: ValidationError) -> BadValueError:
    errors = exc.errors()
    # an unknown key first: a misspelt key also makes the right one "missing"
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    loc = [str(p) for p in first["loc"] if p != "[key]"]
    if not loc:
        return BadValueError(f"config of {kind} source: {_reason(first)}")
    if first["type"] == "extra_forbidden" and len(loc) == 1:
        names = sorted(f.alias or name for name, f in model.model_fields.items())
        article = "an" if kind[0] in "aeiorux" else "a"  # "an rss source", "an x"
        return BadValueError(f"unknown config key {loc[0]!r} for {article} {kind} source"
                           f"{did_you_mean(loc[0], names)} (allowed: {', '.join(names)})")
    if first["type"] == "extra_forbidden":
        names = _table_keys(model, loc[:-1])
        return BadValueError(f"config key {'.'.join(loc)!r}: unknown key"
                           f"{did_you_mean(loc[-1], names)}")
    return BadValueError(f"config key {'.'.join(loc)!r}: {_reason(first)}")


def did_you_mean(key: str, names: list[str]) -> str:
    """``; did you mean 'x'?`` for the closest known name, or nothing."""
    close = difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _table_keys(model: type[BaseModel], path: list[str]) -> list[str]:
    """The keys of the nested table at ``path`` (``detail``, ``filters.block.0``...)."""
    current: Any = model
    for step in path:
        if step.isdigit():
            continue
        fields = getattr(current, "model_fields", {})
        field = next((f for n, f in fields.items() if step in (n, f.alias)), None)
        if field is None:
            return []
        current = _model_in(field.annotation)
    fields = getattr(current, "model_fields", {})
    return sorted(f.alias or n for n, f in fields.items())


def _model_in(annotation: Any) -> Any:
    """The pydantic model inside ``X | None`` or ``tuple[X, ...]``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def _reason(error: Any) -> str:
    message = str(error["msg"])
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    if error["type"] == "extra_forbidden":
        return "unknown key"
    return message
