"""The PostgreSQL schema as literal SQL, in numbered, append-only migrations.

As in the SQLite backend (``tidings.store.sqlite._schema``): a migration is never
edited once released; the database records how many it has applied (table
``tidings_schema``) and ``migrate`` runs the rest, each in its own transaction
(PostgreSQL's DDL is transactional), under an advisory lock so that two processes
opening one database at once migrate it once.

Columns keep SQLite's representation: times are ``bigint`` microseconds since the
epoch, flags ``smallint`` 0/1, JSON ``text``. Both backends then share their row
converters, and ``tidings migrate`` copies rows without converting a value.
"""

from __future__ import annotations

from typing import Any

import psycopg

from tidings.errors import StorageError

#: what SQLite's migrations 1 to 9 built, as one PostgreSQL migration; the search
#: index is a table of ``tsvector`` documents (see _search.py) instead of FTS5
_BASE = """
CREATE TABLE meta (name text PRIMARY KEY, value text NOT NULL);
CREATE TABLE folders (name text PRIMARY KEY, position integer NOT NULL DEFAULT 0);
CREATE TABLE sources (
    id text PRIMARY KEY,
    kind text NOT NULL,
    url text NOT NULL UNIQUE,
    title text NOT NULL DEFAULT '',
    config text NOT NULL DEFAULT '{}',
    visibility text NOT NULL,
    interval_min integer NOT NULL,
    next_fetch_at bigint,
    fail_count integer NOT NULL DEFAULT 0,
    health text NOT NULL,
    cursor text NOT NULL DEFAULT '{}',
    cost_class text NOT NULL,
    identity_mode text NOT NULL,
    priority integer NOT NULL DEFAULT 0,
    muted_reason text,
    created_at bigint NOT NULL,
    last_success_at bigint,
    last_error text,
    site_url text,
    folder text REFERENCES folders (name) ON UPDATE CASCADE ON DELETE SET NULL
);
CREATE INDEX sources_due ON sources (next_fetch_at);
-- the scheduler's pick walks this index in its ORDER BY (never fetched = NULL first)
CREATE INDEX sources_claim ON sources (priority DESC, next_fetch_at ASC NULLS FIRST, id)
    WHERE muted_reason IS NULL;

CREATE TABLE fetch_runs (
    id bigserial PRIMARY KEY,
    source_id text NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    started_at bigint NOT NULL,
    finished_at bigint,
    outcome text NOT NULL,
    found integer NOT NULL DEFAULT 0,
    created integer NOT NULL DEFAULT 0,
    revised integer NOT NULL DEFAULT 0,
    rediscovered integer NOT NULL DEFAULT 0,
    filtered integer NOT NULL DEFAULT 0,
    pages integer NOT NULL DEFAULT 0,
    backlog integer NOT NULL DEFAULT 0,
    reused integer NOT NULL DEFAULT 0,
    error text,
    http_status integer,
    bytes bigint NOT NULL DEFAULT 0,
    warnings text NOT NULL DEFAULT '[]'
);
CREATE INDEX fetch_runs_source ON fetch_runs (source_id, started_at);
CREATE INDEX fetch_runs_started ON fetch_runs (started_at);
CREATE INDEX fetch_runs_running ON fetch_runs (outcome) WHERE outcome = 'running';

CREATE TABLE items (
    id bigserial PRIMARY KEY,
    key text NOT NULL UNIQUE,
    source_id text NOT NULL,
    url text,
    title text NOT NULL,
    summary text NOT NULL,
    body text,
    body_state text NOT NULL,
    published_at bigint,
    discovered_at bigint NOT NULL,
    updated_at bigint NOT NULL,
    sort_time bigint NOT NULL,
    author text NOT NULL DEFAULT '',
    categories text NOT NULL DEFAULT '[]',
    images text NOT NULL DEFAULT '[]',
    raw text NOT NULL DEFAULT '{}',
    content_hash text,
    title_fp text NOT NULL DEFAULT '',
    lossy smallint NOT NULL DEFAULT 0,
    backfill smallint NOT NULL DEFAULT 0,
    revisions integer NOT NULL DEFAULT 0,
    read smallint NOT NULL DEFAULT 0,
    starred smallint NOT NULL DEFAULT 0,
    search_dirty smallint NOT NULL DEFAULT 1
);
CREATE INDEX items_sort ON items (sort_time, id);
CREATE INDEX items_source_sort ON items (source_id, sort_time, id);
CREATE INDEX items_source_discovered ON items (source_id, discovered_at);
CREATE INDEX items_author_sort ON items (author, sort_time, id) WHERE author != '';
CREATE INDEX items_url ON items (url) WHERE url IS NOT NULL;
CREATE INDEX items_title_fp ON items (title_fp) WHERE title_fp != '';
CREATE INDEX items_unread ON items (sort_time, id) WHERE read = 0;
CREATE INDEX items_starred ON items (sort_time, id) WHERE starred = 1;
CREATE INDEX items_backfill ON items (backfill) WHERE backfill = 1;
CREATE INDEX items_search_dirty ON items (id) WHERE search_dirty = 1;

CREATE TABLE versions (
    item_id bigint NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    hash text NOT NULL,
    seen_at bigint NOT NULL,
    PRIMARY KEY (item_id, hash)
);
CREATE TABLE discoveries (
    item_id bigint NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    source_id text NOT NULL,
    seen_at bigint NOT NULL,
    last_seen_at bigint NOT NULL,
    PRIMARY KEY (item_id, source_id)
);
CREATE TABLE tombstones (key text PRIMARY KEY, deleted_at bigint NOT NULL);

CREATE TABLE raw_responses (
    id bigserial PRIMARY KEY,
    url text NOT NULL,
    final_url text NOT NULL,
    status integer NOT NULL,
    headers text NOT NULL,
    fetched_at bigint NOT NULL,
    source_id text,
    item_key text,
    encoding text NOT NULL,
    size bigint NOT NULL,
    body bytea NOT NULL
);
CREATE INDEX raw_fetched ON raw_responses (fetched_at, id);
CREATE INDEX raw_source ON raw_responses (source_id, fetched_at);
CREATE INDEX raw_item_key ON raw_responses (item_key, fetched_at) WHERE item_key IS NOT NULL;

-- the search index: one document per indexed item (see _search.py)
CREATE TABLE item_search (
    item_id bigint PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    sort_time bigint NOT NULL,
    doc tsvector NOT NULL
);
CREATE INDEX item_search_doc ON item_search USING gin (doc);
CREATE INDEX item_search_sort ON item_search (sort_time, item_id);

CREATE TABLE users (
    id serial PRIMARY KEY,
    name text NOT NULL UNIQUE,
    password_hash text NOT NULL DEFAULT '',
    is_admin smallint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    password_changed_at bigint
);
CREATE TABLE sessions (
    id text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    admin smallint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    expires_at bigint NOT NULL,
    last_seen_at bigint NOT NULL,
    user_agent text NOT NULL DEFAULT '',
    ip text NOT NULL DEFAULT ''
);
CREATE INDEX sessions_user ON sessions (user_id, last_seen_at);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE TABLE api_tokens (
    id text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    digest text NOT NULL UNIQUE,
    created_at bigint NOT NULL,
    last_used_at bigint
);
CREATE INDEX api_tokens_user ON api_tokens (user_id, created_at);

CREATE TABLE paid_calls (
    id bigserial PRIMARY KEY,
    provider text NOT NULL,
    purpose text NOT NULL,
    source_ids text NOT NULL DEFAULT '[]',
    status text NOT NULL,
    cost double precision NOT NULL DEFAULT 0,
    duration_ms integer NOT NULL DEFAULT 0,
    called_at bigint NOT NULL
);
CREATE INDEX paid_calls_time ON paid_calls (called_at, provider);
"""

