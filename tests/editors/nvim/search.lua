-- :LinklySearch with vim.ui.select (the test picks the first result, as a user would press
-- Enter): the result opens at its best-matching line, in the file for Markdown and in the
-- text view for a PDF.
local H = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "helpers.lua"))

local function search_and_pick(query)
  local offered
  vim.ui.select = function(items, options, on_choice)
    offered = { count = #items, first = options.format_item(items[1]), prompt = options.prompt }
    on_choice(items[1], 1)
  end
  local before = vim.api.nvim_buf_get_name(0)
  vim.cmd("LinklySearch " .. query)
  H.check(offered, ":LinklySearch offered no results for " .. query)
  H.check(vim.api.nvim_buf_get_name(0) ~= before, "the chosen result was not opened")
  return offered
end

local function canonical_line(doc_id, line)
  local answer, err = require("linkly").execute_sync("linkly.read", { doc_id = doc_id, offset = line, limit = 1 })
  H.check(answer, "linkly.read failed", err)
  return answer
end

H.run(function()
  H.setup()
  H.wait_indexed()
  local linkly = require("linkly")
  local lines = require("linkly.lines")

  -- a Markdown hit opens the file itself, at the line the server found (extraction drops
  -- markup, so the file's line number differs from the index's)
  local result = assert(linkly.execute_sync("linkly.search", { query = "ownership", limit = 20 }))
  local hit = result.results[1]
  H.eq(hit.doc_type, "md", "the first hit's type")
  local offered = search_and_pick("ownership")
  H.eq(offered.count, #result.results, "results offered")
  H.eq(vim.fn.fnamemodify(vim.api.nvim_buf_get_name(0), ":p"), vim.fn.fnamemodify(hit.path, ":p"), "opened file")
  H.eq(vim.bo.buftype, "", "a Markdown hit opens the file, not a view")
  local cursor = vim.fn.line(".")
  local text = vim.fn.getline(cursor)
  H.check(text:lower():find("ownership", 1, true), "the cursor line has no query word", cursor, text)
  -- the expected line: the one holding the text the index has at the hit's line
  local indexed_text = canonical_line(hit.doc_id, hit.line).lines[1].text
  H.check(lines.normalise(text):find(lines.normalise(indexed_text), 1, true),
    "the cursor is not on the hit's line", { cursor = cursor, text = text, indexed = indexed_text })
  H.report.markdown = {
    path = hit.path, line = cursor, text = text, hit_line = hit.line, indexed_text = indexed_text, offered = offered.first,
  }
  H.log("markdown hit", H.report.markdown)
  H.check(#vim.lsp.get_clients({ bufnr = 0, name = "linkly" }) == 1, "the Markdown buffer has the client")

  -- a PDF hit opens the text view, on a line with a query word
  local query = "Huardest gefburn"
  local pdf = assert(linkly.execute_sync("linkly.search", { query = query, limit = 5 })).results[1]
  H.eq(pdf.doc_type, "pdf", "the PDF hit's type")
  local pdf_offered = search_and_pick(query)
  H.eq(vim.api.nvim_buf_get_name(0), "linkly://doc/" .. pdf.doc_id, "a PDF hit opens its view")
  -- the list entry says where in the PDF the hit is: its page and the bookmark holding it
  H.check(type(pdf.page) == "number" and type(pdf.section) == "string", "the PDF hit has no page or section", pdf)
  H.check(pdf_offered.first:find(("p. %d · %s]"):format(pdf.page, pdf.section), 1, true),
    "the entry does not show the hit's page and section", pdf_offered.first)
  local pdf_text = vim.fn.getline(".")
  H.check(pdf_text:lower():find("huardest", 1, true) or pdf_text:lower():find("gefburn", 1, true),
    "the cursor line in the PDF view has no query word", vim.fn.line("."), pdf_text)
  H.report.pdf = { line = vim.fn.line("."), text = pdf_text, hit_line = pdf.line, offered = pdf_offered.first }
  H.log("pdf hit", H.report.pdf)
end)
