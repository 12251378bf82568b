"""The schema as literal SQL, in numbered, append-only migrations.

A migration is never edited once released: a database records how many it has
applied (``PRAGMA user_version``) and ``migrate`` runs the rest, each in its own
transaction, when storage is opened. Times are integer microseconds since the
epoch (UTC), which sort and compare as numbers and round-trip exactly.
"""

from __future__ import annotations

import sqlite3

from tidings.errors import StorageError

_V1 = """
CREATE TABLE sources (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    url TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    config TEXT NOT NULL DEFAULT '{}',
    visibility TEXT NOT NULL,
    interval_min INTEGER NOT NULL,
    next_fetch_at INTEGER,
    fail_count INTEGER NOT NULL DEFAULT 0,
    health TEXT NOT NULL,
    cursor TEXT NOT NULL DEFAULT '{}',
    cost_class TEXT NOT NULL,
    identity_mode TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    muted_reason TEXT,
    created_at INTEGER NOT NULL,
    last_success_at INTEGER,
    last_error TEXT,
    site_url TEXT
);
CREATE INDEX sources_due ON sources (next_fetch_at);

CREATE TABLE fetch_runs (
    id INTEGER PRIMARY KEY,
    source_id TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    outcome TEXT NOT NULL,
    found INTEGER NOT NULL DEFAULT 0,
    created INTEGER NOT NULL DEFAULT 0,
    revised INTEGER NOT NULL DEFAULT 0,
    rediscovered INTEGER NOT NULL DEFAULT 0,
    filtered INTEGER NOT NULL DEFAULT 0,
    pages INTEGER NOT NULL DEFAULT 0,
    backlog INTEGER NOT NULL DEFAULT 0,
    reused INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    http_status INTEGER,
    bytes INTEGER NOT NULL DEFAULT 0,
    warnings TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX fetch_runs_source ON fetch_runs (source_id, started_at);
CREATE INDEX fetch_runs_started ON fetch_runs (started_at);
CREATE INDEX fetch_runs_running ON fetch_runs (outcome) WHERE outcome = 'running';

-- Items keep their owner's id even when the source is deleted: no foreign key.
CREATE TABLE items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    source_id TEXT NOT NULL,
    url TEXT,
    title TEXT NOT NULL,
    summary TEXT NOT NULL,
    body TEXT,
    body_state TEXT NOT NULL,
    published_at INTEGER,
    discovered_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    sort_time INTEGER NOT NULL,
    author TEXT NOT NULL DEFAULT '',
    categories TEXT NOT NULL DEFAULT '[]',
    images TEXT NOT NULL DEFAULT '[]',
    raw TEXT NOT NULL DEFAULT '{}',
    content_hash TEXT,
    title_fp TEXT NOT NULL DEFAULT '',
    backfill INTEGER NOT NULL DEFAULT 0,
    revisions INTEGER NOT NULL DEFAULT 0,
    read INTEGER NOT NULL DEFAULT 0,
    starred INTEGER NOT NULL DEFAULT 0,
    -- the item's rowid in the search index while it is indexed (see _search.py)
    search_rowid INTEGER,
    search_dirty INTEGER NOT NULL DEFAULT 1
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
CREATE UNIQUE INDEX items_search_rowid ON items (search_rowid)
    WHERE search_rowid IS NOT NULL;

CREATE TABLE versions (
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    hash TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    PRIMARY KEY (item_id, hash)
) WITHOUT ROWID;

-- One row per (item, source): when that source first and last listed the item.
CREATE TABLE discoveries (
    item_id INTEGER NOT NULL REFERENCES items (id) ON DELETE CASCADE,
    source_id TEXT NOT NULL,
    seen_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    PRIMARY KEY (item_id, source_id)
) WITHOUT ROWID;

CREATE TABLE tombstones (
    key TEXT PRIMARY KEY,
    deleted_at INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE raw_responses (
    id INTEGER PRIMARY KEY,
    url TEXT NOT NULL,
    final_url TEXT NOT NULL,
    status INTEGER NOT NULL,
    headers TEXT NOT NULL,
    fetched_at INTEGER NOT NULL,
    source_id TEXT,
    item_key TEXT,
    encoding TEXT NOT NULL,
    size INTEGER NOT NULL,
    body BLOB NOT NULL
);
CREATE INDEX raw_fetched ON raw_responses (fetched_at);
CREATE INDEX raw_source ON raw_responses (source_id, fetched_at);
CREATE INDEX raw_item_key ON raw_responses (item_key, fetched_at) WHERE item_key IS NOT NULL;

CREATE TABLE meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
"""

