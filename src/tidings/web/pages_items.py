"""Deleting an item from the article page (issue 15; R-DEDUP-11).

The item goes for good and leaves a tombstone, so its feed cannot bring it back;
the reader returns to the list the article was opened from (``next``).
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from tidings.web.context import form_with_csrf, require_admin, safe_next, web_state

router = APIRouter(include_in_schema=False)


@router.post("/item/{item_id}/delete")
async def delete_item(request: Request, item_id: int) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    st = web_state(request)
    await st.tidings.items.delete(item_id)
    st.changed()
    return RedirectResponse(safe_next(form.get("next"), "/all"), status_code=303)
