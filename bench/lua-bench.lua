-- The Lua workload of bench/run.sh (LUA_SRC=...): sorting, string
-- building and matching, closures and recursion, in the interpreter's C.
local t = {}
for i = 1, 50000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
local parts = {}
for i = 1, 20000 do parts[#parts + 1] = string.format("%d:%s", i, tostring(t[i])) end
local s = table.concat(parts, ",")
local n = 0
for w in s:gmatch("%d+") do n = n + #w end
local function fib(k) if k < 2 then return k end return fib(k - 1) + fib(k - 2) end
print(n, fib(22))