# The search index: contentless FTS5 fed by the pre-tokenizer of tidings.store.textindex.
_V2 = """
CREATE VIRTUAL TABLE item_search USING fts5 (
    title, body, title_chars, body_chars,
    content = '', tokenize = 'unicode61 remove_diacritics 2'
);
"""

# The scheduler's pick (claim_due_sources: priority first, then longest overdue) walks
# this index and stops after the tick's 40 rows instead of sorting every due source
# (figures in docs/benchmarks.md, "Scheduler").
_V3 = """
CREATE INDEX sources_claim ON sources (priority DESC, next_fetch_at, id)
    WHERE muted_reason IS NULL;
"""

# Index build: FTS5 keeps pending postings in memory up to ``hashsize`` (1 MiB by default,
# a flush every ~150 documents) and merges whenever 4 segments share a level. With
# 64 MiB and merges of 8, each index_pending batch writes one segment and postings are
# rewritten about half as often: building is much faster (docs/storage.md, "Building"),
# queries read a few more segments. Both settings are stored in the table's config.
_V4 = """
INSERT INTO item_search (item_search, rank) VALUES ('hashsize', 67108864);
INSERT INTO item_search (item_search, rank) VALUES ('automerge', 8);
"""

# Title fingerprints in a column of the search index instead of a B-tree on items:
# fingerprints are hashes, so a B-tree puts every new item on a random leaf and a
# commit rewrites about an index page per new item, while FTS5 batches postings in
# memory and writes them as segments. Migration 9 puts them back on items, for the
# reads (see there). The index is rebuilt in the background.
_V5 = """
DROP INDEX items_title_fp;
DROP TABLE item_search;
CREATE VIRTUAL TABLE item_search USING fts5 (
    title, body, title_chars, body_chars, title_fp,
    content = '', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO item_search (item_search, rank) VALUES ('hashsize', 67108864);
INSERT INTO item_search (item_search, rank) VALUES ('automerge', 8);
UPDATE items SET search_rowid = NULL, search_dirty = 1
    WHERE search_rowid IS NOT NULL OR search_dirty = 0;
"""

# Folders: a source's one folder is a column (taken from the ``category`` key of its
# config), with a folders table so that a folder is renamed in one statement and may
# exist before its first source. The lossy flag: whether an item's stored text holds
# U+FFFD, which identity decides when the item is written (set here for the items
# stored already), so that a lookup returns the bodies the lossy comparison needs
# without searching any text.
_FOLDERS_AND_LOSSY = """
CREATE TABLE folders (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
ALTER TABLE sources ADD COLUMN folder TEXT
    REFERENCES folders (name) ON UPDATE CASCADE ON DELETE SET NULL;
INSERT OR IGNORE INTO folders (name)
    SELECT DISTINCT json_extract(config, '$.category') FROM sources
    WHERE json_type(config, '$.category') = 'text' AND json_extract(config, '$.category') != '';
UPDATE sources SET folder = CASE WHEN json_type(config, '$.category') = 'text'
        THEN nullif(json_extract(config, '$.category'), '') END,
    config = json_remove(config, '$.category')
    WHERE json_type(config, '$.category') IS NOT NULL;
ALTER TABLE items ADD COLUMN lossy INTEGER NOT NULL DEFAULT 0;
UPDATE items SET lossy = 1 WHERE instr(title, char(65533)) OR instr(summary, char(65533))
    OR instr(body, char(65533));
"""

# The web reader's users, logged-in sessions and API tokens (R-API-6) live in storage
# so that a logout or a new password applies at once in every process and on every
# machine that shares the archive. No secret is stored:
# a session's id is the SHA-256 of its cookie, a token's digest that of the token.
# Visitors who are not logged in have no row (their cookie only binds CSRF tokens).
_WEB_ACCESS = """
CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL DEFAULT '',
    is_admin INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    password_changed_at INTEGER
);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    admin INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL,
    user_agent TEXT NOT NULL DEFAULT '',
    ip TEXT NOT NULL DEFAULT ''
) WITHOUT ROWID;
CREATE INDEX sessions_user ON sessions (user_id, last_seen_at);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    user_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    digest TEXT NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    last_used_at INTEGER
) WITHOUT ROWID;
CREATE INDEX api_tokens_user ON api_tokens (user_id, created_at);
"""

