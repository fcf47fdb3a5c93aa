"""The `linkly` command: the tools, plus `index`, `watch`, `serve`, `mcp`, `status` and
`remove-library`, over the shared engine.

The tools' subcommands are generated from the tool registry (core/tools/registry.py)
by the parser (`cli_parser.py`); the others run here. Exit status: 0 on success, 2 on a usage error,
1 on any other error (`report_error`); errors are one line on stderr, never a
traceback.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from linkly_ls import PRIVATE_UMASK
from linkly_ls.cli_parser import build_parser, tool_arguments
from linkly_ls.core.config import Config, ConfigError, data_dir_override, default_data_dir, load_config
from linkly_ls.core.engine import Engine
from linkly_ls.core.errors import ErrorKind, IndexHeldError, LinklyError, ToolError, UsageError
from linkly_ls.core.indexing.writer import IndexWriter
from linkly_ls.core.indexing.writer_status import ONE_RUN, holder_text, read_activity
from linkly_ls.core.tools.common import resolve_library
from linkly_ls.core.tools.libraries import dropped_note
from linkly_ls.core.tools.remote_collections import call_on_remote
from linkly_ls.core.tools.registry import REGISTRY, ToolRegistry
from linkly_ls.core.tools.render import render, render_error, visible_controls

if TYPE_CHECKING:
    from linkly_ls.core.indexing.indexer import IndexReport

log = logging.getLogger("linkly_ls")
#: how often `linkly index` waiting behind another `linkly index` run asks for the writer role again
WAIT_FOR_ROLE_S = 0.25


def report_error(error: Exception, output_format: str = "markdown", server: bool = False) -> int:
    """Print any error as one line on stderr; return the exit status its kind gives.

    A tool's own errors answer in the output format asked for; the others are a
    `linkly:` line. An exception that is neither a LinklyError nor an OSError is
    a bug: it still gets one line, naming its type, and a `server` (whose stderr
    is its log) logs its traceback first.
    """
    if isinstance(error, ToolError):
        message = render_error(str(error), output_format)
    elif isinstance(error, (LinklyError, OSError)):
        message = f"linkly: {visible_controls(str(error))}"  # a remote's or a file name's escape sequences show
    else:
        if server:
            log.error("the server stopped on an unexpected error", exc_info=error)
        message = f"linkly: internal error: {type(error).__name__}: {error}"
    if output_format == "json":  # every error of a `--json` command is JSON, with its kind
        kind = error.kind.value if isinstance(error, LinklyError) else "unavailable" if isinstance(error, OSError) else "internal"
        cause = str(error) if isinstance(error, (LinklyError, OSError)) else f"internal error: {type(error).__name__}: {error}"
        message = json.dumps({"error": cause, "kind": kind}, ensure_ascii=False)
    print(message, file=sys.stderr)
    if isinstance(error, LinklyError) and error.kind in (ErrorKind.ARGUMENT, ErrorKind.USAGE):
        return 2
    return 1


def _progress_printer():
    if not sys.stdout.isatty():
        return None

    def show(done: int, total: int, path: str) -> None:
        width = 30
        filled = int(width * done / max(total, 1))
        name = Path(path).name[:40]
        sys.stdout.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {name:<40}")
        if done == total:
            sys.stdout.write("\n")
        sys.stdout.flush()

    return show


def run_index(engine: Engine, args: argparse.Namespace) -> int:
    if args.library is not None and not args.library.strip():
        raise UsageError("--library needs a name; leave it out to name the library after the folder")
    if not args.paths and args.library:
        resolve_library(engine.catalog, args.library)  # an unknown name is said before the writer role is asked
    if not args.paths and args.description and not args.library:
        raise UsageError("--description needs the library it describes: `linkly index --library NAME --description TEXT`")
    writer = IndexWriter(engine, one_run=True)
    try:
        writer.claim()
    except IndexHeldError as error:
        if error.role == ONE_RUN:  # another `linkly index` run: it ends by itself, so this one waits its turn
            _wait_for_the_role(writer)
        elif not args.paths:
            raise
        else:
            folders = " ".join(str(path) for path in args.paths)
            raise IndexHeldError(
                f"{error}; to add {folders} while it runs, give it a [[library]] table in the config file: the "
                "next `linkly` command records it, and that process indexes and watches it within a second"
            ) from None
    if args.paths:
        library = engine.add_library(args.paths, args.library, args.description, respect_gitignore=args.gitignore)
        names = [library.name]
    else:
        if args.gitignore is not None:
            raise UsageError("--gitignore and --no-gitignore apply to the folders given: `linkly index PATH --no-gitignore`")
        names = [args.library] if args.library else None
        if args.description:
            engine.describe_library(args.library, args.description)
        if not engine.libraries():
            raise UsageError("no libraries yet: give folders to index, e.g. `linkly index ~/notes`")
    reports = writer.index(names, progress=_progress_printer())
    for report in reports:
        for path, message in report.errors:
            print(f"failed: {path}: {message}")
        for path, warning in report.capped:
            print(f"capped: {path}: {warning}")
        for path, warning in report.misnamed:
            print(f"misnamed: {path}: {warning}")
        for path, message in report.ocr_errors:
            print(f"OCR failed: {path}: {message}")
        for note in report.notes:
            print(f"note: {note}")
        print(report.summary())
        if report.ocr_files:
            print(
                f"{report.library}: text layers searchable after {report.text_layer_seconds:.1f} s; "
                f"OCR of {report.ocr_files} file(s) done after {report.seconds:.1f} s"
            )
    for name in engine.dropped_from_config():
        print(f"note: library {name!r} is {dropped_note(name)}")
    if getattr(args, "wait", False):
        _embed_all(engine)
    return 0


def run_status(engine: Engine, output_format: str, config_problem: str | None = None) -> int:
    from linkly_ls.core.tools.status import status
    from linkly_ls.mcp.runtime import live_server

    server = live_server(engine.data_dir)
    result = status(engine, mcp_url=server.url if server else None)
    result.config_problem = config_problem
    print(render(result, output_format))
    return 0


def _status_config(args: argparse.Namespace) -> tuple[Config, str | None]:
    """`linkly status` describes the index even when the config file cannot be read (a typo while a server
    runs on what it read before): the index is then LINKLY_DATA_DIR's or the default one, if it exists."""
    try:
        return _load_config(args), None
    except ConfigError as error:
        data_dir = data_dir_override() or default_data_dir()
        if not data_dir.is_dir():
            raise
        return Config(data_dir=data_dir), str(error)


