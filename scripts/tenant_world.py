#!/usr/bin/env python3
"""tenant_world.py IN.json OUT.json [--flood FACTOR] - a two-tenant world from a trace world.

Every job of IN goes to tenant "steady" or "burst" by a hash of its id (half each). Both get a
share of 40% of the cluster (together 80%; the services use the rest). With --flood F, "burst"
also submits F extra copies of each of its jobs that arrive on days 2 to 5 of the window, each
copy one step after the last, with new ids: a tenant that floods the queue while "steady" keeps
its usual load. Used by `make study-tenants` (docs/simulator.md)."""
import argparse
import hashlib
import json

parser = argparse.ArgumentParser()
parser.add_argument("inp")
parser.add_argument("out")
parser.add_argument("--flood", type=int, default=0)
parser.add_argument("--share", default="40%")
args = parser.parse_args()

with open(args.inp) as f:
    world = json.load(f)
steps_per_day = 1440 // world["step_minutes"]
world["tenants"] = [{"id": "steady", "share": args.share}, {"id": "burst", "share": args.share}]
jobs = []
for job in world["jobs"]:
    digest = hashlib.sha256(job["id"].encode()).digest()
    job["tenant"] = "steady" if digest[0] % 2 == 0 else "burst"
    jobs.append(job)
    if job["tenant"] == "burst" and steps_per_day <= job["arrival_step"] < 5 * steps_per_day:
        for k in range(args.flood):
            copy = dict(job)
            copy["id"] = f"{job['id']}-flood{k + 1}"
            copy["arrival_step"] = job["arrival_step"] + k + 1
            jobs.append(copy)
world["jobs"] = jobs
world["name"] = world["name"] + ("-flood" if args.flood else "-tenants")
world["description"] = (world.get("description", "") + " Two tenants (steady, burst) of share "
                        f"{args.share} each by a hash of the job id" +
                        (f"; burst submits {args.flood} extra copies of its jobs of days 2-5."
                         if args.flood else "."))
with open(args.out, "w") as f:
    json.dump(world, f, indent=1)
