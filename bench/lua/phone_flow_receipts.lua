-- The phone flow of phone_flow.lua with one delivery receipt after each completed flow, on the
-- same connection: POST /__/auth/delivery/webhook reporting one seeded outbox message
-- `delivered`, as the gateway reports the message a flow would have sent (bench/receipts.py).
-- With BENCH_RECEIPTS_ONLY=1, every request is a receipt (the endpoint alone).
--
-- Environment: as phone_flow.lua, plus BENCH_RECEIPTS: a path prefix; thread N reads
-- "<prefix>-N.txt", one signed receipt a line: "<timestamp> <signature> <client> <JSON body>".
dofile(os.getenv("BENCH_LUA_DIR") .. "/phone_flow.lua")

local flow_init, flow_request, flow_response = init, request, response

function init(args)
   flow_init(args)
   pending = {}
   local f = io.open(os.getenv("BENCH_RECEIPTS") .. "-" .. id .. ".txt")
   if f then
      for line in f:lines() do table.insert(pending, line) end
      f:close()
   end
   only = os.getenv("BENCH_RECEIPTS_ONLY") == "1"
   next_receipt = 1
   receipt_due = only
   receipts = 0
   receipt_failures = 0
   receipts_missing = 0
end

function request()
   if receipt_due and next_receipt <= #pending then
      local ts, sig, client, body = string.match(pending[next_receipt], "^(%S+) (%S+) (%S+) (.*)$")
      return wrk.format("POST", "/__/auth/delivery/webhook", {["Content-Type"] = "application/json",
         ["X-Gatehouse-Timestamp"] = ts, ["X-Gatehouse-Signature"] = sig, ["X-Bench-Client"] = client}, body)
   end
   if only then
      -- Out of receipts: nothing more to measure (counted, so the run can be refused).
      receipts_missing = receipts_missing + 1
      return wrk.format("GET", "/__/auth/health")
   end
   receipt_due = false
   return flow_request()
end

function response(status, headers, body)
   if receipt_due and next_receipt <= #pending then
      next_receipt = next_receipt + 1
      if status == 200 then receipts = receipts + 1 else receipt_failures = receipt_failures + 1 end
      receipt_due = only
      return
   end
   if only then return end
   local before = flows
   flow_response(status, headers, body)
   if flows > before then
      if next_receipt <= #pending then receipt_due = true else receipts_missing = receipts_missing + 1 end
   end
end

function done(summary, latency, requests)
   flow_done(summary, latency, {flows = "flows", flow_failures = "failures", sends = "sends", receipts = "receipts",
                                receipt_failures = "receipt_failures", receipts_missing = "receipts_missing"})
end
