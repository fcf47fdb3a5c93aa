-- :LinklyBacklinks, :LinklyMentions and :LinklyRelated fill the quickfix list with the other
-- documents' lines: in a linked Markdown note, and (related) in a PDF's text view at a line.
local H = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "helpers.lua"))

local function quickfix()
  local list = vim.fn.getqflist({ items = 1, title = 1 })
  local items = {}
  for _, item in ipairs(list.items) do
    table.insert(items, { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, col = item.col, text = item.text })
  end
  return { title = list.title, items = items }
end

H.run(function()
  local library = H.setup({
    libraries = {
      { name = "notes", paths = { H.env("LINKLY_TEST_LIBRARY") .. "/notes" } },
      { name = "papers", paths = { H.env("LINKLY_TEST_LIBRARY") .. "/papers" } },
      { name = "linked", paths = { H.env("LINKLY_TEST_LIBRARY") .. "/linked" } },
    },
  })
  H.wait_indexed()

  -- a quickfix entry into a text view not loaded yet (a backlink, a related passage in a PDF) opens
  -- the view at the entry's line, not at its last line
  local found = assert(require("linkly").execute_sync("linkly.search", { query = "Huardest", doc_types = { "pdf" } }))
  local view_uri = "linkly://doc/" .. found.results[1].doc_id
  vim.fn.setqflist({ { filename = view_uri, lnum = 12, text = "a line of the PDF" } })
  vim.cmd("cfirst")
  H.report.view_entry = { file = vim.api.nvim_buf_get_name(0), lnum = vim.api.nvim_win_get_cursor(0)[1],
    qf_lnum = vim.fn.getqflist()[1].lnum, lines = vim.api.nvim_buf_line_count(0) }
  vim.cmd("cclose")

  vim.cmd.edit(vim.fn.fnameescape(library .. "/linked/sailing.md"))
  local sailing = vim.api.nvim_get_current_buf()
  vim.cmd("LinklyBacklinks")
  H.report.backlinks = quickfix()
  H.check(vim.fn.getqflist({ winid = 1 }).winid ~= 0, "the quickfix window is open")
  H.eq(vim.api.nvim_get_current_buf(), sailing, "the cursor stays in the document")

  vim.cmd("LinklyMentions")
  H.report.mentions = quickfix()
  -- the entry opens the mentioning note at the mention
  vim.cmd("cfirst")
  H.report.mention_opened = { file = vim.api.nvim_buf_get_name(0), cursor = vim.api.nvim_win_get_cursor(0) }

  vim.cmd.edit(vim.fn.fnameescape(library .. "/linked/sub/guide.md"))
  vim.cmd("LinklyRelated!")
  H.report.related = quickfix()

  -- an MDX note: Neovim names no filetype for it, the plugin does, and the client attaches
  local mdx_path = library .. "/linked/sub/deck.mdx"
  vim.fn.writefile({ "# Deck", "", "See [[no-such-deck-note]]." }, mdx_path)
  vim.cmd.edit(vim.fn.fnameescape(mdx_path))
  local mdx = vim.api.nvim_get_current_buf()
  H.report.mdx = { filetype = vim.bo[mdx].filetype }
  H.report.mdx.attached = vim.wait(20000, function()
    return #vim.lsp.get_clients({ bufnr = mdx, name = "linkly" }) > 0
  end, 50)
  H.report.mdx.warned = vim.wait(20000, function()
    return #vim.diagnostic.get(mdx) > 0
  end, 50)

  -- a PDF's text view: the section holding a line
  vim.cmd.edit(vim.fn.fnameescape(library .. "/papers/pdflatex-outline.pdf"))
  local pdf = vim.api.nvim_get_current_buf()
  H.check(vim.b[pdf].linkly_doc_id, "the PDF opened as its text view")
  local line = vim.fn.search("Huardest")
  H.check(line > 1, "the view holds Huardest", line)
  local result = require("linkly.links").related(line, false)
  H.check(result, ":LinklyRelated answered in the PDF view")
  H.report.pdf = { line = line, section = result.section, title = vim.fn.getqflist({ title = 1 }).title,
    total_lines = vim.api.nvim_buf_line_count(pdf), doc_id = result.doc_id, view_doc_id = vim.b[pdf].linkly_doc_id }
  H.log("links", H.report)
end)
