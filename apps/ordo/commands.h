// The subcommands of `ordo`. Each takes the arguments after its name and returns the exit code.
#pragma once

namespace ordo::cli {

int RunPlan(int argc, char** argv);
int RunValidate(int argc, char** argv);
int RunCompare(int argc, char** argv);
int RunBound(int argc, char** argv);

extern const char* const kPlanUsage;
extern const char* const kValidateUsage;
extern const char* const kCompareUsage;
extern const char* const kBoundUsage;

}  // namespace ordo::cli
