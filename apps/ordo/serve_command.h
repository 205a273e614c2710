// `ordo serve`: the planning service (REST API, durable state, dashboard; docs/service.md).
#pragma once

/// Takes argv with argv[0] = "serve"; returns the exit code: 0 after a clean shutdown (SIGINT or
/// SIGTERM), 1 when the service could not start or run (the database, the port), 2 for bad
/// arguments or an invalid config file.
int RunServeCommand(int argc, char** argv);
