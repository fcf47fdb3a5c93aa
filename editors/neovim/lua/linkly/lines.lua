-- From the index's canonical lines to the lines of the file a buffer shows.
--
-- The server's line numbers (search `line`, grep matches, outline ranges) count
-- the document's canonical lines: the text view's lines. A Markdown or text
-- file is opened as itself, and its extraction drops front matter and markup
-- and folds blank runs, so a canonical line is found again in the file by its
-- text, its neighbours breaking ties (as the server does for workspace symbols).

local M = {}

local NEIGHBOURS = 3

--- Words only, lower-cased, without HTML tags or Markdown markup: what survives extraction.
function M.normalise(text)
  if text:find("[<&]") then
    text = text:gsub("<[^>]*>", " "):gsub("&%a+;", " "):gsub("&#%d+;", " ")
  end
  return M.normalise_raw(text)
end

--- Words only, lower-cased, tags kept (their attributes may be what was extracted: a caption).
function M.normalise_raw(text)
  return vim.trim((text:lower():gsub("[^%w\128-\255]+", " ")))
end

function M.normalise_all(lines)
  local out = {}
  for i, line in ipairs(lines) do
    out[i] = M.normalise(line)
  end
  return out
end

--- A buffer's lines, ready for `source_line`.
function M.prepare(lines)
  return { norm = M.normalise_all(lines), lines = lines }
end

local function raw_lines(source)
  if not source.raw then
    source.raw = {}
    for i, line in ipairs(source.lines) do
      source.raw[i] = M.normalise_raw(line)
    end
  end
  return source.raw
end

--- The file line (1-based) holding canonical line `k` (an index into `canonical`), or nil.
local function locate(canonical, first, source, k)
  local target = M.normalise(canonical[k])
  if target == "" then
    return nil
  end
  local near = {}
  for n = math.max(k - NEIGHBOURS, 1), math.min(k + NEIGHBOURS, #canonical) do
    if n ~= k then
      local text = M.normalise(canonical[n])
      if text ~= "" then
        table.insert(near, text)
      end
    end
  end
  local norm = source.norm
  local canonical_line = first + k - 1
  local best, best_matched, best_distance
  local function consider(texts)
    for j, text in ipairs(texts) do
      if text:find(target, 1, true) then
        local matched = 0
        for _, neighbour in ipairs(near) do
          for w = math.max(j - 2 * NEIGHBOURS, 1), math.min(j + 2 * NEIGHBOURS, #norm) do
            if norm[w]:find(neighbour, 1, true) then
              matched = matched + 1
              break
            end
          end
        end
        local distance = math.abs(j - canonical_line)
        if not best or matched > best_matched or (matched == best_matched and distance < best_distance) then
          best, best_matched, best_distance = j, matched, distance
        end
      end
    end
  end
  consider(norm)
  if not best and source.lines then
    consider(raw_lines(source))
  end
  return best
end

local REACH = 10

--- The 1-based line of the file holding canonical line `line`.
--- `canonical`: canonical lines `first`, `first + 1`, ... (a window around `line`, or all of them);
--- `source`: the file's lines from `prepare`. A line whose text is not found in the file is placed
--- after the nearest one that is; falls back to `line` when none is.
function M.source_line(canonical, first, source, line)
  if #canonical == 0 or #source.norm == 0 then
    return line
  end
  local index = math.min(math.max(line - first + 1, 1), #canonical)
  local last = #source.norm
  local anchor = index
  while anchor > 1 and M.normalise(canonical[anchor]) == "" do
    anchor = anchor - 1
  end
  local found = locate(canonical, first, source, anchor)
  if found then
    return math.min(found + (index - anchor), last)
  end
  for distance = 1, REACH do
    for _, k in ipairs({ anchor - distance, anchor + distance }) do
      if k >= 1 and k <= #canonical then
        found = locate(canonical, first, source, k)
        if found then
          return math.min(math.max(found + (index - k), 1), last)
        end
      end
    end
  end
  return line
end

--- The query's words, lower-cased (for finding the line that contains them).
function M.query_words(query)
  local words = {}
  for word in (query or ""):lower():gmatch("[%w\128-\255]+") do
    if #word >= 2 and word ~= "and" and word ~= "or" and word ~= "not" then
      table.insert(words, word)
    end
  end
  return words
end

local function count_words(text, words)
  local lowered = text:lower()
  local count = 0
  for _, word in ipairs(words) do
    if lowered:find(word, 1, true) then
      count = count + 1
    end
  end
  return count
end

--- Keep `line` when it holds a query word; else the line of `first`..`last` holding the most,
--- the nearest to `line` first. `lines` are the buffer's lines.
function M.best_line(lines, line, first, last, words)
  line = math.min(math.max(line, 1), math.max(#lines, 1))
  if #words == 0 or #lines == 0 or count_words(lines[line], words) > 0 then
    return line
  end
  local best, best_count, best_distance = line, 0, math.huge
  for j = math.max(first, 1), math.min(last, #lines) do
    local count = count_words(lines[j], words)
    local distance = math.abs(j - line)
    if count > best_count or (count == best_count and count > 0 and distance < best_distance) then
      best, best_count, best_distance = j, count, distance
    end
  end
  return best
end

return M
