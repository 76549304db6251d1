#!/usr/bin/env python3
"""Writes the sample data sets in this folder (deterministic: same bytes every run).

  python3 samples/make_samples.py samples/
"""
import json
import random
import subprocess
import sys
from pathlib import Path


def transactions(rng):
    # Bank transactions: one hot account carries a fifth of the traffic; each account's
    # deposits and withdrawals must be applied in order for balances to come out right.
    accounts = [f"acc-{n:04d}" for n in range(1, 41)]
    lines = []
    for i in range(600):
        account = "acc-0007" if rng.random() < 0.2 else rng.choice(accounts)
        kind = rng.choice(["deposit", "deposit", "withdrawal"])
        amount = round(rng.uniform(1, 500), 2)
        lines.append({"tx": f"tx-{i:05d}", "ts": f"2026-11-29T09:{i // 60:02d}:{i % 60:02d}Z",
                      "account": account, "type": kind, "amount": amount, "currency": "EUR"})
    return [json.dumps(x, separators=(",", ":")) for x in lines]


def clickstream(rng):
    pages = ["/", "/search", "/product/42", "/cart", "/checkout", "/help"]
    lines = []
    for i in range(400):
        user = rng.randint(1, 60)
        lines.append({"ts": 1764406800 + i, "user": {"id": f"u{user}", "country": rng.choice(["FR", "DE", "JP", "BR"])},
                      "session": {"id": f"s{user}-{i // 50}", "device": rng.choice(["ios", "android", "web"])},
                      "page": rng.choice(pages), "tags": rng.sample(["new", "promo", "returning", "beta"], 2)})
    return [json.dumps(x, separators=(",", ":"), ensure_ascii=False) for x in lines]


def access_log(rng):
    lines = []
    for i in range(300):
        ip = f"192.0.2.{rng.randint(1, 30)}"
        path = rng.choice(["/", "/login", "/api/orders", "/static/app.js"])
        status = rng.choice([200, 200, 200, 304, 404, 500])
        lines.append(f'{ip} - - [29/Nov/2026:09:{i // 60:02d}:{i % 60:02d} +0000] "GET {path} HTTP/1.1" {status} {rng.randint(100, 9000)}')
    return lines


def with_bad_lines(rng):
    good = transactions(rng)[:40]
    good[5] = '{"tx":"tx-broken","account":"acc-0001","amount":12.5'          # cut short
    good[11] = '{"tx":"tx-nokey","type":"deposit","amount":3}'                  # no account
    good[17] = 'ERROR 2026-11-29 upstream timeout'                              # not JSON
    good[23] = '["acc-0002", 10]'                                               # not an object
    good[29] = ''                                                               # empty line
    return good


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
    rng = random.Random(2026)
    files = {
        "transactions.ndjson": transactions(rng),
        "clickstream.ndjson": clickstream(rng),
        "access.log": access_log(rng),
        "with-bad-lines.ndjson": with_bad_lines(rng),
    }
    for name, lines in files.items():
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    subprocess.run(["zstd", "-q", "-f", "-19", str(out / "clickstream.ndjson"), "-o",
                    str(out / "clickstream.ndjson.zst")], check=True)


if __name__ == "__main__":
    main()
