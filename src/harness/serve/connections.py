"""Slow and idle HTTP connections are closed: uvicorn's keep-alive timeout covers a connection idle between
requests, this protocol adds a deadline for a request's head, and the edge one for its body."""

from __future__ import annotations

import asyncio

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

# An idle keep-alive connection is closed after this long (uvicorn's timeout_keep_alive).
KEEP_ALIVE_S = 5
# A connection must deliver a whole request head (request line and headers) this long after it opens or
# after its previous response; a client trickling header bytes cannot hold it longer.
HEADER_TIMEOUT_S = 10
# A request body must arrive whole this long after its head (answered 408 by CompleteBodyMiddleware).
BODY_TIMEOUT_S = 10


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol, closing a connection whose next request head is not complete in time (uvicorn
    restarts its keep-alive timer on every byte received, so alone it never closes a trickling client)."""

    _head_timer: asyncio.TimerHandle | None = None

    def _arm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
        self._head_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._head_overdue)

    def _head_overdue(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)