#: the blogroll crawler's frontier, pages and finds (SQLite's ``_CRAWL_FRONTIER``);
#: limits and counts are ``bigint`` as SQLite's integers are 64-bit (the CLI's
#: ``--max-pages`` has no upper bound)
_CRAWL_FRONTIER = """
CREATE TABLE crawls (
    id bigserial PRIMARY KEY,
    seeds text NOT NULL,
    max_depth bigint NOT NULL,
    max_sites bigint NOT NULL,
    max_pages bigint NOT NULL,
    state text NOT NULL,
    pages bigint NOT NULL DEFAULT 0,
    sites bigint NOT NULL DEFAULT 0,
    created_at bigint NOT NULL,
    finished_at bigint
);
CREATE TABLE crawl_sites (
    id bigserial PRIMARY KEY,
    crawl_id bigint NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    site text NOT NULL,
    url text NOT NULL,
    depth bigint NOT NULL,
    found_from text NOT NULL DEFAULT '',
    link_text text NOT NULL DEFAULT '',
    state text NOT NULL,
    reason text NOT NULL DEFAULT '',
    title text NOT NULL DEFAULT '',
    abstract text NOT NULL DEFAULT '',
    UNIQUE (crawl_id, site)
);
CREATE INDEX crawl_sites_queue ON crawl_sites (crawl_id, state, depth, id);
CREATE TABLE crawl_pages (
    crawl_id bigint NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url text NOT NULL,
    site_id bigint NOT NULL,
    state text NOT NULL,
    data text,
    PRIMARY KEY (crawl_id, url)
);
CREATE TABLE crawl_feeds (
    id bigserial PRIMARY KEY,
    crawl_id bigint NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    site_id bigint NOT NULL REFERENCES crawl_sites (id) ON DELETE CASCADE,
    url text NOT NULL,
    type text NOT NULL DEFAULT '',
    title text NOT NULL DEFAULT '',
    score bigint NOT NULL DEFAULT 0,
    source_id text,
    UNIQUE (crawl_id, url)
);
CREATE INDEX crawl_feeds_site ON crawl_feeds (site_id);
"""

