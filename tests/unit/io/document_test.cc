// Loading documents: the pre-checks (size, UTF-8, nesting), JSON strictness, the YAML 1.2 core
// schema typing, file reading and type detection, and robustness against mangled input.
#include "ordo/io/document.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "ordo/core/scenario.h"
#include "ordo/io/plan_io.h"
#include "ordo/io/scenario_io.h"
#include "tests/support/random_scenario.h"
#include "tests/unit/io/io_test_util.h"

namespace ordo::io {
namespace {

using nlohmann::json;

std::string Repeat(std::string_view piece, int times) {
  std::string out;
  for (int i = 0; i < times; ++i) out += piece;
  return out;
}

json Yaml(const std::string& text) {
  auto doc = ParseDocument(text, true);
  EXPECT_TRUE(doc.has_value()) << text << " -> " << doc.error().ToString();
  return doc ? *doc : json();
}

// ---- YAML scalar typing (YAML 1.2 core schema) ---------------------------------------------

struct ScalarCase {
  std::string yaml;  // the value after `v: `
  json expected;
};

class YamlScalarTest : public ::testing::TestWithParam<ScalarCase> {};

TEST_P(YamlScalarTest, ResolvesByTheCoreSchema) {
  const json doc = Yaml("v: " + GetParam().yaml + "\n");
  ASSERT_TRUE(doc.contains("v"));
  EXPECT_EQ(doc["v"], GetParam().expected) << GetParam().yaml;
  EXPECT_EQ(doc["v"].type(), GetParam().expected.type()) << GetParam().yaml;
}

INSTANTIATE_TEST_SUITE_P(
    Scalars, YamlScalarTest,
    ::testing::Values(
        ScalarCase{"12", 12}, ScalarCase{"-7", -7}, ScalarCase{"+5", 5}, ScalarCase{"0", 0},
        ScalarCase{"007", 7}, ScalarCase{"0x1F", 31}, ScalarCase{"0o17", 15},
        ScalarCase{"9223372036854775807", int64_t{9223372036854775807}},
        ScalarCase{"9223372036854775808", uint64_t{9223372036854775808u}},
        ScalarCase{"123456789012345678901234", 123456789012345678901234.0}, ScalarCase{"1.5", 1.5},
        ScalarCase{"-0.25", -0.25}, ScalarCase{".5", 0.5}, ScalarCase{"1.", 1.0},
        ScalarCase{"1e3", 1000.0}, ScalarCase{"2.5E-2", 0.025}, ScalarCase{"1e-400", 0.0},
        ScalarCase{"true", true}, ScalarCase{"True", true}, ScalarCase{"FALSE", false},
        ScalarCase{"null", nullptr}, ScalarCase{"~", nullptr}, ScalarCase{"", nullptr},
        // YAML 1.1 spellings are plain strings in 1.2: no "Norway problem".
        ScalarCase{"yes", "yes"}, ScalarCase{"no", "no"}, ScalarCase{"on", "on"},
        ScalarCase{"1_000", "1_000"}, ScalarCase{"0b101", "0b101"}, ScalarCase{"1:30", "1:30"},
        // Quoted and block scalars, and the str tag, are always strings.
        ScalarCase{"'12'", "12"}, ScalarCase{"\"true\"", "true"}, ScalarCase{"'null'", "null"},
        ScalarCase{"\"\"", ""}, ScalarCase{"!!str 5", "5"}, ScalarCase{"! 5", "5"},
        ScalarCase{"!!float 3", 3.0}, ScalarCase{"!!int '7'", 7}, ScalarCase{"!!bool TRUE", true},
        ScalarCase{"hello world", "hello world"}, ScalarCase{"it's", "it's"},
        ScalarCase{"caf\xC3\xA9", "caf\xC3\xA9"},
        ScalarCase{"[1, 'a', ~]", json({1, "a", nullptr})},
        ScalarCase{"{a: 1}", json({{"a", 1}})}));

TEST(YamlDocumentTest, BlockScalarsAndCommentsDoNotCountAsNesting) {
  std::string text = "description: |\n";
  for (int i = 0; i < 100; ++i) text += std::string(static_cast<size_t>(2 + i), ' ') + "[{ # }\n";
  text += "name: x  # a comment with [[[[[[[[ and {{{{{{\n";
  text +=
      "other: 'quoted [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[['\n";
  text +=
      "more: \"dq [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[ \\\" "
      "[\"\n";
  const json doc = Yaml(text);
  EXPECT_EQ(doc["name"], "x");
  EXPECT_EQ(doc["description"].get<std::string>().substr(0, 4), "[{ #");
  EXPECT_EQ(doc["more"].get<std::string>().substr(0, 3), "dq ");
}

TEST(YamlDocumentTest, BlockScalarInSequenceEndsAtItsOwner) {
  const json doc = Yaml("- |\n  text\n- key: >-\n    folded\n  other: [1, [2]]\n");
  EXPECT_EQ(doc[0], "text\n");
  EXPECT_EQ(doc[1]["key"], "folded");
  EXPECT_EQ(doc[1]["other"], json({1, json({2})}));
}

TEST(YamlDocumentTest, AliasesExpand) {
  const json doc = Yaml("base: &curve [1, 2, 3]\ncopy: *curve\n");
  EXPECT_EQ(doc["copy"], json({1, 2, 3}));
}

TEST(YamlDocumentTest, AliasesCannotNestPastTheLimit) {
  // Each anchor nests the previous one 30 levels deeper: the text is shallow, the tree is not.
  std::string text;
  std::string prev;
  for (int k = 0; k < 5; ++k) {
    text += "a" + std::to_string(k) + ": &a" + std::to_string(k) + " " + Repeat("[", 30) +
            (prev.empty() ? "1" : "*" + prev) + Repeat("]", 30) + "\n";
    prev = "a" + std::to_string(k);
  }
  auto doc = ParseDocument(text, true);
  ASSERT_FALSE(doc.has_value());
  EXPECT_NE(doc.error().message.find("nesting"), std::string::npos) << doc.error().ToString();
}

TEST(YamlDocumentTest, NonStringKeysAreRejected) {
  auto doc = ParseDocument("? [1, 2]\n: x\n", true);
  ASSERT_FALSE(doc.has_value());
  EXPECT_NE(doc.error().message.find("keys"), std::string::npos);
}

TEST(YamlDocumentTest, PlainKeysKeepTheirText) {
  const json doc = Yaml("1: a\ntrue: b\n");
  EXPECT_EQ(doc["1"], "a");
  EXPECT_EQ(doc["true"], "b");
}

// ---- nesting limits, both formats ------------------------------------------------------------

TEST(NestingTest, JsonAtTheLimitIsAcceptedOneMoreIsNot) {
  const int limit = Limits::kMaxNesting;
  EXPECT_TRUE(ParseDocument(Repeat("[", limit) + Repeat("]", limit), false).has_value());
  auto deep = ParseDocument(Repeat("[", limit + 1) + Repeat("]", limit + 1), false);
  ASSERT_FALSE(deep.has_value());
  EXPECT_NE(deep.error().message.find("byte offset 64"), std::string::npos) << deep.error().message;
}

TEST(NestingTest, BracketsInJsonStringsDoNotCount) {
  const std::string text = "{\"a\": \"" + Repeat("[{", 500) + "\\\"\", \"b\": [1]}";
  auto doc = ParseDocument(text, false);
  ASSERT_TRUE(doc.has_value()) << doc.error().ToString();
  EXPECT_EQ((*doc)["b"], json({1}));
}

TEST(NestingTest, YamlFlowAtTheLimitIsAcceptedOneMoreIsNot) {
  const int limit = Limits::kMaxNesting;
  EXPECT_TRUE(ParseDocument(Repeat("[", limit) + Repeat("]", limit), true).has_value());
  EXPECT_FALSE(ParseDocument(Repeat("[", limit + 1) + Repeat("]", limit + 1), true).has_value());
}

TEST(NestingTest, YamlBlockMapsAtTheLimitAreAccepted) {
  // 63 maps inside the root map: 64 levels.
  std::string text;
  for (int d = 0; d < Limits::kMaxNesting - 1; ++d) {
    text += std::string(static_cast<size_t>(d), ' ') + "a:\n";
  }
  text += std::string(static_cast<size_t>(Limits::kMaxNesting - 1), ' ') + "b: 1\n";
  auto doc = ParseDocument(text, true);
  ASSERT_TRUE(doc.has_value()) << doc.error().ToString();
}

TEST(NestingTest, YamlTagsAndAnchorsDoNotHideBrackets) {
  // A tag or anchor name ends at a flow indicator, so `!t[[[` opens collections.
  for (const std::string prefix : {"v: !t", "v: &a", "- !!seq"}) {
    auto doc = ParseDocument(prefix + Repeat("[", 200) + Repeat("]", 200) + "\n", true);
    ASSERT_FALSE(doc.has_value()) << prefix;
    EXPECT_NE(doc.error().message.find("nesting"), std::string::npos) << doc.error().ToString();
  }
}

TEST(NestingTest, HugeInputsOfEveryBracketKindFailFast) {
  for (const std::string piece : {"[", "{", "{\"a\":", "- ", "a: {b: ["}) {
    for (bool yaml : {false, true}) {
      auto doc = ParseDocument(Repeat(piece, 100'000), yaml);
      ASSERT_FALSE(doc.has_value()) << piece << " yaml=" << yaml;
    }
  }
  // Deep indentation without markers.
  std::string indented;
  for (int d = 0; d < 5000; ++d) indented += std::string(static_cast<size_t>(d), ' ') + "k:\n";
  EXPECT_FALSE(ParseDocument(indented, true).has_value());
}

// ---- text checks ---------------------------------------------------------------------------

struct BadText {
  std::string name;
  std::string text;
  std::string word;
};

class BadTextTest : public ::testing::TestWithParam<BadText> {};

TEST_P(BadTextTest, RejectedInBothFormats) {
  for (bool yaml : {false, true}) {
    auto doc = ParseDocument(GetParam().text, yaml);
    ASSERT_FALSE(doc.has_value()) << "yaml=" << yaml;
    EXPECT_EQ(doc.error().code, ErrorCode::kInvalidInput);
    EXPECT_NE(doc.error().message.find(GetParam().word), std::string::npos)
        << "yaml=" << yaml << ": " << doc.error().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Texts, BadTextTest,
    ::testing::Values(BadText{"Empty", "", "empty"}, BadText{"Blank", "\r\n \t", "empty"},
                      BadText{"BomOnly", "\xEF\xBB\xBF  \n", "empty"},
                      BadText{"LoneContinuation", "{\"a\": \"\x80\"}",
                              "byte offset 7 (line 1, column 8)"},
                      BadText{"Overlong", "[\"\xC1\xBF\"]", "UTF-8"},
                      BadText{"Surrogate", "[\"\xED\xA0\x80\"]", "UTF-8"},
                      BadText{"AboveUnicode", "[\"\xF4\x90\x80\x80\"]", "UTF-8"},
                      BadText{"Truncated", "[\"\xE2\x82", "UTF-8"},
                      BadText{"SecondLine", "{\n\"a\": \"\xFF\"}", "line 2, column 7"},
                      BadText{"InvalidAfterBom", "\xEF\xBB\xBF[\"\xFF\"]", "byte offset 5"},
                      BadText{"Nul", std::string("[1,\0 2]", 7), "control character 0x00"},
                      BadText{"Escape", "[\"\x1B[31m\"]", "control character 0x1B"}),
    [](const auto& info) { return info.param.name; });

TEST(JsonDocumentTest, DuplicateKeysAreRejectedWithTheirPath) {
  auto doc = ParseDocument(R"({"a": [{"b": 1}, {"b": 2, "c": {"d": 1, "d": 2}}]})", false);
  ASSERT_FALSE(doc.has_value());
  EXPECT_EQ(doc.error().field, "a[1].c.d");
  EXPECT_NE(doc.error().message.find("duplicate"), std::string::npos);
}

TEST(JsonDocumentTest, NumbersKeepTheirKinds) {
  auto doc =
      ParseDocument(R"([1, -1, 1.0, 18446744073709551615, 1e30, 99999999999999999999999])", false);
  ASSERT_TRUE(doc.has_value()) << doc.error().ToString();
  EXPECT_TRUE((*doc)[0].is_number_integer());
  EXPECT_TRUE((*doc)[2].is_number_float());
  EXPECT_TRUE((*doc)[3].is_number_unsigned());
  EXPECT_TRUE((*doc)[4].is_number_float());
  EXPECT_TRUE((*doc)[5].is_number_float());
}

TEST(JsonDocumentTest, OverflowingNumbersAndNonJsonAreRejected) {
  for (const char* text : {"[1e400]", "[NaN]", "[Infinity]", "{'a': 1}", "{\"a\": 1,}",
                           "[1] // comment", "{\"a\" 1}"}) {
    auto doc = ParseDocument(text, false);
    EXPECT_FALSE(doc.has_value()) << text;
  }
}

TEST(JsonDocumentTest, ErrorsCarryLineAndColumn) {
  auto doc = ParseDocument("{\n  \"a\": 1,\n  \"b\": ]\n}", false);
  ASSERT_FALSE(doc.has_value());
  EXPECT_NE(doc.error().message.find("line 3"), std::string::npos) << doc.error().message;
}

// ---- files and type detection -----------------------------------------------------------------

TEST(LooksLikeYamlTest, ByNameThenByFirstCharacter) {
  EXPECT_TRUE(LooksLikeYaml("a.yaml", "{}"));
  EXPECT_TRUE(LooksLikeYaml("a.yml", "[]"));
  EXPECT_TRUE(LooksLikeYaml("dir/A.YML", "{}"));
  EXPECT_FALSE(LooksLikeYaml("a.json", "{}"));
  EXPECT_FALSE(LooksLikeYaml("a.json", " \n\t[1]"));
  EXPECT_FALSE(LooksLikeYaml("noext", "\xEF\xBB\xBF {\"a\": 1}"));
  EXPECT_TRUE(LooksLikeYaml("noext", "version: 1"));
  EXPECT_TRUE(LooksLikeYaml("a.json", "version: 1"));  // content decides where the name does not
  EXPECT_TRUE(LooksLikeYaml("a.json", ""));
  EXPECT_FALSE(LooksLikeYaml("yaml", "{}"));  // a name, not an extension
}

TEST(ReadFileTextTest, ReadsBytesExactly) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ordo-io-read-" + std::to_string(getpid())))
          .string();
  const std::string bytes = std::string("a\0b\r\n\xFF", 6) + std::string(200'000, 'x');
  std::ofstream(path, std::ios::binary) << bytes;
  auto text = ReadFileText(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(text.has_value()) << text.error().ToString();
  EXPECT_EQ(*text, bytes);
}

TEST(ReadFileTextTest, RefusesFilesAboveTheLimitWithoutReadingThem) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("ordo-io-big-" + std::to_string(getpid())))
          .string();
  { std::ofstream(path, std::ios::binary) << "x"; }
  // A sparse file: its size is above the limit, its blocks are not on disk.
  std::filesystem::resize_file(path, static_cast<uintmax_t>(Limits::kMaxFileBytes) + 1);
  auto text = ReadFileText(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().code, ErrorCode::kInvalidInput);
  EXPECT_NE(text.error().message.find("larger"), std::string::npos);
}

TEST(ReadFileTextTest, UnreadableFilesAreIoErrors) {
  EXPECT_EQ(ReadFileText("/nonexistent/ordo/file.json").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(ReadFileText(std::filesystem::temp_directory_path().string()).error().code,
            ErrorCode::kIo);
}

// ---- robustness: mangled input never crashes, hangs or throws -------------------------------

// Every prefix, and many random byte edits, of a valid scenario and plan in both formats. Each
// either parses or fails with a message; ASan/UBSan turn any memory error into a failure.
TEST(RobustnessTest, MangledScenariosAndPlansFailCleanly) {
  const std::string json_text = testing::BaseScenarioJson().dump(1);
  const std::string yaml_text = testing::BaseScenarioYaml();
  const std::string plan_text =
      R"({"version": 1, "scenario": "s", "policy": "p", "jobs": [{"id": "a", "start_step": 0,
      "first_gpu": 0, "gpus": 4, "duration_steps": 2}, {"id": "b", "start_step": null}],
      "services": [{"id": "c", "gpus": [[4, 5], [6]]}], "metrics": {"value": 1.5},
      "x-explain": [{"id": "b", "planned_start": null, "reason": "gpu_type"}]})";
  auto check = [](const std::string& text, bool yaml) {
    auto s = ParseScenario(text, yaml);
    if (!s) {
      EXPECT_FALSE(s.error().message.empty());
      EXPECT_NE(s.error().code, ErrorCode::kInternal) << s.error().ToString();
    }
    auto p = ParsePlan(text, yaml);
    if (!p) {
      EXPECT_FALSE(p.error().message.empty());
    }
  };
  for (const std::string* text : {&json_text, &yaml_text, &plan_text}) {
    for (size_t n = 0; n < text->size(); n += 7) {
      check(text->substr(0, n), false);
      check(text->substr(0, n), true);
    }
  }
  ordo::testing::Rng rng(20240601);
  const std::string alphabet = "{}[]:,\"'-#&*!|>? \n\t0123456789.eE+xa\\\xC3\xA9\xFF";
  for (int round = 0; round < 600; ++round) {
    const std::string& base = round % 3 == 0 ? json_text : round % 3 == 1 ? yaml_text : plan_text;
    std::string text = base;
    const int edits = rng.Uniform(1, 6);
    for (int e = 0; e < edits; ++e) {
      const size_t at = static_cast<size_t>(rng.Uniform(0, static_cast<int>(text.size()) - 1));
      const char c =
          alphabet[static_cast<size_t>(rng.Uniform(0, static_cast<int>(alphabet.size()) - 1))];
      switch (rng.Uniform(0, 2)) {
        case 0:
          text[at] = c;
          break;
        case 1:
          text.insert(at, 1, c);
          break;
        default:
          text.erase(at, 1);
          break;
      }
    }
    check(text, false);
    check(text, true);
  }
}

}  // namespace
}  // namespace ordo::io
