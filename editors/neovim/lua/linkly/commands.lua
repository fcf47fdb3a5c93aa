-- The :Linkly* commands: the server's tools (`workspace/executeCommand`) in the editor.

local linkly = require("linkly")
local lines_mod = require("linkly.lines")
local virtual = require("linkly.virtual")

local M = {}

local SNIPPET_CHARS = 100
local GREP_PAGE = 100
local GREP_MAX = 1000

--- "1 document", "3 documents".
function M.plural(count, one, many)
  return ("%d %s"):format(count, count == 1 and one or many)
end

local function plain_snippet(snippet)
  local text = (snippet or ""):gsub("%*%*", ""):gsub("%s+", " ")
  text = vim.trim(text)
  if vim.fn.strchars(text) > SNIPPET_CHARS then
    text = vim.fn.strcharpart(text, 0, SNIPPET_CHARS) .. "…"
  end
  return text
end

local PAGE_LABELS = { pptx = "slide", epub = "ch." }

--- Where a hit or a match stands: "p. 29 · 6.5 Summary" ("slide 3", "ch. 2"), "" when unknown.
function M.place_label(doc_type, page, section)
  local parts = {}
  if type(page) == "number" then
    table.insert(parts, ("%s %d"):format(PAGE_LABELS[doc_type] or "p.", page))
  end
  -- an untitled slide's outline entry only repeats its number
  if type(section) == "string" and section ~= "" and section:lower() ~= ("slide %s"):format(page) then
    table.insert(parts, section)
  end
  return table.concat(parts, " · ")
end

function M.format_hit(hit)
  local place = M.place_label(hit.doc_type, hit.page, hit.section)
  return ("%s  [%s · %s:%d%s]  %s"):format(hit.title or "?", hit.library or "?", hit.doc_type or "?", hit.line or 1,
    place ~= "" and (" · " .. place) or "", plain_snippet(hit.snippet))
end

--- The quickfix/location list display: "  line │ text" (outline titles keep their indentation).
function M.qftext(info)
  local what = { id = info.id, items = 1 }
  local list = info.quickfix == 1 and vim.fn.getqflist(what) or vim.fn.getloclist(info.winid, what)
  local out = {}
  for i = info.start_idx, info.end_idx do
    local item = list.items[i]
    table.insert(out, ("%5d │ %s"):format(item.lnum, item.text))
  end
  return out
end

--- The document shown in `bufnr`: { doc_id, view = true } for a text view, { doc_id } for a file.
function M.current_document(bufnr)
  local doc_id = vim.b[bufnr].linkly_doc_id
  if doc_id then
    return { doc_id = doc_id, view = true }
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" or vim.bo[bufnr].buftype ~= "" then
    return nil, "this buffer is not a file; open a document of a library first"
  end
  local answer, err = linkly.request_sync("linkly/uriForPath", { path = vim.fn.fnamemodify(name, ":p") })
  if not answer then
    return nil, err
  end
  return { doc_id = answer.doc_id, view = false, title = answer.title }
end

--- Canonical lines `first`.. (`count` of them, all when nil) of a document.
local function canonical_lines(doc_id, first, count)
  local params = { doc_id = doc_id, offset = math.max(first or 1, 1), limit = count }
  local answer, err = linkly.request_sync("linkly/read", params)
  if not answer then
    return nil, err
  end
  return vim.split(answer.text or "", "\n", { plain = true }), answer.offset
end

local function set_cursor(line)
  local last = vim.api.nvim_buf_line_count(0)
  vim.api.nvim_win_set_cursor(0, { math.min(math.max(line, 1), last), 0 })
  vim.cmd("normal! zvzz")
end

