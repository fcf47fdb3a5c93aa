"""linkly-ls: a local-document knowledge server."""

__version__ = "0.1.0"

#: the file mode mask of every linkly process: what it creates (the index holds the text of every
#: indexed document, the runtime file the server's address) is its owner's alone, even in a data
#: folder others can enter
PRIVATE_UMASK = 0o077
