-- :LinklyLibraries, :LinklyExplore, :LinklyFindPaths and :LinklyReindex show the tools' answers.
local H = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "helpers.lua"))

local function shown()
  return table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end

H.run(function()
  local library = H.setup()
  H.wait_indexed()

  vim.cmd("LinklyLibraries")
  local text = shown()
  H.check(text:find("**notes**: 3 documents", 1, true) and text:find("**papers**: 1 document", 1, true),
    ":LinklyLibraries", text)
  H.eq(vim.bo.modifiable, false, "the output buffer is read-only")
  local output = vim.api.nvim_get_current_buf()
  vim.cmd("LinklyLibraries")
  H.eq(vim.api.nvim_get_current_buf(), output, "the same output buffer is reused")
  H.eq(#vim.fn.win_findbuf(output), 1, "the output is shown once")

  vim.cmd("LinklyExplore notes")
  text = shown()
  H.check(text:find("# Explore: ", 1, true) and text:find("- md: 3", 1, true), ":LinklyExplore notes", text)

  vim.cmd("LinklyFindPaths papers")
  text = shown()
  H.check(text:find(library .. "/papers/ (1 file)", 1, true), ":LinklyFindPaths papers", text)

  local before = #H.notifications
  vim.cmd("LinklyReindex notes")
  H.wait_for(function()
    for i = before + 1, #H.notifications do
      if H.notifications[i].message:find("notes: 0 indexed, 3 unchanged", 1, true) then
        return true
      end
    end
    return false
  end, ":LinklyReindex reports", 30000)
  H.report.ok = true
end)
