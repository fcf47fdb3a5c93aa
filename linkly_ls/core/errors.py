"""The errors linkly reports to a person or an agent: one hierarchy, three kinds.

Every error meant to be read (a bad argument, a wrong setting, an index another
process is writing) is a `LinklyError` whose message is shown as is. Its `kind`
says how each face answers it, and each face maps kinds in one place
(`cli.report_error`, `lsp.errors.json_rpc_error`, `mcp.server.error_result`):

| kind          | meaning                                         | CLI    | LSP            | MCP        |
| ------------- | ----------------------------------------------- | ------ | -------------- | ---------- |
| `ARGUMENT`    | an argument of the call is malformed            | exit 2 | InvalidParams  | tool error |
| `USAGE`       | the command line or the configuration is wrong  | exit 2 | RequestFailed  | tool error |
| `UNAVAILABLE` | a well-formed call that cannot be answered here | exit 1 | RequestFailed  | tool error |

Any other exception is a bug: faces answer it in one line and log its
traceback where the server keeps its log, never in the answer.
"""

from __future__ import annotations

from enum import Enum
from typing import ClassVar


class ErrorKind(Enum):
    ARGUMENT = "argument"
    USAGE = "usage"
    UNAVAILABLE = "unavailable"


#: the longest error message shown whole: one that quotes a huge argument back (a 100,000-character id)
#: shows its start and end, and says how long it was
MAX_MESSAGE_CHARS = 2_000


class LinklyError(Exception):
    """An error for the caller to read; subclasses set `kind` (default: cannot be answered)."""

    kind: ClassVar[ErrorKind] = ErrorKind.UNAVAILABLE

    def __str__(self) -> str:
        message = super().__str__()
        if len(message) <= MAX_MESSAGE_CHARS:
            return message
        return f"{message[:1_000]} … [{len(message) - 1_200:,} characters left out] … {message[-200:]}"


class UsageError(LinklyError):
    """The command line or the configuration asks for something that cannot be: fix the input."""

    kind = ErrorKind.USAGE


class ToolError(LinklyError):
    """A tool call that cannot be answered: an unknown document, a regex that ran too long."""


class ArgumentError(ToolError):
    """An argument is malformed or out of range; the message names it and what it accepts."""

    kind = ErrorKind.ARGUMENT


class IndexHeldError(LinklyError):
    """Another linkly process is the index's writer: it indexes, embeds and watches, this one reads."""

    #: the kind of writer that holds the role, when it published one (`writer_status`)
    role: str | None = None

    REINDEX_ADVICE: ClassVar[str] = (
        "to re-index now, ask that process (the index_library tool of its own MCP server, the linkly.reindex "
        "command of its editor) or stop it"
    )

    @classmethod
    def naming(cls, holder: str = "", advice: str = REINDEX_ADVICE, role: str = "keeps_current") -> IndexHeldError:
        """The one message every face shows; `holder` is " (pid N)" when the holder wrote its pid, and `role`
        the kind of writer it published (`writer_status`): one that keeps the index current, one that
        serves without watching (`serve --no-watch`), or one command's run (`linkly index`)."""
        error = cls._worded(holder, advice, role)
        error.role = role
        return error

    @classmethod
    def _worded(cls, holder: str, advice: str, role: str) -> IndexHeldError:
        if role == "one_run":
            return cls(
                f"another linkly process{holder} is indexing now (a `linkly index` or `remove-library` run, "
                "which ends by itself); try again once it has finished"
            )
        if role == "serves_unwatched":
            return cls(
                f"another linkly process{holder} (serve, mcp or an editor) is this index's writer and does not "
                f"watch its folders; {advice}"
            )
        return cls(
            f"another linkly process{holder} (serve, watch or an editor) keeps this index current and "
            f"re-indexes changed files itself; {advice}"
        )


class WorkersFailedError(LinklyError):
    """The extraction workers died again and again before any of them read a file (`indexing/workers.py`):
    the installation, not the files, is at fault, so no file is marked as failed."""


class IndexDamagedError(LinklyError):
    """The index's storage failed under a call: a damaged or missing table, a locked or full disk.

    Storage raises its own errors (`core/store`'s `StoreError`); the tool
    registry turns those into this one, so every face answers them as a call
    that cannot be answered, with the reason and what to do, never as a bug.
    """

    @classmethod
    def from_store(cls, error: Exception) -> IndexDamagedError:
        return cls(
            f"the index could not be read ({error}); if this persists, remove the library and index it "
            "again (`linkly remove-library NAME`, then `linkly index FOLDER --library NAME`)"
        )
