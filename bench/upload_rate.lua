-- wrk script of bench/upload_rate.py: every wrk thread PUTs its own share of the wheels named in
-- a manifest, each exactly once, on its kept-alive connections, and stops when all its uploads
-- are answered. Arguments (after wrk's `--`): manifest path, upload token, wrk thread count.
--
-- Output on stdout, for the driver: one "thread-finished" line per thread as it ends (the
-- driver then stops wrk, whose -d is only a guard), and from done() one JSON object per
-- thread: {"thread":i,"started":s,"finished":s,"uploads":n,"statuses":{"201":n,...}}, with
-- CLOCK_MONOTONIC seconds, so the driver measures first request to last answer itself.

local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } upload_rate_timespec;
int clock_gettime(int clock, upload_rate_timespec *out);
]]
local function monotonic()
  local now = ffi.new("upload_rate_timespec")
  ffi.C.clock_gettime(1, now)  -- CLOCK_MONOTONIC
  return tonumber(now.tv_sec) + tonumber(now.tv_nsec) * 1e-9
end

local threads = {}

function setup(thread)
  thread:set("thread_index", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  local manifest, token, thread_count = args[1], args[2], tonumber(args[3])
  uploads = {}
  local line_number = 0
  for path in io.lines(manifest) do
    if line_number % thread_count == thread_index then
      local file = assert(io.open(path, "rb"))
      local body = file:read("*a")
      file:close()
      -- Formatted once here, so Lua stays out of the measured loop.
      uploads[#uploads + 1] = wrk.format("PUT", "/api/v1/files/" .. path:match("([^/]+)$"),
        { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/octet-stream" }, body)
    end
    line_number = line_number + 1
  end
  next_upload = 1
  -- wrk calls request() once on the first thread before it runs, to check the request's form;
  -- that call must not use up an upload.
  checking = thread_index == 0
  answered = 0
  statuses = {}
  -- Connections that have nothing left to send wait on this, slowly, until the thread stops.
  filler = wrk.format("GET", "/healthz")
end

function delay()
  if next_upload > #uploads then return 1000 end
  return 0
end

function request()
  if checking then
    checking = false
    return filler
  end
  if next_upload > #uploads then return filler end
  if started == nil then started = monotonic() end
  local upload = uploads[next_upload]
  next_upload = next_upload + 1
  return upload
end

function response(status, headers, body)
  if body:sub(1, 15) == "200 OK: serving" then return end  -- a filler's answer
  answered = answered + 1
  local key = tostring(status)
  statuses[key] = (statuses[key] or 0) + 1
  if answered == #uploads then
    finished = monotonic()
    io.write("thread-finished\n")
    io.stdout:flush()
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  for index, thread in ipairs(threads) do
    local parts = {}
    for status, count in pairs(thread:get("statuses") or {}) do
      parts[#parts + 1] = string.format('"%s":%d', status, count)
    end
    io.write(string.format('{"thread":%d,"started":%.6f,"finished":%.6f,"uploads":%d,"statuses":{%s}}\n',
      index - 1, thread:get("started") or 0, thread:get("finished") or 0, thread:get("answered") or 0,
      table.concat(parts, ",")))
  end
  io.write(string.format('{"latency_p50_us":%d,"latency_p99_us":%d,"latency_max_us":%d}\n',
    latency:percentile(50), latency:percentile(99), latency.max))
end
