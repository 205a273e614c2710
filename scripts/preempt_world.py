#!/usr/bin/env python3
"""preempt_world.py IN.json OUT.json [--every-minutes M] [--restart-minutes R] [--long-low HOURS]

A world whose training and batch-inference jobs save their work: each gets the world format's
`checkpoint` (a save every M minutes of work, R minutes to restart from a save, both rounded up
to whole steps). With --long-low H, every job whose actual run is at least H hours also gets
priority 1: the long low-priority jobs that high-priority arrivals queue behind. Used by
`make study-preempt` (docs/simulator.md)."""
import argparse
import json
import math

parser = argparse.ArgumentParser()
parser.add_argument("inp")
parser.add_argument("out")
parser.add_argument("--every-minutes", type=float, default=60)
parser.add_argument("--restart-minutes", type=float, default=30)
parser.add_argument("--long-low", type=float, default=0)
args = parser.parse_args()

with open(args.inp) as f:
    world = json.load(f)
step = world["step_minutes"]
checkpoint = {"every_steps": max(1, math.ceil(args.every_minutes / step)),
              "restart_steps": max(0, math.ceil(args.restart_minutes / step))}
lowered = 0
for job in world["jobs"]:
    if job["kind"] == "quantization":
        continue
    job["checkpoint"] = dict(checkpoint)
    steps = job["duration_steps"] if "duration_steps" in job else job["shapes"][0]["duration_steps"]
    if args.long_low > 0 and steps * step >= args.long_low * 60:
        job["priority"] = 1
        lowered += 1
world["name"] += "-checkpoint" + (f"-long-low{args.long_low:g}h" if args.long_low else "")
world["description"] = (world.get("description", "") +
                        f" Training and batch-inference jobs save every {args.every_minutes:g} min"
                        f" and restart in {args.restart_minutes:g} min." +
                        (f" The {lowered} jobs of {args.long_low:g} h or more have priority 1."
                         if args.long_low else ""))
with open(args.out, "w") as f:
    json.dump(world, f, indent=1)