def run_remove_library(engine: Engine, args: argparse.Namespace, output_format: str) -> int:
    from linkly_ls.core.tools.remove_library import remove_library

    engine.writer_lock.try_acquire()  # the writer alone changes the index: refused while a server keeps it
    print(render(remove_library(engine, args.name), output_format))
    return 0


def _embed_all(engine: Engine) -> None:
    """`index --wait`: compute the vectors of every chunk that lacks one, with a progress bar."""
    if not engine.vectors.provider.enabled:
        print("vectors: embeddings are disabled; search is keyword-only")
        return
    embedded = engine.vectors.run_until_complete(
        progress=_progress_printer(), wait_for_model=True, on_first_pass=_first_pass_printer(engine),
        on_model=lambda model_id: print(f"vectors: {model_id} loaded; it reads queries and refines the vectors", flush=True),
    )
    status = engine.vectors.provider.status()
    if not status.ready:
        first_pass = any(share > 0 for share in engine.vectors.first_pass.coverage().values())
        print(f"vectors: none computed ({status.reason}); search ranks by "
              + ("keywords and first-pass vectors" if first_pass else "keywords only"))
        return
    embedder = engine.vectors.provider.current()
    stand_in = engine.vectors.provider.stand_in_note(embedder) if embedder is not None else None
    if stand_in:
        print(f"vectors: {stand_in}", flush=True)
    print(f"vectors: {embedded} document(s) embedded with {status.model}; every chunk has its vector")


def _first_pass_printer(engine: Engine):
    def report(documents: int | None, seconds: float) -> None:
        if documents is None:
            why = engine.vectors.provider.first_pass_problem or "another linkly process is writing the index"
            print(f"first pass: not run ({why})", flush=True)
        elif documents:
            print(f"first pass: {documents} document(s) given first-pass vectors in {seconds:.1f} s; "
                  "search is hybrid while the model refines them", flush=True)
        else:
            print("first pass: nothing to do (every document has a first-pass or a refined vector)", flush=True)

    return report


def _wait_for_the_role(writer: IndexWriter) -> None:
    """Wait until the writer role is free (Ctrl-C gives up), saying so, and again whenever what the other
    run does changes (its indexing, then its embedding with the time left)."""
    said = ""
    while not writer.try_claim():
        activity = read_activity(writer.lock.path.parent, writer.lock.holder_pid())
        doing = activity.describe() if activity is not None else "indexing"
        if doing.split(":")[0] != said:
            said = doing.split(":")[0]
            print(
                f"waiting: another linkly process{holder_text(writer.lock)} (a `linkly index` or `remove-library` "
                f"run) is {doing}; this run starts when it ends (Ctrl-C to give up)",
                file=sys.stderr,
                flush=True,
            )
        time.sleep(WAIT_FOR_ROLE_S)


def run_watch(engine: Engine, args: argparse.Namespace) -> int:
    names = list(dict.fromkeys(name.strip() for name in args.library)) if args.library else None
    if names is not None and "" in names:
        raise UsageError("--library needs a name; `linkly list-libraries` shows them")
    for name in names or []:
        resolve_library(engine.catalog, name)  # an unknown name is said, with the known ones, before anything runs
    writer = IndexWriter(engine, on_reports=_print_batch)
    writer.claim()
    for report in writer.index(names, progress=_progress_printer()):
        print(report.summary(), flush=True)
    writer.start_vectors()
    print("watching for changes (Ctrl-C to stop)", flush=True)
    try:
        writer.watch_here(names)
    except KeyboardInterrupt:
        pass
    return 0


