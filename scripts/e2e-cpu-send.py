#!/usr/bin/env python3
"""Sends ordinary log records over OTLP/HTTP for scripts/e2e-cpu.sh.

    e2e-cpu-send.py URL RECORDS [ENCODING]    # sends RECORDS records (a multiple of a batch)
    e2e-cpu-send.py URL -SECONDS [ENCODING]   # sends for SECONDS, prints the records sent

    e2e-cpu-send.py interleave RECORDS ENCODING CHUNK URL...
        sends RECORDS records to each URL, CHUNK requests to one, then the next, round and
        round, so that every collector sees the same load on the machine over the run

    e2e-cpu-send.py pipelines PID RECORDS ENCODING CHUNK URL...
        the same to the URLs of one collector (PID), each URL the receiver of one of its
        pipelines, the order rotated each time round; reads the collector's CPU (all its
        threads' run time, /proc/PID/task/*/schedstat) before and after each CHUNK and
        prints, per URL, the CPU ns spent while its requests were served: each pipeline's
        cost in one process, the runtime (garbage collector, scheduler) shared

ENCODING is proto (default; what the otlphttp exporter of an agent sends) or json.

Each request is one batch shaped as BenchmarkPipelineCold's
(processor/oomclassifier/bench_test.go): 16 resources x 2 scopes x 32 records,
resources with host.name and a pod, records with a timestamp, INFO severity,
log.iostream and log.file.path, and a 60-byte ordinary line as the body (a
timestamp and words of log vocabulary; none an OOM, none an Xid). POOL
distinct requests are built once and sent in turn, so the sender's own CPU
stays small; the collector unmarshals each into fresh pdata.
"""
import http.client
import json
import os
import random
import struct
import sys
import time
import urllib.parse

RESOURCES, SCOPES, RECORDS = 16, 2, 32
PER_BATCH = RESOURCES * SCOPES * RECORDS
POOL = 16
LINE_BYTES = 60

# The benchmark's ordinaryWords.
WORDS = ["INFO", "DEBUG", "WARN", "request", "served", "status=200", "GET",
         "/api/v1/items", "latency_ms=12", "user=42", "step", "loss=0.253", "epoch", "shard", "ok",
         "handler", "reconcile", "pod", "sync", "queue", "took", "bytes=512", "trace_id=ab12cd",
         "conn", "open", "closed", "retries=0", "cache", "hit", "miss", "level", "done"]


def line(rng):
    s = "2025-03-01T12:%02d:%02d.%03dZ" % (rng.randrange(60), rng.randrange(60), rng.randrange(1000))
    while len(s) < LINE_BYTES:
        s += " " + rng.choice(WORDS)
    return s[:LINE_BYTES]


def batch(rng, n, t0):
    """One batch as plain data: [(resource attrs, [[(t, attrs, body)] per scope])]."""
    out = []
    for r in range(RESOURCES):
        res = [("host.name", "node-%d" % (r % 4)), ("k8s.namespace.name", "team-a"),
               ("k8s.pod.name", "trainer-%d-%d" % (n, r)), ("k8s.container.name", "main"),
               ("service.name", "trainer")]
        scopes = []
        for _ in range(SCOPES):
            recs = []
            for k in range(RECORDS):
                recs.append((t0 + k * 1_000_000, [("log.iostream", "stdout"),
                             ("log.file.path", "/var/log/pods/team-a_trainer/main/0.log")], line(rng)))
            scopes.append(recs)
        out.append((res, scopes))
    return out


# --- protobuf, by hand (opentelemetry/proto/logs/v1, common/v1, resource/v1) ---

def varint(v):
    b = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        if v:
            b.append(c | 0x80)
        else:
            b.append(c)
            return bytes(b)


def ld(field, payload):  # length-delimited field
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def fixed64(field, v):
    return varint(field << 3 | 1) + struct.pack("<Q", v)


def anystr(s):  # AnyValue{string_value=1}
    return ld(1, s.encode())


def kv(k, v):  # KeyValue{key=1, value=2}
    return ld(1, k.encode()) + ld(2, anystr(v))


