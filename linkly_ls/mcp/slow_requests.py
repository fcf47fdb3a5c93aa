"""A request must arrive whole in REQUEST_ARRIVAL_S: the HTTP server's guard against slow senders.

uvicorn times a kept-alive connection that sends nothing, but not one that sends
a request a few bytes at a time: 300 sockets each sending `POST /mcp` and one
header line held 300 descriptors open for as long as they liked, and about
20,000 would stop the server accepting any. Here a connection's request (its
line, headers and body) must be complete within REQUEST_ARRIVAL_S of its first
byte, or of the connection when nothing came; else the connection is closed.
The time a request's answer takes is not counted.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

#: seconds a request may take to arrive whole (a 1 MiB body over loopback takes milliseconds)
REQUEST_ARRIVAL_S = 30.0


class TimedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline for each request's arrival."""

    _arrival: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self._arrival = self.loop.call_later(REQUEST_ARRIVAL_S, self._too_slow)

    def _disarm(self) -> None:
        if self._arrival is not None:
            self._arrival.cancel()
            self._arrival = None

    def _too_slow(self) -> None:
        self._arrival = None
        if not self.transport.is_closing():
            self.transport.close()
