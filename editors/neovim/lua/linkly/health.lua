-- :checkhealth linkly

local M = {}

local MCP_WAIT_MS = 5000
local START_WAIT_MS = 15000

function M.check()
  local health = vim.health
  health.start("linkly: Neovim")
  local version = vim.version()
  local text = ("%d.%d.%d"):format(version.major, version.minor, version.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. text .. " (0.10 or newer is needed; tested on 0.11.4)")
  else
    health.error("Neovim " .. text .. " is too old", { "linkly needs Neovim 0.10 or newer" })
    return
  end

  local ok, linkly = pcall(require, "linkly")
  if not ok then
    health.error("require('linkly') failed: " .. tostring(linkly))
    return
  end
  local has_group = pcall(vim.api.nvim_get_autocmds, { group = "linkly" })
  if not has_group then
    health.warn("setup() has not run", { "call require('linkly').setup({...}) in your config" })
  end

  health.start("linkly: language server")
  local cmd = linkly.command()
  if type(cmd) ~= "table" or #cmd == 0 then
    health.error("the `cmd` option must be a list such as { 'linkly-ls' }")
    return
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    health.error(("server command not found: %s"):format(cmd[1]), {
      "install linkly-ls (pip install linkly-ls) so that `linkly-ls` is on PATH,",
      "or set `cmd` in setup(), e.g. { '/path/to/venv/bin/python', '-m', 'linkly_ls' }",
    })
    return
  end
  health.ok(("server command found: %s (%s)"):format(table.concat(cmd, " "), vim.fn.exepath(cmd[1])))

  local version_cmd = vim.list_extend(vim.deepcopy(cmd), { "--version" })
  local run_ok, run = pcall(function()
    return vim.system(version_cmd, { text = true, env = linkly.config.cmd_env }):wait(30000)
  end)
  if not run_ok then
    health.error("could not run " .. table.concat(version_cmd, " ") .. ": " .. tostring(run))
    return
  end
  if run.code ~= 0 then
    health.error(("`%s` failed (exit %s): %s"):format(table.concat(version_cmd, " "), tostring(run.code),
      vim.trim((run.stderr or "") .. (run.stdout or ""))))
    return
  end
  health.ok("server version: " .. vim.trim(run.stdout or ""))

  local started = linkly.get_client() == nil
  local status, err = linkly.request_sync("linkly/status", vim.empty_dict())
  if not status then
    health.error("the server does not respond: " .. tostring(err), { "see :LspLog" })
    return
  end
  if status.state == "starting" then
    -- the server answers at once while it opens its index: wait for the numbers
    vim.wait(START_WAIT_MS, function()
      status = linkly.request_sync("linkly/status", vim.empty_dict()) or status
      return status.state ~= "starting"
    end, 100)
  end
  if status.error then
    health.error("the server could not open its index: " .. status.error)
    return
  end
  health.ok(("server responds%s: linkly-ls %s, %d documents in %d libraries%s"):format(
    started and " (started for this check)" or "", status.version or "?", status.documents or 0,
    status.libraries or 0, status.indexing and ", indexing" or ""))
  health.info("index: " .. tostring(status.data_dir))
  if status.libraries == 0 then
    health.warn("no libraries", { "add some with setup({ libraries = { { name = ..., paths = { ... } } } })" })
  end

  health.start("linkly: MCP server (for AI agents)")
  local mcp = linkly.config.mcp or {}
  local init_mcp = (linkly.config.init_options or {}).mcp or {}
  if mcp.enabled == false or init_mcp.enabled == false then
    health.info("disabled (mcp.enabled = false)")
    return
  end
  if not status.mcp_url and not status.mcp_error then
    -- the MCP server starts in the background once the index is open
    vim.wait(MCP_WAIT_MS, function()
      status = linkly.request_sync("linkly/status", vim.empty_dict()) or status
      return status.mcp_url ~= nil or status.mcp_error ~= nil
    end, 200)
  end
  if status.mcp_url then
    health.ok("MCP address: " .. status.mcp_url)
  elseif status.mcp_error then
    health.warn("the MCP server did not start: " .. status.mcp_error, { "set mcp = { port = ... } to another port" })
  else
    health.warn("no MCP address yet (still starting?)")
  end
end

return M
