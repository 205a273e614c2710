#!/usr/bin/env python3
"""Load benchmark for `ordo serve` (a measurement, not a test): job submissions per second and
their latency (p50, p99, max) while the service re-plans in fast mode after every change.

It starts the given `ordo` binary on 127.0.0.1 with a random free port, a fresh database in a
temporary directory and a cluster of --gpus GPUs (8 per node), then runs --clients concurrent
keep-alive connections that submit --jobs jobs in all. Nothing is sent anywhere but 127.0.0.1.

  scripts/serve_load.py build/release/apps/ordo/ordo --gpus 64 --jobs 5000 --clients 16

Reports JSON on stdout: throughput, latency percentiles, and from /metrics how many fast plans
were made during the run, their latency and the group-commit batch sizes.
"""
import argparse
import http.client
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

ADMIN = "bench-admin-token-0123456789"
TENANTS = [("team-%d" % k, "bench-tenant-token-%02d-0123456789" % k) for k in range(4)]


def percentile(sorted_values, q):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[index]


def metric_lines(port):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/metrics", headers={"Authorization": "Bearer " + ADMIN})
    body = conn.getresponse().read().decode()
    conn.close()
    return body.splitlines()


def histogram(lines, name, labels):
    """(count, sum, {le: cumulative}) of one histogram series."""
    count, total, buckets = 0, 0.0, {}
    for line in lines:
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        if key == name + "_count" + labels:
            count = float(value)
        elif key == name + "_sum" + labels:
            total = float(value)
        elif key.startswith(name + "_bucket{") and labels.strip("{}") in key:
            le = key.split('le="')[1].split('"')[0]
            buckets[le] = float(value)
    return count, total, buckets


