#!/usr/bin/env python3
"""route_by_key.py: the Python peer in bench/run.sh.

Parses every line with json.loads and routes it by int(md5(user_id).hexdigest(), 16) % N,
the formula of `keyshard --hash md5`, so its partitions can be compared with keyshard's.
usage: route_by_key.py OUT_DIR PARTS FILE
"""

import hashlib
import json
import sys


def main() -> int:
    out_dir, parts, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    outputs = [open(f"{out_dir}/part-{p}.ndjson", "wb", buffering=1 << 20) for p in range(parts)]
    with open(path, "rb", buffering=1 << 20) as events:
        for line in events:
            key = json.loads(line)["user_id"]
            if not isinstance(key, str):
                key = json.dumps(key)  # keyshard hashes non-strings as their JSON text
            digest = hashlib.md5(key.encode()).hexdigest()
            outputs[int(digest, 16) % parts].write(line)
    for output in outputs:
        output.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