--- Open a search hit: the file itself for text formats, else its `linkly:` view; the cursor goes
--- to the best-matching line (the hit's line found again in the file, holding a query word).
function M.open_hit(hit, query)
  local words = lines_mod.query_words(query)
  local passage = hit.passage or { start_line = hit.line, end_line = hit.line }
  local line, first, last = hit.line or 1, passage.start_line or hit.line, passage.end_line or hit.line
  if linkly.text_doc_types[hit.doc_type] and vim.fn.filereadable(hit.path) == 1 then
    local ok, err = pcall(vim.cmd.edit, vim.fn.fnameescape(hit.path))
    if not ok then
      linkly.error(err)
      return
    end
    local buffer = vim.api.nvim_buf_get_lines(0, 0, -1, false)
    local window, offset = canonical_lines(hit.doc_id, line - 3, 7)
    if window then
      local mapped = lines_mod.source_line(window, offset, lines_mod.prepare(buffer), line)
      first, last = first + mapped - line, last + mapped - line
      line = mapped
    end
    line = lines_mod.best_line(buffer, line, first, last, words)
  else
    local ok, err = pcall(virtual.open, hit.doc_id)
    if not ok then
      linkly.error(err)
      return
    end
    line = lines_mod.best_line(vim.api.nvim_buf_get_lines(0, 0, -1, false), line, first, last, words)
  end
  set_cursor(line)
end

local function telescope_pick(hits, query)
  local ok_pickers, pickers = pcall(require, "telescope.pickers")
  if not ok_pickers then
    return false
  end
  local finders = require("telescope.finders")
  local config = require("telescope.config").values
  local actions = require("telescope.actions")
  local action_state = require("telescope.actions.state")
  pickers
    .new({}, {
      prompt_title = "linkly: " .. query,
      finder = finders.new_table({
        results = hits,
        entry_maker = function(hit)
          return {
            value = hit,
            display = M.format_hit(hit),
            ordinal = (hit.title or "") .. " " .. plain_snippet(hit.snippet) .. " " .. (hit.path or ""),
          }
        end,
      }),
      sorter = config.generic_sorter({}),
      attach_mappings = function(prompt_bufnr)
        actions.select_default:replace(function()
          local entry = action_state.get_selected_entry()
          actions.close(prompt_bufnr)
          if entry then
            M.open_hit(entry.value, query)
          end
        end)
        return true
      end,
    })
    :find()
  return true
end

local function select_pick(hits, query)
  vim.ui.select(hits, { prompt = "linkly: " .. query, format_item = M.format_hit, kind = "linkly.search" },
    function(hit)
      if hit then
        M.open_hit(hit, query)
      end
    end)
end

--- :LinklySearch {query}
function M.search(query, options)
  query = vim.trim(query or "")
  if query == "" then
    linkly.error("usage: :LinklySearch {query}")
    return
  end
  local argument = vim.tbl_extend("force", { query = query, limit = linkly.config.search_limit }, options or {})
  local result, err = linkly.execute_sync("linkly.search", argument)
  if not result then
    linkly.error(err)
    return
  end
  local hits = result.results or {}
  if #hits == 0 then
    local guidance = table.concat(result.guidance or {}, " ")
    local headline = result.notice or ("no results for %q."):format(query)
    linkly.notify(("%s %s"):format(headline, guidance), vim.log.levels.WARN)
    return
  end
  local picker = linkly.config.picker
  if picker ~= "select" and telescope_pick(hits, query) then
    return
  end
  if picker == "telescope" then
    linkly.notify("Telescope is not installed; using vim.ui.select", vim.log.levels.WARN)
  end
  select_pick(hits, query)
end

local function vim_regex(pattern, case_insensitive)
  local ok, regex = pcall(vim.regex, (case_insensitive and "\\c" or "\\C") .. "\\v" .. pattern)
  return ok and regex or nil
end

--- :LinklyGrep[!] {pattern}: the current document's matching lines into the quickfix list (! ignores case).
function M.grep(pattern, case_insensitive)
  if not pattern or pattern == "" then
    linkly.error("usage: :LinklyGrep[!] {pattern}")
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local document, err = M.current_document(bufnr)
  if not document then
    linkly.error(err)
    return
  end
  local matches, offset, total, doc_type = {}, 0, 0, nil
  repeat
    local result, grep_error = linkly.execute_sync("linkly.grep", {
      pattern = pattern,
      doc_id = document.doc_id,
      context = 0,
      case_insensitive = case_insensitive or false,
      limit = GREP_PAGE,
      offset = offset,
    })
    if not result then
      linkly.error(grep_error)
      return
    end
    total = result.total_matches or 0
    doc_type = result.doc_type
    vim.list_extend(matches, result.matches or {})
    offset = result.next_offset
  until not offset or #matches >= GREP_MAX
  local map
  if not document.view then
    local canonical = canonical_lines(document.doc_id, 1, nil)
    local source = lines_mod.prepare(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false))
    if canonical then
      map = function(line)
        return lines_mod.source_line(canonical, 1, source, line)
      end
    end
  end
  local regex = vim_regex(pattern, case_insensitive)
  local items = {}
  for _, match in ipairs(matches) do
    local lnum = map and map(match.line) or match.line
    local col = 1
    if regex then
      local line = vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, false)[1] or ""
      local start = regex:match_str(line)
      col = start and start + 1 or 1
    end
    local place = M.place_label(doc_type, match.page, match.section)
    local text = place ~= "" and (place .. " │ " .. match.text) or match.text
    table.insert(items, { bufnr = bufnr, lnum = lnum, col = col, text = text })
  end
  vim.fn.setqflist({}, " ", {
    title = ("linkly grep %s: %d match(es)%s"):format(pattern, total, total > #items and (", first " .. #items) or ""),
    items = items,
    quickfixtextfunc = M.qftext,
  })
  if #items == 0 then
    linkly.notify(("no line matches %s"):format(pattern), vim.log.levels.WARN)
    return
  end
  vim.cmd("botright copen")
  vim.cmd("wincmd p")
end

local function flatten(symbols, depth, out)
  for _, symbol in ipairs(symbols or {}) do
    table.insert(out, { symbol = symbol, depth = depth })
    flatten(symbol.children, depth + 1, out)
  end
  return out
end

--- The current buffer's document symbols from linkly (attaching the buffer when needed).
function M.document_symbols(bufnr)
  if vim.bo[bufnr].buftype ~= "" and not vim.b[bufnr].linkly_doc_id then
    return nil, "this buffer is not a document"
  end
  local client = linkly.get_client()
  if not (client and vim.lsp.buf_is_attached(bufnr, client.id)) then
    client = linkly.attach(bufnr)
    if not client then
      return nil, "the language server is not running"
    end
  end
  client = linkly.ensure_client(bufnr, true)
  if not client then
    return nil, "the language server did not start"
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }
  local answer, reason = linkly.method(client, "request_sync", "textDocument/documentSymbol", params,
    linkly.config.timeout, bufnr)
  if not answer then
    return nil, reason or "no answer"
  end
  if answer.err then
    return nil, linkly.error_text(answer.err)
  end
  return answer.result or {}
