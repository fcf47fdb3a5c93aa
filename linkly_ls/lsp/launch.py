"""The `linkly-ls` command (and `python -m linkly_ls`): the language server, started with the
garbage collector held back.

Importing the server imports lsprotocol: an attrs class for every LSP type,
with generated methods, several hundred thousand objects that live as long as
the process. With the collector on, a full collection falls in the middle of
start-up and scans them all (35-80 ms of the first answer's path, measured with
`python -X importtime`), and every later full collection scans them again. So
the collector waits until the server's modules are loaded, and `gc.freeze()`
then moves what loading made out of its sight for good (CPython's advice for
long-lived objects created at start-up).
"""

from __future__ import annotations

import gc
import os

from linkly_ls import PRIVATE_UMASK


def main(argv: list[str] | None = None) -> int:
    os.umask(PRIVATE_UMASK)
    gc.disable()
    try:
        from linkly_ls.lsp.app import main as serve
    finally:
        gc.freeze()
        gc.enable()
    return serve(argv)