#: story clusters (R-DEDUP-12): an item's placement with the shingles it was placed
#: by, and the hand edits (as SQLite's ``_STORY_CLUSTERS``)
_STORY_CLUSTERS = """
CREATE TABLE story_members (
    item_id bigint PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    cluster_id bigint NOT NULL,
    similarity double precision NOT NULL DEFAULT 0,
    matched bigint,
    at bigint NOT NULL,
    hashes bytea NOT NULL DEFAULT '\\x',
    title_hashes bytea NOT NULL DEFAULT '\\x',
    exact bigint NOT NULL DEFAULT 0,
    latin_hashes bytea NOT NULL DEFAULT '\\x'
);
CREATE INDEX story_members_cluster ON story_members (cluster_id);
CREATE INDEX story_members_at ON story_members (at);
CREATE TABLE story_links (
    a bigint NOT NULL,
    b bigint NOT NULL,
    apart smallint NOT NULL,
    created_at bigint NOT NULL,
    PRIMARY KEY (a, b)
);
"""

# Leases that name their holder (issue 16): a dead holder's sources are freed at once.
_LEASE_HOLDERS = """
CREATE TABLE source_leases (
    source_id text PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    holder text NOT NULL,
    until bigint NOT NULL
);
CREATE INDEX source_leases_holder ON source_leases (holder);
"""

# Saved searches (served as feeds), the Fever keys of API tokens (R-API-2/3), and
# WebSub subscriptions (R-RSS-8). Names are unique whatever the case of their ASCII
# letters, as SQLite's COLLATE NOCASE makes them (lower() under "C" folds ASCII only).
_COMPAT_APIS = """
CREATE TABLE saved_searches (
    id bigserial PRIMARY KEY,
    name text NOT NULL,
    query text NOT NULL,
    created_at bigint NOT NULL
);
CREATE UNIQUE INDEX saved_searches_name ON saved_searches (lower(name COLLATE "C"));
CREATE TABLE fever_keys (
    token_id text PRIMARY KEY REFERENCES api_tokens (id) ON DELETE CASCADE,
    key text NOT NULL UNIQUE
);
CREATE TABLE websub (
    source_id text PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    hub text NOT NULL,
    topic text NOT NULL,
    secret text NOT NULL,
    verify_token text NOT NULL,
    state text NOT NULL,
    requested_at bigint NOT NULL,
    lease_until bigint,
    last_push_at bigint,
    retry_at bigint,
    error text
);
"""

