-- linkly.nvim: the Neovim client of linkly-ls, a local-document knowledge server.
--
-- One language server serves the whole Neovim session: it is started on the
-- first Markdown or text buffer, `linkly:` view or `:Linkly*` command, and
-- every later buffer attaches to the same client. Settings are sent as
-- `initializationOptions` (libraries, dataDir, embeddingModel, mcp).
--
-- Supported: Neovim 0.10 and newer (tested on 0.11.4).

local M = {}

M.name = "linkly"

--- Document types whose indexed lines are the file's own lines (opened as files);
--- every other type is opened through its read-only `linkly://doc/<doc_id>` view.
M.text_doc_types = { md = true, mdx = true, txt = true, html = true }

local function default_cmd()
  if vim.fn.executable("linkly-ls") == 1 then
    return { "linkly-ls" }
  end
  return { "python3", "-m", "linkly_ls" }
end

M.defaults = {
  --- the server command; default `linkly-ls`, or `python3 -m linkly_ls` when it is not on PATH
  cmd = nil,
  --- extra environment for the server process
  cmd_env = nil,
  --- libraries: { { name = "notes", paths = { "~/notes" }, description = "", include = {}, exclude = {} } }
  libraries = nil,
  --- where the index lives (default: the server's, `$LINKLY_DATA_DIR` or ~/.local/share/linkly-ls)
  data_dir = nil,
  --- the embedding model for hybrid search; "none" for keyword search only
  embedding_model = nil,
  --- the MCP server for AI agents, run by the language server: { enabled = true, port = 60606 }
  mcp = nil,
  --- any other initializationOptions, merged last
  init_options = nil,
  --- buffers of these filetypes get the client (document symbols, diagnostics); `.mdx` files, which
  --- Neovim names no filetype, are given `mdx` by setup()
  filetypes = { "markdown", "mdx", "text" },
  --- the workspace folder (indexed as a library by the server): a path, a function(bufnr) -> path,
  --- or false for none (only `libraries`). Default: vim.fs.root(buffer, root_markers), else the cwd.
  root_dir = nil,
  root_markers = { ".git" },
  --- files opened as their read-only text view instead of their bytes
  view_extensions = { "pdf", "epub", "docx", "docm", "dotx", "dotm", "pptx", "pptm", "ppsx", "ppsm", "potx", "potm" },
  --- filetype of `linkly:` views
  view_filetype = "linkly",
  --- "auto" (Telescope when installed, else vim.ui.select), "telescope" or "select"
  picker = "auto",
  search_limit = 20,
  --- milliseconds to wait for an answer (start-up, reading a document)
  timeout = 15000,
  --- milliseconds to wait for indexing a file that is opened before it was indexed
  index_timeout = 120000,
  --- on_attach(client, bufnr) and capabilities, passed to vim.lsp
  on_attach = nil,
  capabilities = nil,
}

M.config = vim.deepcopy(M.defaults)

local has_011 = vim.fn.has("nvim-0.11") == 1

--- Client methods: `client:request(...)` on 0.11, `client.request(...)` on 0.10.
local function method(client, name, ...)
  if has_011 then
    return client[name](client, ...)
  end
  return client[name](...)
end
M.method = method

function M.notify(message, level)
  vim.notify("linkly: " .. message, level or vim.log.levels.INFO, { title = "linkly" })
end

function M.error(message)
  M.notify(message, vim.log.levels.ERROR)
end

--- The initializationOptions built from the setup options.
function M.init_options()
  local config = M.config
  local options = {}
  if config.libraries then
    local libraries = {}
    for _, library in ipairs(config.libraries) do
      local entry = vim.deepcopy(library)
      if type(entry.paths) == "string" then
        entry.paths = { entry.paths }
      end
      for i, path in ipairs(entry.paths or {}) do
        entry.paths[i] = vim.fs.normalize(path)
      end
      table.insert(libraries, entry)
    end
    options.libraries = libraries
  end
  if config.data_dir then
    options.dataDir = vim.fs.normalize(config.data_dir)
  end
  if config.embedding_model then
    options.embeddingModel = config.embedding_model
  end
  if config.mcp then
    options.mcp = config.mcp
  end
  if config.init_options then
    options = vim.tbl_deep_extend("force", options, config.init_options)
  end
  if vim.tbl_isempty(options) then
    return vim.empty_dict()
  end
  return options
end

function M.command()
  return M.config.cmd or default_cmd()
end

local function root_for(bufnr)
  local root = M.config.root_dir
  if root == false then
    return nil
  end
  if type(root) == "function" then
    return root(bufnr)
  end
  if type(root) == "string" then
    return vim.fs.normalize(root)
  end
  local found
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) and vim.bo[bufnr].buftype == "" then
    found = vim.fs.root(bufnr, M.config.root_markers)
  end
  return found or vim.fn.getcwd()
