"""Driver connections kept for a backend's own short transactions (the common enqueue).

Checking a connection out of SQLAlchemy's pool and back in (its bookkeeping, the reset on
return) cost about as much as the enqueue's own SQL on SQLite (bench/RESULTS.md, 2026-12-03).
These connections are made by the pool, so they get the engine's connect-time settings, then
detached from it: they never count against the pool's size, so callers on many threads cannot
starve the rest of the application of pooled connections. At most `keep` wait between uses;
a connection that was in use when an error happened is closed, never reused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from sqlalchemy import Engine, event

from dominus.db.drivers import driver_errors
from dominus.db.errors import database_errors, translated

T = TypeVar("T")
P = ParamSpec("P")

# Idle connections kept: enough for a few threads enqueueing at once (an API server's handlers);
# more callers than this at one moment open connections of their own, closed after use.
DEFAULT_KEEP = 4


class DriverConnections:
    """A small stack of idle driver connections, newest first, for one engine."""

    def __init__(
        self,
        engine: Engine,
        keep: int = DEFAULT_KEEP,
        prepare: Callable[[Any], None] | None = None,
    ) -> None:
        """`prepare` is called once on each new connection (its mode for the backend's use)."""
        self._engine = engine
        self._keep = keep
        self._prepare = prepare
        self._idle: list[Any] = []
        event.listen(engine, "engine_disposed", self._on_dispose)

    def take(self) -> Any:
        """An idle connection, or a new one (a DatabaseError if none can be made)."""
        try:
            return self._idle.pop()  # atomic: no lock on the common path
        except IndexError:
            pass
        with database_errors():
            pooled = self._engine.raw_connection()
        connection = pooled.driver_connection
        pooled.detach()  # ours now: closing it closes it, the pool forgets it
        if self._prepare is not None:
            try:
                self._prepare(connection)
            except BaseException:
                self.discard(connection)
                raise
        return connection

    @contextlib.contextmanager
    def lent(self) -> Iterator[Any]:
        """A connection for one use: given back after it, closed instead if anything went wrong
        while it was in use (its state is unknown); driver errors come out as DatabaseError."""
        connection = self.take()
        try:
            with database_errors():
                yield connection
        except BaseException:
            self.discard(connection)
            raise
        self.give_back(connection)

    def run(self, work: Callable[Concatenate[Any, P], T], *args: P.args, **kwargs: P.kwargs) -> T:
        """`work(connection, *args, **kwargs)` on a connection lent as by `lent`, with the same
        outcome, for the hottest callers (a single enqueue): a plain call costs less than a
        generator-based context manager around one (and the arguments passed, than a closure)."""
        connection = self.take()
        try:
            result = work(connection, *args, **kwargs)
        except BaseException as error:
            self.discard(connection)
            if isinstance(error, driver_errors()):
                raise translated(error) from error
            raise
        self.give_back(connection)
        return result

    def give_back(self, connection: Any) -> None:
        """Keep `connection` for the next caller (it must be outside any transaction)."""
        # Unlocked: threads giving back at one instant may keep one or two more than `keep`.
        if len(self._idle) < self._keep:
            self._idle.append(connection)
            return
        connection.close()

    def discard(self, connection: Any) -> None:
        """Close a connection whose state is unknown (an error happened while it was used)."""
        # It is being thrown away: a close that fails too changes nothing.
        with contextlib.suppress(Exception):
            connection.close()

    def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            self.discard(connection)

    def _on_dispose(self, _engine: Engine) -> None:
        self.close()
