"""One typed settings object, loaded at the edge and passed down.

Sources of values, later ones winning: the defaults below, the TOML file
``<data dir>/tidings.toml`` (or ``--config``), then ``TIDINGS_*`` environment
variables. Nothing reads the environment after :func:`load_settings`; there are
no mutable globals. Every setting carries its help text in ``metadata`` so the
docs test can check that each one is documented.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, get_args

from tidings.errors import BadValueError, ConfigError

VERSION = "0.1.0"
DEFAULT_BOT_URL = "https://github.com/tidings/tidings/blob/main/docs/bot.md"


def _h(text: str, **kw: Any) -> Any:
    """A field with help text (kept in metadata for docs and --help)."""
    return field(metadata={"help": text}, **kw)


@dataclass(frozen=True)
class Settings:
    data_dir: Path = _h("Data directory (database, raw archive, images, backups).",
                        default=Path("tidings-data"))
    database_url: str = _h("postgresql://… to use PostgreSQL; empty means SQLite in data_dir.",
                           default="")
    # --- outbound HTTP (R-HTTP)
    allow_private_hosts: tuple[str, ...] = _h(
        "Hosts and CIDRs the HTTP guard may reach although private (tests, demos).",
        default=())
    egress_proxy: str = _h("Proxy URL for outbound requests; empty for none.", default="")
    direct_suffixes: tuple[str, ...] = _h(
        "Host suffixes that bypass the egress proxy.", default=(".cn", ".local"))
    bot_url: str = _h("Contact URL named in the User-Agent.", default=DEFAULT_BOT_URL)
    http_timeout: float = _h("Seconds per request, DNS to last byte.", default=20.0)
    http_max_bytes: int = _h("Byte cap per response body (decompressed).",
                             default=8 * 1024 * 1024)
    http_max_redirects: int = _h("Redirect hops followed per request.", default=5)
    per_host_concurrency: int = _h("Concurrent requests per host.", default=2)
    per_host_delay: float = _h("Minimum seconds between requests to one host.",
                               default=0.25)
    # --- collection (R-SCHED)
    collect_concurrency: int = _h(
        "Sources collected at once in a round. Fetching runs ahead of parsing (a slow "
        "server is asked early); a source waiting for the CPU holds its body as sent "
        "(gzip: about a quarter of the feed).", default=1024)
    initial_backfill_limit: int = _h("Items kept from a source's first collection.",
                                     default=30)
    initial_backfill_months: int = _h("Oldest item age kept on a first collection.",
                                      default=12)
    max_items_per_run: int = _h("Items kept per later collection.", default=60)
    default_interval_min: int = _h("Polling interval of a new source, minutes.", default=30)
    tracking_params: tuple[str, ...] = _h(
        "Extra query parameters dropped by URL normalization.", default=())
    filters: Mapping[str, Any] = _h(
        "Entry rules for every source (a [filters] table: block, keep, max_age_days, "
        "drop_future; as a source's filters key). TIDINGS_FILTERS takes it as JSON.",
        default_factory=dict)
    raw_retention_days: int = _h("Days raw responses are kept.", default=90)
    providers: Mapping[str, Any] = _h(
        "Paid APIs, one [providers.NAME] table each: base_url, api_key, daily_calls, "
        "daily_cost, cost_per_call, direct. TIDINGS_PROVIDERS takes them as JSON.",
        default_factory=dict)
    # --- body extraction (R-EXTRACT)
    extract_concurrency: int = _h("Article pages fetched and extracted at once.", default=4)
    extract_per_round: int = _h(
        "Pending bodies a collection round extracts at its end; 0: none.", default=50)
    extract_render_provider: str = _h(
        "A [providers.NAME] rendering pages to Markdown (Jina-compatible) that reads the "
        "pages direct fetching could not; charged to its budget. Empty: off.", default="")
    # --- scheduler and operations (R-SCHED-1/5, R-OPS-3/4)
    tick_seconds: float = _h("Seconds between scheduler ticks.", default=60.0)
    sources_per_tick: int = _h("Most sources one scheduler tick starts.", default=40)
    adapt_intervals_at: str = _h("Local time (HH:MM) of the daily interval recomputation.",
                                 default="04:20")
    timezone: str = _h("IANA time zone for daily and weekly jobs; empty: the system's.",
                       default="")
    memory_limit_mb: int = _h("Resident memory that makes `serve` restart itself; 0: never.",
                              default=800)
    shutdown_grace_seconds: float = _h(
        "Seconds a stopping scheduler lets running fetches finish.", default=20.0)
    # --- web (R-UI, R-API)
    host: str = _h("Address `tidings serve` listens on.", default="127.0.0.1")
    port: int = _h("Port `tidings serve` listens on.", default=8080)
    admin_password: str = _h("Admin password (prefer `tidings set-password`).", default="")
    public_reading: bool = _h("Let anyone read without logging in.", default=False)
    trusted_proxies: tuple[str, ...] = _h(
        "Addresses of reverse proxies whose X-Forwarded-For/-Proto is believed; "
        "empty: the headers are ignored.", default=())
    webhooks: tuple[str, ...] = _h("URLs that receive new items as JSON.", default=())
    ingest_per_minute: int = _h("Push-ingest requests one client address may make per "
                                "minute (R-INGEST-2).", default=10)
    public_url: str = _h("The reader's address as others reach it (https://…): links in "
                         "feeds out, and the WebSub callback; empty: not known.", default="")
    feeds_hub: str = _h("A WebSub hub (https://…) that feeds out name as theirs, for "
                        "readers that subscribe to it; empty: none.", default="")
    # --- backups (R-STORE-5)
    backup_keep_daily: int = _h("Daily backups kept.", default=14)
    backup_keep_monthly: int = _h("Monthly backups kept.", default=12)

    @property
    def database_path(self) -> Path:
        return self.data_dir / "tidings.sqlite3"

    @property
    def user_agent(self) -> str:
        return f"tidings/{VERSION} (+{self.bot_url})"

    @property
    def config_path(self) -> Path:
        return self.data_dir / "tidings.toml"


ENV_PREFIX = "TIDINGS_"
_ENV_ALIASES = {"TIDINGS_HOME": "data_dir"}


def setting_help() -> dict[str, str]:
    """Every setting's name and help text (used by docs and tests)."""
    return {f.name: f.metadata["help"] for f in fields(Settings)}


