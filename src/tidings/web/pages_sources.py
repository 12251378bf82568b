"""Source pages (R-UI-6): health overview, detail with runs, edit, add by any URL.

All of them are the admin's: they show error texts and configs, and change things.
"""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import PlainTextResponse, RedirectResponse, Response

from tidings.app import SourceStats, SourceUpdate, kinds
from tidings.app.accounts import account_ref
from tidings.errors import ConfigError, NotFoundError, TidingsError
from tidings.model import FeedCandidate, Source, SourceKind, Visibility
from tidings.web.context import form_with_csrf, render, require_admin, web_state
from tidings.web.edge import ItemId, RawIndex

router = APIRouter(include_in_schema=False)


def editable_kinds() -> list[str]:
    return kinds.kind_names()


def _stats(request: Request, source: Source) -> SourceStats | None:
    try:
        return web_state(request).tidings.source_stats(source.id)
    except NotFoundError:
        return None


@router.get("/sources")
async def sources(request: Request) -> Response:
    require_admin(request)
    st = web_state(request)

    def context() -> dict[str, Any]:
        listed = sorted(st.tidings.sources(), key=lambda s: (s.health != "failing",
                                                             s.health != "degraded", s.id))
        rows = [(s, _stats(request, s), shown_health(s)) for s in listed]
        counts: dict[str, int] = {}
        for _, _, health in rows:
            counts[health] = counts.get(health, 0) + 1
        return {"title": "Sources", "rows": rows, "counts": counts, "stats": st.stats(),
                "spend": st.tidings.spend_by_day(), "troubles": st.tidings.paid_troubles(),
                "unfetched": kinds.unfetched_kinds()}

    return render(request, "sources.html", context)


def shown_health(source: Source) -> str:
    """``new`` for a source never collected yet (its stored health says ``ok``)."""
    if source.last_success_at is None and not source.fail_count:
        return "new"
    return source.health.value


def _source_context(request: Request, source: Source) -> dict[str, Any]:
    tid = web_state(request).tidings
    runs = tid.runs(source.id, 20)
    warnings = sorted({w for r in runs[:5] for w in r.warnings})
    return {"title": source.title or source.id, "source": source, "runs": runs,
            "warnings": warnings, "stat": _stats(request, source), "kinds": editable_kinds(),
            "visibilities": [v.value for v in Visibility], "folders": tid.folders(),
            "form": _form_values(source), "error": "", "websub": tid.websub.status(source),
            "fetched": kinds.is_fetched(source), "facts": kinds.facts(source)}


def _form_values(source: Source) -> dict[str, str]:
    return {"title": source.title, "url": source.url, "interval_min": str(source.interval_min),
            "priority": str(source.priority), "visibility": source.visibility.value,
            "folder": source.folder or "",
            "config": json.dumps(dict(source.config), indent=2, ensure_ascii=False,
                                 sort_keys=True)}


@router.get("/sources/{source_id}")
async def source_detail(request: Request, source_id: str) -> Response:
    require_admin(request)
    source = web_state(request).tidings.source(source_id)
    return render(request, "source.html", _source_context(request, source))


def _parse_edit(form: dict[str, Any], source: Source) -> SourceUpdate:
    """Form fields to a source update; a bad value is a ConfigError naming the field."""
    changes: dict[str, Any] = {}
    title = str(form.get("title") or "").strip()
    if len(title) > 300:
        raise ConfigError("title: at most 300 characters")
    changes["title"] = title
    url = str(form.get("url") or "").strip()
    kinds.check_address(source, url)
    changes["url"] = url
    folder = str(form.get("folder") or "").strip()
    if len(folder) > 100:
        raise ConfigError("folder: at most 100 characters")
    changes["folder"] = folder  # storage collapses its spaces; blank is no folder
    for name, low, high in (("interval_min", 1, 7 * 24 * 60), ("priority", -100, 100)):
        raw = str(form.get(name) or "").strip()
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name}: {raw!r} is not a whole number") from None
        if not low <= value <= high:
            raise ConfigError(f"{name}: must be between {low} and {high}")
        changes[name] = value
    try:
        changes["visibility"] = Visibility(str(form.get("visibility") or ""))
    except ValueError:
        raise ConfigError("visibility: choose editorial or isolated") from None
    changes["config"] = _parse_config(form.get("config"))
    return SourceUpdate(**changes)


def _parse_config(raw: object) -> dict[str, Any]:
    text = str(raw or "").strip() or "{}"
    try:
        config = json.loads(text)
    except ValueError as exc:
        raise ConfigError(f"config: not valid JSON ({exc})") from None
    if not isinstance(config, dict):
        raise ConfigError("config: must be a JSON object")
    return config