# The spend ledger of paid APIs: one row per call, summed per provider and day for the
# budget check (R-SCHED-3), so the index leads with the time.
_PAID_CALLS = """
CREATE TABLE paid_calls (
    id INTEGER PRIMARY KEY,
    provider TEXT NOT NULL,
    purpose TEXT NOT NULL,
    source_ids TEXT NOT NULL DEFAULT '[]',
    status TEXT NOT NULL,
    cost REAL NOT NULL DEFAULT 0,
    duration_ms INTEGER NOT NULL DEFAULT 0,
    called_at INTEGER NOT NULL
);
CREATE INDEX paid_calls_time ON paid_calls (called_at, provider);
"""

# Title fingerprints in a partial B-tree on items, and a search index without them.
# Every list page folds reprints (fingerprint_groups for ~60 fingerprints): through
# the index that is one indexed IN (...), where FTS5 needs a MATCH of 60 terms plus a
# look-up of the items not indexed yet. What the index costs new items (a hash puts
# each one on a random leaf) is in docs/storage.md ("Speed"). The search index is
# rebuilt without the column in the background.
_FINGERPRINTS_ON_ITEMS = """
CREATE INDEX items_title_fp ON items (title_fp) WHERE title_fp != '';
DROP TABLE item_search;
CREATE VIRTUAL TABLE item_search USING fts5 (
    title, body, title_chars, body_chars,
    content = '', tokenize = 'unicode61 remove_diacritics 2'
);
INSERT INTO item_search (item_search, rank) VALUES ('hashsize', 67108864);
INSERT INTO item_search (item_search, rank) VALUES ('automerge', 8);
UPDATE items SET search_rowid = NULL, search_dirty = 1
    WHERE search_rowid IS NOT NULL OR search_dirty = 0;
"""

# The blogroll crawler (R-DISC-3): crawls, their frontier of sites, every page asked for
# (written before the request, so a killed crawl never asks twice) and the feeds found.
_CRAWL_FRONTIER = """
CREATE TABLE crawls (
    id INTEGER PRIMARY KEY,
    seeds TEXT NOT NULL,
    max_depth INTEGER NOT NULL,
    max_sites INTEGER NOT NULL,
    max_pages INTEGER NOT NULL,
    state TEXT NOT NULL,
    pages INTEGER NOT NULL DEFAULT 0,
    sites INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    finished_at INTEGER
);
CREATE TABLE crawl_sites (
    id INTEGER PRIMARY KEY,
    crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    site TEXT NOT NULL,
    url TEXT NOT NULL,
    depth INTEGER NOT NULL,
    found_from TEXT NOT NULL DEFAULT '',
    link_text TEXT NOT NULL DEFAULT '',
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    abstract TEXT NOT NULL DEFAULT '',
    UNIQUE (crawl_id, site)
);
CREATE INDEX crawl_sites_queue ON crawl_sites (crawl_id, state, depth, id);
CREATE TABLE crawl_pages (
    crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    site_id INTEGER NOT NULL,
    state TEXT NOT NULL,
    data TEXT,
    PRIMARY KEY (crawl_id, url)
) WITHOUT ROWID;
CREATE TABLE crawl_feeds (
    id INTEGER PRIMARY KEY,
    crawl_id INTEGER NOT NULL REFERENCES crawls (id) ON DELETE CASCADE,
    site_id INTEGER NOT NULL REFERENCES crawl_sites (id) ON DELETE CASCADE,
    url TEXT NOT NULL,
    type TEXT NOT NULL DEFAULT '',
    title TEXT NOT NULL DEFAULT '',
    score INTEGER NOT NULL DEFAULT 0,
    source_id TEXT,
    UNIQUE (crawl_id, url)
);
CREATE INDEX crawl_feeds_site ON crawl_feeds (site_id);
"""

# Who holds each source's lease: a process named by host, pid and start time, so a
# dead holder's leases are taken over at once instead of after the lease runs out.
# ``until`` is the lease time written into ``sources.next_fetch_at``: once a run
# records its outcome that column moves on and the row no longer holds anything.
_LEASE_HOLDERS = """
CREATE TABLE source_leases (
    source_id TEXT PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    holder TEXT NOT NULL,
    until INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX source_leases_holder ON source_leases (holder);
"""

