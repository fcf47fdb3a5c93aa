-- Read-only text views: `linkly://doc/<doc_id>` buffers, and PDF, EPUB, DOCX and
-- PPTX files opened as the text the index holds for them (`linkly/read`).
-- The client is attached to the view so document symbols (and outline plugins) work.
--
-- A file opened before the server has indexed it (just after start-up) shows a
-- notice, and fills in once indexed: the view polls the server without blocking
-- the editor, and asks for the file to be indexed once the first run is over.
-- `User LinklyViewReady` is fired (with the buffer number as data) when a view is filled.

local linkly = require("linkly")

local M = {}

local NOT_INDEXED = "is not an indexed document"
local POLL_MS = 300

function M.uri(doc_id)
  return "linkly://doc/" .. doc_id
end

--- The lines `set_lines` puts in, for the `:lockmarks` command that puts them.
local replacing

function M._replace_lines(bufnr)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, replacing)
end

local function set_lines(bufnr, lines)
  local bo = vim.bo[bufnr]
  bo.modifiable = true
  bo.readonly = false
  local undolevels = bo.undolevels
  bo.undolevels = -1
  -- under :lockmarks: a quickfix entry (backlinks, related, workspace symbols) into a view not yet
  -- loaded names its line in the document; replacing the one-line placeholder moved it down by the
  -- number of lines put in, so the view opened at its last line
  replacing = lines
  vim.cmd(("lockmarks lua require('linkly.virtual')._replace_lines(%d)"):format(bufnr))
  replacing = nil
  bo.undolevels = undolevels
  bo.buftype = "nofile"
  bo.swapfile = false
  bo.modified = false
  bo.modifiable = false
  bo.readonly = true
end

local function read_params(name)
  if name:match("^linkly:") then
    return { uri = name }
  end
  return { path = vim.fn.fnamemodify(name, ":p") }
end

local function fill(bufnr, answer)
  vim.b[bufnr].linkly_pending = nil
  vim.b[bufnr].linkly_error = nil
  vim.b[bufnr].linkly_doc_id = answer.doc_id
  vim.b[bufnr].linkly_title = answer.title
  vim.b[bufnr].linkly_path = answer.path
  vim.b[bufnr].linkly_doc_type = answer.doc_type
  -- keep the cursor where it is when a pending view fills in under it
  local windows = vim.fn.win_findbuf(bufnr)
  local cursors = {}
  for _, window in ipairs(windows) do
    cursors[window] = vim.api.nvim_win_get_cursor(window)
  end
  set_lines(bufnr, vim.split(answer.text or "", "\n", { plain = true }))
  for window, cursor in pairs(cursors) do
    local last = vim.api.nvim_buf_line_count(bufnr)
    pcall(vim.api.nvim_win_set_cursor, window, { math.min(cursor[1], last), cursor[2] })
  end
  vim.bo[bufnr].filetype = linkly.config.view_filetype
  if answer.text_missing_reason then
    linkly.notify(("%s has no text: %s"):format(answer.title or answer.path, answer.text_missing_reason),
      vim.log.levels.WARN)
  end
  linkly.attach(bufnr)
  vim.api.nvim_exec_autocmds("User", { pattern = "LinklyViewReady", modeline = false, data = { buf = bufnr } })
end

local function fail(bufnr, err)
  vim.b[bufnr].linkly_pending = nil
  vim.b[bufnr].linkly_error = err
  set_lines(bufnr, { "linkly: " .. tostring(err) })
  vim.bo[bufnr].filetype = linkly.config.view_filetype
end

--- Poll until the document is indexed (asking for it to be indexed once the first run is over).
local function wait_for_index(bufnr, params, token)
  local deadline = vim.uv.now() + linkly.config.index_timeout
  local asked = false
  local function tick()
    if not vim.api.nvim_buf_is_valid(bufnr) or vim.b[bufnr].linkly_pending ~= token then
      return
    end
    linkly.request("linkly/read", params, function(err, answer)
      if not vim.api.nvim_buf_is_valid(bufnr) or vim.b[bufnr].linkly_pending ~= token then
        return
      end
      if answer then
        fill(bufnr, answer)
        return
      end
      if not (err and err:find(NOT_INDEXED, 1, true)) or vim.uv.now() > deadline then
        fail(bufnr, err or "not indexed")
        return
      end
      linkly.request("linkly/status", vim.empty_dict(), function(_, status)
        if status and status.writer and not status.indexing and not asked and params.path then
          -- the first run is over and the file is still missing: index just this file
          asked = true
          linkly.execute("linkly.reindex", { paths = { params.path } }, function(index_error)
            if index_error then
              fail(bufnr, index_error)
            else
              vim.defer_fn(tick, 0)
            end
          end)
        elseif asked and status and status.writer and not status.indexing then
          fail(bufnr, err)
        elseif status and status.state ~= "starting" and not status.writer and not status.indexing then
          -- another linkly process keeps this index: it indexes the file if it is in a library
          fail(bufnr, err .. " (another linkly process keeps this index current)")
        else
          vim.defer_fn(tick, POLL_MS)
        end
      end)
    end)
  end
  vim.defer_fn(tick, POLL_MS)
end

--- Fill buffer `bufnr` (named `name`: a `linkly:` URI or a file path) with the document's view.
--- Returns true when filled now, false when it fills later (not indexed yet) or failed.
function M.read(bufnr, name)
  local params = read_params(name)
  local answer, err = linkly.request_sync("linkly/read", params)
  if answer then
    fill(bufnr, answer)
    return true
  end
  if err and err:find(NOT_INDEXED, 1, true) then
    local token = ("%s#%d"):format(name, vim.uv.hrtime())
    vim.b[bufnr].linkly_pending = token
    set_lines(bufnr, { "linkly: " .. err, "", "Waiting for the server to index it; this view fills in when it is." })
    vim.bo[bufnr].filetype = linkly.config.view_filetype
    wait_for_index(bufnr, params, token)
    return false
  end
  fail(bufnr, err)
  return false
end

--- Open the view of `doc_id` in the current window, cursor on `line` (1-based) when given.
function M.open(doc_id, line)
  vim.cmd.edit(vim.fn.fnameescape(M.uri(doc_id)))
  if line then
    local last = vim.api.nvim_buf_line_count(0)
    vim.api.nvim_win_set_cursor(0, { math.min(math.max(line, 1), last), 0 })
  end
end

return M
