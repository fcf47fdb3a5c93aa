"""The `linkly` command: the seven tools, plus `index` and `watch`, over the shared engine.

Exit status: 0 on success, 2 on a usage error, 1 on any other error; errors are
one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from linkly_ls import __version__
from linkly_ls.core.config import ConfigError, load_config
from linkly_ls.core.engine import Engine, EngineError
from linkly_ls.core.search.keyword import IndexBusyError
from linkly_ls.core.tools.render import render, render_error
from linkly_ls.core.store.writer_lock import WriterLock
from linkly_ls.core.tools import ArgumentError, ToolError, call_tool


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # exit 2 with one line, as argparse does, minus the usage dump
        self.exit(2, f"linkly: {message} (see `linkly {self.prog.split()[-1]} --help`)\n")


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [part.strip() for part in value.split(",") if part.strip()]


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="linkly", description="Search, outline, grep and read your local documents.")
    parser.add_argument("--version", action="version", version=f"linkly {__version__}")
    parser.add_argument("--config", type=Path, help="config file (default: $LINKLY_CONFIG or the XDG config home)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def tool(name: str, help_text: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=help_text, description=help_text)
        command.add_argument("--json", action="store_true", help="structured JSON output")
        return command

    search = tool("search", "search indexed documents")
    search.add_argument("query")
    search.add_argument("--limit", type=int, default=20, help="1-50 (default 20)")
    search.add_argument("--type", dest="doc_types", help="document types, comma-separated: pdf,md,docx")
    search.add_argument("--library")
    search.add_argument("--path-glob")
    search.add_argument("--modified-after")
    search.add_argument("--modified-before")
    search.add_argument("--time-sort", choices=["default", "newest", "oldest"], default="default")
    search.add_argument("--mode", choices=["auto", "keyword", "vector", "hybrid"], default="auto", help="ranking (default auto)")
    search.add_argument("--explain", action="store_true", help="show keyword/vector ranks and fused scores")

    outline = tool("outline", "show the outline of documents")
    outline.add_argument("doc_ids", nargs="+")
    outline.add_argument("--expand", help="node ids to expand, comma-separated: 2,3.1")

    grep = tool("grep", "find lines matching a regular expression in one document")
    grep.add_argument("pattern")
    grep.add_argument("doc_id")
    grep.add_argument("-C", "--context", type=int, default=3)
    grep.add_argument("-B", "--before", type=int)
    grep.add_argument("-A", "--after", type=int)
    grep.add_argument("-i", "--case-insensitive", action="store_true")
    grep.add_argument("--mode", dest="output_mode", choices=["content", "count"], default="content")
    grep.add_argument("--limit", type=int, default=20, help="1-100 (default 20)")
    grep.add_argument("--offset", type=int, default=0)

    read = tool("read", "read numbered lines of a document")
    read.add_argument("doc_id")
    read.add_argument("--offset", type=int, default=1, help="first line, from 1")
    read.add_argument("--limit", type=int, default=200, help="1-500 (default 200)")

    tool("list-libraries", "list libraries and their document counts")
    explore = tool("explore", "overview: types, folders, keywords")
    explore.add_argument("--library")
    find_paths = tool("find-paths", "find folders whose path matches keywords")
    find_paths.add_argument("--patterns", required=True, help="keywords, comma-separated: Notion,notion")
    find_paths.add_argument("--library")
    find_paths.add_argument("--limit", type=int, default=10, help="1-50 (default 10)")

    index = sub.add_parser("index", help="add folders as a library and index them (incremental)")
    index.add_argument("paths", nargs="*", type=Path, help="folders or files; none: re-index every library")
    index.add_argument("--library", help="library name (default: the folder's name)")
    index.add_argument("--description", default="")
    index.add_argument(
        "--wait",
        action="store_true",
        help="also compute every chunk's vector before returning (otherwise `linkly watch`, "
        "`linkly serve` or the next `--wait` does it; search meanwhile uses keywords for the rest)",
    )

    watch = sub.add_parser("watch", help="index, then keep the index current as files change")
    watch.add_argument("--library", action="append", help="only this library (repeatable)")

    serve = sub.add_parser("serve", help="serve the tools to AI agents over MCP (HTTP), keeping the index current")
    serve.add_argument("--host", help="address to listen on (default: [mcp] host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: [mcp] port, 60606; the next free one if taken)")
    serve.add_argument("--no-watch", dest="watch", action="store_false", help="index at start but do not watch")

    mcp = sub.add_parser("mcp", help="serve the tools over MCP on stdio (forwards to a running `linkly serve`)")
    mcp.add_argument("--no-watch", dest="watch", action="store_false", help="never index or watch from this process")
    return parser


TOOL_COMMANDS = {
    "search": "search",
    "outline": "outline",
    "grep": "grep",
    "read": "read",
    "list-libraries": "list_libraries",
    "explore": "explore",
    "find-paths": "find_paths",
}
_NOT_TOOL_ARGUMENTS = {"command", "json", "config"}


def tool_arguments(args: argparse.Namespace) -> dict[str, Any]:
    arguments = {k: v for k, v in vars(args).items() if k not in _NOT_TOOL_ARGUMENTS and v is not None}
    for key in ("doc_types", "expand", "patterns"):
        if key in arguments:
            arguments[key] = _split(arguments[key])
    if arguments.get("explain") is False:
        arguments.pop("explain")
    return arguments


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


class IndexHeldError(Exception):
    """Another linkly process is the index's writer."""


