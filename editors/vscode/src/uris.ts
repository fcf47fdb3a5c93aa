import * as path from "node:path";
import * as vscode from "vscode";

export const SCHEME = "linkly";
const DOC_PATH = /^\/([0-9a-f]{12})(?:\/[^/]*)?$/;

/**
 * The text view of an indexed document: `linkly://doc/<doc_id>/<file name>.txt`.
 * The server reads only the id; the name segment gives the editor tab a useful title.
 */
export function docUri(docId: string, filePath?: string): vscode.Uri {
  const name = filePath ? `/${path.basename(filePath)}.txt` : "";
  return vscode.Uri.from({ scheme: SCHEME, authority: "doc", path: `/${docId}${name}` });
}

/** The document id in a `linkly://doc/<doc_id>[/name]` URI, or undefined. */
export function docIdFromUri(uri: vscode.Uri): string | undefined {
  if (uri.scheme !== SCHEME || uri.authority !== "doc") {
    return undefined;
  }
  return DOC_PATH.exec(uri.path)?.[1];
}
