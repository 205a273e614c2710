// `ordo forecast`: the forecasters from the command line (docs/forecasting.md).
#pragma once

namespace ordo::cli {

/// argv[0] is "forecast"; argv[1] the forecaster: demand, training or quantization.
/// Exit codes: 0 success, 2 bad arguments or an unreadable or invalid file (the message names the
/// file and the field or row).
int RunForecastCommand(int argc, char** argv);

extern const char* const kForecastUsage;

}  // namespace ordo::cli

// main.cc dispatches with an unqualified call.
using ordo::cli::RunForecastCommand;