def proto(data):
    req = bytearray()
    for res, scopes in data:
        rl = ld(1, b"".join(ld(1, kv(k, v)) for k, v in res))  # ResourceLogs.resource
        for recs in scopes:
            sl = ld(1, ld(1, b"filelog"))  # ScopeLogs.scope{name}
            for t, attrs, body in recs:
                lr = (fixed64(1, t) + varint(2 << 3) + varint(9)  # time, severity_number INFO
                      + ld(5, anystr(body)) + b"".join(ld(6, kv(k, v)) for k, v in attrs)
                      + fixed64(11, t))  # observed_time_unix_nano
                sl += ld(2, lr)
            rl += ld(2, sl)
        req += ld(1, rl)  # ExportLogsServiceRequest.resource_logs
    return bytes(req)


def as_json(data):
    def attrs(a):
        return [{"key": k, "value": {"stringValue": v}} for k, v in a]
    return json.dumps({"resourceLogs": [{
        "resource": {"attributes": attrs(res)},
        "scopeLogs": [{"scope": {"name": "filelog"}, "logRecords": [
            {"timeUnixNano": str(t), "observedTimeUnixNano": str(t), "severityNumber": 9,
             "body": {"stringValue": body}, "attributes": attrs(a)} for t, a, body in recs]}
            for recs in scopes],
    } for res, scopes in data]}).encode()


def post(conn, path, body, ctype):
    conn.request("POST", path, body, {"Content-Type": ctype})
    resp = conn.getresponse()
    resp.read()
    if resp.status != 200:
        sys.exit(f"export failed: HTTP {resp.status}")


def pool_of(encoding):
    enc, ctype = (proto, "application/x-protobuf") if encoding == "proto" else (as_json, "application/json")
    rng = random.Random(1)
    t0 = time.time_ns()
    return [enc(batch(rng, n, t0)) for n in range(POOL)], ctype


def connections(urls):
    """One kept-alive connection and request path per URL."""
    targets = []
    for u in urls:
        u = urllib.parse.urlparse(u)
        targets.append((http.client.HTTPConnection(u.hostname, u.port), u.path))
    return targets


def interleave(total, encoding, chunk, urls):
    pool, ctype = pool_of(encoding)
    targets = connections(urls)
    sent = 0
    while sent < total:
        n = min(chunk, (total - sent) // PER_BATCH)
        for conn, path in targets:
            for i in range(n):
                post(conn, path, pool[(sent // PER_BATCH + i) % POOL], ctype)
        sent += n * PER_BATCH


def cpu_ns(pid):
    """All threads' run time of process pid, in ns (first field of each task's schedstat)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def pipelines(pid, total, encoding, chunk, urls):
    """interleave into one collector's pipelines, charging each chunk's CPU to its URL. The
    order turns each time round, so that the garbage collector's work an allocation starts
    in one chunk and finishes in the next falls on every pipeline alike."""
    pool, ctype = pool_of(encoding)
    targets = connections(urls)
    cpu = [0] * len(targets)
    sent, turn = 0, 0
    while sent < total:
        n = min(chunk, (total - sent) // PER_BATCH)
        for k in range(len(targets)):
            t = (turn + k) % len(targets)
            conn, path = targets[t]
            before = cpu_ns(pid)
            for i in range(n):
                post(conn, path, pool[(sent // PER_BATCH + i) % POOL], ctype)
            cpu[t] += cpu_ns(pid) - before
        sent += n * PER_BATCH
        turn += 1
    print(" ".join(str(c) for c in cpu))


def main():
    if sys.argv[1] == "interleave":
        interleave(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5:])
        return
    if sys.argv[1] == "pipelines":
        pipelines(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5]), sys.argv[6:])
        return
    url = urllib.parse.urlparse(sys.argv[1])
    amount = int(sys.argv[2])
    pool, ctype = pool_of(sys.argv[3] if len(sys.argv) > 3 else "proto")
    conn = http.client.HTTPConnection(url.hostname, url.port)
    deadline = time.monotonic() - amount if amount < 0 else None
    sent = 0
    while (sent < amount) if deadline is None else (time.monotonic() < deadline):
        post(conn, url.path, pool[(sent // PER_BATCH) % POOL], ctype)
        sent += PER_BATCH
    if deadline is not None:
        print(sent)


if __name__ == "__main__":
    main()
