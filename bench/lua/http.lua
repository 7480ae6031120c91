-- A plain GET (URL and headers come from wrk's command line); reports through report.lua.
dofile(os.getenv("BENCH_LUA_DIR") .. "/report.lua")

function done(summary, latency, requests)
   bench_report(summary, latency, {})
end
