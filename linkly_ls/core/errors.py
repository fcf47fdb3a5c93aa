"""The errors tools raise: their message is shown to the caller as is."""


class ToolError(Exception):
    """A tool call that cannot be answered: an unknown document, a regex that ran too long."""


class ArgumentError(ToolError):
    """An argument is malformed or out of range; the message names it and what it accepts."""


class IndexHeldError(ToolError):
    """Another linkly process is the index's writer: it indexes, embeds and watches, this one reads."""

    def __init__(self, holder: str = "") -> None:
        super().__init__(
            f"another linkly process{holder} (serve, watch or an editor) keeps this index current and "
            "re-indexes changed files itself; to re-index now, ask it (the index_library MCP tool, "
            "the linkly.reindex editor command)"
        )
