-- Shared by every benchmark script: one machine-readable line at the end of a wrk run.
-- bench_report(summary, latency, extra) prints
--   BENCH_RESULT {"requests":…,"duration_us":…,"p50_us":…,"p99_us":…,…}
-- where extra is a table of additional integer fields.
function bench_report(summary, latency, extra)
   local e = summary.errors
   local parts = {
      string.format('"requests":%d', summary.requests),
      string.format('"duration_us":%d', summary.duration),
      string.format('"bytes":%d', summary.bytes),
      string.format('"err_connect":%d', e.connect),
      string.format('"err_read":%d', e.read),
      string.format('"err_write":%d', e.write),
      string.format('"err_status":%d', e.status),
      string.format('"err_timeout":%d', e.timeout),
      string.format('"mean_us":%.1f', latency.mean),
      string.format('"max_us":%d', latency.max),
   }
   for _, p in ipairs({50, 90, 99}) do
      table.insert(parts, string.format('"p%d_us":%d', p, latency:percentile(p)))
   end
   for k, v in pairs(extra or {}) do
      table.insert(parts, string.format('"%s":%d', k, v))
   end
   io.write("BENCH_RESULT {" .. table.concat(parts, ",") .. "}\n")
end
