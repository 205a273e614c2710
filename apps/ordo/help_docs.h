// The man page and the bash completion, generated from the usage texts the commands print for
// `ordo COMMAND --help`: the one source. Nothing here names a command or an option; a command or
// option added to a usage text is in both on the next build (`ordo help --man`,
// `ordo help --bash-completion`; apps/ordo/CMakeLists.txt writes and installs them).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ordo::cli {

/// A command and what `ordo NAME --help` prints.
struct CommandHelp {
  std::string name;
  std::string usage;
};

/// The synopsis at the top of a usage text: each line of each form ("usage: ordo plan ...",
/// "       ordo plan [--server URL] ..."), with the 7 columns of "usage: " taken off every line so
/// continuation lines keep their alignment.
std::vector<std::string> SynopsisLines(std::string_view name, std::string_view usage);

/// Every option the text names (`--name`), sorted, each once.
std::vector<std::string> OptionsIn(std::string_view text);

/// The lowercase words the synopsis puts right after "ordo NAME": the subcommands
/// (`forecast demand`), in order, each once. Placeholders (SCENARIO) and options are not words.
std::vector<std::string> SubcommandsIn(std::string_view name, std::string_view usage);

/// The man page (roff, man macros): NAME from `summary`, SYNOPSIS with every command's forms,
/// DESCRIPTION from `overview` (the top-level usage, whose first line is the general synopsis),
/// and COMMANDS with each command's usage text after its synopsis.
std::string ManPage(std::string_view summary, std::string_view version, std::string_view overview,
                    std::span<const CommandHelp> commands);

/// A bash completion script for `ordo`: the commands and `dispatcher_words` (what main takes in a
/// command's place: help, --help, --version) first; then each command's subcommands and options,
/// `help`'s argument a command; other arguments complete as file names.
std::string BashCompletion(std::span<const CommandHelp> commands,
                           std::span<const std::string_view> dispatcher_words);

}  // namespace ordo::cli
