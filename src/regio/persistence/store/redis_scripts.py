"""The server-side scripts of :class:`regio.persistence.store.RedisStore` (Lua, run atomically by
the server: https://redis.io/docs/latest/develop/interact/programmability/eval-intro/).

``KEYS`` are a session's keys in :meth:`regio.persistence.store.RedisStore._keys` order (meta, head,
transcript list, usage list, entries hash, originals hash, lease). Redis does not roll a script
back, so :data:`SAVE` makes every check before its first write: the keys' types, the counters,
the lease, the version and the counts, and (for a session already stored) that the records and
window entries its last save left are there (a dropped key or a deleted field is refused with
``{-5, ...}`` instead of a save that reports success over a session no load can read). A lease
key without an expiry (never one regio set: regio's leases are ``SET NX PX``) is reported as
such (:data:`NO_EXPIRY`), never waited on forever.
"""

from __future__ import annotations

__all__ = ["CHECKS", "NO_EXPIRY", "RELEASE", "RENEW", "SAVE", "TAKE", "TYPES"]

#: ``PTTL`` of a key without an expiry.
NO_EXPIRY = -1

#: The type each of a session's keys holds (``TYPE``), in :meth:`RedisStore._keys` order.
TYPES = ("hash", "string", "list", "list", "hash", "hash", "string")

#: The checks a save makes before it writes (KEYS as :meth:`RedisStore._keys`; the last ARGV is
#: the writer's lease token, '' for none, the one before it the number of window records the
#: save leaves): ``{-2, key index}`` for a key of another type, ``{-3, field}`` for a counter
#: that is no integer, ``{-4, ms left}`` for another writer's lease (``-1``: a key without
#: expiry); then ``version`` and the counts. :data:`SAVE` adds ``{-5, part}`` for a stored
#: session whose ``transcript`` / ``usage`` list or ``window`` records are not all there.
CHECKS = """
local want = {'hash', 'string', 'list', 'list', 'hash', 'hash', 'string'}
for i = 1, 7 do
  local t = redis.call('TYPE', KEYS[i])['ok']
  if t ~= 'none' and t ~= want[i] then return {-2, i} end
end
local holder = redis.call('GET', KEYS[7])
if holder and holder ~= ARGV[#ARGV] then return {-4, redis.call('PTTL', KEYS[7])} end
local counts = redis.call('HMGET', KEYS[1], 'version', 'transcript', 'ledger')
local names = {'version', 'transcript', 'ledger'}
for i = 1, 3 do
  local v = counts[i]
  if v and (not tonumber(v) or tonumber(v) ~= math.floor(tonumber(v))) then
    return {-3, names[i]}
  end
end
local version = tonumber(counts[1] or '0')
local t = tonumber(counts[2] or '0')
local l = tonumber(counts[3] or '0')
"""

SAVE = (
    CHECKS
    + """
local expected = tonumber(ARGV[1])
if version ~= expected then return {-1, version} end
local nt = tonumber(ARGV[3])
local nl = tonumber(ARGV[4])
if t ~= tonumber(ARGV[5]) or l ~= tonumber(ARGV[6]) then return {-1, version} end
local at = 7 + nt + nl
local np = tonumber(ARGV[at])
local nd = tonumber(ARGV[at + 2 * np + 1])
if version > 0 then
  if redis.call('LLEN', KEYS[3]) ~= t then return {-5, 'transcript'} end
  if redis.call('LLEN', KEYS[4]) ~= l then return {-5, 'usage'} end
  local n = redis.call('HLEN', KEYS[5])
  for i = 1, np do
    local key = ARGV[at + 2 * i - 1]
    local kind = string.sub(key, 1, 4)
    if kind ~= '@ro/' and kind ~= '@rn/' and redis.call('HEXISTS', KEYS[5], key) == 0 then
      n = n + 1
    end
  end
  for i = 1, nd do n = n - redis.call('HEXISTS', KEYS[5], ARGV[at + 2 * np + 1 + i]) end
  if n ~= tonumber(ARGV[#ARGV - 1]) then return {-5, 'window'} end
end
for i = 1, nt do redis.call('RPUSH', KEYS[3], ARGV[6 + i]) end
for i = 1, nl do redis.call('RPUSH', KEYS[4], ARGV[6 + nt + i]) end
if version == 0 then redis.call('DEL', KEYS[5], KEYS[6]) end
for i = 1, np do
  local key = ARGV[at + 2 * i - 1]
  local kind = string.sub(key, 1, 4)
  local hash = KEYS[5]
  if kind == '@ro/' or kind == '@rn/' then hash = KEYS[6] end
  redis.call('HSET', hash, key, ARGV[at + 2 * i])
end
at = at + 2 * np + 1
for i = 1, nd do redis.call('HDEL', KEYS[5], ARGV[at + i]) end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[1], 'version', version + 1, 'transcript', t + nt, 'ledger', l + nl)
return {0, version + 1}
"""
)

#: Take the lease KEYS[1] for token ARGV[1] for ARGV[2] ms when free: ``{1}``; else ``{0, ms
#: left}``. Renew: ``1`` when ARGV[1] holds it. Release: ``1`` when ARGV[1] held it.
TAKE = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return {1} end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {1}
end
return {0, redis.call('PTTL', KEYS[1])}
"""
RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""
RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
