// The bash completion and the man page that `ordo help --bash-completion` and `ordo help --man`
// generate, checked against the usage texts: the commands `ordo help` lists and, for each, the
// options and the synopsis `ordo CMD --help` prints. The expectations are read from those texts
// here, with rules of their own, so a generator that drops a command or an option fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/e2e/cli_runner.h"

namespace ordo::testing {
namespace {

std::string ReplaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Runs of spaces made one, and none at the start of a line.
std::string Squeeze(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == ' ' && (out.empty() || out.back() == ' ' || out.back() == '\n')) continue;
    out += c;
  }
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The first word of each line of `ordo help`'s command list ("  plan SCENARIO ..."), each once.
const std::vector<std::string>& ListedCommands() {
  static const std::vector<std::string> commands = [] {
    const CliResult r = RunOrdo({"help"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> names;
    bool in_list = false;
    for (const std::string& line : Lines(r.out)) {
      if (line == "commands:") {
        in_list = true;
      } else if (in_list && line.empty()) {
        break;
      } else if (in_list && line.rfind("  ", 0) == 0 && line[2] != ' ') {
        const std::string name = line.substr(2, line.find(' ', 2) - 2);
        if (names.empty() || names.back() != name) names.push_back(name);
      }
    }
    return names;
  }();
  return commands;
}

// What `ordo COMMAND --help` prints (run once per command for all the tests here).
const std::string& HelpOf(const std::string& command) {
  static std::map<std::string, std::string> texts;
  if (auto it = texts.find(command); it != texts.end()) return it->second;
  const CliResult r = RunOrdo({command, "--help"});
  EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
  return texts.emplace(command, r.out).first->second;
}

// Every `--name` in a usage text: "--" after anything but a letter, digit or hyphen, then a
// lowercase letter, then letters, digits and hyphens.
std::set<std::string> OptionsListedIn(const std::string& usage) {
  const auto in_name = [](char c) { return std::islower(c) || std::isdigit(c) || c == '-'; };
  std::set<std::string> options;
  for (size_t at = usage.find("--"); at != std::string::npos; at = usage.find("--", at + 1)) {
    if (at > 0 && (std::isalnum(usage[at - 1]) || usage[at - 1] == '-')) continue;
    if (at + 2 >= usage.size() || !std::islower(usage[at + 2])) continue;
    size_t end = at + 2;
    while (end < usage.size() && in_name(usage[end])) ++end;
    options.insert(usage.substr(at, end - at));
  }
  return options;
}

// What the completion offers for each command line of `lines` (its last word being completed),
// from one bash.
std::vector<std::set<std::string>> CompleteAll(const std::string& script,
                                               const std::vector<std::vector<std::string>>& lines) {
  std::string program = R"(source "$0" || exit 9)";
  for (const std::vector<std::string>& words : lines) {
    program += "\nCOMP_WORDS=(";
    for (const std::string& word : words) program += "'" + word + "' ";
    program += ")\nCOMP_CWORD=" + std::to_string(words.size() - 1) +
               "\nCOMPREPLY=()\n_ordo\nprintf '%s\\n' \"${COMPREPLY[@]}\" '#end'";
  }
  const CliResult r = RunProgram("bash", {"--norc", "--noprofile", "-c", program, script});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::set<std::string>> offered(1);
  for (const std::string& line : Lines(r.out)) {
    if (line == "#end") {
      offered.emplace_back();
    } else if (!line.empty()) {
      offered.back().insert(line);
    }
  }
  offered.pop_back();
  EXPECT_EQ(offered.size(), lines.size()) << r.out;
  offered.resize(lines.size());
  return offered;
}

std::set<std::string> Complete(const std::string& script, const std::vector<std::string>& words) {
  return CompleteAll(script, {words}).front();
}

// Every command `ordo help` lists and every option its usage lists that the completion script
// does not offer, one line each.
std::vector<std::string> CompletionGaps(const std::string& script) {
  const std::vector<std::string>& commands = ListedCommands();
  std::vector<std::vector<std::string>> lines = {{"ordo", ""}, {"ordo", "help", ""}};
  for (const std::string& command : commands) lines.push_back({"ordo", command, "--"});
  const std::vector<std::set<std::string>> offered = CompleteAll(script, lines);
  std::vector<std::string> gaps;
  for (size_t i = 0; i < commands.size(); ++i) {
    const std::string& command = commands[i];
    if (!offered[0].contains(command)) gaps.push_back("command " + command);
    if (command == "help") continue;
    if (!offered[1].contains(command)) gaps.push_back("ordo help " + command);
    std::set<std::string> options = OptionsListedIn(HelpOf(command));
    options.insert("--help");
    for (const std::string& option : options) {
      if (!offered[i + 2].contains(option)) gaps.push_back(command + " " + option);
    }
  }
  return gaps;
}

std::string GeneratedCompletion(const TempDir& dir) {
  const CliResult r = RunOrdo({"help", "--bash-completion"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string path = dir.File("ordo.bash");
  WriteWhole(path, r.out);
  return path;
}

TEST(HelpDocsTest, CompletionOffersEveryCommandAndEveryOptionItsUsageLists) {
  const std::vector<std::string>& commands = ListedCommands();
  // Not an empty expectation met vacuously: the list and the options are really read.
  ASSERT_GE(commands.size(), 13u);
  EXPECT_EQ(commands.front(), "plan");
  EXPECT_EQ(commands.back(), "help");
  EXPECT_TRUE(OptionsListedIn(HelpOf("compare")).contains("--no-bound"));
  TempDir dir;
  const std::string script = GeneratedCompletion(dir);
  const std::vector<std::string> gaps = CompletionGaps(script);
  EXPECT_TRUE(gaps.empty()) << "not offered: " << ::testing::PrintToString(gaps);
  // Options complete only what was typed; the dispatcher's own words come with the commands.
  EXPECT_EQ(Complete(script, {"ordo", "compare", "--f"}), std::set<std::string>{"--format"});
  const std::set<std::string> first = Complete(script, {"ordo", "--"});
  EXPECT_TRUE(first.contains("--help") && first.contains("--version"));
}

// The check above catches a completion that lost a command: here `queue` renamed in the script.
TEST(HelpDocsTest, ACompletionMissingACommandFailsTheCheck) {
  TempDir dir;
  const std::string script = GeneratedCompletion(dir);
  std::string text = ReadWhole(script);
  ASSERT_NE(text.find(" queue "), std::string::npos);
  ASSERT_NE(text.find(" queue) "), std::string::npos);
  text = ReplaceAll(ReplaceAll(text, " queue ", " queux "), " queue) ", " queux) ");
  WriteWhole(script, text);
  const std::vector<std::string> gaps = CompletionGaps(script);
  EXPECT_NE(std::find(gaps.begin(), gaps.end(), "command queue"), gaps.end());
  EXPECT_NE(std::find(gaps.begin(), gaps.end(), "queue --state"), gaps.end());
  for (const std::string& gap : gaps) EXPECT_NE(gap.find("queue"), std::string::npos) << gap;
}

// `forecast`'s subcommands, as its synopsis names them, complete in second place; other
// arguments (files) are left to bash's file name completion.
TEST(HelpDocsTest, CompletionOffersSubcommandsAndLeavesFilesToBash) {
  std::set<std::string> subcommands;
  const std::string form = "ordo forecast ";
  for (const std::string& line : Lines(HelpOf("forecast"))) {
    const size_t at = line.find(form);
    if (at == std::string::npos) continue;
    size_t end = at + form.size();
    while (end < line.size() && std::islower(line[end])) ++end;
    if (end > at + form.size())
      subcommands.insert(line.substr(at + form.size(), end - at - form.size()));
  }
  ASSERT_GE(subcommands.size(), 3u);
  TempDir dir;
  const std::string script = GeneratedCompletion(dir);
  EXPECT_EQ(Complete(script, {"ordo", "forecast", ""}), subcommands);
  EXPECT_TRUE(Complete(script, {"ordo", "validate", ""}).empty());
  EXPECT_TRUE(Complete(script, {"ordo", "plan", "scenario.json", "--policy", ""}).empty());
}

// The synopsis of a usage text: its lines up to the first one that starts in the first column
// and is not "usage: ...", each without the "usage:" and with runs of spaces made one.
std::vector<std::string> SynopsisOf(const std::string& usage) {
  std::vector<std::string> synopsis;
  for (const std::string& line : Lines(usage)) {
    if (!line.empty() && line[0] != ' ' && line.rfind("usage: ", 0) != 0) break;
    const std::string text = Squeeze(line.rfind("usage: ", 0) == 0 ? line.substr(7) : line);
    if (!text.empty()) synopsis.push_back(text);
  }
  return synopsis;
}

// The man page as text: roff's escapes for the characters the usage texts hold undone, runs of
// spaces made one.
std::string ManText(const std::string& roff) {
  std::string text = ReplaceAll(roff, "\\-", "-");
  text = ReplaceAll(text, "\\(ga", "`");
  text = ReplaceAll(text, "\\&", "");
  text = ReplaceAll(text, "\\e", "\\");
  return Squeeze(text);
}

TEST(HelpDocsTest, ManPageHasEveryCommandsSynopsisAndSection) {
  const CliResult man = RunOrdo({"help", "--man"});
  ASSERT_EQ(man.exit_code, 0) << man.err;
  ASSERT_EQ(man.out.rfind(".\\\" ", 0), 0u);  // a roff comment first, then .TH
  EXPECT_NE(man.out.find("\n.TH ORDO 1 "), std::string::npos);
  const std::string text = ManText(man.out);
  size_t lines = 0;
  for (const std::string& command : ListedCommands()) {
    if (command == "help") continue;
    const std::vector<std::string> synopsis = SynopsisOf(HelpOf(command));
    EXPECT_FALSE(synopsis.empty()) << command;
    for (const std::string& line : synopsis) {
      EXPECT_NE(text.find("\n" + line + "\n"), std::string::npos) << command << ": " << line;
      ++lines;
    }
    EXPECT_NE(text.find("\n.SS \"ordo " + command + "\"\n"), std::string::npos) << command;
  }
  EXPECT_GE(lines, 20u);
}

}  // namespace
}  // namespace ordo::testing
