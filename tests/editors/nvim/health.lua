-- :checkhealth linkly reports OK: Neovim version, server command, server answers, MCP address.
local H = dofile(vim.fs.joinpath(vim.fs.dirname(arg[0]), "helpers.lua"))

H.run(function()
  H.setup()
  vim.cmd("checkhealth linkly")
  local text = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  H.report.health = text
  io.stdout:write(text, "\n")
  for _, bad in ipairs({ "ERROR", "WARNING", "❌", "⚠️" }) do
    H.check(not text:find(bad, 1, true), ":checkhealth linkly reports a problem (" .. bad .. ")")
  end
  for _, expected in ipairs({ "OK Neovim 0.11", "OK server command found", "OK server responds",
    "OK MCP address: http://127.0.0.1:" }) do
    H.check(text:find(expected, 1, true), ":checkhealth linkly does not say " .. expected)
  end
end)
