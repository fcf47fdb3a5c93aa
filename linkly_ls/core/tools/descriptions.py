"""What an agent reads before calling anything: the server instructions and each tool's description.

The wording is part of the tool contract (spec/linkly-tools): the workflow
search → grep or outline → read, when to pick which, and how to turn
"last month" into dates using `now` from the response metadata. The registry
(registry.py) gives each tool its description; the MCP server publishes them.
"""

from __future__ import annotations

SERVER_INSTRUCTIONS = """\
Linkly gives you the user's local documents (notes, papers, books, slides, web pages, scans), \
indexed on this machine; they leave it only for the remote servers its configuration names (`library` values `cloud:///<remote>/...`, `remote: true`).

Workflow: search → grep or outline → read.
1. `search` finds the documents that answer a query and returns their `doc_id`s, with a snippet, \
the line of the best passage (and its `page` and `section`, to cite), `total_lines` and `has_outline`.
2. Then locate inside one document: `outline` for its structure (long documents with \
`has_outline: true`), or `grep` for an exact term, name, date or pattern (any document; the \
way in when `has_outline` is false).
3. `read` the lines you need (offset/limit; at most 500 lines a call). Short documents \
(under ~50 lines): read them whole, skip outline.

Helpers: `list_libraries` (library names and counts, before using `library=`), `explore` \
(what the collection holds when the user has no precise topic), `find_paths` (when the user \
names a container such as "my Notion export" or "the Dropbox papers folder": find its real \
path, then pass it as `path_glob` to `search`).

Dates: every successful response ends with `[meta] now=...` (JSON: `_meta.now`), the current \
UTC time. For "last month", "in 2024", "recent" compute dates from it and pass \
`modified_after` / `modified_before` (explicit windows) or `time_sort=newest|oldest` (no window).

Document ids come only from search results (12 hexadecimal characters); tools never take file paths.\
"""

SEARCH = """\
Search the user's indexed local documents; returns the most relevant documents, best first, each \
with `doc_id` (for outline/grep/read), title, path, relevance (0-1), word_count, total_lines, \
has_outline, modified_at, keywords and a snippet with the line of the best passage, its `page` \
(PDF page, EPUB chapter, PPTX slide; absent without pages) and `section` (heading path; absent \
without an outline). Relevance never rises down the list: >= 0.6 a clear match, 0.3-0.6 related, \
below weak; `miss: true` means no strong match (or no document contains the query's words).

Start here for any question about the user's documents. Then: `outline` (document > 50 lines with \
has_outline: true) or `grep` (a specific term, name, date, identifier; or has_outline: false), then \
`read` the target lines. Short documents (< 50 lines): `read` directly.

Filters: `doc_types` (["pdf", "md", ...]); `library` (see list_libraries); `path_glob` is \
substring-matched against the path (`*` spans folders, `?` one character, case-sensitive; a full \
folder path scopes to that folder). The query `*` lists every document the filters pass, without ranking ("all PDFs under papers/": `*` with `doc_types` or `path_glob`). If the user names a container ("in my Notion notes") and you do \
not know its real path, call `find_paths` first and copy its `path_glob`.

Time: for an explicit window ("last month", "in 2024", "Q3") use `modified_after` / \
`modified_before` (ISO dates, inclusive); for "latest" / "earliest" without a window use \
`time_sort=newest|oldest`; combine them for "earliest in 2024". For relative dates read the current \
time from `[meta] now=` at the end of any response first. If results are weak, try other keywords, \
synonyms, or a natural-language phrase. Words in double quotes ("heap allocation") must appear \
side by side in a document, case and punctuation aside; `-word` or `NOT word` leaves out the \
documents holding the word (a short option such as `-i` or `-rf` is searched as written).\
"""

OUTLINE = """\
Show the outline (headings / bookmarks with their line ranges) and metadata of one or more \
documents, to understand a long document's structure and find the section to read.

| Scenario | Do |
| --- | --- |
| Document > 50 lines with has_outline: true | outline first, then `read` the section's lines |
| Short document (< 50 lines) | skip outline, `read` it whole |
| has_outline: false | `grep` for the pattern, or `read` page by page |

Works best on Markdown, DOCX, PPTX, EPUB and bookmarked PDFs. `expand` limits the tree to given \
node ids (e.g. ["2", "3.1"]); omit it to see every level.\
"""

