// Extension-host tests: the extension against the real linkly language server
// (`<linkly.server.python> -m linkly_ls`, set in the test workspace's settings).
//
// The workspace (made by test/run-code-server.mjs) holds papers/pdflatex-outline.pdf
// (9 bookmarks: Foo, Bar, Baz three times), a few Markdown notes and linked/ (fixtures/linked-notes).

import * as assert from "node:assert/strict";
import * as vscode from "vscode";
import { exploreMarkdown, matchItem } from "../../src/commands";
import type { LinklyApi } from "../../src/extension";
import { counted } from "../../src/plural";
import type { Neighbours } from "../../src/links";
import type { GrepResult, LinksResult, Library, ReadResult, ReindexResult, RelatedResult, SearchResult } from "../../src/protocol";

const EXTENSION_ID = "linkly.linkly-vscode";
const BOOKMARKS = ["Foo", "Bar", "Baz", "Foo", "Bar", "Baz", "Foo", "Bar", "Baz"];
const PDF_QUERY = "Huardest gefburn";

function workspaceFile(...parts: string[]): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, "the test workspace folder is open");
  return vscode.Uri.joinPath(folder.uri, ...parts);
}

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) {
        return value as T;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function flatten(symbols: vscode.DocumentSymbol[]): vscode.DocumentSymbol[] {
  return symbols.flatMap((symbol) => [symbol, ...flatten(symbol.children ?? [])]);
}

function docIdOf(uri: vscode.Uri): string {
  return uri.path.split("/")[1];
}

function normalise(text: string): string {
  return text.replace(/\s+/g, " ").trim().toLowerCase();
}

export function registerTests(): void {
  let api: LinklyApi;

  suite("Linkly in the VS Code extension host", function () {
    suiteSetup(async function () {
      this.timeout(180_000);
      const extension = vscode.extensions.getExtension<LinklyApi>(EXTENSION_ID);
      assert.ok(extension, `${EXTENSION_ID} is loaded from extensionDevelopmentPath`);
      api = await extension.activate();
      await api.ready();
      await api.waitForIndex(150_000);
    });

    teardown(async () => {
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
    });

    test("activates against the real linkly-ls server", async () => {
      assert.equal(vscode.extensions.getExtension(EXTENSION_ID)?.isActive, true);
      assert.equal(api.service.state, "running");
      assert.equal(api.service.serverCommand?.source, "linkly.server.python");
      assert.deepEqual(api.service.serverCommand?.args, ["-m", "linkly_ls"]);
      const status = await api.status();
      assert.ok(status.documents >= 4, `indexed documents: ${JSON.stringify(status)}`);
      assert.equal(status.error, null);
      assert.equal(status.indexing, false);
    });

    test("counts read as a person writes them: one document, two documents", () => {
      assert.equal(counted(1, "document"), "1 document");
      assert.equal(counted(0, "document"), "0 documents");
      assert.equal(counted(2, "library", "libraries"), "2 libraries");
      const explore = exploreMarkdown("Explore", {
        document_count: 1,
        scope: "notes",
        doc_types: [],
        directories: [],
        keywords: [],
      } as unknown as Parameters<typeof exploreMarkdown>[1]);
      assert.ok(explore.includes("1 document in notes."), explore);
    });

    test("the status bar shows the document count and the MCP address", async () => {
      const text = await waitFor("the status bar text", () => {
        const current = api.statusBarText();
        return /Linkly: \d+ docs · MCP 127\.0\.0\.1:\d+/.test(current) ? current : undefined;
      });
      const status = await api.status();
      assert.ok(status.mcp_url, "the MCP sidecar runs");
      assert.ok(text.includes(`${status.documents} docs`), text);
      assert.ok(text.includes(new URL(status.mcp_url!).host), text);
    });

    test("the server's linkly.search command runs through executeCommand", async () => {
      const result = await vscode.commands.executeCommand<SearchResult>("linkly.search", { query: PDF_QUERY, limit: 5 });
      assert.ok(result.results.length > 0, JSON.stringify(result));
      const hit = result.results[0];
      assert.equal(hit.doc_type, "pdf");
      assert.ok(hit.path.endsWith("pdflatex-outline.pdf"), hit.path);
      assert.ok(result._meta?.now, "the tool's JSON carries _meta.now");
    });

    test("Linkly: Search lists hits as you type and opens a PDF hit in its linkly: view at its line", async () => {
      const expected = (await api.search(PDF_QUERY, 5)).results[0];
      await vscode.commands.executeCommand("linkly.openSearch", PDF_QUERY);
      const items = await waitFor("search hits in the QuickPick", () => {
        const state = api.searchState();
        return state && !state.busy && state.items.some((item) => item.hit) ? state.items : undefined;
      });
      assert.equal(items[0].hit?.doc_id, expected.doc_id);
      // the list says where in the PDF the hit is: its page and the bookmark holding it
      assert.ok(expected.page && expected.section, JSON.stringify(expected));
      assert.ok(
        items[0].description?.includes(`p. ${expected.page} · ${expected.section}`),
        `description: ${items[0].description}`,
      );
      await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
      const editor = await waitFor("the hit's editor", () => {
        const active = vscode.window.activeTextEditor;
        return active?.document.uri.scheme === "linkly" ? active : undefined;
      });
      assert.ok(editor.document.uri.path.startsWith(`/${expected.doc_id}`), editor.document.uri.toString());
      assert.equal(editor.selection.active.line, expected.line - 1);
      assert.ok(editor.document.lineAt(expected.line - 1).text.length > 0);
    });

    test("Linkly: Search says a miss first, with the server's guidance, before the nearest in meaning", async () => {
      await vscode.commands.executeCommand("linkly.openSearch", "xyzzyplugh");
      const items = await waitFor("the miss in the QuickPick", () => {
        const state = api.searchState();
        return state && !state.busy && state.items.length ? state.items : undefined;
      });
      assert.equal(items[0].hit, undefined, "the first row is the miss, not a hit");
      assert.ok(items[0].detail?.includes("xyzzyplugh"), `detail: ${items[0].detail}`);
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");
      await waitFor("the QuickPick closed", () => (api.searchState() === undefined ? true : undefined));
    });

    test("Linkly: Search opens a Markdown hit in the file itself, at the hit's line", async () => {
      const result = await api.search("ownership heap", 5);
      const hit = result.results.find((candidate) => candidate.doc_type === "md");
      assert.ok(hit, JSON.stringify(result));
      await vscode.commands.executeCommand("linkly.openSearch", "ownership heap");
      await waitFor("Markdown hits in the QuickPick", () => {
        const state = api.searchState();
        return state && !state.busy && state.items[0]?.hit?.doc_id === result.results[0].doc_id ? true : undefined;
      });
      await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
      const top = result.results[0];
      const editor = await waitFor("the Markdown file", () => {
        const active = vscode.window.activeTextEditor;
        return active?.document.uri.scheme === "file" && active.document.uri.fsPath === top.path ? active : undefined;
      });
      const indexed = await api.service.request<ReadResult>("linkly/read", { doc_id: top.doc_id, offset: top.line, limit: 1 });
      const cursorLine = normalise(editor.document.lineAt(editor.selection.active.line).text);
      assert.ok(
        cursorLine.includes(normalise(indexed.text).slice(0, 40)),
        `cursor on "${cursorLine}", indexed line ${top.line} is "${indexed.text}"`,
      );
    });

    test("Linkly: Open as Text opens a PDF as its linkly: view", async () => {
      const pdf = workspaceFile("papers", "pdflatex-outline.pdf");
      const editor = await vscode.commands.executeCommand<vscode.TextEditor>("linkly.openAsText", pdf);
      assert.ok(editor, "an editor was opened");
      assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), editor.document.uri.toString());
      const uri = editor.document.uri;
      assert.equal(uri.scheme, "linkly");
      assert.match(uri.path, /^\/[0-9a-f]{12}\/pdflatex-outline\.pdf\.txt$/);
      assert.equal(editor.document.lineAt(0).text, "--- page 1 ---");
      assert.ok(editor.document.getText().includes("Huardest gefburn"));
      assert.equal((await api.viewUriForFile(pdf)).toString(), uri.toString());
    });

    test("an open linkly: view is fetched again once its PDF changes and is indexed again", async () => {
      const version = workspaceFile("papers", "version.pdf");
      await vscode.workspace.fs.copy(workspaceFile("papers", "pdflatex-outline.pdf"), version, { overwrite: true });
      await api.service.request("workspace/executeCommand", { command: "linkly.reindex", arguments: [{ paths: [version.fsPath] }] });
      const editor = await vscode.commands.executeCommand<vscode.TextEditor>("linkly.openAsText", version);
      assert.ok(editor.document.getText().includes("Huardest gefburn"), "the view shows the first version");
      const newer = vscode.Uri.joinPath(vscode.workspace.workspaceFolders![0].uri, "..", "extra", "multicolumn.pdf");
      await vscode.workspace.fs.copy(newer, version, { overwrite: true });
      await api.service.request("workspace/executeCommand", { command: "linkly.reindex", arguments: [{ paths: [version.fsPath] }] });
      await waitFor("the view's new text", () => (editor.document.getText().includes("Huardest gefburn") ? undefined : true));
      await vscode.workspace.fs.delete(version);
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    });

    test("the linkly: view's document symbols are the PDF's bookmarks, each at its section", async () => {
      const uri = await api.viewUriForFile(workspaceFile("papers", "pdflatex-outline.pdf"));
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document);
      const symbols = await waitFor("document symbols", async () => {
        const answer = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>(
          "vscode.executeDocumentSymbolProvider",
          uri,
        );
        return answer && answer.length ? answer : undefined;
      });
      const flat = flatten(symbols);
      assert.deepEqual(
        flat.map((symbol) => symbol.name),
        BOOKMARKS,
      );
      let previous = -1;
      for (const symbol of flat) {
        const line = symbol.selectionRange.start.line;
        assert.ok(line > previous, `sections in order: ${symbol.name} at ${line}`);
        previous = line;
        // clicking an outline entry selects selectionRange: the section's heading line
        assert.match(document.lineAt(line).text, new RegExp(`\\b${symbol.name}\\b`), `line ${line + 1}`);
      }
    });

    test("Go to Definition on a PDF contents entry moves within the open linkly: view", async () => {
      const uri = await api.viewUriForFile(workspaceFile("papers", "pdflatex-outline.pdf"));
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(document);
      const entry = [...Array(document.lineCount).keys()].find((line) => document.lineAt(line).text === "2 Bar 2");
      assert.ok(entry !== undefined, "the contents list section 2");
      const locations = await waitFor("the definition", async () => {
        const answer = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>(
          "vscode.executeDefinitionProvider",
          uri,
          new vscode.Position(entry, 2),
        );
        return answer && answer.length ? answer : undefined;
      });
      assert.equal(locations.length, 1);
      const target = locations[0];
      const targetUri = "targetUri" in target ? target.targetUri : target.uri;
      const targetLine = "targetRange" in target ? target.targetRange.start.line : target.range.start.line;
      assert.equal(targetUri.toString(), uri.toString(), "the same view, not a second tab");
      assert.equal(document.lineAt(targetLine).text, "2 Bar");
    });

    test("a plain-text file's outline comes from the server", async () => {
      const document = await vscode.workspace.openTextDocument(workspaceFile("reference", "ls.1.txt"));
      assert.equal(document.languageId, "plaintext");
      await vscode.window.showTextDocument(document);
      const symbols = await waitFor("document symbols of ls.1.txt", async () => {
        const answer = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>(
          "vscode.executeDocumentSymbolProvider",
          document.uri,
        );
        return answer && answer.length ? answer : undefined;
      });
      assert.deepEqual(
        symbols.map((symbol) => symbol.name),
        ["NAME", "SYNOPSIS", "DESCRIPTION", "AUTHOR", "REPORTING BUGS", "COPYRIGHT", "SEE ALSO"],
      );
      let previous = -1;
      for (const symbol of symbols) {
        const line = symbol.selectionRange.start.line;
        assert.ok(line > previous, `sections in order: ${symbol.name} at ${line}`);
        previous = line;
      }
      // linkly-ls places these headings on the buffer lines where their titles stand; it matches
      // case- and punctuation-blind, so AUTHOR lands on the option line "--author" (server issue,
      // see the report): only the unambiguous headings are checked for their exact line
      for (const symbol of symbols.slice(0, 3)) {
        assert.equal(document.lineAt(symbol.selectionRange.start.line).text.trim(), symbol.name);
      }
    });

    test("a Markdown file's outline is not doubled by the server's", async () => {
      const notes = await vscode.workspace.findFiles("notes/*.md");
      assert.ok(notes.length > 0);
      const document = await vscode.workspace.openTextDocument(notes[0]);
      await vscode.window.showTextDocument(document);
      const symbols = await waitFor("document symbols of a Markdown note", async () => {
        const answer = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>(
          "vscode.executeDocumentSymbolProvider",
          document.uri,
        );
        return answer && answer.length ? answer : undefined;
      });
      // give the server time to answer too, then ask again: each heading must appear once
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const again = await vscode.commands.executeCommand<vscode.DocumentSymbol[]>(
        "vscode.executeDocumentSymbolProvider",
        document.uri,
      );
      const keys = flatten(again).map((symbol) => `${symbol.name}@${symbol.selectionRange.start.line}`);
      assert.equal(new Set(keys).size, keys.length, `duplicated headings: ${keys.join(", ")}`);
      assert.equal(flatten(again).length, flatten(symbols).length);
    });

    test("Linkly: Grep in Document finds lines of the active linkly: view", async () => {
      const uri = await api.viewUriForFile(workspaceFile("papers", "pdflatex-outline.pdf"));
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      const result = await vscode.commands.executeCommand<GrepResult>("linkly.grepDocument", { pattern: "Huardest" });
      assert.ok(result && result.total_matches > 0, JSON.stringify(result));
      const document = vscode.window.activeTextEditor!.document;
      for (const match of result.matches) {
        assert.equal(document.lineAt(match.line - 1).text, match.text);
        assert.ok(match.page && BOOKMARKS.includes(match.section ?? ""), JSON.stringify(match));
        assert.ok(matchItem(match, "pdf").description?.startsWith(`p. ${match.page} · ${match.section} │ `));
      }
    });

    async function openNote(...parts: string[]): Promise<vscode.TextEditor> {
      return vscode.window.showTextDocument(await vscode.workspace.openTextDocument(workspaceFile(...parts)));
    }

    async function acceptAndWaitFor(file: vscode.Uri): Promise<vscode.TextEditor> {
      await vscode.commands.executeCommand("workbench.action.acceptSelectedQuickOpenItem");
      return waitFor(`${file.fsPath} opened`, () => {
        const active = vscode.window.activeTextEditor;
        return active?.document.uri.fsPath === file.fsPath ? active : undefined;
      });
    }

    test("Linkly: Backlinks lists the links to the active note and opens the linking note at the link", async () => {
      await openNote("linked", "sailing.md");
      const found = await vscode.commands.executeCommand<Neighbours>("linkly.showBacklinks");
      assert.ok(found, "the command answered");
      const result = found.result as LinksResult;
      assert.equal(result.title, "Sailing");
      assert.equal(found.title, "Backlinks to Sailing: 1 link");
      assert.deepEqual(
        found.items.map((item) => [item.label, item.description]),
        [["$(markdown) Book", "line 7 · to § Wind"]],
      );
      const book = workspaceFile("linked", "book.md");
      const editor = await acceptAndWaitFor(book);
      assert.equal(editor.selection.active.line, 6);
      assert.ok(editor.document.lineAt(6).text.includes("[[Sailing#wind|wind]]"));
    });

    test("Linkly: Unlinked Mentions lists the lines naming the note without a link and opens one", async () => {
      await openNote("linked", "sailing.md");
      const found = await vscode.commands.executeCommand<Neighbours>("linkly.showUnlinkedMentions");
      assert.ok(found, "the command answered");
      assert.equal(found.title, "Unlinked mentions of “Sailing”: 1 line in 1 document");
      // book.md names Sailing too, but links to it: it is a backlink, not an unlinked mention
      assert.deepEqual(
        found.items.map((item) => [item.label, item.description, item.detail]),
        [["$(markdown) Other guide", "line 3 · Other guide", "This one is about sailing boats on the lake."]],
      );
      const other = workspaceFile("linked", "sub", "guide.md");
      const editor = await acceptAndWaitFor(other);
      assert.equal(editor.selection.active.line, 2);
      assert.match(editor.document.lineAt(2).text, /\bsailing\b/);
    });

    test("Linkly: Related Documents ranks the notes closest to the active one and opens the chosen", async () => {
      const note = await openNote("linked", "sub", "guide.md");
      // the cursor on the first line without a selection: the whole document is related
      note.selection = new vscode.Selection(0, 0, 0, 0);
      const found = await vscode.commands.executeCommand<Neighbours>("linkly.showRelated");
      assert.ok(found && found.items.length > 0, JSON.stringify(found?.result));
      const result = found.result as RelatedResult;
      assert.ok(found.title.startsWith("Related to Other guide: "), found.title);
      assert.equal(result.results[0].title, "Sailing");
      assert.match(found.items[0].description ?? "", /^\d\.\d\d · shared terms: /);
      const editor = await acceptAndWaitFor(workspaceFile("linked", "sailing.md"));
      const indexed = result.results[0].line;
      assert.equal(editor.selection.active.line, indexed - 1);
    });

    test("Linkly: Related Documents of a PDF's linkly: view relates the section at a line", async () => {
      const uri = await api.viewUriForFile(workspaceFile("papers", "pdflatex-outline.pdf"));
      const editor = await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      const line = editor.document.getText().split("\n").findIndex((text) => text.includes("Huardest")) + 1;
      assert.ok(line > 1);
      const found = await vscode.commands.executeCommand<Neighbours>("linkly.showRelated", { line });
      assert.ok(found, "the command answered");
      const result = found.result as RelatedResult;
      assert.equal(result.doc_id, docIdOf(uri));
      assert.ok(result.section.start_line <= line && line <= result.section.end_line, JSON.stringify(result.section));
      assert.ok(result.section.end_line - result.section.start_line + 1 < editor.document.lineCount, "a section, not the whole PDF");
      assert.ok(found.title.includes(`(lines ${result.section.start_line}-${result.section.end_line})`), found.title);
    });

    test("Linkly: Show Libraries, Explore and Reindex", async () => {
      const libraries = await vscode.commands.executeCommand<Library[]>("linkly.showLibraries");
      assert.ok(libraries && libraries.length >= 1, JSON.stringify(libraries));
      const library = libraries.find((candidate) => candidate.document_count >= 4);
      assert.ok(library, JSON.stringify(libraries));
      await vscode.commands.executeCommand("workbench.action.closeQuickOpen");

      const explored = await vscode.commands.executeCommand<{ editor: vscode.TextEditor }>("linkly.openExplore", library.name);
      assert.ok(explored);
      const report = explored.editor.document;
      assert.equal(report.uri.scheme, "linkly-report");
      assert.equal(report.languageId, "markdown");
      assert.match(report.getText(), /\| pdf \| 1 \|/);

      const progress: string[] = [];
      const listening = api.service.onProgress(({ value }) => progress.push(value.kind === "begin" ? value.title : value.kind));
      let reindexed: ReindexResult | undefined;
      try {
        reindexed = await vscode.commands.executeCommand<ReindexResult>("linkly.reindexLibraries", library.name);
        // `$/progress` (what the status bar shows while indexing) came through the client
        await waitFor("the end of the re-indexing progress", () => progress.includes("end"), 10_000);
      } finally {
        listening.dispose();
      }
      assert.equal(progress[0], "Re-indexing documents", progress.join(", "));
      assert.ok(reindexed && reindexed.reports.length === 1, JSON.stringify(reindexed));
      assert.equal(reindexed.reports[0].failed, 0);
      assert.ok(reindexed.reports[0].unchanged >= 4, JSON.stringify(reindexed));
    });

    test("Linkly: Copy MCP Configuration copies a snippet with the sidecar's URL", async () => {
      const status = await api.status();
      const snippet = await vscode.commands.executeCommand<string>("linkly.copyMcpConfig");
      assert.ok(snippet, "a snippet was produced");
      assert.deepEqual(JSON.parse(snippet), { mcpServers: { linkly: { type: "http", url: status.mcp_url } } });
      assert.match(status.mcp_url!, /^http:\/\/127\.0\.0\.1:\d+\/mcp/);
      assert.equal(await vscode.env.clipboard.readText(), snippet);
    });

    test("a missing server is reported with the install command", () => {
      assert.throws(
        () => api.findServer({ python: "/nonexistent/bin/python3" }),
        (error: Error) => /pip install linkly-ls/.test(error.message) && /linkly\.server\.python/.test(error.message),
      );
      assert.throws(
        () => api.findServer({ path: "/nonexistent/bin/linkly-ls" }),
        (error: Error) => /pip install linkly-ls/.test(error.message) && /linkly\.server\.path/.test(error.message),
      );
      const python = vscode.workspace.getConfiguration("linkly").get<string>("server.python")!;
      assert.deepEqual(api.findServer({ python }).args, ["-m", "linkly_ls"]);
    });

    test("a server that dies is restarted by the client, and the status says running again", async function () {
      this.timeout(90_000);
      const before = await api.status();
      assert.ok(before.writer_pid, JSON.stringify(before));
      process.kill(before.writer_pid, "SIGKILL");  // a crash, the out-of-memory killer
      await waitFor("the server seen stopped", () => (api.service.state === "failed" ? true : undefined), 30_000);
      const after = await waitFor("the server running again", async () => {
        if (api.service.state !== "running") {
          return undefined;
        }
        const status = await api.status();
        return status.writer_pid && status.writer_pid !== before.writer_pid ? status : undefined;
      }, 60_000);
      assert.equal(api.service.error, undefined);
      assert.ok(after.documents >= 4);
    });

    test("changing a linkly setting restarts the server with it", async function () {
      this.timeout(90_000);
      const config = () => vscode.workspace.getConfiguration("linkly");
      const before = api.service.running;
      assert.ok(before);
      await config().update("mcp.enabled", false, vscode.ConfigurationTarget.Workspace);
      try {
        await waitFor("a restarted server without MCP", async () => {
          const client = api.service.running;
          if (!client || client === before) {
            return undefined;
          }
          const status = await api.status();
          return status.mcp_url === null ? status : undefined;
        }, 45_000);
      } finally {
        await config().update("mcp.enabled", undefined, vscode.ConfigurationTarget.Workspace);
      }
      const status = await waitFor("the MCP sidecar back after the second restart", async () => {
        const current = await api.status();
        return current.mcp_url ? current : undefined;
      }, 45_000);
      assert.ok(status.documents >= 4);
    });
  });
}
