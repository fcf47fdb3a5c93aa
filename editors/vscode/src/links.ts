// "Linkly: Related Documents", "Linkly: Backlinks" and "Linkly: Unlinked Mentions": the active
// document's neighbours in the notes graph (the server's `linkly.related` and `linkly.links`), in a
// QuickPick that opens the chosen document at its line.

import * as path from "node:path";
import * as vscode from "vscode";
import { reportErrors } from "./commands";
import { documentFor, openDocumentAt } from "./navigate";
import {
  Backlink,
  LinksResult,
  Mention,
  RelatedHit,
  RelatedResult,
  ServerCommands,
  UriForPathResult,
} from "./protocol";
import { placeLabel } from "./provenance";
import { docIcon } from "./search";
import { LinklyService } from "./service";
import { counted } from "./plural";

export type NeighbourKind = "related" | "backlinks" | "mentions";

export const RELATED_LIMIT = 20;
export const LINKS_LIMIT = 200;

const WHAT: Record<NeighbourKind, string> = {
  related: "related documents",
  backlinks: "backlinks",
  mentions: "unlinked mentions",
};

export interface NeighbourOptions {
  /** related: the 1-based line whose section is related; null: the whole document; absent: the cursor's */
  line?: number | null;
}

/** What an item opens: a document at one of its indexed lines. */
export interface NeighbourTarget {
  doc_id: string;
  doc_type: string;
  path: string;
  line: number;
}

export interface NeighbourItem extends vscode.QuickPickItem {
  target: NeighbourTarget;
}

/** What a command found (and shows, when there is anything), for tests and other extensions. */
export interface Neighbours {
  kind: NeighbourKind;
  document: UriForPathResult;
  title: string;
  items: NeighbourItem[];
  result: LinksResult | RelatedResult;
}

function plain(snippet: string): string {
  return snippet.replace(/\*\*/g, "").replace(/\s+/g, " ").trim();
}

export function relatedItem(hit: RelatedHit): NeighbourItem {
  const place = placeLabel(hit.doc_type, hit.page, hit.section);
  return {
    label: `${docIcon(hit.doc_type)} ${hit.title}`,
    description: `${hit.relevance.toFixed(2)} · ${hit.reason}`,
    detail: `line ${hit.line}${place ? ` · ${place}` : ""} │ ${plain(hit.snippet)}`,
    target: hit,
  };
}

export function backlinkItem(link: Backlink): NeighbourItem {
  const written = link.text && link.text !== link.target ? `“${link.text}” → ${link.target}` : link.target;
  return {
    label: `${docIcon(link.doc_type)} ${link.title || path.basename(link.path)}`,
    description: `line ${link.line}${link.heading ? ` · to § ${link.heading}` : ""}`,
    detail: `${written} — ${link.path}`,
    target: link,
  };
}

export function mentionItem(mention: Mention): NeighbourItem {
  const place = placeLabel(mention.doc_type, mention.page, mention.section);
  return {
    label: `${docIcon(mention.doc_type)} ${mention.title}`,
    description: `line ${mention.line}${place ? ` · ${place}` : ""}`,
    detail: plain(mention.snippet),
    target: mention,
  };
}

/** The line whose section "Related Documents" relates: the cursor's, or none (the whole document)
 *  while the cursor is on the first line without a selection. */
function cursorLine(editor: vscode.TextEditor): number | null {
  const selection = editor.selection;
  return selection.isEmpty && selection.active.line === 0 ? null : selection.start.line + 1;
}

function count(total: number, shown: number, one: string, many: string): string {
  return `${counted(total, one, many)}${total > shown ? ` (first ${shown})` : ""}`;
}

async function find(
  service: LinklyService,
  kind: NeighbourKind,
  document: UriForPathResult,
  line: number | null,
): Promise<Neighbours> {
  const docId = document.doc_id;
  if (kind === "related") {
    const argument = line === null ? { doc_id: docId, limit: RELATED_LIMIT } : { doc_id: docId, line, limit: RELATED_LIMIT };
    const result = await service.command<RelatedResult>(ServerCommands.related, argument);
    const section = line === null ? "" : ` (lines ${result.section.start_line}-${result.section.end_line})`;
    const title = `Related to ${result.title}${section}: ${count(result.results.length, result.results.length, "document", "documents")}`;
    return { kind, document, title, items: result.results.map(relatedItem), result };
  }
  const mentions = kind === "mentions";
  const result = await service.command<LinksResult>(ServerCommands.links, {
    doc_id: docId,
    direction: "in",
    mentions,
    limit: LINKS_LIMIT,
  });
  if (!mentions) {
    const title = `Backlinks to ${result.title}: ${count(result.counts.backlinks, result.backlinks.length, "link", "links")}`;
    return { kind, document, title, items: result.backlinks.map(backlinkItem), result };
  }
  const found = result.mentions ?? [];
  const names = (result.mention_names ?? []).map((name) => `“${name}”`).join(" or ") || result.title;
  const title = `Unlinked mentions of ${names}: ${count(result.counts.mentions ?? 0, found.length, "line", "lines")} in ${
    result.counts.mentioning_documents ?? 0
  } document${result.counts.mentioning_documents === 1 ? "" : "s"}`;
  return { kind, document, title, items: found.map(mentionItem), result };
}

/** Find the active document's neighbours and show them in a QuickPick; choosing one opens it at its line. */
export async function showNeighbours(
  service: LinklyService,
  kind: NeighbourKind,
  options: NeighbourOptions = {},
): Promise<Neighbours | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage(`Linkly: open an indexed document (or its linkly: view) to see its ${WHAT[kind]}.`);
    return undefined;
  }
  const line = options.line !== undefined ? options.line : cursorLine(editor);
  const found = await reportErrors(WHAT[kind], async () => find(service, kind, await documentFor(service, editor.document.uri), line));
  if (!found) {
    return undefined;
  }
  if (!found.items.length) {
    void vscode.window.showInformationMessage(`Linkly: ${found.title}.`);
    return found;
  }
  const picker = vscode.window.createQuickPick<NeighbourItem>();
  picker.title = found.title;
  picker.placeholder = "Filter, then choose one to open it at its line";
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  picker.items = found.items;
  picker.onDidAccept(async () => {
    const item = picker.selectedItems[0] ?? picker.activeItems[0];
    picker.hide();
    if (item) {
      await reportErrors(`cannot open ${item.target.path}`, () => openDocumentAt(service, item.target));
    }
  });
  picker.onDidHide(() => picker.dispose());
  picker.show();
  return found;
}

/** The options a command was invoked with: an object from code, nothing (or a URI) from a menu. */
export function neighbourOptions(argument: unknown): NeighbourOptions {
  if (argument && typeof argument === "object" && !(argument instanceof vscode.Uri)) {
    const line = (argument as NeighbourOptions).line;
    return line === undefined || line === null || typeof line === "number" ? { line } : {};
  }
  return {};
}
