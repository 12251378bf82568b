"""``Tidings.tokens``: the API tokens of the web reader's users (R-API-6).

The web layer makes each token's random value and keeps none of it; storage
keeps its digest, label and when it was last used.
"""

from __future__ import annotations

from dataclasses import replace

from tidings.app.core import Core
from tidings.app.users import ADMIN, UserUnit, user_for
from tidings.store.users import ApiToken, UserReads


class Tokens:
    """See the module docstring."""

    def __init__(self, core: Core) -> None:
        self._store: UserReads = core.store
        self._writer = core.writer
        self.clock = core.clock

    def find(self, digest: str) -> ApiToken | None:
        return self._store.find_api_token(digest)

    def all(self, name: str = ADMIN) -> list[ApiToken]:
        user = self._store.find_user(name)
        return [] if user is None else self._store.list_api_tokens(user.id)

    async def add(self, token_id: str, label: str, digest: str, *,
                  name: str = ADMIN) -> ApiToken:
        token = ApiToken(id=token_id, user_id=0, name=label, digest=digest,
                         created_at=self.clock())
        added: ApiToken = await self._writer(_add, name, token)
        return added

    async def revoke(self, token_id: str, *, name: str = ADMIN) -> bool:
        revoked: bool = await self._writer(_revoke, name, token_id)
        return revoked

    async def touch(self, token_id: str) -> bool:
        """The token was used now."""
        now = self.clock()
        return await self._writer(lambda unit: unit.touch_api_token(token_id, now))


def _add(unit: UserUnit, name: str, token: ApiToken) -> ApiToken:
    added = replace(token, user_id=user_for(unit, name, token.created_at).id)
    unit.add_api_token(added)
    return added


def _revoke(unit: UserUnit, name: str, token_id: str) -> bool:
    user = unit.find_user(name)
    return user is not None and unit.delete_api_token(user.id, token_id)
