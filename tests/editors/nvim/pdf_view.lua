-- Opening a PDF shows its text view: read-only, filled by the server, with the PDF's outline as
-- document symbols and in :LinklyOutline's location list.
local H = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "helpers.lua"))

H.run(function()
  local library = H.setup()
  -- the zip plugin (loaded before setup() here, as with lazy loading) no longer reads DOCX, EPUB or PPTX
  for _, ext in ipairs({ "docx", "epub", "pptx" }) do
    local ok, left = pcall(vim.api.nvim_get_autocmds, { group = "zip", event = "BufReadCmd", pattern = "*." .. ext })
    H.check(not ok or #left == 0, "the zip plugin still reads *." .. ext, left)
  end
  H.check(vim.g.loaded_zipPlugin ~= nil, "the zip plugin was not loaded: the check above proves nothing")
  local pdf = library .. "/papers/pdflatex-outline.pdf"
  vim.cmd.edit(vim.fn.fnameescape(pdf))
  local bufnr = vim.api.nvim_get_current_buf()
  H.log("opened", vim.api.nvim_buf_get_name(bufnr), vim.b[bufnr].linkly_pending and "(not indexed yet)" or "")
  -- on a fresh index the view says so and fills in once the server has indexed the PDF
  H.report.pending = vim.b[bufnr].linkly_pending ~= nil
  H.eq(vim.bo[bufnr].modifiable, false, "modifiable while pending")
  H.wait_for(function()
    return vim.b[bufnr].linkly_doc_id ~= nil or vim.b[bufnr].linkly_error ~= nil
  end, "the view fills in", 60000)
  H.check(vim.b[bufnr].linkly_error == nil, "the view failed", vim.b[bufnr].linkly_error)
  H.log("filled")

  -- the buffer holds the text the server has for the PDF, and cannot be edited or written
  local view_lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local answer, err = require("linkly").request_sync("linkly/read", { path = pdf })
  H.check(answer, "linkly/read failed", err)
  H.eq(view_lines, vim.split(answer.text, "\n", { plain = true }), "the buffer is the text view")
  H.check(#view_lines > 20, "the view has the PDF's text", #view_lines)
  H.eq(vim.bo[bufnr].buftype, "nofile", "buftype")
  H.eq(vim.bo[bufnr].modifiable, false, "modifiable")
  H.eq(vim.bo[bufnr].readonly, true, "readonly")
  H.eq(vim.bo[bufnr].modified, false, "modified")
  H.eq(vim.bo[bufnr].filetype, "linkly", "filetype")
  H.eq(vim.b[bufnr].linkly_doc_id, answer.doc_id, "b:linkly_doc_id")
  H.check(not pcall(vim.api.nvim_buf_set_lines, bufnr, 0, 1, false, { "edited" }), "the view can be changed")
  H.check(not pcall(vim.cmd.write), ":write must not write the view over the PDF")

  -- the client is attached, so document symbols work (as outline plugins ask for them)
  local clients = vim.lsp.get_clients({ bufnr = bufnr, name = "linkly" })
  H.eq(#clients, 1, "linkly clients attached to the view")
  local symbols = H.flatten(H.document_symbols(bufnr))
  for _, symbol in ipairs(symbols) do
    local text = H.line(bufnr, symbol.line)
    H.check(text and text:find(symbol.name, 1, true), "a symbol is not on the line of its title", symbol, text)
  end
  H.report.symbols = symbols
  H.log("symbols", vim.tbl_map(function(s) return s.name end, symbols))

  -- :LinklyOutline puts the same outline into the location list
  vim.cmd("LinklyOutline")
  local loclist = vim.fn.getloclist(vim.fn.win_getid(vim.fn.bufwinnr(bufnr)))
  H.eq(#loclist, #symbols, "location list entries")
  for i, item in ipairs(loclist) do
    H.eq(item.bufnr, bufnr, "location list buffer")
    H.eq(item.lnum, symbols[i].line, "location list line of " .. symbols[i].name)
    H.eq(vim.trim(item.text), symbols[i].name, "location list text")
  end

  -- the same document through its linkly:// URI, and :LinklyRead at a line
  vim.cmd("LinklyRead " .. answer.doc_id .. " 25")
  H.eq(vim.api.nvim_buf_get_name(0), "linkly://doc/" .. answer.doc_id, "the :LinklyRead buffer")
  H.eq(vim.fn.line("."), 25, "the :LinklyRead cursor line")
  H.eq(vim.api.nvim_buf_get_lines(0, 0, -1, false), view_lines, "the linkly:// view")
  H.eq(#H.flatten(H.document_symbols(0)), #symbols, "symbols of the linkly:// view")
  H.report.view_uri = vim.api.nvim_buf_get_name(0)
end)
