"""The errors tools raise: their message is shown to the caller as is."""


class ToolError(Exception):
    """A tool call that cannot be answered: an unknown document, a regex that ran too long."""


class ArgumentError(ToolError):
    """An argument is malformed or out of range; the message names it and what it accepts."""
