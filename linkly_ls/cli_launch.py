"""The `linkly` command: imports the CLI only when the command runs.

multiprocessing starts each indexing worker by importing the program's main
script as `__mp_main__` (Python 3.11's fork server ignores a `"__main__"`
preload), and a console script imports its entry point's module at its top.
With `linkly_ls.cli` there, every worker imported the whole CLI (engine,
tools, remote collections: 0.06 CPU-s on top of the extractors its fork
server preloads) before reading a file; with this module it imports nothing. `linkly-ls` starts the same way
(`linkly_ls.lsp.launch`).

`linkly index` starts the workers' fork server first, importing every
extractor, while this process imports the CLI, opens the index and walks the
folders on the other core: the workers then take their first file about 0.2 s
after the command starts instead of 0.5 s (`bench/index_bench.py`). A run that
needs no worker leaves the server idle until the command exits.
"""

from __future__ import annotations

import os
import sys

from linkly_ls import PRIVATE_UMASK

#: the global options of `linkly` that take a value (the tests hold this to the parser)
GLOBAL_OPTIONS_WITH_VALUE = frozenset({"--config", "--remote"})


def command_of(args: list[str]) -> str | None:
    """The subcommand named in `args` (the arguments after the program name), or None."""
    skip_value = False
    for arg in args:
        if skip_value:
            skip_value = False
        elif arg in GLOBAL_OPTIONS_WITH_VALUE:
            skip_value = True
        elif not arg.startswith("-"):
            return arg
    return None


def main(argv: list[str] | None = None) -> int:
    os.umask(PRIVATE_UMASK)  # before the fork server starts: the workers inherit it
    args = sys.argv[1:] if argv is None else argv
    try:
        if command_of(args) == "index" and not {"-h", "--help"} & set(args):
            from linkly_ls.core.indexing.work_plan import every_extractor_preload
            from linkly_ls.core.indexing.workers import start_fork_server

            start_fork_server(every_extractor_preload())
        from linkly_ls.cli import main as run
    except KeyboardInterrupt:  # Ctrl-C while the command starts: as quiet as later on
        return 130
    return run(argv)
