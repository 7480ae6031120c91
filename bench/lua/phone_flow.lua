-- The full phone sign-in over the REST API, one flow after another on each connection:
--   POST accounts:sendVerificationCode {phoneNumber}  -> sessionInfo
--   POST accounts:signInWithPhoneNumber {sessionInfo, code} -> idToken
-- Run with as many wrk threads as connections (-t N -c N): each thread then has exactly one
-- connection, so its requests are strictly sequential and it can own one test number
-- (a second send for a number with a pending code would return the same sessionInfo).
-- Each flow presents its own client address (X-Bench-Client, mapped to REMOTE_ADDR by the
-- benchmark's nginx) so per-address limits see many users, as in real traffic.
--
-- Environment: BENCH_LUA_DIR, BENCH_API_KEY, BENCH_NUMBERS ("+15550100:123456,+1…:…").
dofile(os.getenv("BENCH_LUA_DIR") .. "/flow.lua")

function init(args)
   local numbers = {}
   for num, code in string.gmatch(os.getenv("BENCH_NUMBERS") or "", "([^:,]+):(%d+)") do
      table.insert(numbers, {num, code})
   end
   local mine = numbers[((id - 1) % #numbers) + 1]
   number, code = mine[1], mine[2]
   local key = os.getenv("BENCH_API_KEY")
   send_path = "/identitytoolkit.googleapis.com/v1/accounts:sendVerificationCode?key=" .. key
   signin_path = "/identitytoolkit.googleapis.com/v1/accounts:signInWithPhoneNumber?key=" .. key
   session = nil
   seq = 0
   flows = 0
   failures = 0
   sends = 0
end

local function client_address()
   return string.format("10.%d.%d.%d", id % 256, math.floor(seq / 256) % 256, seq % 256)
end

function request()
   local headers = {["Content-Type"] = "application/json", ["X-Bench-Client"] = client_address()}
   if session then
      local body = '{"sessionInfo":"' .. session .. '","code":"' .. code .. '"}'
      return wrk.format("POST", signin_path, headers, body)
   end
   seq = seq + 1
   headers["X-Bench-Client"] = client_address()
   return wrk.format("POST", send_path, headers, '{"phoneNumber":"' .. number .. '"}')
end

function response(status, headers, body)
   if session then
      if status == 200 and string.find(body, '"idToken"', 1, true) then
         flows = flows + 1
      else
         failures = failures + 1
      end
      session = nil
   else
      sends = sends + 1
      if status == 200 then
         session = string.match(body, '"sessionInfo"%s*:%s*"([^"]+)"')
      end
      if not session then
         failures = failures + 1
      end
   end
end

function done(summary, latency, requests)
   flow_done(summary, latency, {flows = "flows", flow_failures = "failures", sends = "sends"})
end
