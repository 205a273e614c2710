#!/usr/bin/env python3
"""Proves that tests/unit/core can catch a broken legality checker.

For each check in src/ordo/core/check_plan.cc, builds a mutant with that check disabled (its
violation is no longer reported, the control flow around it unchanged), rebuilds ordo_core_test and
runs it. A mutant that no test kills is a rule the tests do not pin down. The source file is
restored afterwards, whatever happens. Run by hand from the top of the tree after `cmake --preset
dev` (each mutant is a rebuild of one file and a link):

    scripts/mutate_check_plan.py [BUILD_DIR [NAME]]   # default build/dev; NAME picks the mutants
                                                      # whose name contains it
Exits 1 when a mutant survives.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCE = ROOT / "src/ordo/core/check_plan.cc"

# (name, what to do). "drop:<fragment>" guards the Add(...) call whose message contains the
# fragment with `if (false)`, so that one violation is never reported; "edit:<old>=><new>"
# replaces text, for a rule weakened rather than removed. Every fragment must occur exactly once.
MUTANTS = [
    ("rule 0: unknown job", 'drop:"the plan lists job "'),
    ("rule 0: job twice", 'drop:"job " + Quote(p.id) + " appears more than once'),
    ("rule 0: job missing", 'drop:Quote(s_.jobs[j].id) + " is missing'),
    ("rule 0: start past the horizon", 'drop:", past the horizon: a job not started'),
    ("rule 0: preemption past the horizon", 'drop:", past the horizon: a preemption outside'),
    ("rule 0: resume past the horizon", 'drop:", past the horizon: a job not resumed'),
    ("rule 0: resume without preempt_step", 'drop:" has a resume but no preempt_step"'),
    ("rule 0: preemption of an unstarted job", 'drop:" is not started but has a preempt_step'),
    ("rule 0: unknown service", 'drop:"the plan lists service "'),
    ("rule 0: service twice", 'drop:"service " + Quote(a.id) + " appears more than once'),
    ("rule 0: service missing", 'drop:Quote(s_.services[i].id) + " is missing'),
    ("rule 0: service step count", 'drop:" lists of GPUs; the horizon has "'),
    ("rule 0: service GPU outside the cluster", 'drop:", which is not in the cluster"'),
    ("rule 1: two holders of a GPU", 'drop:" both hold GPU "'),
    ("rule 1: a service lists a GPU twice", 'drop:" twice at step "'),
    ("rule 1: occupancy ignores a stay's last step",
     "edit:for (int t = lo; t < hi; ++t)=>for (int t = lo; t + 1 < hi; ++t)"),
    ("rule 1: a preempted job holds its block to its natural end",
     "edit:const long long held_to = std::clamp<long long>(q, *p.start_step, natural_end);"
     "=>const long long held_to = natural_end;"),
    ("rule 1: a resumed stay pays no restart",
     "edit:s2 + restart + p.duration_steps - saved=>s2 + p.duration_steps - saved"),
    ("rule 1: a resumed stay keeps unsaved work", "edit: / c * c=>"),
    ("rule 1: a running job ends at start + duration",
     "edit:natural_end = job.running->restart_steps_left.value_or(0) + p.duration_steps - progress;"
     "=>"),
    ("rule 1: a running job works during its restart steps",
     "edit:std::max<long long>(0, held_to - job.running->restart_steps_left.value_or(0))"
     "=>held_to"),
    ("rule 3: the resumed block is not checked",
     'edit:if (!CheckBlock(job, name, p.resume->first_gpu, p.gpus, "resumed ")) return;=>'),
    ("rule 2: running job keeps its block", 'drop:" is running and must keep its block'),
    ("rule 2: running job's first_gpu not compared",
     "edit:p.first_gpu != job.running->first_gpu ||=>"),
    ("rule 2: one of its shapes", 'drop:" steps, not one of its shapes"'),
    ("rule 2: service [min_gpus, max_gpus]", 'drop:", outside [min_gpus, max_gpus] = ["'),
    ("rule 2: min_gpus alone", "edit:count < service.min_gpus || =>"),
    ("rule 2: max_gpus alone", "edit: || count > service.max_gpus=>"),
    ("rule 3: block outside the cluster", 'drop:"), outside the cluster"'),
    ("rule 3: aligned block in one node / group", 'drop:") is not aligned, crosses'),
    ("rule 3: job's group matches", 'drop:"), which does not match its gpu_type'),
    ("rule 3: service's group matches", 'drop:", in a group that does not match'),
    ("rule 4: churn limit", 'drop:", more than max_change_per_step "'),
    ("rule 4: churn from current_gpus",
     "edit:if (service.current_gpus) previous = *service.current_gpus;=>"),
    ("rule 5: start before arrival", 'drop:" before its arrival_step "'),
    ("rule 5: start in the past", 'drop:std::to_string(start) + ", in the past"'),
    ("rule 5: preemption without a checkpoint", 'drop:" but has no checkpoint'),
    ("rule 5: preemption in the past", 'drop:name + at + ", in the past"'),
    ("rule 5: preemption not after the start", 'drop:", not after its start at step "'),
    ("rule 5: preemption not before the end", 'drop:", not before its end at step "'),
    ("rule 5: resume before the preemption", 'drop:": a job never holds two blocks at one step"'),
]


def once(text, fragment):
    count = text.count(fragment)
    if count != 1:
        sys.exit(f"mutate_check_plan: {fragment!r} occurs {count} times in {SOURCE}; "
                 "update MUTANTS")
    return text.index(fragment)


def mutate(text, how):
    kind, _, arg = how.partition(":")
    if kind == "drop":
        at = text.rindex("Add(", 0, once(text, arg))
        return text[:at] + "if (false) " + text[at:]
    old, _, new = arg.partition("=>")
    at = once(text, old)
    return text[:at] + new + text[at + len(old):]


def main():
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build/dev"
    mutants = [m for m in MUTANTS if len(sys.argv) < 3 or sys.argv[2] in m[0]]
    original = SOURCE.read_text()
    for _, how in mutants:  # every fragment is checked before anything is built
        mutate(original, how)
    survivors = []
    try:
        for name, how in mutants:
            SOURCE.write_text(mutate(original, how))
            subprocess.run(["cmake", "--build", str(build), "--target", "ordo_core_test"],
                           check=True, stdout=subprocess.DEVNULL)
            run = subprocess.run([str(build / "tests/ordo_core_test"), "--gtest_brief=1"],
                                 capture_output=True, text=True)
            failed = sorted(set(re.findall(r"^\[  FAILED  \] ([A-Za-z][\w/.]*)", run.stdout, re.M)))
            # Rules/BrokenRuleTest.ReportsThatRuleAlone/X -> X: the case names say enough.
            shown = [test.rsplit("/", 1)[-1] if "/" in test else test for test in failed]
            print(f"{name:48} {'killed by ' + ', '.join(shown) if failed else 'SURVIVED'}",
                  flush=True)
            if not failed:
                survivors.append(name)
    finally:
        SOURCE.write_text(original)
    subprocess.run(["cmake", "--build", str(build), "--target", "ordo_core_test"], check=True,
                   stdout=subprocess.DEVNULL)
    print(f"{len(mutants) - len(survivors)} of {len(mutants)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