GREP = """\
Find the lines of ONE document that match a regular expression, with context lines around each \
match. Use after `search` to pinpoint names, dates, terms, identifiers or any pattern, then `read` \
with `offset` at a match's line for the full context. Best way into documents with \
has_outline: false; works on every type (PDF, Markdown, DOCX, PPTX, EPUB, TXT, HTML). To search \
several documents, call grep once per document. Each match gives its line, and its `page` and \
`section` where the document has them.

| Scenario | Do |
| --- | --- |
| A specific term, name, or date | grep with the pattern |
| The overall structure | `outline` instead |
| Patterns (emails, IDs, numbers) | grep with a regex |

`output_mode=count` previews how many lines match before fetching them; page with `offset` \
(matches to skip) and `limit` (max 100).\
"""

READ = """\
Read a document's lines, numbered, from `offset` (first line is 1) for `limit` lines (default 200, \
max 500). Page through long documents with the returned `next_offset` (1-200, 201-400, ...), or \
jump to the line range an `outline` node or a `grep` match gave you. Short documents (< 50 lines): \
read them whole without an outline. `pages` gives the first and last page (PDF page, slide, \
chapter) of the lines returned. `doc_id` comes from search results.\
"""

LIST_LIBRARIES = """\
List the user's knowledge libraries with their descriptions, folders and document counts. Use it \
when the user asks what libraries they have, and to check a name before passing `library` to \
search, explore or find_paths.\
"""

EXPLORE = """\
Bird's-eye overview of all indexed documents or one library: document types, the folder tree with \
file counts and median word counts, and the top keywords. Use it when the user asks what is in \
their documents, or has no precise topic; then use its keywords and folder names as leads for \
`search` queries.\
"""

FIND_PATHS = """\
Find the real on-disk folders whose path matches keywords, to scope a `search` with `path_glob`. \
Use it when the user names a container ("in my Notion notes", "my Dropbox papers folder", "my work \
backup") whose actual folder name you do not know (an export may live under \
`Notion-Export-c58e430f...`). Pass several variants at once (casings, translations, app names), \
e.g. ["Notion", "notion", "notion-export"]; they are OR-ed. Copy a returned `path_glob` verbatim \
into search.

Not for topic queries ("find resumes": call search), nor file types ("all PDFs": search with \
path_glob="*.pdf"). Matches in file names alone are not folders; with no candidate, call search \
directly.\
"""

LINKS = """\
The links of one document and the links to it (backlinks), resolved over the whole index: \
Markdown and wikilinks, HTML, DOCX, PDF and EPUB links. Each link gives its line, target, text and \
`status` (ok, external, site, unindexed, outside, missing, missing_heading, missing_block, ambiguous); \
a resolved one gives the target's `doc_id`, `title` and `target_line` (pass them to `read`). Each backlink gives the \
linking document's `doc_id` and line. `broken_only=true` lists broken links; `direction` picks \
`out`, `in` or `both`. `mentions=true` adds the unlinked mentions: lines of other documents that \
name this one (title or file name) without linking to it, each with `doc_id`, line and snippet. Use \
it to walk a notes graph from a search result.\
"""

RELATED = """\
The documents closest in meaning to one document (or, with `line`, to the section around that \
line), leaving out the documents it already links to. Vectors rank them when the document has \
vectors, else shared key terms. Results have the shape of search hits (doc_id, title, path, \
relevance 0-1, snippet, passage lines) plus a one-line `reason` (shared key terms, or the cosine).\
"""

INDEX_LIBRARY = """\
Re-index a library (or every library when `library` is omitted) so that files added, changed or \
deleted on disk are reflected in search. Incremental: unchanged files are skipped. Returns, per \
library, how many documents were indexed, unchanged, failed and removed. The server normally keeps \
the index current by itself; call this only when the user asks to refresh or results look stale.\
"""