def _print_batch(reports: list[IndexReport]) -> None:
    for report in reports:
        for path, message in report.errors:
            print(f"failed: {path}: {message}", flush=True)
        for path, warning in report.capped:
            print(f"capped: {path}: {warning}", flush=True)
        for path, warning in report.misnamed:
            print(f"misnamed: {path}: {warning}", flush=True)
        for note in report.notes:
            print(f"note: {note}", flush=True)
        if report.indexed or report.removed or report.errors:  # as `print_reports`: a run that changed nothing is quiet
            print(report.summary(), flush=True)


def _load_config(args: argparse.Namespace) -> Config:
    """The config file named by `--config` (which must exist: a typo must not run on the defaults), else
    $LINKLY_CONFIG or the default path (missing: the defaults)."""
    if args.config is not None and not args.config.is_file():
        what = "is a folder, not a file" if args.config.is_dir() else "no such file"
        raise UsageError(f"--config {args.config}: {what}")
    from linkly_ls.core.remote.config import check_remote_keys
    from linkly_ls.mcp.settings import check_mcp_keys

    config = load_config(args.config)
    check_mcp_keys(config)
    check_remote_keys(config)
    return config


def run_mcp(args: argparse.Namespace) -> int:
    """`serve` and `mcp`: they open the index themselves (and may run for hours)."""
    from linkly_ls.mcp import run_http_server, run_stdio

    config = _load_config(args)
    if args.command == "serve":
        return run_http_server(config, host=args.host, port=args.port, watch=args.watch)
    return run_stdio(config, watch=args.watch)


class _Terminated(KeyboardInterrupt):
    """SIGTERM to `linkly index`, unwound as Ctrl-C is."""


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated()


def _say_if_indexing_elsewhere(engine: Engine) -> None:
    """On stderr (the answer on stdout stays as it is), what a run indexing the same index meanwhile means."""
    from linkly_ls.core.tools.status import indexing_elsewhere

    note = indexing_elsewhere(engine)
    if note:
        print(f"linkly: note: {note}", file=sys.stderr)


def main(argv: list[str] | None = None, registry: ToolRegistry = REGISTRY) -> int:
    os.umask(PRIVATE_UMASK)
    if sys.stderr is None:  # started with `2>&-`: print(file=None) would write errors into the answer
        sys.stderr = open(os.devnull, "w")
    parser = build_parser(registry)
    args = parser.parse_args(argv)
    if sys.stdout is None:  # started with `>&-`
        if args.command not in ("serve", "watch"):
            print("linkly: standard output is closed: the answer cannot be written", file=sys.stderr)
            return 1
        sys.stdout = open(os.devnull, "w")  # a server's notices have nowhere to go; it serves all the same
    output_format = "json" if getattr(args, "json", False) else "markdown"
    engine: Engine | None = None
    try:
        if args.remote_name and registry.for_cli_command(args.command) is None:
            raise UsageError(f"--remote runs a tool on a remote machine; `{args.command}` works on this machine only")
        if args.command in ("serve", "mcp"):
            return run_mcp(args)
        if args.command == "status":
            config, config_problem = _status_config(args)
            engine = Engine(config)
            return run_status(engine, output_format, config_problem)
        engine = Engine(_load_config(args))
        if args.command == "index":
            signal.signal(signal.SIGTERM, _stop_on_sigterm)  # stopped as by Ctrl-C: said, and the workers ended
            return run_index(engine, args)
        if args.command == "watch":
            return run_watch(engine, args)
        if args.command == "remove-library":
            return run_remove_library(engine, args, output_format)
        tool = registry.for_cli_command(args.command)
        if tool is None:
            raise UsageError(f"unknown command {args.command!r}")
        if args.remote_name:
            result = call_on_remote(engine, args.remote_name, tool.name, tool_arguments(tool, args))
        else:
            result = tool.call(engine, tool_arguments(tool, args))
        print(render(result, output_format))
        if not args.remote_name and not tool.per_document:
            _say_if_indexing_elsewhere(engine)
        return 0
    except KeyboardInterrupt as interruption:
        if args.command == "index":
            again = "linkly index --wait" if getattr(args, "wait", False) else "linkly index"
            how = "stopped (SIGTERM)" if isinstance(interruption, _Terminated) else "interrupted"
            print(f"linkly: {how}; run `{again}` again to go on", file=sys.stderr)
        return 143 if isinstance(interruption, _Terminated) else 130
    except BrokenPipeError:
        # the reader went away (`linkly search ... | head`): not an error; keep exit-time flushes quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as error:
        return report_error(error, output_format, server=args.command in ("serve", "mcp"))
    finally:
        if engine is not None:
            engine.close()


if __name__ == "__main__":
    sys.exit(main())
