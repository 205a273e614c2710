#include "help_docs.h"

#include <algorithm>
#include <cctype>

namespace ordo::cli {
namespace {

constexpr std::string_view kUsageLead = "usage: ";

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = std::min(text.find('\n'), text.size());
    lines.push_back(text.substr(0, end));
    text.remove_prefix(std::min(end + 1, text.size()));
  }
  return lines;
}

bool Blank(std::string_view line) { return line.find_first_not_of(' ') == std::string_view::npos; }

// "usage: ordo NAME ..." or "       ordo NAME ...": a synopsis form's first line.
bool StartsForm(std::string_view name, std::string_view line) {
  if (line.starts_with(kUsageLead)) {
    line.remove_prefix(kUsageLead.size());
  } else {
    line.remove_prefix(std::min(line.find_first_not_of(' '), line.size()));
  }
  const std::string lead = "ordo " + std::string(name);
  return line.starts_with(lead) && (line.size() == lead.size() || line[lead.size()] == ' ');
}

// How many of a usage text's lines are its synopsis: forms, their continuation lines (indented,
// right below), blank lines between forms.
size_t SynopsisLength(std::string_view name, const std::vector<std::string_view>& lines) {
  size_t end = 0;
  bool after_blank = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (Blank(lines[i])) {
      after_blank = true;
      continue;
    }
    const bool continues = end == i && end > 0 && !after_blank && lines[i][0] == ' ';
    if (!StartsForm(name, lines[i]) && !continues) break;
    end = i + 1;
    after_blank = false;
  }
  return end;
}

std::string StripLead(std::string_view line) {
  const size_t cut = line.starts_with(kUsageLead)
                         ? kUsageLead.size()
                         : std::min(line.find_first_not_of(' '), kUsageLead.size());
  return std::string(line.substr(std::min(cut, line.size())));
}

// Text for roff: backslashes and hyphens escaped (an unescaped `-` may print as a hyphen that
// cannot be pasted into a shell), backquotes as grave accents, a leading `.` or `'` made literal.
std::string Roff(std::string_view line) {
  std::string out;
  if (!line.empty() && (line[0] == '.' || line[0] == '\'')) out += "\\&";
  for (const char c : line) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else if (c == '`') {
      out += "\\(ga";
    } else {
      out += c;
    }
  }
  return out;
}

// A help text's lines as roff: lines starting in the first column are prose (filled to the
// reader's width), indented lines (option tables, aligned lists) are kept as written.
void AppendBody(std::string& out, std::span<const std::string_view> lines) {
  bool in_block = false, in_paragraph = false;
  for (const std::string_view line : lines) {
    if (Blank(line)) {
      if (in_block) out += ".fi\n";
      in_block = in_paragraph = false;
      continue;
    }
    if (line[0] == ' ') {
      if (!in_block) out += ".nf\n";
      in_block = true;
    } else {
      if (in_block) out += ".fi\n";
      if (!in_block && !in_paragraph) out += ".PP\n";
      in_block = false;
      in_paragraph = true;
    }
    out += Roff(line) + "\n";
  }
  if (in_block) out += ".fi\n";
}

std::string Join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

std::vector<std::string> SynopsisLines(std::string_view name, std::string_view usage) {
  const std::vector<std::string_view> lines = Lines(usage);
  std::vector<std::string> out;
  for (size_t i = 0; i < SynopsisLength(name, lines); ++i) {
    if (!Blank(lines[i])) out.push_back(StripLead(lines[i]));
  }
  return out;
}

std::vector<std::string> OptionsIn(std::string_view text) {
  std::vector<std::string> options;
  const auto is_word = [](char c) { return std::islower(c) || std::isdigit(c) || c == '-'; };
  for (size_t at = text.find("--"); at != std::string_view::npos; at = text.find("--", at + 2)) {
    if (at > 0 && (is_word(text[at - 1]) || std::isalpha(text[at - 1]))) continue;
    if (at + 2 >= text.size() || !std::islower(text[at + 2])) continue;
    size_t end = at + 2;
    while (end < text.size() && is_word(text[end])) ++end;
    options.emplace_back(text.substr(at, end - at));
  }
  std::sort(options.begin(), options.end());
  options.erase(std::unique(options.begin(), options.end()), options.end());
  return options;
}

