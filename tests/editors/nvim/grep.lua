-- :LinklyGrep fills the quickfix list with the current document's matching lines: in a
-- Markdown file (lines found again in the file) and in a PDF's text view.
local H = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "helpers.lua"))

local function check_quickfix(bufnr, pattern, expected_total)
  local list = vim.fn.getqflist({ items = 1, title = 1 })
  H.eq(#list.items, expected_total, "quickfix entries for " .. pattern)
  H.check(list.title:find(pattern, 1, true), "the quickfix title names the pattern", list.title)
  local lines = {}
  for _, item in ipairs(list.items) do
    H.eq(item.bufnr, bufnr, "quickfix buffer")
    local text = H.line(bufnr, item.lnum)
    H.check(text and text:lower():find(pattern:lower(), 1, true), "a quickfix line does not match", item.lnum, text)
    H.check(item.col >= 1 and text:sub(item.col, item.col + #pattern - 1):lower() == pattern:lower(),
      "the quickfix column is not on the match", item.col, text)
    table.insert(lines, item.lnum)
  end
  return lines
end

H.run(function()
  local library = H.setup()
  H.wait_indexed()
  local linkly = require("linkly")

  -- a Markdown file (front matter and markup make its lines differ from the index's)
  vim.cmd.edit(vim.fn.fnameescape(library .. "/notes/ch04-01-what-is-ownership.md"))
  local markdown = vim.api.nvim_get_current_buf()
  H.wait_for(function()
    return #vim.lsp.get_clients({ bufnr = markdown, name = "linkly" }) == 1
  end, "the client attaches to the Markdown buffer")
  local doc = assert(linkly.request_sync("linkly/uriForPath", { path = vim.api.nvim_buf_get_name(markdown) }))
  local count = assert(linkly.execute_sync("linkly.grep",
    { pattern = "Ownership", doc_id = doc.doc_id, output_mode = "count" })).total_matches
  H.check(count > 1, "the note mentions Ownership", count)
  vim.cmd("LinklyGrep Ownership")
  H.report.markdown = check_quickfix(markdown, "Ownership", count)
  H.check(vim.fn.getqflist({ winid = 1 }).winid ~= 0, "the quickfix window is open")
  H.eq(vim.api.nvim_get_current_buf(), markdown, "the cursor stays in the document")

  -- :LinklyGrep! ignores case
  local insensitive = assert(linkly.execute_sync("linkly.grep",
    { pattern = "ownership", doc_id = doc.doc_id, case_insensitive = true, output_mode = "count" })).total_matches
  vim.cmd("LinklyGrep! ownership")
  H.report.markdown_insensitive = #check_quickfix(markdown, "ownership", insensitive)
  H.check(insensitive > count, "case-insensitive grep finds more", insensitive, count)

  -- a PDF's text view
  vim.cmd.edit(vim.fn.fnameescape(library .. "/papers/pdflatex-outline.pdf"))
  local pdf = vim.api.nvim_get_current_buf()
  local pdf_id = vim.b[pdf].linkly_doc_id
  local pdf_count = assert(linkly.execute_sync("linkly.grep",
    { pattern = "Huardest", doc_id = pdf_id, output_mode = "count" })).total_matches
  vim.cmd("LinklyGrep Huardest")
  H.report.pdf = check_quickfix(pdf, "Huardest", pdf_count)
  -- each entry starts with the match's page and bookmark: "p. 3 · Foo │ ..."
  H.report.pdf_places = {}
  for _, item in ipairs(vim.fn.getqflist({ items = 1 }).items) do
    local place = item.text:match("^(p%. %d+ · %a+) │ ")
    H.check(place, "a PDF quickfix entry does not start with its page and section", item.text)
    table.insert(H.report.pdf_places, place)
  end
  local shown = require("linkly.commands").qftext({ quickfix = 1, id = 0, start_idx = 1, end_idx = 1 })[1]
  H.check(shown:find(H.report.pdf_places[1], 1, true), "the quickfix window does not show the place", shown)
  H.log("quickfix lines", H.report)
end)
