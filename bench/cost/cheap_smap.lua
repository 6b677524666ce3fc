-- cheap_smap.stc's loop in Lua: a list of the 3M outputs and the thread's sum.
local out, s = {}, 0
for x = 0, 2999999 do
  local y = x * x % 1000
  s = s + y
  out[#out + 1] = y
end
print(#out)
print("a = " .. s)
