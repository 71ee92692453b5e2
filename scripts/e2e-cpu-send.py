#!/usr/bin/env python3
"""Sends N ordinary log records over OTLP/HTTP JSON in batches (scripts/e2e-cpu.sh).

The lines are the parser benchmark's ordinary application lines (written for
that benchmark, none an OOM). Request bodies are built once and reused so the
sender's own CPU stays small.
"""
import http.client
import json
import sys
import time
import urllib.parse

LINES = [
    '10.42.0.17 - - [01/May/2024:10:00:00 +0000] "GET /api/v1/models?limit=20 HTTP/1.1" 200 5123 "-" "python-requests/2.31.0" 0.004',
    'I0501 10:00:00.123456       1 reflector.go:351] Caches populated for *v1.Pod from k8s.io/client-go/informers/factory.go:150',
    '2024-05-01 10:00:00,123 - trainer - INFO - epoch 3/10 step 12000/50000 loss=0.2531 acc=0.912 lr=3.0e-04 throughput=812.3 samples/s',
    '{"level":"info","ts":"2024-05-01T10:00:00.123Z","caller":"server/handler.go:88","msg":"request served","status":200,"latency_ms":12}',
    '2024-05-01 10:00:00.123 UTC [4711] LOG:  checkpoint complete: wrote 1234 buffers (7.5%); 0 WAL file(s) added, 0 removed, 3 recycled',
    'time="2024-05-01T10:00:00Z" level=info msg="pulling image" image="registry.example.com/team/inference:2024.05.01" platform=linux/amd64',
    'May  1 10:00:00 node-17 systemd[1]: Started Session 4242 of user ubuntu; unit session-4242.scope entered running state successfully.',
    'INFO:     10.0.3.7:51234 - "POST /v1/completions HTTP/1.1" 200 OK prompt_tokens=512 completion_tokens=128 total_time=0.84s queue=0',
]


def body(n, t0):
    recs = [{"timeUnixNano": str(t0 + i), "body": {"stringValue": LINES[i % len(LINES)]}} for i in range(n)]
    return json.dumps({"resourceLogs": [{
        "resource": {"attributes": [{"key": "host.name", "value": {"stringValue": "node-17"}}]},
        "scopeLogs": [{"logRecords": recs}],
    }]}).encode()


def main():
    url, total, size = urllib.parse.urlparse(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    conn = http.client.HTTPConnection(url.hostname, url.port)
    full = body(size, time.time_ns())
    sent = 0
    while sent < total:
        n = min(size, total - sent)
        conn.request("POST", url.path, full if n == size else body(n, time.time_ns()),
                     {"Content-Type": "application/json"})
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            sys.exit(f"export failed: HTTP {resp.status}")
        sent += n


if __name__ == "__main__":
    main()
