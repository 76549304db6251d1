#!/usr/bin/env python3
# Prints Python hashlib's md5 partition for every reference key: the outside truth for keyshard's
# md5 partitioner, int(md5(key).hexdigest(), 16) % N (DESIGN.md section 3), in Python's big ints.
"""Usage: python3 md5_reference.py KEYS.hex > OUT.tsv

Input: one hex-encoded key per line (an empty line is the empty key).
Output: hex_key<TAB>N<TAB>partition, one line per key and N.
"""

import hashlib
import sys

PARTITION_COUNTS = [1, 2, 3, 7, 8, 12, 16, 100, 1024, 4096]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: md5_reference.py KEYS.hex > OUT.tsv")
    out = sys.stdout
    with open(sys.argv[1], encoding="ascii") as keys:
        for line_number, line in enumerate(keys, start=1):
            hex_key = line.rstrip("\r\n")
            try:
                key = bytes.fromhex(hex_key)
            except ValueError:
                sys.exit(f"md5_reference.py: {sys.argv[1]}:{line_number}: not a hex key")
            digest = int(hashlib.md5(key).hexdigest(), 16)
            for n in PARTITION_COUNTS:
                out.write(f"{hex_key}\t{n}\t{digest % n}\n")


if __name__ == "__main__":
    main()
