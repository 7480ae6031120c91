-- Shared by the flow scripts (phone_flow, mfa_flow, refresh), which run one wrk thread per
-- connection: each thread gets a number (`id`, from 1) and is remembered, so that `flow_done`
-- can sum the counters every thread kept and report them (report.lua).
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

local threads = {}

function setup(thread)
   table.insert(threads, thread)
   thread:set("id", #threads)
end

-- fields: report name -> the thread variable summed into it.
function flow_done(summary, latency, fields)
   local sums = {}
   for name, var in pairs(fields) do
      sums[name] = 0
      for _, t in ipairs(threads) do sums[name] = sums[name] + (t:get(var) or 0) end
   end
   bench_report(summary, latency, sums)
end