def histogram_quantile(buckets, q):
    """Upper bound of the bucket holding quantile q (as Prometheus' histogram_quantile bounds)."""
    items = sorted(((float("inf") if le == "+Inf" else float(le)), n) for le, n in buckets.items())
    if not items or items[-1][1] == 0:
        return float("nan")
    target = q * items[-1][1]
    for bound, n in items:
        if n >= target:
            return bound
    return float("inf")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("ordo", help="path to the ordo binary (a release build)")
    parser.add_argument("--gpus", type=int, default=64, help="cluster size (8 GPUs per node)")
    parser.add_argument("--jobs", type=int, default=5000, help="submissions in all")
    parser.add_argument("--clients", type=int, default=16, help="concurrent connections")
    parser.add_argument("--horizon", type=int, default=24, help="horizon_steps")
    parser.add_argument("--advance-every", type=int, default=0,
                        help="commit a step every N submissions (0: never), so jobs start and end")
    parser.add_argument("--threads", type=int, default=0,
                        help="the server's --threads (default: clients + 8). Each keep-alive "
                             "connection holds a handler thread, so fewer threads than "
                             "connections makes the extra connections wait")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    work = tempfile.mkdtemp(prefix="ordo-serve-load-")
    config = {
        "step_minutes": 60, "horizon_steps": args.horizon,
        "cluster": {"node_groups": [{"name": "h100", "nodes": args.gpus // 8, "gpus_per_node": 8}]},
        "tenants": [{"name": n, "token": t} for n, t in TENANTS],
        "admin_token": ADMIN,
    }
    with open(os.path.join(work, "config.json"), "w") as f:
        json.dump(config, f)
    port_file = os.path.join(work, "port")
    log = open(os.path.join(work, "server.log"), "w")
    server = subprocess.Popen(
        [args.ordo, "serve", "--config", os.path.join(work, "config.json"),
         "--db", os.path.join(work, "ordo.db"), "--listen", "127.0.0.1:0",
         "--port-file", port_file, "--manual-clock", "--full-every", "0", "--log-level", "warn",
         "--threads", str(args.threads or args.clients + 8)],
        stdout=log, stderr=log)
    deadline = time.time() + 60
    port = 0
    while time.time() < deadline and not port:
        try:
            with open(port_file) as f:
                port = int(f.read().strip() or 0)
        except (FileNotFoundError, ValueError):
            time.sleep(0.02)
    if not port:
        server.kill()
        sys.exit("ordo serve did not start; see " + log.name)

    rng = random.Random(args.seed)
    shapes = [(g, d) for g in (1, 2, 4, 8, 16) if g <= args.gpus for d in (1, 2, 3, 4, 6)]
    bodies = []
    for k in range(args.jobs):
        gpus, duration = rng.choice(shapes)
        bodies.append(json.dumps({
            "id": "load-%d" % k, "kind": rng.choice(["training", "batch_inference", "quantization"]),
            "priority": rng.randint(1, 9), "gpus": gpus, "duration_steps": duration}))

    latencies = []
    errors = []
    lock = threading.Lock()
    next_index = [0]
    before = metric_lines(port)

    def client(n):
        token = TENANTS[n % len(TENANTS)][1]
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        mine = []
        while True:
            with lock:
                k = next_index[0]
                next_index[0] += 1
            if k >= args.jobs:
                break
            if args.advance_every and k and k % args.advance_every == 0:
                admin = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                admin.request("POST", "/v1/clock/advance", body='{"steps": 1}',
                              headers={"Authorization": "Bearer " + ADMIN,
                                       "Content-Type": "application/json"})
                admin.getresponse().read()
                admin.close()
            start = time.perf_counter()
            try:
                conn.request("POST", "/v1/jobs", body=bodies[k], headers=headers)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as e:
                # Counted, not retried (a retry would be a 409): the run reports it.
                with lock:
                    errors.append(type(e).__name__)
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                continue
            mine.append(time.perf_counter() - start)
            if response.status != 201:
                with lock:
                    errors.append(response.status)
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(args.clients)]
    wall = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - wall
    # Let the last debounced plan land, then read the planner's figures.
    time.sleep(0.5)
    after = metric_lines(port)
    fast_labels = '{mode="fast"}'
    n0, s0, _ = histogram(before, "ordo_planning_seconds", fast_labels)
    n1, s1, b1 = histogram(after, "ordo_planning_seconds", fast_labels)
    _, _, bb = histogram(after, "ordo_store_batch_requests", "")
    bc, bs, _ = histogram(after, "ordo_store_batch_requests", "")
    cc, cs, cb = histogram(after, "ordo_store_commit_seconds", "")
    health = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    health.request("GET", "/v1/health", headers={"Authorization": "Bearer " + ADMIN})
    state = json.loads(health.getresponse().read())
    health.close()
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)

    latencies.sort()
    report = {
        "gpus": args.gpus, "jobs": args.jobs, "clients": args.clients,
        "horizon_steps": args.horizon, "advance_every": args.advance_every,
        "errors": len(errors), "error_kinds": sorted(set(map(str, errors))),
        "server_threads": args.threads or args.clients + 8,
        "submissions_per_s": round(len(latencies) / wall, 1),
        "latency_ms": {"p50": round(1000 * percentile(latencies, 0.5), 2),
                       "p90": round(1000 * percentile(latencies, 0.9), 2),
                       "p99": round(1000 * percentile(latencies, 0.99), 2),
                       "max": round(1000 * latencies[-1], 2) if latencies else None},
        "fast_plans_during_run": int(n1 - n0),
        "fast_plan_mean_ms": round(1000 * (s1 - s0) / (n1 - n0), 2) if n1 > n0 else None,
        "fast_plan_p99_upper_bound_s": histogram_quantile(b1, 0.99),
        "group_commits": int(cc), "mean_requests_per_commit": round(bs / bc, 2) if bc else None,
        "commit_mean_ms": round(1000 * cs / cc, 2) if cc else None,
        "jobs_pending_at_end": state["jobs"]["pending"],
        "plan_up_to_date_at_end": state.get("plan", {}).get("up_to_date"),
        "workdir": work,
    }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
