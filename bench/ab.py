#!/usr/bin/env python3
"""Alternated A/B timing of two terrane binaries on one working directory.

Usage: bench/ab.py N DIR BIN_A BIN_B [ARGS...]   (ARGS default: plan -input=false)

Runs each binary N times in DIR, taking turns (A then B, then B then A, ...)
so that drift in a shared, noisy machine falls on both alike, and prints
each binary's median wall time with its 25th-75th percentiles and the median
CPU time of the run (user + system of the binary and its children, such as
provider plugins). Unlike bench/engine_ab.sh, which runs every phase of a
workload it generates (and Terraform), this times one command in a
directory prepared beforehand: a dev_overrides plugin setup, a state of
database grants. Output and exit status are not checked: compare the
binaries' outputs separately (for example with cmp). Runs on demand, not in
CI; environment (TF_CLI_CONFIG_FILE, TERRANE_PLUGIN_PROTOCOL) is passed on.
"""
import os
import resource
import statistics
import subprocess
import sys
import time


def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    n, where, bins = int(sys.argv[1]), sys.argv[2], sys.argv[3:5]
    args = sys.argv[5:] or ["plan", "-input=false"]
    wall = {b: [] for b in bins}
    cpu = {b: [] for b in bins}
    for i in range(n):
        for b in bins if i % 2 == 0 else bins[::-1]:
            c, t = children_cpu(), time.perf_counter()
            subprocess.run([b] + args, cwd=where, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wall[b].append(time.perf_counter() - t)
            cpu[b].append(children_cpu() - c)
    for b in bins:
        v = sorted(wall[b])
        q = lambda p: v[int(p * (len(v) - 1))]
        print(
            f"{os.path.basename(b):20s} wall median {1000 * statistics.median(v):7.2f} ms"
            f" [p25 {1000 * q(0.25):7.2f}, p75 {1000 * q(0.75):7.2f}]"
            f"  cpu median {1000 * statistics.median(cpu[b]):7.2f} ms"
        )


if __name__ == "__main__":
    main()