end

function M.client_config(bufnr)
  local config = M.config
  return {
    name = M.name,
    cmd = M.command(),
    cmd_env = config.cmd_env,
    root_dir = root_for(bufnr),
    init_options = M.init_options(),
    capabilities = config.capabilities,
    on_attach = config.on_attach,
  }
end

--- The running client, if any.
function M.get_client()
  for _, client in ipairs(vim.lsp.get_clients({ name = M.name })) do
    if not method(client, "is_stopped") then
      return client
    end
  end
  return nil
end

--- The session's client, started (without attaching a buffer) when there is none.
--- With `wait`, returns only once it is initialized (nil and a message on failure).
function M.ensure_client(bufnr, wait)
  local client = M.get_client()
  if not client then
    local config = M.client_config(bufnr)
    local ok, id
    if has_011 then
      ok, id = pcall(vim.lsp.start, config, { attach = false })
    else
      ok, id = pcall(vim.lsp.start_client, config)
    end
    if not ok or not id then
      return nil, ("could not start the language server %s: %s"):format(
        table.concat(config.cmd, " "),
        ok and "see :LspLog" or tostring(id)
      )
    end
    client = vim.lsp.get_client_by_id(id)
    if not client then
      return nil, "the language server exited at once: " .. table.concat(config.cmd, " ") .. " (see :LspLog)"
    end
  end
  if wait and not client.initialized then
    vim.wait(M.config.timeout, function()
      return client.initialized or method(client, "is_stopped")
    end, 20)
    if not client.initialized then
      return nil, "the language server did not start (see :LspLog and :checkhealth linkly)"
    end
  end
  return client
end

--- Attach a buffer to the session's client (starting it when needed).
function M.attach(bufnr)
  bufnr = bufnr == 0 and vim.api.nvim_get_current_buf() or bufnr
  local client, err = M.ensure_client(bufnr, false)
  if not client then
    M.error(err)
    return nil
  end
  if not vim.lsp.buf_is_attached(bufnr, client.id) then
    vim.lsp.buf_attach_client(bufnr, client.id)
  end
  return client
end

local function error_text(err)
  if type(err) == "table" then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end
M.error_text = error_text

--- A request answered synchronously: result, or nil and an error message.
function M.request_sync(request, params, timeout)
  local client, err = M.ensure_client(nil, true)
  if not client then
    return nil, err
  end
  local answer, reason = method(client, "request_sync", request, params, timeout or M.config.timeout)
  if not answer then
    return nil, ("%s: %s"):format(request, reason or "no answer")
  end
  if answer.err then
    return nil, error_text(answer.err)
  end
  return answer.result
end

--- A request answered asynchronously: callback(err_message, result).
function M.request(request, params, callback)
  local client, err = M.ensure_client(nil, true)
  if not client then
    callback(err, nil)
    return
  end
  local ok = method(client, "request", request, params, function(error, result)
    callback(error and error_text(error) or nil, result)
  end)
  if not ok then
    callback("the language server has stopped", nil)
  end
end

local function command_params(command, argument)
  if argument == nil or vim.tbl_isempty(argument) then
    argument = vim.empty_dict()
  end
  return { command = command, arguments = { argument } }
end

--- Run a `workspace/executeCommand` command (`linkly.search`, ...) with one dict argument.
function M.execute(command, argument, callback)
  M.request("workspace/executeCommand", command_params(command, argument), callback)
end

function M.execute_sync(command, argument, timeout)
  return M.request_sync("workspace/executeCommand", command_params(command, argument), timeout)
end

local function list(value)
  local set = {}
  for _, item in ipairs(value or {}) do
    set[item] = true
  end
  return set
end

