# route_by_key.awk: the awk peer in bench/run.sh. Routes each NDJSON line to one of `parts`
# files by a hash of its user_id, found with a regex (no JSON parsing, no validation).
# usage: mawk -v out=DIR -v parts=8 -f route_by_key.awk FILE
# The hash is a polynomial string hash (h = h*31 + byte, mod 2^31-1), computed in awk itself;
# awk has no ord(), so BEGIN builds a character -> code table.

BEGIN {
  if (parts == "") parts = 8
  for (i = 1; i < 256; i++) ord[sprintf("%c", i)] = i
}

match($0, /"user_id":"[^"]*"/) {
  key = substr($0, RSTART + 11, RLENGTH - 12)   # 11 = length of "user_id":" ; 12 adds the closing quote
  h = 0
  n = length(key)
  for (i = 1; i <= n; i++) h = (h * 31 + ord[substr(key, i, 1)]) % 2147483647
  print > (out "/part-" (h % parts) ".ndjson")
  next
}

{ print > (out "/missing-key.ndjson") }
