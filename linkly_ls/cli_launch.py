"""The `linkly` command: imports the CLI only when the command runs.

multiprocessing starts each indexing worker by importing the program's main
script as `__mp_main__` (Python 3.11's fork server ignores a `"__main__"`
preload), and a console script imports its entry point's module at its top.
With `linkly_ls.cli` there, every worker imported the whole CLI (engine,
tools, remote collections: 0.06 CPU-s on top of the extractors its fork
server preloads) before reading a file; with this module it imports nothing. `linkly-ls` starts the same way
(`linkly_ls.lsp.launch`).
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    from linkly_ls.cli import main as run

    return run(argv)
