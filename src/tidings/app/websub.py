"""``Tidings.websub``: the WebSub subscriber (R-RSS-8).

When a feed names a hub (its reader keeps it in the source's cursor, which only its
kind reads back: ``readers.hub_of``), tidings asks the hub to push: a form POST with a
callback under ``public_url``, a fresh secret and a verify token. The hub
checks the callback with a challenge (:meth:`WebSub.verify`), then POSTs new
content signed with the secret (``X-Hub-Signature: sha1=…`` or ``sha256=…``);
signed content is stored at once through the pipeline (``pipeline.push``) and
the source's polling moves out to a safety interval. Leases are renewed before
they end; a hub that refuses, fails or lets a lease lapse puts the source back
on its ordinary polling, and the subscription is tried again later.

Without ``public_url`` no hub could reach us: nothing is subscribed, and the
source page says so.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Protocol
from urllib.parse import quote

from tidings.errors import ConfigError, NotFoundError, TidingsError
from tidings.model import Source
from tidings.pipeline.env import PipelineEnv
from tidings.pipeline.push import Pushed, PushUnit, plan_push, store_push
from tidings.pipeline.reading import Listing
from tidings.readers import hub_of
from tidings.settings import Settings
from tidings.store.base import SourceUpdate
from tidings.store.compat import CompatReads, CompatWrites, WebSubLease
from tidings.store.sources import SourceReads, SourceWrites
from tidings.store.writer import Writer

log = logging.getLogger(__name__)
CALLBACK_PATH = "/websub/callback/"
LEASE_SECONDS = 10 * 86400  # what we ask for; the hub decides
RENEW_BEFORE = timedelta(hours=12)
RETRY_AFTER = timedelta(hours=1)
VERIFY_WAIT = timedelta(hours=1)  # a hub that never sends its challenge: ask again
_DIGESTS = {"sha1": hashlib.sha1, "sha256": hashlib.sha256, "sha384": hashlib.sha384,
            "sha512": hashlib.sha512}


class _Store(CompatReads, SourceReads, Protocol):
    """What subscribing reads: the leases, and the sources they are for."""


class _Failed(CompatWrites, SourceWrites, Protocol):
    """A failed subscription: its lease, and the source's next poll."""


class _Pushing(PushUnit, CompatReads, CompatWrites, Protocol):
    """A push stored, with its lease's last push time."""


