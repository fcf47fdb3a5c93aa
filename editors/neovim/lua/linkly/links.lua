-- :LinklyRelated, :LinklyBacklinks and :LinklyMentions: the current document's neighbours in the
-- notes graph (the server's `linkly.related` and `linkly.links`) in the quickfix list, each entry
-- on the other document's line: the file itself for Markdown and text (their lines are the
-- index's), the `linkly://doc/<id>` text view for every other format.

local linkly = require("linkly")
local commands = require("linkly.commands")
local virtual = require("linkly.virtual")

local M = {}

local RELATED_LIMIT = 20
local LINKS_LIMIT = 200
--- formats whose indexed lines are the file's own lines
local FILE_LINES = { md = true, mdx = true, txt = true }

local function plain(snippet)
  return vim.trim(((snippet or ""):gsub("%*%*", ""):gsub("%s+", " ")))
end

--- The 1-based byte column quickfix wants for `column` (a 0-based character) on line `lnum` of a file.
local function byte_column(path, lnum, column)
  if column == 0 then
    return 1
  end
  local ok, lines = pcall(vim.fn.readfile, path, "", lnum)
  local line = ok and lines[lnum] or nil
  if line == nil then
    return column + 1
  end
  local byte_ok, byte = pcall(vim.str_byteindex, line, column)
  return (byte_ok and byte or column) + 1
end

--- A quickfix entry at `target`'s line (`column`: its 0-based character, when known).
function M.entry(target, text)
  local lnum, column = target.line or 1, target.column or 0
  if FILE_LINES[target.doc_type] and vim.fn.filereadable(target.path or "") == 1 then
    return { filename = target.path, lnum = lnum, col = byte_column(target.path, lnum, column), text = text }
  end
  return { filename = virtual.uri(target.doc_id), lnum = lnum, col = column + 1, text = text }
end

local function related_entry(hit)
  local place = commands.place_label(hit.doc_type, hit.page, hit.section)
  return M.entry(hit, ("%s · %.2f · %s%s │ %s"):format(hit.title or "?", hit.relevance or 0, hit.reason or "",
    place ~= "" and (" · " .. place) or "", plain(hit.snippet)))
end

local function backlink_entry(link)
  local written = (link.text ~= nil and link.text ~= "" and link.text ~= link.target)
      and ("“%s” → %s"):format(link.text, link.target) or link.target
  local heading = (link.heading ~= nil and link.heading ~= vim.NIL) and (" (§ " .. link.heading .. ")") or ""
  return M.entry(link, ("%s │ %s%s"):format(link.title or link.path, written, heading))
end

local function mention_entry(mention)
  return M.entry(mention, ("%s │ %s"):format(mention.title or mention.path, plain(mention.snippet)))
end

local plural = commands.plural

local function show(title, items, empty)
  vim.fn.setqflist({}, " ", { title = title, items = items, quickfixtextfunc = commands.qftext })
  if #items == 0 then
    linkly.notify(empty, vim.log.levels.WARN)
    return
  end
  vim.cmd("botright copen")
  vim.cmd("wincmd p")
end

--- A server command's answer, or nil once the error is shown.
local function call(command, argument)
  local result, err = linkly.execute_sync(command, argument)
  if not result then
    linkly.error(err)
  end
  return result
end

local function current()
  local document, err = commands.current_document(vim.api.nvim_get_current_buf())
  if not document then
    linkly.error(err)
  end
  return document
end

--- :[N]LinklyRelated[!]: documents related to the section at line N (default: the cursor's; on the
--- first line, or with !, the whole document).
function M.related(line, whole)
  local document = current()
  if not document then
    return
  end
  local argument = { doc_id = document.doc_id, limit = RELATED_LIMIT }
  if not whole and line and line > 1 then
    argument.line = line
  end
  local result = call("linkly.related", argument)
  if not result then
    return
  end
  local section = argument.line and (" (lines %d-%d)"):format(result.section.start_line, result.section.end_line) or ""
  local items = vim.tbl_map(related_entry, result.results or {})
  local title = ("linkly related to %s%s: %s"):format(result.title, section, plural(#items, "document", "documents"))
  show(title, items, ("nothing related to %s%s outside what it links to"):format(result.title, section))
  return result
end

--- `linkly.links` of the current document: its backlinks, and its unlinked mentions when asked.
local function links(mentions)
  local document = current()
  if not document then
    return nil
  end
  return call("linkly.links", { doc_id = document.doc_id, direction = "in", mentions = mentions, limit = LINKS_LIMIT })
end

--- :LinklyBacklinks: the links to the current document from every indexed document.
function M.backlinks()
  local result = links(false)
  if not result then
    return
  end
  local items = vim.tbl_map(backlink_entry, result.backlinks or {})
  local total = result.counts.backlinks or #items
  local title = ("linkly backlinks to %s: %s"):format(result.title, plural(total, "link", "links"))
  show(title, items, ("no document links to %s"):format(result.title))
  return result
end

--- :LinklyMentions: lines of other documents that name the current one without linking to it.
function M.mentions()
  local result = links(true)
  if not result then
    return
  end
  local items = vim.tbl_map(mention_entry, result.mentions or {})
  local names = table.concat(vim.tbl_map(function(name)
    return "“" .. name .. "”"
  end, result.mention_names or {}), " or ")
  local title = ("linkly unlinked mentions of %s: %s in %s"):format(names ~= "" and names or result.title,
    plural(result.counts.mentions or #items, "line", "lines"),
    plural(result.counts.mentioning_documents or 0, "document", "documents"))
  show(title, items, ("no unlinked mention of %s"):format(names ~= "" and names or result.title))
  return result
end

function M.create()
  local create = vim.api.nvim_create_user_command
  create("LinklyRelated", function(args)
    M.related(args.range > 0 and args.line1 or vim.fn.line("."), args.bang)
  end, { nargs = 0, range = true, bang = true,
    desc = "linkly: documents related to the section at the cursor (! the whole document) into the quickfix list" })
  create("LinklyBacklinks", function()
    M.backlinks()
  end, { nargs = 0, desc = "linkly: the links to the current document into the quickfix list" })
  create("LinklyMentions", function()
    M.mentions()
  end, { nargs = 0, desc = "linkly: unlinked mentions of the current document into the quickfix list" })
end

return M
