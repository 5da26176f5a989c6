#!/usr/bin/env python3
"""Shares of a ClientCpuProbe variant's JFR execution samples, by the code that owns them.

usage: jfr print --events jdk.ExecutionSample --stack-depth 200 --json probe.jfr > samples.json
       python3 jfr-by-owner.py samples.json LAMBDA   # LAMBDA: n of ClientCpuProbe.lambda$probe$n

Each sample of the thread `main` inside that variant's lambda goes to the first frame, from the
leaf, of fencing (dev.fencing.jdbc/jpa, JDK proxy classes), pgjdbc, HikariCP, Hibernate or the
benchmark; JDK frames count for their caller. Fencing's share is then split by class.
"""
import collections
import json
import sys

OWNERS = ("org.postgresql", "com.zaxxer", "org.hibernate", "dev.fencing.benchmark")


def owner(frame):
    if frame.startswith(("dev.fencing.jdbc", "dev.fencing.jpa", "jdk.proxy")):
        return "fencing"
    return next((o for o in OWNERS if frame.startswith(o)), None)


def main(path, variant):
    events = json.load(open(path))["recording"]["events"]
    owners, classes, n = collections.Counter(), collections.Counter(), 0
    for e in events:
        v = e["values"]
        if v["sampledThread"]["javaName"] != "main":
            continue
        frames = [
            f["method"]["type"]["name"].replace("/", ".") + "." + f["method"]["name"]
            for f in v["stackTrace"]["frames"]
        ]
        if not any(f.endswith("lambda$probe$" + variant) for f in frames):
            continue
        n += 1
        first = next((f for f in frames if owner(f)), None)
        o = owner(first) if first else "other"
        owners[o] += 1
        if o == "fencing":
            cls = first.rsplit(".", 1)[0].split("$")[0].replace("dev.fencing.", "")
            classes["proxy classes" if cls.startswith("jdk.proxy") else cls] += 1
    print(f"samples {n}")
    for k, c in owners.most_common():
        print(f"  {k:24s} {c:5d} {100 * c / n:5.1f} %")
    for k, c in classes.most_common():
        print(f"    {k:22s} {c:5d} {100 * c / n:5.1f} %")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
