"""A run's candidates as listed by `dominus runs candidates` and `/runs/{id}/candidates`: the
scored ones in ranking order (recommended by expected profit, then speculative, then rejected;
ADR 0017), cut by `top` and paged by `limit` and `offset`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dominus.pipeline.documents import candidate_document
from dominus.pipeline.store import PipelineStore, RunRecord


@dataclass(frozen=True)
class ListingQuery:
    recommended_only: bool = False
    top: int | None = None  # only the first `top` of the ranking
    limit: int | None = None  # a page of the (top) listing: `limit` from `offset`
    offset: int = 0

    def window(self) -> tuple[int, int | None]:
        """[start, end) of the ranking to list (end None: to the end)."""
        ends = [end for end in (self.top, _plus(self.offset, self.limit)) if end is not None]
        return self.offset, min(ends) if ends else None


def _plus(offset: int, limit: int | None) -> int | None:
    return None if limit is None else offset + limit


def candidate_listing(
    store: PipelineStore, run: RunRecord, query: ListingQuery
) -> Iterator[dict[str, Any]]:
    """The documents of the listing, read as they are consumed (in batches)."""
    start, end = query.window()
    if end is not None and end <= start:
        return
    scored = store.count_scores(run.id, recommended_only=query.recommended_only)
    if start < scored:
        limit = None if end is None else min(end, scored) - start
        rows = store.iter_run_scores(
            run.id, recommended_only=query.recommended_only, limit=limit, offset=start
        )
        yield from (candidate_document(row) for row in rows)


def listing_documents(
    store: PipelineStore, run: RunRecord, query: ListingQuery
) -> Sequence[dict[str, Any]]:
    """The whole listing in memory (a page of the API, the CLI's table or JSON)."""
    return list(candidate_listing(store, run, query))
