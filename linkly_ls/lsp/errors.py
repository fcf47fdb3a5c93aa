"""JSON-RPC errors the language server answers with: a message for a person, never a traceback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams

from linkly_ls.core.errors import ErrorKind, LinklyError

logger = logging.getLogger(__name__)

#: LSP's RequestFailed: the request was well-formed but could not be answered
REQUEST_FAILED = -32803


def request_failed(message: str) -> JsonRpcException:
    return JsonRpcException(message=message, code=REQUEST_FAILED)


def invalid_params(message: str) -> JsonRpcException:
    return JsonRpcInvalidParams(message=message)


def json_rpc_error(error: Exception) -> JsonRpcException:
    """The answer to any error of a request.

    A bad argument is InvalidParams; any other LinklyError (a wrong setting, an
    unknown document, an index another process is writing) RequestFailed; both
    with the error's own message. Anything else is a bug: an InternalError of
    one line, its traceback in the server's log only.
    """
    if isinstance(error, JsonRpcException):
        return error
    if isinstance(error, LinklyError):
        if error.kind is ErrorKind.ARGUMENT:
            return invalid_params(str(error))
        return request_failed(str(error))
    logger.error("request failed", exc_info=error)
    return JsonRpcInternalError(message=f"internal error: {type(error).__name__}: {error}")


@contextmanager
def tool_errors() -> Iterator[None]:
    """Answer whatever the code inside raises as its JSON-RPC error (see `json_rpc_error`)."""
    try:
        yield
    except Exception as error:
        raise json_rpc_error(error) from None