std::vector<std::string> SubcommandsIn(std::string_view name, std::string_view usage) {
  std::vector<std::string> words;
  for (const std::string& line : SynopsisLines(name, usage)) {
    if (!StartsForm(name, line)) continue;
    std::string_view rest = line;
    rest.remove_prefix(rest.find("ordo ") + 5 + name.size());
    rest.remove_prefix(std::min(rest.find_first_not_of(' '), rest.size()));
    const std::string_view word = rest.substr(0, rest.find(' '));
    const bool lowercase = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
      return std::islower(c) || c == '-';
    }) && word[0] != '-';
    if (lowercase && std::find(words.begin(), words.end(), word) == words.end()) {
      words.emplace_back(word);
    }
  }
  return words;
}

std::string ManPage(std::string_view summary, std::string_view version, std::string_view overview,
                    std::span<const CommandHelp> commands) {
  // A comment, not a `'\"` line: man-db reads that one as a list of preprocessors.
  std::string out =
      ".\\\" The `ordo` man page, generated by `ordo help --man` from the usage texts.\n";
  out += R"(.TH ORDO 1 "" "ordo )" + Roff(version) + "\" \"User Commands\"\n";
  // Left-aligned and unhyphenated, as the usage texts read on a terminal.
  out += ".ad l\n.nh\n";
  // NAME's text after the dash is lowercase by convention (`man -k` lists it so).
  std::string what(summary);
  if (!what.empty()) what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  out += ".SH NAME\nordo \\- " + Roff(what) + "\n";
  const std::vector<std::string_view> top = Lines(overview);
  out += ".SH SYNOPSIS\n.nf\n";
  if (!top.empty()) out += Roff(StripLead(top[0])) + "\n";
  for (const CommandHelp& c : commands) {
    for (const std::string& line : SynopsisLines(c.name, c.usage)) out += Roff(line) + "\n";
  }
  out += ".fi\n.SH DESCRIPTION\n";
  if (!top.empty()) AppendBody(out, std::span(top).subspan(1));
  out += ".SH COMMANDS\n";
  for (const CommandHelp& c : commands) {
    const std::vector<std::string_view> lines = Lines(c.usage);
    out += ".SS \"ordo " + Roff(c.name) + "\"\n";
    AppendBody(out, std::span(lines).subspan(SynopsisLength(c.name, lines)));
  }
  return out;
}

std::string BashCompletion(std::span<const CommandHelp> commands,
                           std::span<const std::string_view> dispatcher_words) {
  std::vector<std::string> names;
  for (const CommandHelp& c : commands) names.push_back(c.name);
  std::vector<std::string> first = names;
  first.insert(first.end(), dispatcher_words.begin(), dispatcher_words.end());
  std::string out =
      "# bash completion for ordo, generated by `ordo help --bash-completion` from the usage\n"
      "# texts (`ordo COMMAND --help`): commands, subcommands and options; other arguments\n"
      "# complete as file names.\n"
      "_ordo() {\n"
      "  local cur=${COMP_WORDS[COMP_CWORD]} options= subcommands=\n"
      "  if ((COMP_CWORD == 1)); then\n"
      "    subcommands='" +
      Join(first) +
      "'\n"
      "  else\n"
      "    case ${COMP_WORDS[1]} in\n";
  for (const CommandHelp& c : commands) {
    std::vector<std::string> options = OptionsIn(c.usage);
    if (std::find(options.begin(), options.end(), "--help") == options.end()) {
      options.emplace_back("--help");
    }
    out += "      " + c.name + ") options='" + Join(options) + "'";
    if (const std::vector<std::string> subs = SubcommandsIn(c.name, c.usage); !subs.empty()) {
      out += "\n        ((COMP_CWORD == 2)) && subcommands='" + Join(subs) + "'";
    }
    out += " ;;\n";
  }
  out += "      help) ((COMP_CWORD == 2)) && subcommands='" + Join(names) +
         "' ;;\n"
         "    esac\n"
         "  fi\n"
         "  local words=$subcommands\n"
         "  [[ $cur == -* ]] && words=\"$options $subcommands\"\n"
         "  COMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
         "}\n"
         "complete -o default -F _ordo ordo\n";
  return out;
}

}  // namespace ordo::cli
