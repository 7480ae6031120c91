-- Token refresh over the Secure Token API, one refresh after another on each connection:
--   POST /securetoken.googleapis.com/v1/token?key=…  grant_type=refresh_token&refresh_token=…
--        -> id_token, refresh_token (the successor)
-- Gatehouse rotates refresh tokens: each answer carries the token's successor, and the token
-- just used must not be presented again (after the grace window, or once its successor has been
-- used, a reuse revokes the whole family). So, as in phone_flow.lua, run with as many wrk threads
-- as connections (-t N -c N): each thread then has exactly one connection, its requests are
-- strictly sequential, and it owns one token family, replacing its token with the successor of
-- every 200 answer. A request without an answer (a socket error) keeps the token: a retry inside
-- the grace window is answered with the same successor.
-- The tokens are minted afresh for every wrk run (bench/scenarios/refresh.py): a run that ends
-- with a request in flight has lost that token's successor.
-- Each thread presents its own client address (X-Bench-Client), one user per address.
--
-- Environment: BENCH_LUA_DIR, BENCH_API_KEY, BENCH_TOKENS ("ghrt1.…,ghrt1.…", one per thread).
dofile(os.getenv("BENCH_LUA_DIR") .. "/flow.lua")

function init(args)
   local tokens = {}
   for t in string.gmatch(os.getenv("BENCH_TOKENS") or "", "[^,]+") do
      table.insert(tokens, t)
   end
   if #tokens < id then
      -- Two threads sharing a family would present each other's rotated tokens.
      error("refresh.lua: thread " .. id .. " has no refresh token of its own (" .. #tokens .. " in BENCH_TOKENS)")
   end
   token = tokens[id]
   path = "/securetoken.googleapis.com/v1/token?key=" .. os.getenv("BENCH_API_KEY")
   req_headers = {["Content-Type"] = "application/x-www-form-urlencoded",
              ["X-Bench-Client"] = string.format("10.%d.%d.1", 200 + math.floor(id / 256) % 56, id % 256)}
   refreshes = 0
   failures = 0
end

function request()
   -- Rotated tokens are base64url after a dotted prefix: nothing to escape in a form body.
   return wrk.format("POST", path, req_headers, "grant_type=refresh_token&refresh_token=" .. token)
end

function response(status, headers, body)
   local next_token = status == 200 and string.match(body, '"refresh_token"%s*:%s*"([^"]+)"')
   if next_token and string.find(body, '"id_token"', 1, true) then
      token = next_token
      refreshes = refreshes + 1
   else
      failures = failures + 1
   end
end

function done(summary, latency, requests)
   -- flows / flow_failures: the names the harness turns into flows/s and its failure check.
   flow_done(summary, latency, {flows = "refreshes", flow_failures = "failures", refreshes = "refreshes"})
end
