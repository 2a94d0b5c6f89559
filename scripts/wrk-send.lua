-- wrk script of the benchmark scripts: blocking SendMessage calls whose messageId prefix
-- (`tck-complete-task`) makes the conformance agent complete the task at once.
-- AUTH (environment): a bearer token to send, if any.
local n = 0
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["A2A-Version"] = "1.0"
local auth = os.getenv("AUTH")
if auth and auth ~= "" then wrk.headers["Authorization"] = "Bearer " .. auth end
request = function()
  n = n + 1
  local body = '{"jsonrpc":"2.0","id":' .. n .. ',"method":"SendMessage","params":{"message":{"messageId":"tck-complete-task-' .. n .. '-' .. math.random(1e9) .. '","role":"ROLE_USER","parts":[{"text":"hello"}]}}}'
  return wrk.format(nil, nil, nil, body)
end
