-- A sign-in with a phone second factor over the REST API, one flow after another on each
-- connection (one wrk thread per connection, each owning one user whose factor is a test number):
--   POST projects/{p}/accounts:sendOobCode {returnOobLink}  (admin) -> oobCode
--   POST accounts:signInWithEmailLink {email, oobCode}              -> mfaPendingCredential, mfaInfo
--   POST v2 accounts/mfaSignIn:start {credential, enrollment id}   -> sessionInfo
--   POST v2 accounts/mfaSignIn:finalize {credential, sessionInfo, code} -> idToken
-- Each flow presents its own client address (X-Bench-Client), as in phone_flow.lua.
--
-- Environment: BENCH_LUA_DIR, BENCH_API_KEY, BENCH_ADMIN, BENCH_PROJECT,
-- BENCH_USERS ("email:+1…:code,…").
dofile(os.getenv("BENCH_LUA_DIR") .. "/flow.lua")

function init(args)
   local users = {}
   for email, num, code in string.gmatch(os.getenv("BENCH_USERS") or "", "([^:,]+):([^:,]+):(%d+)") do
      table.insert(users, {email, code})
   end
   local mine = users[((id - 1) % #users) + 1]
   email, code = mine[1], mine[2]
   local key = os.getenv("BENCH_API_KEY")
   admin_auth = "Bearer " .. os.getenv("BENCH_ADMIN")
   link_path = "/identitytoolkit.googleapis.com/v1/projects/" .. os.getenv("BENCH_PROJECT") .. "/accounts:sendOobCode"
   signin_path = "/identitytoolkit.googleapis.com/v1/accounts:signInWithEmailLink?key=" .. key
   start_path = "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:start?key=" .. key
   finish_path = "/identitytoolkit.googleapis.com/v2/accounts/mfaSignIn:finalize?key=" .. key
   step = 1
   seq = 0
   flows = 0
   failures = 0
end

local function client_address()
   return string.format("10.%d.%d.%d", 100 + id % 100, math.floor(seq / 256) % 256, seq % 256)
end

function request()
   local h = {["Content-Type"] = "application/json", ["X-Bench-Client"] = client_address()}
   if step == 1 then
      seq = seq + 1
      h["X-Bench-Client"] = client_address()
      h["Authorization"] = admin_auth
      return wrk.format("POST", link_path, h,
         '{"requestType":"EMAIL_SIGNIN","email":"' .. email .. '","returnOobLink":true,"continueUrl":"https://127.0.0.1/"}')
   elseif step == 2 then
      return wrk.format("POST", signin_path, h, '{"email":"' .. email .. '","oobCode":"' .. oob .. '"}')
   elseif step == 3 then
      return wrk.format("POST", start_path, h, '{"mfaPendingCredential":"' .. pending .. '","mfaEnrollmentId":"' .. enrollment .. '"}')
   end
   return wrk.format("POST", finish_path, h, '{"mfaPendingCredential":"' .. pending
      .. '","phoneVerificationInfo":{"sessionInfo":"' .. session .. '","code":"' .. code .. '"}}')
end

local function fail()
   failures = failures + 1
   step = 1
end

function response(status, headers, body)
   if status ~= 200 then return fail() end
   if step == 1 then
      oob = string.match(body, '"oobCode"%s*:%s*"([^"]+)"')
      if not oob then return fail() end
      step = 2
   elseif step == 2 then
      pending = string.match(body, '"mfaPendingCredential"%s*:%s*"([^"]+)"')
      enrollment = string.match(body, '"mfaEnrollmentId"%s*:%s*"([^"]+)"')
      if not pending or not enrollment then return fail() end
      step = 3
   elseif step == 3 then
      session = string.match(body, '"sessionInfo"%s*:%s*"([^"]+)"')
      if not session then return fail() end
      step = 4
   else
      if string.find(body, '"idToken"', 1, true) then flows = flows + 1 else failures = failures + 1 end
      step = 1
   end
end

function done(summary, latency, requests)
   flow_done(summary, latency, {flows = "flows", flow_failures = "failures"})
end
