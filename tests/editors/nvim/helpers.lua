-- Shared by the Neovim test scripts: set the plugin up as a user would, run a test body,
-- report to pytest (a JSON file) and exit with 0 (passed) or 1 (failed, through :cquit).
--
-- Environment (set by tests/editors/test_neovim.py):
--   LINKLY_TEST_SERVER_CMD  JSON list: the server command (the venv's python -m linkly_ls)
--   LINKLY_TEST_LIBRARY     folder holding `notes/` and `papers/` (copies of the fixtures)
--   LINKLY_TEST_REPORT      where to write the JSON report
--   LINKLY_DATA_DIR         the index (the server reads it; no dataDir setting is sent)

local H = {}

H.report = {}
H.notifications = {}
local started = vim.uv.hrtime()

function H.log(...)
  local parts = {}
  for i = 1, select("#", ...) do
    local value = select(i, ...)
    parts[#parts + 1] = type(value) == "string" and value or vim.inspect(value)
  end
  io.stdout:write(("[%6.2fs] %s\n"):format((vim.uv.hrtime() - started) / 1e9, table.concat(parts, " ")))
end

function H.env(name)
  local value = os.getenv(name)
  assert(value and value ~= "", "environment variable " .. name .. " is not set (run this through pytest)")
  return value
end

function H.check(condition, message, ...)
  if not condition then
    local details = select("#", ...) > 0 and (": " .. vim.inspect({ ... })) or ""
    error(message .. details, 2)
  end
end

function H.eq(actual, expected, message)
  if not vim.deep_equal(actual, expected) then
    error(("%s: expected %s, got %s"):format(message, vim.inspect(expected), vim.inspect(actual)), 2)
  end
end

--- require("linkly").setup() with the test's server and libraries; MCP on any free port.
function H.setup(extra)
  local library = H.env("LINKLY_TEST_LIBRARY")
  vim.notify = function(message, level)
    table.insert(H.notifications, { message = message, level = level or vim.log.levels.INFO })
    H.log(("notify[%s] %s"):format(level or vim.log.levels.INFO, message))
  end
  local options = {
    cmd = vim.json.decode(H.env("LINKLY_TEST_SERVER_CMD")),
    libraries = {
      { name = "notes", paths = { library .. "/notes" }, description = "Rust book chapters" },
      { name = "papers", paths = { library .. "/papers" }, description = "PDF papers" },
    },
    embedding_model = "none",
    mcp = { enabled = true, port = 0 },
    root_dir = false,
    picker = "select",
  }
  require("linkly").setup(vim.tbl_extend("force", options, extra or {}))
  return library
end

--- Wait until the server has indexed the libraries (it indexes in the background after start).
function H.wait_indexed(timeout_ms)
  local linkly = require("linkly")
  local status
  local done = vim.wait(timeout_ms or 60000, function()
    status = linkly.request_sync("linkly/status", vim.empty_dict())
    return status ~= nil and status.writer and not status.indexing
  end, 100)
  H.check(done, "the server did not finish indexing", status)
  return status
end

function H.wait_for(condition, message, timeout_ms)
  H.check(vim.wait(timeout_ms or 60000, condition, 20), "timed out waiting: " .. message)
end

--- Stop the client and wait for the server to exit, so the next run finds the index closed.
local function stop_client()
  local ok, linkly = pcall(require, "linkly")
  local client = ok and linkly.get_client()
  if not client then
    return
  end
  linkly.method(client, "stop")
  vim.wait(8000, function()
    return linkly.method(client, "is_stopped")
  end, 50)
end

local function write_report(path)
  local file = assert(io.open(path, "w"))
  file:write(vim.json.encode(H.report))
  file:close()
end

--- Run `body`; exit 0 when it passes, 1 (with the error and a traceback on stdout) when it fails.
function H.run(body)
  local ok, err = xpcall(body, debug.traceback)
  if ok then
    for _, note in ipairs(H.notifications) do
      if note.level >= vim.log.levels.ERROR then
        ok, err = false, "the plugin reported an error: " .. note.message
      end
    end
  end
  H.report.passed = ok
  H.report.error = not ok and tostring(err) or nil
  H.report.seconds = (vim.uv.hrtime() - started) / 1e9
  pcall(write_report, H.env("LINKLY_TEST_REPORT"))
  pcall(stop_client)
  if ok then
    H.log("PASSED")
    vim.cmd("qall!")
  else
    io.stdout:write("FAILED: " .. tostring(err) .. "\n")
    io.stdout:flush()
    vim.cmd("cquit 1")
  end
end

--- The text of line `lnum` (1-based) of buffer `bufnr`.
function H.line(bufnr, lnum)
  return vim.api.nvim_buf_get_lines(bufnr, lnum - 1, lnum, false)[1]
end

function H.flatten(symbols, depth, out)
  out = out or {}
  for _, symbol in ipairs(symbols or {}) do
    table.insert(out, { name = symbol.name, depth = depth or 0, line = symbol.selectionRange.start.line + 1 })
    H.flatten(symbol.children, (depth or 0) + 1, out)
  end
  return out
end

--- textDocument/documentSymbol for buffer `bufnr`, through vim.lsp (as outline plugins ask).
function H.document_symbols(bufnr)
  local answers = vim.lsp.buf_request_sync(bufnr, "textDocument/documentSymbol",
    { textDocument = vim.lsp.util.make_text_document_params(bufnr) }, 10000)
  H.check(answers ~= nil and next(answers) ~= nil, "no answer to textDocument/documentSymbol")
  for _, answer in pairs(answers) do
    H.check(answer.err == nil, "textDocument/documentSymbol failed", answer.err)
    return answer.result or {}
  end
end

return H