end

--- :LinklyOutline: the document's outline into the location list.
function M.outline()
  local bufnr = vim.api.nvim_get_current_buf()
  local symbols, err = M.document_symbols(bufnr)
  if not symbols then
    linkly.error(err)
    return
  end
  local items = {}
  for _, entry in ipairs(flatten(symbols, 0, {})) do
    local range = entry.symbol.selectionRange or entry.symbol.range or entry.symbol.location.range
    table.insert(items, {
      bufnr = bufnr,
      lnum = range.start.line + 1,
      col = 1,
      text = ("  "):rep(entry.depth) .. entry.symbol.name,
    })
  end
  local title = vim.b[bufnr].linkly_title or vim.fn.fnamemodify(vim.api.nvim_buf_get_name(bufnr), ":t")
  vim.fn.setloclist(0, {}, " ", { title = "linkly outline: " .. title, items = items, quickfixtextfunc = M.qftext })
  if #items == 0 then
    linkly.notify("this document has no outline; try :LinklyGrep", vim.log.levels.WARN)
    return
  end
  vim.cmd("lopen")
  vim.cmd("wincmd p")
end

--- A scratch buffer in a split at the bottom, showing `lines` (Markdown).
local output_buffers = {}

function M.show(title, lines)
  local bufnr = output_buffers[title]
  if not (bufnr and vim.api.nvim_buf_is_valid(bufnr)) then
    bufnr = vim.api.nvim_create_buf(false, true)
    pcall(vim.api.nvim_buf_set_name, bufnr, "linkly: " .. title)
    output_buffers[title] = bufnr
  end
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].filetype = "markdown"
  vim.bo[bufnr].bufhidden = "hide"
  local window = vim.fn.bufwinid(bufnr)
  if window == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, bufnr)
    vim.api.nvim_win_set_height(0, math.min(math.max(#lines, 3), 20))
  else
    vim.api.nvim_set_current_win(window)
  end
  return bufnr
end

--- :LinklyRead {doc_id} [offset]
function M.read(doc_id, offset)
  if not doc_id or not doc_id:match("^%x+$") then
    linkly.error("usage: :LinklyRead {doc_id} [offset]")
    return
  end
  virtual.open(doc_id:lower(), tonumber(offset))
  if offset then
    vim.cmd("normal! zt")
  end
end

--- :LinklyLibraries
function M.libraries()
  local result, err = linkly.execute_sync("linkly.listLibraries", {})
  if not result then
    linkly.error(err)
    return
  end
  local out = { "# Libraries", "" }
  for _, library in ipairs(result.libraries or {}) do
    local failed = (library.failed_count or 0) > 0 and (", %d failed"):format(library.failed_count) or ""
    local vectors = library.vector_coverage and (", vectors %d%%"):format(math.floor(library.vector_coverage * 100 + 0.5))
      or ""
    table.insert(out, ("- **%s**: %s%s%s"):format(library.name, M.plural(library.document_count or 0, "document", "documents"), failed, vectors))
    if library.description and library.description ~= "" then
      table.insert(out, "  " .. library.description)
    end
    table.insert(out, "  paths: " .. table.concat(library.paths or {}, ", "))
  end
  if #(result.libraries or {}) == 0 then
    table.insert(out, "No libraries: add some with setup({ libraries = ... }) or `linkly index PATH --library NAME`.")
  end
  return M.show("Libraries", out)
end

local function tree(nodes, depth, out)
  for _, node in ipairs(nodes or {}) do
    local more = node.more_directories and (" (+%d more folders)"):format(node.more_directories) or ""
    table.insert(out, ("%s- %s · %s · %d words%s"):format(("  "):rep(depth), node.path, M.plural(node.file_count or 0, "file", "files"),
      node.median_word_count or 0, more))
    tree(node.children, depth + 1, out)
  end
end

--- :LinklyExplore [library]
function M.explore(library)
  local argument = {}
  if library and library ~= "" then
    argument.library = library
  end
  local result, err = linkly.execute_sync("linkly.explore", argument)
  if not result then
    linkly.error(err)
    return
  end
  local out = { ("# Explore: %s (%s)"):format(result.scope or "all", M.plural(result.document_count or 0, "document", "documents")), "",
    "## Types" }
  for _, kind in ipairs(result.doc_types or {}) do
    table.insert(out, ("- %s: %d"):format(kind.type, kind.count))
  end
  vim.list_extend(out, { "", "## Folders (files · median words)" })
  tree(result.directories, 0, out)
  vim.list_extend(out, { "", "## Top keywords (documents)" })
  for _, keyword in ipairs(result.keywords or {}) do
    local titles = vim.tbl_map(function(source)
      return source.title
    end, keyword.documents or {})
    table.insert(out, ("- **%s** (%d): %s"):format(keyword.keyword, keyword.count or 0, table.concat(titles, "; ")))
  end
  return M.show("Explore", out)
end

--- :LinklyFindPaths {pattern}...
function M.find_paths(patterns)
  if #patterns == 0 then
    linkly.error("usage: :LinklyFindPaths {pattern}...")
    return
  end
  local result, err = linkly.execute_sync("linkly.findPaths", { patterns = patterns })
  if not result then
    linkly.error(err)
    return
  end
  local out = { ("# Folders matching %s"):format(table.concat(patterns, ", ")),
    ("%d file(s)"):format(result.total_files or 0), "" }
  for _, directory in ipairs(result.directories or {}) do
    table.insert(out, ("- %s (%s) · path_glob: `%s`"):format(directory.path, M.plural(directory.file_count or 0, "file", "files"),
      directory.path_glob or directory.path))
  end
  if #(result.directories or {}) == 0 then
    table.insert(out, "No folder matches; matches in file names alone are not listed: use :LinklySearch.")
  end
  if result.truncated then
    table.insert(out, "")
    table.insert(out, "(more folders matched)")
  end
  return M.show("Folders", out)
end

--- :LinklyReindex [library]...
function M.reindex(libraries)
  local argument = {}
  if libraries and #libraries > 0 then
    argument.libraries = libraries
  end
  linkly.notify("re-indexing…")
  linkly.execute("linkly.reindex", argument, function(err, result)
    if err then
      linkly.error(err)
      return
    end
    local summaries = {}
    for _, report in ipairs(result.reports or {}) do
      table.insert(summaries, ("%s: %d indexed, %d unchanged, %d failed, %d removed in %.1f s"):format(
        report.library, report.indexed or 0, report.unchanged or 0, report.failed or 0, report.removed or 0,
        report.seconds or 0))
    end
    linkly.notify(#summaries > 0 and table.concat(summaries, "\n") or "nothing to index")
  end)
end

--- :LinklyStatus
function M.status()
  local status, err = linkly.request_sync("linkly/status", vim.empty_dict())
  if not status then
    linkly.error(err)
    return
  end
  local lines = { ("linkly-ls %s (%s): %d documents in %d libraries; index in %s; MCP: %s"):format(
    status.version or "?", status.state or "?", status.documents or 0, status.libraries or 0,
    status.data_dir or "?", status.mcp_url or status.mcp_error or "off") }
  if status.activity_description then
    table.insert(lines, ("writer%s: %s"):format(
      status.writer_pid ~= vim.NIL and status.writer_pid and (" (pid %d)"):format(status.writer_pid) or "",
      status.activity_description))
  end
  for _, library in ipairs(status.library_details or {}) do
    local vectors = library.vector_coverage
    table.insert(lines, ("%s: %d documents, %d skipped, %d failed, %d awaiting OCR, vectors %s"):format(
      library.name, library.document_count, library.skipped_count, library.failed_count, library.ocr_pending_count,
      (vectors == nil or vectors == vim.NIL) and "off" or ("%d%%"):format(math.floor(vectors * 100 + 0.5))))
  end
  linkly.notify(table.concat(lines, "\n"))
  return status
end

local function complete_libraries(lead)
  local client = linkly.get_client()
  if not (client and client.initialized) then
    return {}
  end
  local result = linkly.execute_sync("linkly.listLibraries", {}, 2000)
  local names = {}
  for _, library in ipairs(result and result.libraries or {}) do
    if library.name:sub(1, #lead) == lead then
      table.insert(names, library.name)
    end
  end
  return names
end

function M.create()
  local create = vim.api.nvim_create_user_command
  create("LinklySearch", function(args)
    M.search(args.args)
  end, { nargs = "+", desc = "linkly: search the libraries" })
  create("LinklyGrep", function(args)
    M.grep(args.args, args.bang)
  end, { nargs = "+", bang = true, desc = "linkly: regex lines of the current document into the quickfix list" })
  create("LinklyOutline", function()
    M.outline()
  end, { nargs = 0, desc = "linkly: the current document's outline into the location list" })
  create("LinklyRead", function(args)
    M.read(args.fargs[1], args.fargs[2])
  end, { nargs = "+", desc = "linkly: open a document's text view: {doc_id} [line]" })
  create("LinklyLibraries", function()
    M.libraries()
  end, { nargs = 0, desc = "linkly: list the libraries" })
  create("LinklyExplore", function(args)
    M.explore(args.args)
  end, { nargs = "?", complete = complete_libraries, desc = "linkly: types, folders and keywords of the libraries" })
  create("LinklyFindPaths", function(args)
    M.find_paths(args.fargs)
  end, { nargs = "+", desc = "linkly: folders whose path matches keywords" })
  create("LinklyReindex", function(args)
    M.reindex(args.fargs)
  end, { nargs = "*", complete = complete_libraries, desc = "linkly: re-index libraries (all by default)" })
  create("LinklyStatus", function()
    M.status()
  end, { nargs = 0, desc = "linkly: the server's status" })
end

return M