def _coerce(name: str, value: Any, kind: Any) -> Any:
    default_type = type(getattr(Settings(), name))
    try:
        if default_type is dict:
            table = json.loads(value) if isinstance(value, str) else value
            if not isinstance(table, Mapping):
                raise TypeError("expected a table")
            return dict(table)
        if default_type is tuple:
            if isinstance(value, str):
                return tuple(p.strip() for p in value.split(",") if p.strip())
            return tuple(str(v) for v in value)
        if default_type is bool:
            if isinstance(value, str):
                return value.strip().lower() in {"1", "true", "yes", "on"}
            return bool(value)
        if default_type is Path:
            return Path(value).expanduser()
        return default_type(value)
    except (TypeError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
        raise ConfigError(f"setting {name!r}: cannot use {value!r} ({exc})") from exc


def _apply(base: Settings, values: Mapping[str, Any], origin: str) -> Settings:
    known = {f.name: f for f in fields(Settings)}
    changes: dict[str, Any] = {}
    for key, value in values.items():
        name = key.replace("-", "_")
        if name not in known:
            raise ConfigError(f"{origin}: unknown setting {key!r}")
        changes[name] = _coerce(name, value, get_args(known[name].type))
    return replace(base, **changes)


def _env_values(env: Mapping[str, str]) -> dict[str, str]:
    names = {f.name for f in fields(Settings)}
    out: dict[str, str] = {}
    for var, value in env.items():
        if var in _ENV_ALIASES:
            out[_ENV_ALIASES[var]] = value
        elif var.startswith(ENV_PREFIX):
            name = var[len(ENV_PREFIX):].lower()
            if name in names:
                out[name] = value
    return out


def load_settings(
    data_dir: str | Path | None = None,
    *,
    config_file: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Settings:
    """Build the settings: defaults < TOML file < environment < explicit arguments."""
    env = os.environ if env is None else env
    env_values = _env_values(env)
    settings = Settings()
    chosen_dir = data_dir or env_values.get("data_dir")
    if chosen_dir:
        settings = replace(settings, data_dir=Path(chosen_dir).expanduser())
    path = Path(config_file) if config_file else settings.config_path
    if config_file and not path.is_file():
        raise BadValueError(f"--config {path}: no such settings file")
    if path.is_file():
        try:
            file_values = tomllib.loads(path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: not valid TOML ({exc})") from exc
        file_values.pop("data_dir", None)
        settings = _apply(settings, file_values, str(path))
    env_values.pop("data_dir", None)
    settings = _apply(settings, env_values, "environment")
    if overrides:
        settings = _apply(settings, overrides, "arguments")
    return settings
