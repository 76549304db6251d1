#!/usr/bin/env python3
"""Checks per-key order in the outputs of a sharding run.

  check_key_order.py INPUT OUTPUT_FILE...

Every output line is matched to its line number in INPUT; for each user_id, the line numbers must
rise through each output file. Prints one line: keys, keys out of order, lines missing, lines
duplicated.
"""
import re
import sys

KEY = re.compile(rb'"user_id":"([^"]*)"')


def main():
    source, outputs = sys.argv[1], sys.argv[2:]
    positions = {}
    with open(source, "rb") as lines:
        for number, line in enumerate(lines):
            positions.setdefault(line, []).append(number)
    total = sum(len(v) for v in positions.values())
    seen = {}
    out_of_order = set()
    keys = set()
    duplicated = 0
    for path in outputs:
        last = {}
        with open(path, "rb") as lines:
            for line in lines:
                candidates = positions.get(line)
                if not candidates:
                    continue
                count = seen.get(line, 0)
                if count >= len(candidates):
                    duplicated += 1
                    continue
                seen[line] = count + 1
                number = candidates[count]
                match = KEY.search(line)
                key = match.group(1) if match else b""
                keys.add(key)
                if last.get(key, -1) > number:
                    out_of_order.add(key)
                last[key] = number
    delivered = sum(seen.values())
    print(f"keys {len(keys)}, keys out of order {len(out_of_order)}, "
          f"lines missing {total - delivered}, lines duplicated {duplicated}")


if __name__ == "__main__":
    main()