def claim_writer(engine: Engine) -> WriterLock:
    """Become the index's one writer, or explain which process already is."""
    lock = WriterLock(engine.data_dir)
    if not lock.try_acquire():
        pid = lock.holder_pid()
        raise IndexHeldError(
            f"another linkly process{f' (pid {pid})' if pid else ''} (serve, watch or an editor) is writing "
            "this index and keeps it current itself; stop it first, or ask it to re-index "
            "(the index_library MCP tool, the linkly.reindex editor command)"
        )
    return lock


def run_index(engine: Engine, args: argparse.Namespace) -> int:
    claim_writer(engine)
    if args.paths:
        library = engine.add_library(args.paths, args.library, args.description)
        names = [library.name]
    else:
        names = [args.library] if args.library else None
        if not engine.libraries():
            raise UsageError("no libraries yet: give folders to index, e.g. `linkly index ~/notes`")
    reports = engine.index(names, progress=_progress_printer())
    for report in reports:
        for path, message in report.errors:
            print(f"failed: {path}: {message}")
        for path, warning in report.capped:
            print(f"capped: {path}: {warning}")
        for path, message in report.ocr_errors:
            print(f"OCR failed: {path}: {message}")
        print(report.summary())
        if report.ocr_files:
            print(
                f"{report.library}: text layers searchable after {report.text_layer_seconds:.1f} s; "
                f"OCR of {report.ocr_files} file(s) done after {report.seconds:.1f} s"
            )
    if getattr(args, "wait", False):
        _embed_all(engine)
    return 0


def _embed_all(engine: Engine) -> None:
    """`index --wait`: compute the vectors of every chunk that lacks one, with a progress bar."""
    if not engine.vectors.provider.enabled:
        print("vectors: embeddings are disabled; search is keyword-only")
        return
    embedded = engine.vectors.run_until_complete(progress=_progress_printer(), wait_for_model=True)
    status = engine.vectors.provider.status()
    if not status.ready:
        print(f"vectors: none computed ({status.reason}); search is keyword-only")
        return
    print(f"vectors: {embedded} document(s) embedded with {status.model}; every chunk has its vector")


def run_watch(engine: Engine, args: argparse.Namespace) -> int:
    from linkly_ls.core.indexing.watcher import watch_libraries

    claim_writer(engine)
    for report in engine.index(args.library, progress=_progress_printer()):
        print(report.summary(), flush=True)
    engine.vectors.start()
    print("watching for changes (Ctrl-C to stop)", flush=True)

    def on_batch(reports: list) -> None:
        for report in reports:
            for path, message in report.errors:
                print(f"failed: {path}: {message}", flush=True)
            for path, warning in report.capped:
                print(f"capped: {path}: {warning}", flush=True)
            if report.indexed or report.removed or report.failed:
                print(report.summary(), flush=True)

    try:
        watch_libraries(engine, on_batch=on_batch)
    except KeyboardInterrupt:
        pass
    return 0


def run_mcp(args: argparse.Namespace) -> int:
    """`serve` and `mcp`: they open the index themselves (and may run for hours)."""
    from linkly_ls.mcp import run_http_server, run_stdio

    config = load_config(args.config)
    try:
        if args.command == "serve":
            return run_http_server(config, host=args.host, port=args.port, watch=args.watch)
        return run_stdio(config, watch=args.watch)
    except OSError as error:
        print(f"linkly: {error}", file=sys.stderr)
        return 1


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    output_format = "json" if getattr(args, "json", False) else "markdown"
    engine: Engine | None = None
    try:
        if args.command in ("serve", "mcp"):
            return run_mcp(args)
        engine = Engine(load_config(args.config))
        if args.command == "index":
            return run_index(engine, args)
        if args.command == "watch":
            return run_watch(engine, args)
        result = call_tool(engine, TOOL_COMMANDS[args.command], tool_arguments(args))
        print(render(result, output_format))
        return 0
    except (UsageError, ConfigError) as error:
        print(f"linkly: {error}", file=sys.stderr)
        return 2
    except ArgumentError as error:
        print(render_error(str(error), output_format), file=sys.stderr)
        return 2
    except ToolError as error:
        print(render_error(str(error), output_format), file=sys.stderr)
        return 1
    except (EngineError, IndexBusyError, IndexHeldError) as error:
        print(f"linkly: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader went away (`linkly search ... | head`): not an error; keep exit-time flushes quiet
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    finally:
        if engine is not None:
            engine.close()


if __name__ == "__main__":
    sys.exit(main())
