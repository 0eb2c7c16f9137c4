package redis

// The server-side steps that must be atomic, as Lua: each touches keys of
// one slot only.

// commitScript sets KEYS[1] to ARGV[1] if its version is still ARGV[2]
// ("": whatever it is). It returns {0} when the version differs, {1} when
// set over no manifest, {1, old} when set over manifest old (whose pieces
// the caller reclaims).
const commitScript = `
local h = redis.call('GETRANGE', KEYS[1], 0, 11)
if ARGV[2] ~= '' and string.sub(h, 5, 12) ~= ARGV[2] then return {0} end
local old = false
if string.sub(h, 1, 4) == 'GTRM' then old = redis.call('GET', KEYS[1]) end
redis.call('SET', KEYS[1], ARGV[1])
if old then return {1, old} end
return {1}
`

// deleteScript deletes KEYS[1] if its version is ARGV[1] ("": any). It
// returns {0} when there is none (or another version), {1} when it deleted
// an inline value, {1, old} when it deleted manifest old.
const deleteScript = `
local h = redis.call('GETRANGE', KEYS[1], 0, 11)
if h == '' then return {0} end
if ARGV[1] ~= '' and string.sub(h, 5, 12) ~= ARGV[1] then return {0} end
local old = false
if string.sub(h, 1, 4) == 'GTRM' then old = redis.call('GET', KEYS[1]) end
redis.call('DEL', KEYS[1])
if old then return {1, old} end
return {1}
`

// rangeScript reads KEYS[1] for bytes [ARGV[1], ARGV[1]+ARGV[2]) of its
// frame: {1, bytes, frame size} of an inline value, {2, manifest} of a
// manifest, {0} when there is no value.
const rangeScript = `
local h = redis.call('GETRANGE', KEYS[1], 0, 3)
if h == 'GTRI' then
  local size = redis.call('STRLEN', KEYS[1]) - 12
  local off = tonumber(ARGV[1])
  local n = tonumber(ARGV[2])
  if off >= size or n <= 0 then return {1, '', size} end
  return {1, redis.call('GETRANGE', KEYS[1], 12 + off, 12 + off + n - 1), size}
end
if h == 'GTRM' then return {2, redis.call('GET', KEYS[1])} end
if h == '' then return {0} end
return {3}
`

// editScript applies an edit to KEYS[1] at version ARGV[1], giving it
// version ARGV[2]: an inline value's bytes [ARGV[3], +ARGV[4]) of the
// frame become ARGV[5], then each pair ARGV[i] (offset), ARGV[i+1]
// (bytes) is written. Same-length edits are made in place. It returns {0}
// when the version differs (or there is no value), {1} when edited, {2,
// manifest} when the value is a manifest of that version (the caller
// edits its pieces).
const editScript = `
local h = redis.call('GETRANGE', KEYS[1], 0, 11)
if #h < 12 or string.sub(h, 5, 12) ~= ARGV[1] then return {0} end
local magic = string.sub(h, 1, 4)
if magic == 'GTRM' then return {2, redis.call('GET', KEYS[1])} end
if magic ~= 'GTRI' then return {0} end
local off = tonumber(ARGV[3])
local n = tonumber(ARGV[4])
local data = ARGV[5]
local size = redis.call('STRLEN', KEYS[1]) - 12
if off < 0 or n < 0 or off + n > size then return redis.error_reply('ERR gotensor edit outside the frame') end
for i = 6, #ARGV, 2 do
  if tonumber(ARGV[i]) + #ARGV[i+1] > off then return redis.error_reply('ERR gotensor edit piece after its data') end
end
if #data == n then
  if n > 0 then redis.call('SETRANGE', KEYS[1], 12 + off, data) end
else
  local v = redis.call('GET', KEYS[1])
  redis.call('SET', KEYS[1], string.sub(v, 1, 12 + off) .. data .. string.sub(v, 12 + off + n + 1))
end
for i = 6, #ARGV, 2 do
  redis.call('SETRANGE', KEYS[1], 12 + tonumber(ARGV[i]), ARGV[i+1])
end
redis.call('SETRANGE', KEYS[1], 4, ARGV[2])
return {1}
`

// deriveScript makes piece KEYS[2] from piece KEYS[1] (same slot) with
// the replacements ARGV[2..] in triples (offset, old length, bytes),
// offsets descending, and gives it a time to live of ARGV[1] ms until
// the manifest naming it commits. It returns the new piece's length, or
// -1 when KEYS[1] is gone (replaced meanwhile, or evicted).
const deriveScript = `
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local same = true
for i = 2, #ARGV, 3 do
  if tonumber(ARGV[i+1]) ~= #ARGV[i+2] then same = false end
end
if same then
  redis.call('COPY', KEYS[1], KEYS[2], 'REPLACE')
  for i = 2, #ARGV, 3 do
    if #ARGV[i+2] > 0 then redis.call('SETRANGE', KEYS[2], tonumber(ARGV[i]), ARGV[i+2]) end
  end
else
  local v = redis.call('GET', KEYS[1])
  for i = 2, #ARGV, 3 do
    local o = tonumber(ARGV[i])
    v = string.sub(v, 1, o) .. ARGV[i+2] .. string.sub(v, o + tonumber(ARGV[i+1]) + 1)
  end
  redis.call('SET', KEYS[2], v)
end
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return redis.call('STRLEN', KEYS[2])
`
