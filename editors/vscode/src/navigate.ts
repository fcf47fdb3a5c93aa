// Opening documents at a line: `file:` for text formats, the `linkly:` view otherwise.

import * as vscode from "vscode";
import { READ_REQUEST, ReadResult, TEXT_DOC_TYPES, URI_FOR_PATH_REQUEST, UriForPathResult } from "./protocol";
import { LinklyService } from "./service";
import { SCHEME, docIdFromUri, docUri } from "./uris";

function normalise(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

/**
 * The 0-based line of `document` that holds the indexed line `line` (1-based) of `docId`.
 * For Markdown/text/HTML the indexed lines are the file's lines minus front matter or markup,
 * so the indexed line's text is looked for in the buffer, nearest to its number first.
 */
export async function bufferLine(
  service: LinklyService,
  document: vscode.TextDocument,
  docId: string,
  line: number,
): Promise<number> {
  const fallback = Math.min(Math.max(line - 1, 0), Math.max(document.lineCount - 1, 0));
  if (document.uri.scheme === SCHEME) {
    return fallback;
  }
  let indexed: string;
  try {
    const answer = await service.request<ReadResult>(READ_REQUEST, { doc_id: docId, offset: line, limit: 1 });
    indexed = normalise(answer.text);
  } catch {
    return fallback;
  }
  if (!indexed) {
    return fallback;
  }
  const needle = indexed.slice(0, 60);
  for (let distance = 0; distance < document.lineCount; distance++) {
    for (const candidate of distance === 0 ? [fallback] : [fallback + distance, fallback - distance]) {
      if (candidate >= 0 && candidate < document.lineCount) {
        const text = normalise(document.lineAt(candidate).text);
        if (text && (text.includes(needle) || (text.length >= 8 && needle.includes(text)))) {
          return candidate;
        }
      }
    }
    if (fallback + distance >= document.lineCount && fallback - distance < 0) {
      break;
    }
  }
  return fallback;
}

export async function revealLine(editor: vscode.TextEditor, line: number): Promise<void> {
  const target = Math.min(Math.max(line, 0), Math.max(editor.document.lineCount - 1, 0));
  const position = new vscode.Position(target, 0);
  editor.selection = new vscode.Selection(position, position);
  editor.revealRange(new vscode.Range(position, position), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/** Open an indexed document at its 1-based indexed line, where a person would read it. */
export async function openDocumentAt(
  service: LinklyService,
  hit: { doc_id: string; doc_type: string; path: string; line?: number },
  options: { preview?: boolean; preserveFocus?: boolean } = {},
): Promise<vscode.TextEditor> {
  const uri = TEXT_DOC_TYPES.has(hit.doc_type) ? vscode.Uri.file(hit.path) : docUri(hit.doc_id, hit.path);
  const document = await vscode.workspace.openTextDocument(uri);
  const line = hit.line ? await bufferLine(service, document, hit.doc_id, hit.line) : 0;
  const editor = await vscode.window.showTextDocument(document, {
    preview: options.preview ?? false,
    preserveFocus: options.preserveFocus ?? false,
  });
  await revealLine(editor, line);
  return editor;
}

/** The indexed document behind an editor's URI (a `linkly:` view or an indexed file), or an error. */
export async function documentFor(service: LinklyService, uri: vscode.Uri): Promise<UriForPathResult> {
  const docId = docIdFromUri(uri);
  const params = docId ? { uri: `linkly://doc/${docId}` } : uri.scheme === "file" ? { path: uri.fsPath } : { uri: uri.toString() };
  return service.request<UriForPathResult>(URI_FOR_PATH_REQUEST, params);
}

/** Open a PDF/EPUB/DOCX/PPTX (or any indexed file) as its `linkly:` text view. */
export async function openAsText(service: LinklyService, file: vscode.Uri): Promise<vscode.TextEditor> {
  const found = await documentFor(service, file);
  const document = await vscode.workspace.openTextDocument(docUri(found.doc_id, file.fsPath));
  return vscode.window.showTextDocument(document, { preview: false });
}