# Search documents name their hour (issue 21): newest-first search reads the newest
# hours, days, months first (_search.time_windows); documents indexed before get it here.
# (the lexeme as _search.TIME_LEXEME_SQL writes it)
_SEARCH_HOURS = """
UPDATE item_search SET doc = doc || array_to_tsvector(ARRAY['~' || to_char(to_timestamp(
    (sort_time - ((sort_time % 3600000000) + 3600000000) % 3600000000) / 1000000)
    AT TIME ZONE 'UTC', 'YYYYMMDDHH24')]);
"""

# Item bodies (~2 KB and more: TOASTed) compressed with lz4 instead of pglz: storing a
# new item's body cost more server time than its ten index entries; lz4 compresses
# several times faster at a slightly lower ratio (docs/benchmarks.md, "New items
# on PostgreSQL: where the server time goes"). Values stored before keep pglz; both
# read the same. A server before PostgreSQL 14 (no per-column compression) or built
# without lz4 keeps pglz.
_LZ4_BODIES = """
DO $$
BEGIN
    IF current_setting('server_version_num')::integer >= 140000 THEN
        EXECUTE 'ALTER TABLE items ALTER COLUMN body SET COMPRESSION lz4';
    END IF;
EXCEPTION WHEN feature_not_supported THEN
    NULL;
END $$;
"""

# A paid API's trouble, one row per provider (as in the SQLite schema).
_PAID_TROUBLES = """
CREATE TABLE IF NOT EXISTS paid_troubles (
    provider text PRIMARY KEY,
    reason text NOT NULL,
    since bigint NOT NULL,
    until bigint NOT NULL
);
"""

# Localized images in the archive (cluster mode: every web node serves them; a SQLite
# archive keeps them on disk and reads here only what a migration brought in).
_MEDIA = """
CREATE TABLE IF NOT EXISTS media (
    name text PRIMARY KEY,
    body bytea NOT NULL,
    stored_at bigint NOT NULL
);
"""

#: the reader's sidebar (issue 32): unread items counted per source (and since a time,
#: and without backfill) from an index alone, starred items per source likewise
_NAVIGATION_COUNTS = """
CREATE INDEX IF NOT EXISTS items_unread_source ON items (source_id, sort_time, backfill)
    WHERE read = 0;
CREATE INDEX IF NOT EXISTS items_starred_source ON items (source_id) WHERE starred = 1;
"""

# Story clustering by meaning (issue 31), as SQLite's ``_STORY_MEANING``.
_STORY_MEANING = """
CREATE TABLE IF NOT EXISTS story_meaning (
    item_id bigint PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    model text NOT NULL,
    vector bytea NOT NULL,
    marks text NOT NULL DEFAULT ''
);
"""

MIGRATIONS: tuple[str, ...] = (_BASE, _CRAWL_FRONTIER, _STORY_CLUSTERS, _LEASE_HOLDERS,
                               _COMPAT_APIS, _SEARCH_HOURS, _LZ4_BODIES, _PAID_TROUBLES, _MEDIA,
                               _NAVIGATION_COUNTS, _STORY_MEANING)

#: the advisory lock key under which migrations run (any constant; "tidings" in ASCII)
_LOCK = 0x7469_6469_6E67_73


def migrate(conn: psycopg.Connection[Any]) -> int:
    """Apply the migrations this database lacks; returns the resulting version.

    ``conn`` is in autocommit mode; each migration is one transaction.
    """
    try:
        while True:
            with conn.transaction():
                # the lock first: even CREATE ... IF NOT EXISTS races with itself
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS tidings_schema "
                             "(version integer NOT NULL)")
                row = conn.execute("SELECT max(version) FROM tidings_schema").fetchone()
                current = (row[0] if row else None) or 0
                if current > len(MIGRATIONS):
                    raise StorageError(
                        f"database schema version {current} is newer than this tidings "
                        f"({len(MIGRATIONS)}); upgrade tidings")
                if current == len(MIGRATIONS):
                    return current
                conn.execute(MIGRATIONS[current].encode())  # several statements, no params
                conn.execute("INSERT INTO tidings_schema (version) VALUES (%s)", (current + 1,))
    except psycopg.Error as exc:
        raise StorageError(f"schema migration failed: {' '.join(str(exc).split())}") from exc