# Story clusters (R-DEDUP-12): each placed item, its cluster (the id of the item that
# started it) and the shingles it was placed by, so a restart rebuilds the 72 h index
# without reading bodies; hand edits (split/merge) in their own table, kept by rebuilds.
_STORY_CLUSTERS = """
CREATE TABLE story_members (
    item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    cluster_id INTEGER NOT NULL,
    similarity REAL NOT NULL DEFAULT 0,
    matched INTEGER,
    at INTEGER NOT NULL,
    hashes BLOB NOT NULL DEFAULT x'',
    title_hashes BLOB NOT NULL DEFAULT x'',
    exact INTEGER NOT NULL DEFAULT 0,
    latin_hashes BLOB NOT NULL DEFAULT x''
);
CREATE INDEX story_members_cluster ON story_members (cluster_id);
CREATE INDEX story_members_at ON story_members (at);
CREATE TABLE story_links (
    a INTEGER NOT NULL,
    b INTEGER NOT NULL,
    apart INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (a, b)
);
"""

# Saved searches (served as feeds), the Fever keys of API tokens (R-API-2/3), and
# WebSub subscriptions (R-RSS-8).
_COMPAT_APIS = """
CREATE TABLE saved_searches (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE COLLATE NOCASE,
    query TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE TABLE fever_keys (
    token_id TEXT PRIMARY KEY REFERENCES api_tokens (id) ON DELETE CASCADE,
    key TEXT NOT NULL UNIQUE
) WITHOUT ROWID;
CREATE TABLE websub (
    source_id TEXT PRIMARY KEY REFERENCES sources (id) ON DELETE CASCADE,
    hub TEXT NOT NULL,
    topic TEXT NOT NULL,
    secret TEXT NOT NULL,
    verify_token TEXT NOT NULL,
    state TEXT NOT NULL,
    requested_at INTEGER NOT NULL,
    lease_until INTEGER,
    last_push_at INTEGER,
    retry_at INTEGER,
    error TEXT
) WITHOUT ROWID;
"""

# A paid API's trouble (a refused key, no balance, a 429's pause), one row per
# provider: every process holds back alike, and the next command still shows it.
_PAID_TROUBLES = """
CREATE TABLE IF NOT EXISTS paid_troubles (
    provider TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    since INTEGER NOT NULL,
    until INTEGER NOT NULL
) WITHOUT ROWID;
"""

# Localized images in the archive (cluster mode: every web node serves them; a SQLite
# archive keeps them on disk and reads here only what a migration brought in).
_MEDIA = """
CREATE TABLE IF NOT EXISTS media (
    name TEXT PRIMARY KEY,
    body BLOB NOT NULL,
    stored_at INTEGER NOT NULL
);
"""

#: the reader's sidebar (issue 32): unread items counted per source (and since a time,
#: and without backfill) from an index alone, starred items per source likewise
_NAVIGATION_COUNTS = """
CREATE INDEX IF NOT EXISTS items_unread_source ON items (source_id, sort_time, backfill)
    WHERE read = 0;
CREATE INDEX IF NOT EXISTS items_starred_source ON items (source_id) WHERE starred = 1;
"""

# Story clustering by meaning (issue 31): each item's embedded title and lead (the
# model that made it, a float16 vector, and the names and figures it keeps), written
# once beside its first placement and kept by rebuilds, so no restart embeds it again.
_STORY_MEANING = """
CREATE TABLE IF NOT EXISTS story_meaning (
    item_id INTEGER PRIMARY KEY REFERENCES items (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    vector BLOB NOT NULL,
    marks TEXT NOT NULL DEFAULT ''
);
"""

MIGRATIONS: tuple[str, ...] = (_V1, _V2, _V3, _V4, _V5, _FOLDERS_AND_LOSSY, _WEB_ACCESS,
                               _PAID_CALLS, _FINGERPRINTS_ON_ITEMS, _CRAWL_FRONTIER,
                               _LEASE_HOLDERS, _STORY_CLUSTERS, _COMPAT_APIS,
                               _PAID_TROUBLES, _MEDIA,
                               _NAVIGATION_COUNTS, _STORY_MEANING)


def migrate(conn: sqlite3.Connection) -> int:
    """Apply the migrations this database lacks; returns the resulting version."""
    (current,) = conn.execute("PRAGMA user_version").fetchone()
    if current > len(MIGRATIONS):
        raise StorageError(
            f"database schema version {current} is newer than this tidings "
            f"({len(MIGRATIONS)}); upgrade tidings")
    for number, script in enumerate(MIGRATIONS[current:], start=current + 1):
        try:
            conn.execute("BEGIN IMMEDIATE")
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            conn.execute("ROLLBACK")
            raise StorageError(f"schema migration {number} failed: {exc}") from exc
    return len(MIGRATIONS)


def _statements(script: str) -> list[str]:
    """Split a script on statement ends (executescript would commit on its own)."""
    out: list[str] = []
    buf = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buf += line
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    if buf.strip():
        out.append(buf.strip())
    return out
