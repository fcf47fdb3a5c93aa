"""JSON-RPC errors the language server answers with: a message for a person, never a traceback."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from linkly_ls.core.config import ConfigError
from linkly_ls.core.engine import EngineError
from linkly_ls.core.search.keyword import IndexBusyError
from linkly_ls.core.tools import ArgumentError, ToolError

#: LSP's RequestFailed: the request was well-formed but could not be answered
REQUEST_FAILED = -32803


def request_failed(message: str) -> JsonRpcException:
    return JsonRpcException(message=message, code=REQUEST_FAILED)


def invalid_params(message: str) -> JsonRpcException:
    return JsonRpcInvalidParams(message=message)


@contextmanager
def tool_errors() -> Iterator[None]:
    """Turn the errors tools and the index raise on purpose into JSON-RPC errors with their own message."""
    try:
        yield
    except ArgumentError as error:
        raise invalid_params(str(error)) from None
    except (ToolError, ConfigError, EngineError, IndexBusyError) as error:
        raise request_failed(str(error)) from None
