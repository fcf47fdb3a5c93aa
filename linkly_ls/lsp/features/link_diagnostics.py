"""Broken links of an open document as Warnings: a target that is missing, a heading that is
missing, a wikilink that names several notes. Published with the other diagnostics (on open,
on save, after every index run), at the link's own range in a Markdown buffer; none while the server's
first index run goes on, when the targets may not be indexed yet."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from linkly_ls.core.engine import Engine
from linkly_ls.lsp.features.diagnostics import SOURCE
from linkly_ls.lsp.link_context import client_range, links_in

if TYPE_CHECKING:
    from linkly_ls.lsp.server import LinklyLanguageServer

#: most broken-link warnings on one document
MAX_WARNINGS = 500
#: formats shown as read-only text views, whose broken links are not the reader's to mend
_READ_ONLY_TYPES = frozenset({"pdf", "epub", "docx", "pptx", "image"})


def broken_link_diagnostics(engine: Engine, uri: str, ls: LinklyLanguageServer) -> list[types.Diagnostic]:
    if ls.indexing is not None and ls.indexing.first_run_going:
        # a new vault's every link read "target not found" for the 20 s of its first run: they wait for its end,
        # after which every open document's diagnostics are refreshed
        return []
    context = links_in(ls, engine, uri, broken_only=True)
    if context is None or (context.record is not None and context.record.doc_type in _READ_ONLY_TYPES):
        # a published manual's links to files that never came with it: warnings nobody can act on (`links` lists them)
        return []
    units = ls.workspace.position_codec.client_num_units
    warnings = [
        types.Diagnostic(
            range=client_range(context.lines, link.line, link.start, link.end, units),
            severity=types.DiagnosticSeverity.Warning,
            source=SOURCE,
            code=f"link-{link.status.replace('_', '-')}",
            message=link.problem(),
        )
        for link in context.links[:MAX_WARNINGS]
    ]
    left = len(context.links) - MAX_WARNINGS
    if left > 0:  # said where the warnings stop: a link broken further down would otherwise pass unseen
        first = context.links[MAX_WARNINGS]
        warnings.append(
            types.Diagnostic(
                range=client_range(context.lines, first.line, first.start, first.end, units),
                severity=types.DiagnosticSeverity.Information,
                source=SOURCE,
                code="link-warnings-capped",
                message=f"{left:,} more broken link(s) from here on are not flagged: at most {MAX_WARNINGS} a document",
            )
        )
    return warnings


def register(server: LinklyLanguageServer) -> None:
    server.diagnostic_sources.append(broken_link_diagnostics)
