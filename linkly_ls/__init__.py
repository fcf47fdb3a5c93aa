"""linkly-ls: a local-document knowledge server."""

__version__ = "0.1.0"