@router.post("/sources/{source_id}")
async def source_edit(request: Request, source_id: str) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    st = web_state(request)
    source = st.tidings.source(source_id)
    try:
        await st.tidings.update_source(source_id, _parse_edit(form, source))
    except ConfigError as exc:
        ctx = _source_context(request, source)
        ctx["form"] = {k: str(form.get(k) or "") for k in ctx["form"]}
        ctx["error"] = str(exc)
        return render(request, "source.html", ctx, status=400)
    st.changed()
    return RedirectResponse(f"/sources/{source_id}?saved=1", status_code=303)


@router.post("/sources/{source_id}/delete")
async def source_delete(request: Request, source_id: str) -> Response:
    require_admin(request)
    await form_with_csrf(request)
    st = web_state(request)
    await st.tidings.remove_source(source_id)
    st.changed()
    return RedirectResponse("/sources", status_code=303)


@router.get("/add")
async def add_form(request: Request, url: str = "") -> Response:
    """The form only: a GET never fetches (a link or an image tag could make the
    server fetch any address), finding feeds is a POST with the CSRF token."""
    require_admin(request)
    return _add_page(request, url.strip()[:2000], [], "")


@router.post("/add/find")
async def add_find(request: Request) -> Response:
    """Paste any URL: the feeds autodiscovery finds on it are offered to pick from."""
    require_admin(request)
    form = await form_with_csrf(request)
    url = str(form.get("url") or "").strip()[:2000]
    candidates: list[Any] = []
    error = ""
    account = account_ref(url) if url else None
    if account is not None:  # an X or WeChat account: nothing to discover
        candidates = [FeedCandidate(account.url, account.name, account.kind)]
    elif url:
        if not url.lower().startswith(("http://", "https://")):
            url = "https://" + url
        try:
            candidates = await web_state(request).tidings.discover(url)
        except TidingsError as exc:
            error = str(exc)
    proposal: dict[str, Any] = {}
    if url and not candidates and not error:
        error = "no feed found on this page; add it as a web page source below"
        proposal = await _proposal(request, url)
    return _add_page(request, url, candidates, error, proposal)


def _add_page(request: Request, url: str, candidates: list[Any], error: str,
              proposal: dict[str, Any] | None = None) -> Response:
    ctx = {"title": "Add a source", "url": url, "candidates": candidates, "error": error,
           "kinds": editable_kinds(), "account_kinds": kinds.account_kinds(),
           "default_kind": kinds.default_kind(), **(proposal or {})}
    return render(request, "add.html", ctx, status=200 if not error or not url else 422)


async def _proposal(request: Request, url: str) -> dict[str, Any]:
    """The add form filled with web_list rules for the page's repeated list of links,
    and their preview (nothing when the page has no such list)."""
    try:
        found = await web_state(request).tidings.propose_web_list(url)
    except TidingsError:
        return {}
    if found is None:
        return {}
    config, report = found
    return {"proposal": True, "preview": report, "form_kind": kinds.page_kind(),
            "form_config": json.dumps(config, indent=2, ensure_ascii=False)}


@router.post("/add")
async def add_source(request: Request) -> Response:
    require_admin(request)
    form = await form_with_csrf(request)
    st = web_state(request)
    url = str(form.get("url") or "").strip()
    title = str(form.get("title") or "").strip()[:300]
    account = account_ref(url)
    try:
        if account is not None:
            source = await st.tidings.add_account(account, config=_parse_config(
                form.get("config")))
        elif not url.lower().startswith(("http://", "https://")):
            raise ConfigError("url: must start with http:// or https://, or be an account "
                              f"({kinds.account_lines()})")
        else:
            source = await st.tidings.create_source(
                url, kind=SourceKind(str(form.get("kind") or kinds.default_kind())), title=title,
                config=_parse_config(form.get("config")))
    except (ConfigError, ValueError) as exc:
        ctx = {"title": "Add a source", "url": url, "candidates": [], "kinds": editable_kinds(),
               "error": str(exc)}
        return render(request, "add.html", ctx, status=400)
    st.changed()
    return RedirectResponse(f"/sources/{source.id}", status_code=303)


@router.get("/item/{item_id}/raw")
async def raw_list(request: Request, item_id: ItemId) -> Response:
    require_admin(request)
    tid = web_state(request).tidings
    item = tid.item(item_id)
    raws = await run_in_threadpool(tid.raw_pages, item_id)
    return render(request, "raw.html", {"title": f"Raw pages: {item.title}", "item": item,
                                        "raws": raws})


@router.get("/item/{item_id}/raw/{index}")
async def raw_body(request: Request, item_id: ItemId, index: RawIndex) -> Response:
    """An archived response as plain text: never rendered as a page of ours."""
    require_admin(request)
    raws = await run_in_threadpool(web_state(request).tidings.raw_pages, item_id)
    if not 0 <= index < len(raws):
        raise NotFoundError(f"item {item_id} has no raw page {index}")
    text = raws[index].body.decode("utf-8", errors="replace")
    return PlainTextResponse(text, headers={"Content-Security-Policy":
                                            "sandbox; default-src 'none'"})