class WebSub:
    """See the module docstring."""

    def __init__(self, store: _Store, writer: Writer, env: Callable[[], PipelineEnv],
                 settings: Settings, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._writer = writer
        self._env = env
        self.settings = settings
        self.clock = clock

    # ---------------------------------------------------------------- facts
    def callback_url(self, source_id: str) -> str | None:
        base = self.settings.public_url.rstrip("/")
        return f"{base}{CALLBACK_PATH}{quote(source_id, safe='')}" if base else None

    def lease(self, source_id: str) -> WebSubLease | None:
        return self._store.get_websub(source_id)

    def status(self, source: Source) -> str | None:
        """One line for the source page; None when the feed names no hub."""
        named = hub_of(source)
        if named is None:
            return None
        hub = named[0]
        if not self.settings.public_url:
            return (f"its feed names a WebSub hub ({hub}), but pushes need public_url "
                    "(the address hubs reach this reader at): polled as usual")
        lease = self._store.get_websub(source.id)
        if lease is None:
            return f"WebSub hub {hub}: subscribing at the next check"
        if lease.state == "active":
            return f"WebSub: pushed by {hub}, lease until {lease.lease_until:%Y-%m-%d %H:%M} UTC"
        if lease.state == "failed":
            return f"WebSub hub {hub} failed ({lease.error}): polled as usual, tried again later"
        return f"WebSub hub {hub}: waiting for the hub to verify"

    # ------------------------------------------------------------ subscribing
    async def maintain(self) -> dict[str, str]:
        """Subscribe, renew, retry and expire; what was done per source id. Run every
        few minutes by ``tidings serve``."""
        if not self.settings.public_url:
            return {}
        done: dict[str, str] = {}
        now = self.clock()
        for source in self._store.list_sources():
            hub, topic = _named(source)
            lease = self._store.get_websub(source.id)
            if hub is None or topic is None:
                if lease is not None:
                    await self._writer(_drop_step, source.id)
                    done[source.id] = "dropped: the feed names no hub any more"
                continue
            if lease is not None and lease.state == "active" and lease.lease_until is not None \
                    and lease.lease_until <= now:
                done[source.id] = await self._fail(lease, "the lease ended without a renewal")
                lease = self._store.get_websub(source.id)
            if _due(lease, hub, topic, now):
                done[source.id] = await self.subscribe(source, hub, topic, lease)
        return done

    async def subscribe(self, source: Source, hub: str, topic: str,
                        lease: WebSubLease | None = None) -> str:
        """Ask ``hub`` to push ``topic``; "requested", or why it failed (polling goes on)."""
        callback = self.callback_url(source.id)
        if callback is None:
            raise ConfigError("WebSub needs public_url: the address hubs can reach")
        now = self.clock()
        keep = lease is not None and lease.hub == hub and lease.topic == topic
        fresh = WebSubLease(
            source_id=source.id, hub=hub, topic=topic,
            secret=lease.secret if keep and lease else secrets.token_hex(20),
            verify_token=lease.verify_token if keep and lease else secrets.token_hex(16),
            state=lease.state if keep and lease and lease.state == "active" else "requested",
            requested_at=now, lease_until=lease.lease_until if keep and lease else None,
            last_push_at=lease.last_push_at if keep and lease else None)
        await self._writer(lambda unit: unit.put_websub(fresh))
        form = {"hub.mode": "subscribe", "hub.topic": topic, "hub.callback": callback,
                "hub.verify": "async", "hub.verify_token": fresh.verify_token,
                "hub.secret": fresh.secret, "hub.lease_seconds": str(LEASE_SECONDS)}
        try:
            answer = await self._env().fetcher.fetch(hub, method="POST", form=form,
                                                     raise_for_status=False, max_bytes=65536)
        except TidingsError as exc:
            return await self._fail(fresh, f"hub unreachable: {exc}")
        if answer.status not in (202, 204, 200):
            return await self._fail(fresh, f"hub answered {answer.status}")
        return "requested"

    async def _fail(self, lease: WebSubLease, reason: str) -> str:
        """The hub let us down: polling as usual from now, a new try after a while."""
        now = self.clock()
        failed = replace(lease, state="failed", error=reason[:300], retry_at=now + RETRY_AFTER)
        await self._writer(_failed_step, failed, now)
        log.info("websub %s: %s", lease.source_id, reason)
        return f"failed: {reason}"

    # ------------------------------------------------------------- the hub calls
    async def verify(self, source_id: str, params: Mapping[str, str]) -> str:
        """Answer the hub's GET: the challenge when it confirms what we asked for;
        NotFoundError for a subscription we never asked for, ConfigError for nonsense."""
        mode, topic = params.get("hub.mode", ""), params.get("hub.topic", "")
        lease = self._store.get_websub(source_id)
        if lease is None or topic != lease.topic:
            raise NotFoundError(f"no subscription to {topic[:200]!r} here")
        if mode == "denied":
            await self._fail(lease, f"hub denied: {params.get('hub.reason', '')[:200]}")
            return ""
        challenge = params.get("hub.challenge", "")
        if mode != "subscribe" or not challenge or len(challenge) > 1000:
            raise ConfigError("hub.mode=subscribe with a hub.challenge is expected")
        token = params.get("hub.verify_token")
        if token is not None and not hmac.compare_digest(token, lease.verify_token):
            raise NotFoundError("wrong hub.verify_token")
        seconds = params.get("hub.lease_seconds", "")
        lasting = int(seconds) if seconds.isdigit() and len(seconds) < 10 else LEASE_SECONDS
        now = self.clock()
        active = replace(lease, state="active", lease_until=now + timedelta(seconds=lasting),
                         error=None, retry_at=None)
        await self._writer(lambda unit: unit.put_websub(active))
        return challenge

    def signature_ok(self, source_id: str, body: bytes, header: str | None) -> bool:
        """Whether ``X-Hub-Signature`` is the HMAC of ``body`` under this lease's secret."""
        lease = self._store.get_websub(source_id)
        if lease is None or lease.state != "active" or not header:
            return False
        method, _, given = header.strip().partition("=")
        digest = _DIGESTS.get(method.lower())
        if digest is None or not given:
            return False
        expected = hmac.new(lease.secret.encode(), body, digest).hexdigest()
        return hmac.compare_digest(expected, given.strip().lower())

    async def accept(self, source_id: str, body: bytes, content_type: str) -> Pushed:
        """Store pushed content (the signature checked already); TidingsError when the
        body is not a feed (nothing stored)."""
        source = self._store.get_source(source_id)
        now = self.clock()
        listing = plan_push(self._env(), source, body, content_type, now)
        pushed: Pushed = await self._writer(_push_step, source, listing, now)
        return pushed


def _named(source: Source) -> tuple[str | None, str | None]:
    named = None if source.muted_reason else hub_of(source)
    return named if named is not None else (None, None)


def _due(lease: WebSubLease | None, hub: str, topic: str, now: datetime) -> bool:
    if lease is None or lease.hub != hub or lease.topic != topic:
        return True
    if lease.state == "failed":
        return lease.retry_at is None or now >= lease.retry_at
    if lease.state == "requested":
        return now - lease.requested_at >= VERIFY_WAIT
    return lease.lease_until is None or lease.lease_until - now <= RENEW_BEFORE


def _drop_step(unit: CompatWrites, source_id: str) -> bool:
    return unit.delete_websub(source_id)


def _failed_step(unit: _Failed, lease: WebSubLease, now: datetime) -> None:
    unit.put_websub(lease)
    unit.update_source(lease.source_id, SourceUpdate(next_fetch_at=now))


def _push_step(unit: _Pushing, source: Source, listing: Listing, now: datetime) -> Pushed:
    pushed = store_push(unit, source, listing, now)
    lease = unit.get_websub(source.id)
    if lease is not None:
        unit.put_websub(replace(lease, last_push_at=now))
    return pushed
