"""``tidings crawl``: grow a reading list through blogrolls (R-DISC-3)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from tidings.app import Crawl, CrawlCounts, CrawlLimits, Tidings
from tidings.cli import EXIT_ERROR, Context, cli, handle_errors, print_json, run_async
from tidings.cli.infiles import cannot_write
from tidings.cli.tables import Column, print_table
from tidings.errors import BadValueError, ConfigError
from tidings.textutil import plural


class CrawlBar:
    """Sites done and queued, feeds found, errors: one line, redrawn as the crawl goes."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task = bar.add_task("crawling", total=None)

    def update(self, counts: CrawlCounts) -> None:
        done = counts.done + counts.failed + counts.skipped
        self.bar.update(self.task, completed=done, total=done + counts.queued + counts.visiting,
                        description=f"sites {done}/{done + counts.queued + counts.visiting} · "
                                    f"feeds {counts.feeds} · errors {counts.failed} · "
                                    f"pages {counts.pages}")


def _parse_ids(text: str) -> list[int] | None:
    if text.strip().lower() == "all":
        return None
    try:
        return [int(part) for part in text.replace(",", " ").split()]
    except ValueError:
        raise BadValueError(f"--add {text!r}: give find numbers (3,5,8) or 'all'") from None


async def _run(tidings: Tidings, crawl: Crawl, show: bool) -> CrawlCounts:
    columns = (SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn())
    with Progress(*columns, transient=True, disable=not show) as bar:
        return await tidings.crawls.run(crawl.id, progress=CrawlBar(bar))


#: ``tidings crawl --results``: the feed URL whole (folded, never cut), the site by
#: its title (its URL is the feed's), the abstract on one line (--json has it all)
FIND_COLUMNS = (Column("#", right=True), Column("added"), Column("feed", fold=True),
                Column("type"), Column("depth", right=True), Column("site"), Column("from"),
                Column("abstract", wide=True, lines=1))


def _results(tidings: Tidings, crawl: Crawl, as_json: bool) -> None:
    finds = tidings.crawls.findings(crawl.id)
    if as_json:
        print_json({"crawl": crawl, "counts": tidings.crawls.counts(crawl.id), "finds": finds,
                    "troubles": tidings.crawls.troubles(crawl.id)})
        return
    print_table(FIND_COLUMNS, [
        [str(f.id), "yes" if f.source_id else "-", f.feed_url, f.feed_type, str(f.depth),
         f.site_title or "-", f.found_from or "-", f.abstract] for f in finds])
    counts = tidings.crawls.counts(crawl.id)
    click.echo(f"crawl {crawl.id} ({crawl.state}): {plural(len(finds), 'feed')} from "
               f"{plural(counts.done, 'site')}, {counts.failed} failed, {counts.skipped} "
               f"skipped, {plural(counts.pages, 'page')}; `tidings crawl --add 1,2,3` adds "
               "finds as sources",
               err=True)


@cli.command()
@click.argument("seeds", nargs=-1, metavar="[SITE_URL]...")
@click.option("--depth", type=int, default=2, show_default=True,
              help="Blogroll hops from the seeds.")
@click.option("--max-sites", type=int, default=1000, show_default=True,
              help="Sites in the frontier at most.")
@click.option("--max-pages", type=int, default=10_000, show_default=True,
              help="Requests at most (robots.txt, pages, feeds).")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the feeds found as OPML to FILE.")
