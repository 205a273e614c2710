#include "ordo/client/connection.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace ordo::client {
namespace {

struct FileValues {
  std::optional<std::string> server;
  std::optional<std::string> token;
};

// A field of the config file as errors name it: "PATH: KEY".
std::string FieldOf(const std::string& path, const std::string& key) { return path + ": " + key; }

// The config is small and flat: an object with `server` and `token`, both strings, nothing else
// (a misspelt key is an error, not silently ignored).
Result<FileValues> ReadConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FailInput(path, "cannot read the client config");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return FailInput(path,
                     "must be a JSON object such as {\"server\": \"http://HOST:PORT\", "
                     "\"token\": \"...\"}");
  }
  FileValues out;
  for (const auto& [key, value] : doc.items()) {
    if (key != "server" && key != "token") {
      return FailInput(FieldOf(path, key), "unknown field (known: server, token)");
    }
    if (!value.is_string() || value.get<std::string>().empty()) {
      return FailInput(FieldOf(path, key), "must be a non-empty string");
    }
    (key == "server" ? out.server : out.token) = value.get<std::string>();
  }
  return out;
}

std::optional<std::string> NonEmpty(const Environment& env, const std::string& name) {
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

}  // namespace

std::optional<ConfigLocation> FindClientConfig(const Environment& env) {
  if (auto path = NonEmpty(env, "ORDO_CONFIG")) return ConfigLocation{*path, true};
  std::string path;
  if (auto xdg = NonEmpty(env, "XDG_CONFIG_HOME")) {
    path = *xdg + "/ordo/client.json";
  } else if (auto home = NonEmpty(env, "HOME")) {
    path = *home + "/.config/ordo/client.json";
  } else {
    return std::nullopt;
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  return ConfigLocation{path, false};
}

Result<Connection> ResolveConnection(const ConnectionFlags& flags, const Environment& env) {
  FileValues file;
  std::string file_path;
  // The file is read only when a flag or variable leaves something to find, so a broken default
  // file does not stop a command that names everything.
  const std::optional<std::string> env_server = NonEmpty(env, "ORDO_SERVER");
  const std::optional<std::string> env_token = NonEmpty(env, "ORDO_TOKEN");
  if ((!flags.server && !env_server) || (!flags.token && !env_token)) {
    if (std::optional<ConfigLocation> location = FindClientConfig(env)) {
      Result<FileValues> read = ReadConfig(location->path);
      if (!read) return tl::unexpected(read.error());
      file = *read;
      file_path = location->path;
    }
  }
  Connection out;
  std::string server_text;
  if (flags.server) {
    server_text = *flags.server, out.server_source = "--server";
  } else if (env_server) {
    server_text = *env_server, out.server_source = "ORDO_SERVER";
  } else if (file.server) {
    server_text = *file.server, out.server_source = file_path + ": server";
  } else {
    return FailInput("--server",
                     "no server: give --server http://HOST:PORT, set ORDO_SERVER, or "
                     "put \"server\" in ~/.config/ordo/client.json (or $ORDO_CONFIG)");
  }
  if (flags.token) {
    out.token = *flags.token, out.token_source = "--token";
  } else if (env_token) {
    out.token = *env_token, out.token_source = "ORDO_TOKEN";
  } else if (file.token) {
    out.token = *file.token, out.token_source = file_path + ": token";
  } else {
    return FailInput("--token",
                     "no token: give --token TOKEN, set ORDO_TOKEN, or put \"token\" in "
                     "~/.config/ordo/client.json (or $ORDO_CONFIG)");
  }
  Result<ServerAddress> address = ParseServerAddress(server_text, out.server_source);
  if (!address) return tl::unexpected(address.error());
  out.server = *address;
  return out;
}

Environment ProcessEnvironment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

}  // namespace ordo::client