--- Neovim's zip plugin reads *.docx, *.epub and *.pptx as archives: leave those to linkly.
local function release_from_zip_plugin(extensions)
  local ours = list(vim.tbl_map(function(ext)
    return "*." .. ext
  end, extensions))
  if vim.g.loaded_zipPlugin == nil then
    local current = vim.g.zipPlugin_ext
      or "*.aar,*.apk,*.celzip,*.crtx,*.docm,*.docx,*.dotm,*.dotx,*.ear,*.epub,*.gcsx,*.glox,*.gqsx,*.ja,"
        .. "*.jar,*.kmz,*.odb,*.odc,*.odf,*.odg,*.odi,*.odm,*.odp,*.ods,*.odt,*.otc,*.otf,*.otg,*.oth,*.oti,"
        .. "*.otp,*.ots,*.ott,*.oxt,*.potm,*.potx,*.ppam,*.ppsm,*.ppsx,*.pptm,*.pptx,*.sldx,*.thmx,*.vdw,"
        .. "*.war,*.wsz,*.xap,*.xlam,*.xlsb,*.xlsm,*.xlsx,*.xltm,*.xltx,*.xpi,*.zip"
    local kept = vim.tbl_filter(function(pattern)
      return not ours[pattern]
    end, vim.split(current, ",", { plain = true }))
    vim.g.zipPlugin_ext = table.concat(kept, ",")
    return
  end
  local ok, autocmds = pcall(vim.api.nvim_get_autocmds, { group = "zip", event = "BufReadCmd" })
  if not ok then
    return
  end
  for _, autocmd in ipairs(autocmds) do
    if ours[autocmd.pattern] then
      -- the zip plugin's autocommands are Vimscript ones, which have no id to delete by
      pcall(vim.api.nvim_clear_autocmds, { group = "zip", event = "BufReadCmd", pattern = autocmd.pattern })
    end
  end
end

function M.setup(options)
  if vim.fn.has("nvim-0.10") ~= 1 then
    vim.notify("linkly: Neovim 0.10 or newer is needed", vim.log.levels.ERROR)
    return
  end
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), options or {})
  -- lists replace, they do not merge index by index
  for _, key in ipairs({ "filetypes", "view_extensions", "root_markers", "libraries", "cmd" }) do
    if options and options[key] ~= nil then
      M.config[key] = options[key]
    end
  end

  local group = vim.api.nvim_create_augroup("linkly", { clear = true })
  if vim.filetype.match({ filename = "note.mdx" }) == nil then
    -- Neovim knows no filetype for MDX notes: without one they got no client, so no links or warnings
    vim.filetype.add({ extension = { mdx = "mdx" } })
  end
  if #M.config.filetypes > 0 then
    vim.api.nvim_create_autocmd("FileType", {
      group = group,
      pattern = M.config.filetypes,
      desc = "linkly: attach the language server",
      callback = function(args)
        if vim.bo[args.buf].buftype == "" then
          M.attach(args.buf)
        end
      end,
    })
  end
  local virtual = require("linkly.virtual")
  vim.api.nvim_create_autocmd("BufReadCmd", {
    group = group,
    pattern = "linkly://*",
    desc = "linkly: read-only text view of an indexed document",
    callback = function(args)
      virtual.read(args.buf, args.match)
    end,
  })
  if #M.config.view_extensions > 0 then
    release_from_zip_plugin(M.config.view_extensions)
    local patterns = vim.tbl_map(function(ext)
      return "*." .. ext
    end, M.config.view_extensions)
    vim.api.nvim_create_autocmd("BufReadCmd", {
      group = group,
      pattern = patterns,
      desc = "linkly: open the text view of a PDF, EPUB, DOCX or PPTX",
      callback = function(args)
        virtual.read(args.buf, vim.api.nvim_buf_get_name(args.buf))
      end,
    })
  end
  require("linkly.commands").create()
  require("linkly.links").create()

  -- buffers already open when setup runs (lazy loading): attach, or show the text view
  local extensions = list(M.config.view_extensions)
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buftype == "" then
      local name = vim.api.nvim_buf_get_name(bufnr)
      local extension = name:match("%.(%w+)$")
      if extension and extensions[extension:lower()] and not vim.bo[bufnr].modified then
        virtual.read(bufnr, name)
      elseif vim.tbl_contains(M.config.filetypes, vim.bo[bufnr].filetype) then
        M.attach(bufnr)
      end
    end
  end
end

return M
