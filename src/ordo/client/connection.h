// Which server and token a client command uses. Each comes from the first of: the command's flag
// (`--server`, `--token`), the environment (`ORDO_SERVER`, `ORDO_TOKEN`), the client config file
// (`$ORDO_CONFIG`, else `$XDG_CONFIG_HOME/ordo/client.json`, else `~/.config/ordo/client.json`):
//
//   {"server": "http://127.0.0.1:8080", "token": "..."}
//
// The two are resolved separately: a token from the environment and a server from the file is
// fine. The environment is passed in, so this is pure and tested without touching the process's.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "ordo/client/http_client.h"
#include "ordo/core/error.h"

namespace ordo::client {

/// Looks up an environment variable; nullopt when unset. (std::getenv in the CLI.)
using Environment = std::function<std::optional<std::string>(const std::string& name)>;

struct ConnectionFlags {
  std::optional<std::string> server;  // --server
  std::optional<std::string> token;   // --token
};

struct Connection {
  ServerAddress server;
  std::string token;
  std::string server_source;  // "--server", "ORDO_SERVER" or the config file's path
  std::string token_source;
};

/// The config file to read: $ORDO_CONFIG (which must exist), else the XDG or home default (read
/// only when it exists). nullopt when there is none.
struct ConfigLocation {
  std::string path;
  bool required = false;  // named by ORDO_CONFIG
};
[[nodiscard]] std::optional<ConfigLocation> FindClientConfig(const Environment& env);

/// Resolves the server and the token. Errors (kInvalidInput, field naming where the bad value
/// came from): neither given anywhere ("no server: give --server URL, set ORDO_SERVER or ..."),
/// an unreadable or malformed config file (its path, then the field), a bad server address.
[[nodiscard]] Result<Connection> ResolveConnection(const ConnectionFlags& flags,
                                                   const Environment& env);

/// The process's environment, for ResolveConnection.
[[nodiscard]] Environment ProcessEnvironment();

}  // namespace ordo::client
