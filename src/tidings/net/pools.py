"""One small connection pool per host, created on first use and evicted least recently used.

A pool per host (``net/h1.py``) keeps every look-up tiny: politeness already
caps a host at ``per_host_concurrency`` requests, so a pool never holds more
idle sockets than that. (One shared httpcore pool used to rescan every queued
request against every connection whenever anything changed: with 64 requests
in flight over 32 hosts that bookkeeping was most of a request's CPU.)

Every pool dials through the same guarded backend (the address check happens
there, at connect time), and all share one TLS context. A pool is closed when
it is evicted: when more than ``max_hosts`` hosts have pools (least recently
used first), or once nobody used it for ``idle_expiry`` seconds, so idle
keep-alive sockets of hosts fetched once an hour do not pile up. A pool with a
request in flight is never evicted.
"""

from __future__ import annotations

import ssl
import time
from collections import OrderedDict
from dataclasses import dataclass

import anyio
import httpcore
import httpx

from tidings.net.h1 import H1Pool

#: hosts that keep a pool at once; beyond that the least recently used idle one goes
MAX_HOST_POOLS = 512


@dataclass
class HostPool:
    """A host's sockets and how many requests are using it right now."""

    transport: H1Pool
    users: int = 0
    last_used: float = 0.0


class HostPools:
    """Per-host guarded transports, leased for the duration of one request (hop)."""

    def __init__(
        self,
        backend: httpcore.AsyncNetworkBackend,
        *,
        connections: int,
        max_hosts: int = MAX_HOST_POOLS,
        idle_expiry: float = 30.0,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self._backend = backend
        # once: loading the CA bundle is slow
        self._tls = tls or httpx.create_ssl_context(trust_env=False)
        self._keep = max(1, connections)
        self.max_hosts = max(1, max_hosts)
        self.idle_expiry = idle_expiry
        self._pools: OrderedDict[str, HostPool] = OrderedDict()
        #: pools closed by eviction so far (observability; tests assert on it)
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._pools)

    def __contains__(self, host: object) -> bool:
        return host in self._pools

    async def acquire(self, host: str) -> HostPool:
        """The pool for ``host``, marked busy until :meth:`release`; evicts stale ones."""
        now = time.monotonic()
        pool = self._pools.get(host)
        if pool is None:
            await self._evict(now)
            pool = self._pools[host] = HostPool(H1Pool(
                self._backend, self._tls, keep=self._keep, idle_expiry=self.idle_expiry))
        else:
            self._pools.move_to_end(host)
        pool.users += 1
        pool.last_used = now
        return pool

    def release(self, pool: HostPool) -> None:
        pool.users -= 1
        pool.last_used = time.monotonic()

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            await pool.transport.aclose()

    async def _evict(self, now: float) -> None:
        """Close idle pools past ``idle_expiry`` and, over the cap, the least recently used."""
        doomed: list[HostPool] = []
        stale = now - self.idle_expiry
        for host, pool in list(self._pools.items()):  # oldest first
            full = len(self._pools) >= self.max_hosts
            if not full and pool.last_used > stale:
                break
            if pool.users == 0:
                doomed.append(self._pools.pop(host))
        if doomed:
            self.evicted += len(doomed)
            with anyio.CancelScope(shield=True):  # popped pools must not leak their sockets
                for pool in doomed:
                    await pool.transport.aclose()
