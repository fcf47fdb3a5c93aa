// Read-only documents: `linkly://doc/<doc_id>/...` (a PDF's, EPUB's, DOCX's or PPTX's text,
// served by the `linkly/read` request) and `linkly-report:` (Markdown reports of this extension).

import * as vscode from "vscode";
import { READ_REQUEST, ReadResult } from "./protocol";
import { LinklyService } from "./service";
import { SCHEME } from "./uris";

export class LinklyContentProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changes.event;

  private readonly subscription: vscode.Disposable;

  constructor(private readonly service: LinklyService) {
    // an open view whose document the server re-indexed (changed, replaced or deleted) is fetched again
    this.subscription = service.onViewChanged((changed) => {
      const id = vscode.Uri.parse(changed).path.split("/")[1];
      for (const document of vscode.workspace.textDocuments) {
        if (document.uri.scheme === SCHEME && document.uri.path.split("/")[1] === id) {
          this.changes.fire(document.uri);
        }
      }
    });
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    // the server takes the URI as is: the id decides, a trailing name segment is ignored
    const answer = await this.service.request<ReadResult>(READ_REQUEST, { uri: uri.toString() }, token);
    if (answer.text_missing_reason && !answer.text.trim()) {
      void vscode.window.showWarningMessage(`Linkly: ${answer.title}: ${answer.text_missing_reason}`);
    }
    return answer.text;
  }

  /** Ask the editor to fetch the open `linkly:` documents again (after re-indexing). */
  refreshOpenDocuments(): void {
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme === SCHEME) {
        this.changes.fire(document.uri);
      }
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.changes.dispose();
  }
}

export const REPORT_SCHEME = "linkly-report";

/** In-memory Markdown reports (libraries, explore) shown as read-only documents. */
export class ReportProvider implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly reports = new Map<string, string>();
  private readonly changes = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changes.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.reports.get(uri.toString()) ?? "This report is gone; run the command again.";
  }

  async show(name: string, markdown: string): Promise<vscode.TextEditor> {
    const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/${name}.md` });
    this.reports.set(uri.toString(), markdown);
    this.changes.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri); // `.md`: shown as Markdown
    return vscode.window.showTextDocument(document, { preview: false });
  }

  dispose(): void {
    this.changes.dispose();
  }
}
