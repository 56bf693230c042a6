#!/usr/bin/env python3
"""Writes oltp-like.log: a synthetic fio v3 iolog (an OLTP-like mix, for the examples).

8 KiB random reads (70 %) and writes (30 %) over a 256 MiB table file, a 64 KiB sequential
log write every 50 I/Os, issued in bursts: exponential gaps, 150 us mean, with a 5 ms pause
every 200 I/Os. Deterministic (fixed seed). Usage: ./make-oltp-trace.py > oltp-like.log
"""
import random

rng = random.Random(20240531)
FILE = "/data/oltp.db"
TABLE = 256 << 20
t = 0.0
log_off = TABLE
print("fio version 3 iolog")
print(f"0 {FILE} add")
print(f"0 {FILE} open")
for i in range(5000):
    t += rng.expovariate(1 / 150.0)
    if i % 200 == 199:
        t += 5000
    if i % 50 == 49:
        print(f"{int(t)} {FILE} write {log_off} 65536")
        log_off += 65536
        continue
    op = "read" if rng.random() < 0.7 else "write"
    off = rng.randrange(TABLE // 8192) * 8192
    print(f"{int(t)} {FILE} {op} {off} 8192")
print(f"{int(t) + 10} {FILE} close")