@click.option("--resume", is_flag=True, help="Resume the newest unfinished crawl.")
@click.option("--results", is_flag=True, help="List the finds of a crawl (the newest by default).")
@click.option("--add", "add", metavar="IDS", help="Add finds as sources: '3,5,8' or 'all'.")
@click.option("--crawl", "crawl_id", type=int, help="Which crawl --results/--add/--out mean.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@click.pass_obj
@handle_errors
def crawl(ctx: Context, seeds: tuple[str, ...], depth: int, max_sites: int, max_pages: int,
          out: Path | None, resume: bool, results: bool, add: str | None, crawl_id: int | None,
          as_json: bool) -> None:
    """Find feeds worth following: breadth-first through the sites' blogrolls.

    Interrupted (Ctrl-C, a crash, kill -9)? Run the same command again, or
    `tidings crawl --resume`: it goes on where it stopped, asking no site again.
    """
    tidings = ctx.open(create=True)
    if not run_async(tidings, _crawl(tidings, seeds, CrawlLimits(depth, max_sites, max_pages),
                                     out, resume, results, add, crawl_id, as_json)):
        sys.exit(EXIT_ERROR)  # the rule of docs/cli.md: 1 when something asked was not done


async def _crawl(tidings: Tidings, seeds: tuple[str, ...], limits: CrawlLimits,
                 out: Path | None, resume: bool, results: bool, add: str | None,
                 crawl_id: int | None, as_json: bool) -> bool:
    """Start, resume or look at a crawl; False when a find asked for was not added."""
    crawls = tidings.crawls
    if results or add is not None or (out is not None and not seeds and not resume):
        ids = _parse_ids(add) if add is not None else None
        chosen = crawls.get(crawl_id)
        done = True
        if add is not None:
            done = await _add(tidings, chosen, ids)
        if results:
            _results(tidings, chosen, as_json)
        _write_opml(tidings, chosen, out)
        return done
    earlier = _which(tidings, seeds, resume, crawl_id)
    if earlier is None:
        chosen = crawls.get(await crawls.start(seeds, limits))
    else:
        chosen = earlier
        click.echo(f"resuming crawl {chosen.id} ({', '.join(chosen.seeds)})", err=True)
    counts = await _run(tidings, chosen, sys.stderr.isatty() and not as_json)
    _write_opml(tidings, chosen, out)
    if as_json:
        print_json({"crawl": chosen.id, "counts": counts})
    else:
        click.echo(f"crawl {chosen.id}: {plural(counts.feeds, 'feed')} from "
                   f"{plural(counts.done, 'site')} ({counts.failed} failed, {counts.skipped} "
                   f"skipped, {plural(counts.pages, 'page')}); "
                   "see them with `tidings crawl --results`")
    return True


async def _add(tidings: Tidings, crawl: Crawl, ids: list[int] | None) -> bool:
    """Add finds as sources; False when one could not be (an unknown number, a refusal).
    A find that is a source already is no failure: asking twice changes nothing."""
    present = {s.url for s in tidings.sources.all()}
    finds = tidings.crawls.findings(crawl.id)
    wanted = set(ids) if ids is not None else {f.id for f in finds}
    already = sum(1 for f in finds if f.id in wanted and f.feed_url in present)
    added, problems = await tidings.crawls.add(crawl.id, ids)
    for line in problems:
        click.echo(f"tidings: {line}", err=True)
    click.echo(f"added {plural(len(added), 'source')} from crawl {crawl.id}")
    return len(problems) <= already


def _which(tidings: Tidings, seeds: tuple[str, ...], resume: bool,
           crawl_id: int | None) -> Crawl | None:
    """The crawl to resume, or None to start a new one from ``seeds``."""
    if crawl_id is not None:
        return tidings.crawls.get(crawl_id)
    if resume:
        found = tidings.crawls.unfinished()
        if found is None:
            raise ConfigError("no unfinished crawl to resume")
        return found
    if not seeds:
        raise BadValueError("name the sites to start from: tidings crawl https://a-blog.example/")
    return tidings.crawls.unfinished([s if "://" in s else "https://" + s for s in seeds])


def _write_opml(tidings: Tidings, crawl: Crawl, out: Path | None) -> None:
    if out is None:
        return
    try:
        out.write_text(tidings.crawls.opml(crawl.id), encoding="utf-8")
    except OSError as exc:
        raise cannot_write(out, exc) from None
    click.echo(f"wrote {out}", err=True)
