"""Remote libraries: other machines' `linkly serve`, searched from here.

`config` reads the `[[remote]]` tables, `client` calls one remote's tools
over MCP, `names` parses library values and ids, and `RemoteSet` (below)
holds one client per remote and asks several at once. The tools
(core/tools/remote_*.py) merge the answers; the faces see ordinary results.
Remote calls are read-only: only the reading tools are ever sent. The HTTP
client (`client`, and httpx with it) is imported only when a remote is
configured: the tools import this package, and most processes never call out.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from linkly_ls.core.errors import ArgumentError, LinklyError, ToolError
from linkly_ls.core.remote.answers import UnfitAnswer, check_answer
from linkly_ls.core.remote.config import RemoteConfig

if TYPE_CHECKING:
    from linkly_ls.core.remote.client import RemoteClient

T = TypeVar("T")
#: the tools a remote is asked to run; never one that writes its index
READ_ONLY_TOOLS = ("search", "outline", "grep", "read", "list_libraries", "explore", "find_paths")


@dataclass
class RemoteStatus:
    """How one remote answered a call that several servers shared: `error` says why it did not."""

    name: str
    ok: bool
    error: str | None = None
    #: the remote answered and refused the call itself (an unknown library there, a bad pattern), not down
    refused: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "error": self.error}


@dataclass
class RemoteAnswer:
    status: RemoteStatus
    payload: dict[str, Any] | None = None


def not_sent(tool: str) -> ArgumentError:
    """The error for a tool no remote is asked (`links`, `related`, `index_library`)."""
    return ArgumentError(
        f"`{tool}` is not sent to remotes: a remote answers the seven tools of the contract ({', '.join(READ_ONLY_TOOLS)})"
    )


class RemoteSet:
    """One client per configured remote, in config order."""

    def __init__(self, remotes: Iterable[RemoteConfig]) -> None:
        self.clients: dict[str, RemoteClient] = {remote.name: _connect(remote) for remote in remotes}

    def __bool__(self) -> bool:
        return bool(self.clients)

    def names(self) -> list[str]:
        return list(self.clients)

    def client(self, name: str) -> RemoteClient:
        client = self.clients.get(name)
        if client is None:
            known = ", ".join(self.clients) or "none is configured"
            raise ArgumentError(f"there is no remote {name!r}; remotes: {known}")
        return client

    def call(self, name: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """One remote's answer; its failure is the caller's error (RemoteError or RemoteToolError)."""
        if tool not in READ_ONLY_TOOLS:
            raise not_sent(tool)
        from linkly_ls.core.remote.client import RemoteError  # with the client, on the first remote call

        payload = self.client(name).call_tool(tool, arguments)
        try:
            return check_answer(tool, payload)
        except UnfitAnswer as problem:
            raise RemoteError(f"remote {name!r} answered `{tool}` with {problem}; it is left out") from None

    def ask_all(self, calls: dict[str, tuple[str, dict[str, Any]]], local: Callable[[], T] | None = None) -> tuple[T | None, list[RemoteAnswer]]:
        """Run `calls` (remote -> (tool, arguments)) at once, and `local` meanwhile in this thread.

        A remote that fails is an answer with `ok: false` and its reason; an error of `local` is raised
        (after the remotes are done, so no call outlives this one by more than its timeout).
        """
        if not calls:
            return (local() if local else None), []
        # the remotes' threads are daemons: Ctrl-C during a merged call ends it at once (a pool's threads are
        # joined first, so a suspended remote held the command for its whole timeout)
        futures: dict[str, Future] = {}
        for name, (tool, arguments) in calls.items():
            futures[name] = Future()
            threading.Thread(
                target=_run_into, args=(futures[name], self.call, name, tool, arguments), name="linkly-remote", daemon=True
            ).start()
        local_result = local() if local else None
        return local_result, [_answer(name, future) for name, future in futures.items()]

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


def _connect(remote: RemoteConfig) -> RemoteClient:
    from linkly_ls.core.remote.client import RemoteClient

    return RemoteClient(remote)


def _run_into(future: Future, call: Callable[..., Any], *arguments: Any) -> None:
    try:
        future.set_result(call(*arguments))
    except BaseException as error:  # handed to the waiting thread, which says which remote failed
        future.set_exception(error)


def _answer(name: str, future: Any) -> RemoteAnswer:
    try:
        return RemoteAnswer(RemoteStatus(name, True), future.result())
    except ToolError as error:
        return RemoteAnswer(RemoteStatus(name, False, str(error), refused=True))
    except LinklyError as error:
        return RemoteAnswer(RemoteStatus(name, False, str(error)))
    except Exception as error:  # a bug in reading one remote's answer must not sink the others
        return RemoteAnswer(RemoteStatus(name, False, f"internal error: {type(error).__name__}: {error}"))


__all__ = ["READ_ONLY_TOOLS", "RemoteAnswer", "RemoteSet", "RemoteStatus", "not_sent"]
