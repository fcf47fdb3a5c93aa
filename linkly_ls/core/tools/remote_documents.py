"""A remote document's `read`, `grep` and `outline`: sent to the remote its id names, rewritten for here.

The arguments are checked here first, with the same schema and messages as
local calls; the remote then answers with the same limits and errors as it
would for itself. Ids and paths in the answer are written the way this
machine's tools reach them (`desktop:3f2a9c01b7de`, `cloud:///desktop/...`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from linkly_ls.core.engine import Engine
from linkly_ls.core.remote.names import remote_doc_id, remote_path


@dataclass
class RemoteResult:
    """A remote's answer as a tool result: its JSON, and the markdown the local tool would render from it."""

    payload: dict[str, Any]
    markdown: Callable[[dict[str, Any]], str]

    def to_json(self) -> dict[str, Any]:
        return dict(self.payload)

    def to_markdown(self) -> str:
        return self.markdown(self.payload)


def sent_arguments(params: dict[str, Any], **overrides: Any) -> dict[str, Any]:
    """The checked arguments, without defaults' None values and the output format (a remote answers JSON)."""
    sent = {name: value for name, value in params.items() if value is not None and name != "output_format"}
    sent.update(overrides)
    return sent


def ask_remote(engine: Engine, remote: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The remote's answer to `tool`, with its ids and paths rewritten; its errors are this call's errors."""
    payload = engine.remotes.call(remote, tool, arguments)
    payload.pop("_meta", None)
    return rewrite_document(remote, payload)


def rewrite_document(remote: str, data: dict[str, Any]) -> dict[str, Any]:
    """One document's fields (`doc_id`, `path`), as this machine names them."""
    if isinstance(data.get("doc_id"), str):
        data["doc_id"] = remote_doc_id(remote, data["doc_id"])
    if isinstance(data.get("path"), str):
        data["path"] = remote_path(remote, data["path"])
    return data
