"""The profiler's BPF loss counters as `bpftool map dump name counters -j` prints them.

counter_total(dump, index) sums entry index (enum jbpf_counter in
bpf/jbpfprof.h) over every CPU of the per-CPU array; bpftool prints keys
and values either as numbers or as lists of hex bytes, and both are read.
"""
import json


def load(path):
    with open(path) as f:
        return json.load(f)


def counter_total(dump, index):
    for entry in dump:
        key = entry.get("key")
        k = int(key[0], 16) if isinstance(key, list) else int(key)
        if k == index:
            return sum(v["value"] if isinstance(v["value"], int)
                       else int.from_bytes(bytes(int(b, 16) for b in v["value"]), "little")
                       for v in entry["values"])
    return 0
