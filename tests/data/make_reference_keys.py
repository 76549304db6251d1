#!/usr/bin/env python3
# Writes reference_keys.hex: the keys every partitioner is checked on against outside references.
# Keys are hex-encoded, one per line (an empty line is the empty key), so any byte can be a key.
# The output is deterministic: the only randomness comes from a fixed seed.
"""Usage: python3 make_reference_keys.py [OUT.hex]   (default: reference_keys.hex beside this script)"""

import os
import random
import sys

FNV_PRIME = 0x01000193
FNV_OFFSET = 0x811C9DC5
FNV_PRIME_INVERSE = pow(FNV_PRIME, -1, 1 << 32)
MASK32 = 0xFFFFFFFF


def fnv1a_state(data, state=FNV_OFFSET):
    """The raw 32-bit FNV-1a state after `data`, before librdkafka's absolute-value step."""
    for byte in data:
        state = ((state ^ byte) * FNV_PRIME) & MASK32
    return state


def fnv1a_sign_keys():
    """Keys whose raw FNV-1a state is one of the values where a sign mistake shows.

    librdkafka takes abs() of the state read as an int32: INT32_MIN stays INT32_MIN (0x80000000),
    -1 becomes 1, INT32_MIN+1 becomes INT32_MAX. The keys are found by meeting in the middle:
    3 forward bytes (first byte 0..15, 2^20 states) against 2 backward bytes (any, 2^16 states).
    """
    targets = [0x80000000, 0x80000001, 0xFFFFFFFF, 0x7FFFFFFF, 0x00000000, 0xFFFFFF00]
    backward = {}  # state after 3 bytes -> (target, last two bytes)
    for target in targets:
        before_last = (target * FNV_PRIME_INVERSE) & MASK32
        for last in range(256):
            state_4 = before_last ^ last
            before_fourth = (state_4 * FNV_PRIME_INVERSE) & MASK32
            for fourth in range(256):
                backward.setdefault(before_fourth ^ fourth, (target, bytes([fourth, last])))
    found = {target: [] for target in targets}
    for first in range(16):
        state_1 = fnv1a_state(bytes([first]))
        for second in range(256):
            state_2 = ((state_1 ^ second) * FNV_PRIME) & MASK32
            for third in range(256):
                state_3 = ((state_2 ^ third) * FNV_PRIME) & MASK32
                hit = backward.get(state_3)
                if hit is not None and len(found[hit[0]]) < 3:
                    found[hit[0]].append(bytes([first, second, third]) + hit[1])
    keys = []
    for target in targets:
        if not found[target]:
            sys.exit(f"no FNV-1a key found for state {target:#010x}")
        for key in found[target]:
            assert fnv1a_state(key) == target
            keys.append(key)
    return keys


def reference_keys():
    keys = [b""]
    keys += [bytes([b]) for b in range(256)]

    # Every length 0..70 in ASCII and in high bytes: murmur2 folds a 1-3 byte tail in separately,
    # and Java's signed bytes make a tail with the top bit set the classic mistake.
    alphabet = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-_.:/=+"
    keys += [alphabet[:length] for length in range(71)]
    keys += [bytes((0xFF - 7 * i) & 0xFF for i in range(length)) for length in range(1, 71)]

    # What real events carry: ids, JSON scalars and containers as raw text (DESIGN.md section 2).
    keys += [f"user_{i}".encode() for i in range(1, 301)]
    keys += [str(i).encode() for i in range(-50, 151)]
    keys += [s.encode() for s in [
        "42", "-7", "3.14", "-0", "1e10", "6.02e23", "9007199254740993", "-2147483648",
        "true", "false", "null", '""', '{"a":1}', '{"a": 1}', "[1,2,3]", "[]", "{}",
        "user_987654", "account.id", "a\\.b", "/account/id", " ", "  leading", "trailing  ",
    ]]
    keys += [b"a\x1fb", b"user_1\x1f42", b"\x1f", b"line\nbreak", b"\r\n", b"tab\tkey",
             b"nul\x00inside", b"\x00\x00\x00\x00", b"\xff\xff\xff\xff", b"\x80\x00\x00\x00"]

    # UTF-8 text, then byte strings that are not valid UTF-8 (keys are bytes, not text).
    keys += [s.encode("utf-8") for s in [
        "café", "naïve", "Zürich", "Ærøskøbing", "Ελληνικά", "Москва", "日本語", "中文键",
        "한국어", "עברית", "العربية", "😀", "👩‍💻", "🇫🇷", "𝄞 music", "mixed ascii é 日 😀",
    ]]
    keys += [b"\xc3", b"\xc3\x28", b"\xa0\xa1", b"\xe2\x28\xa1", b"\xe2\x82", b"\xf0\x28\x8c\xbc",
             b"\xf0\x9f\x98", b"\xff\xfe", b"\xfe\xff", b"\xed\xa0\x80", b"\xc0\xaf",
             b"\xf4\x90\x80\x80", b"caf\xe9", b"\x80"]

    # Long keys, including lengths that leave a murmur2 tail.
    keys += [bytes(i * 31 % 251 for i in range(1024)), bytes(i * 17 % 256 for i in range(1027)),
             (b"0123456789abcdef" * 640)]

    keys += fnv1a_sign_keys()

    # Seeded random keys: printable ids, uuids, and arbitrary bytes.
    rng = random.Random(20240611)
    printable = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
    keys += [bytes(rng.choice(printable) for _ in range(rng.randint(1, 40))) for _ in range(150)]
    keys += ["{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}".format(
        rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
        0x8000 | rng.getrandbits(14), rng.getrandbits(48)).encode() for _ in range(100)]
    keys += [bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 64))) for _ in range(150)]

    seen = set()
    unique = []
    for key in keys:
        if key not in seen:
            seen.add(key)
            unique.append(key)
    return unique


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "reference_keys.hex")
    keys = reference_keys()
    with open(out_path, "w", encoding="ascii", newline="\n") as out:
        for key in keys:
            out.write(key.hex() + "\n")
    print(f"{out_path}: {len(keys)} keys", file=sys.stderr)


if __name__ == "__main__":
    main()
