// `ordo simulate`: the rolling-horizon simulator from the command line (docs/simulator.md).
#pragma once

namespace ordo::cli {

/// argv[0] is "simulate". Exit codes: 0 every run finished and its committed timeline is legal;
/// 1 a policy failed or a committed step broke a rule (a bug, listed on stderr); 2 bad arguments
/// or an unreadable or invalid file (the message names the file and the field).
int RunSimulateCommand(int argc, char** argv);

extern const char* const kSimulateUsage;

}  // namespace ordo::cli

// main.cc dispatches with an unqualified call.
using ordo::cli::RunSimulateCommand;
