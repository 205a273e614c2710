// The client of a running `ordo serve`: submit, queue, cancel, show, plan (without a SCENARIO)
// and advance (docs/cli.md, "The service's client"). Each takes the arguments after its name.
#pragma once

namespace ordo::cli {

int RunSubmit(int argc, char** argv);
int RunQueue(int argc, char** argv);
int RunCancel(int argc, char** argv);
int RunShow(int argc, char** argv);
int RunAdvance(int argc, char** argv);
/// `ordo plan` without a SCENARIO: the service's adopted plan (RunPlan hands over to it).
int RunServicePlan(int argc, char** argv);

extern const char* const kServicePlanUsage;

}  // namespace ordo::cli
