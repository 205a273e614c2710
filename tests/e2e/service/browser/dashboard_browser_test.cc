// The dashboard and the report in a real browser: headless Chromium (Debian's `chromium`) loads the
// dashboard from a running `ordo serve`, runs its script against the API, and the test finds every
// job in the rendered page, each kind in the palette's colour, the nodes and GPU numbers on the GPU
// axis and the API's clock times on the time axis; it opens `ordo compare`'s report.html the same
// way. Screenshots (the test artifacts, to look at) are saved under <build>/test-artifacts/:
// dashboard-browser/dashboard-admin.png, dashboard-browser/dashboard-tenant-b.png and
// report-browser/report.png. Skipped (not failed) when no chromium is installed;
// scripts/install-deps.sh installs it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "ordo/core/palette.h"
#include "tests/e2e/cli_runner.h"
#include "tests/e2e/service/support/server_process.h"
#include "tests/support/page_colors.h"

namespace ordo::testing::e2e {
namespace {

using nlohmann::json;
using ordo::testing::HexColors;
using ordo::testing::InPalette;

// The browser: $ORDO_CHROMIUM when set (empty or not executable: none), else Debian's
// /usr/bin/chromium or /usr/bin/chromium-browser. Empty when there is none.
std::string FindChromium() {
  if (const char* env = std::getenv("ORDO_CHROMIUM"); env != nullptr) {
    return *env != '\0' && access(env, X_OK) == 0 ? env : "";
  }
  for (const char* path : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
    if (access(path, X_OK) == 0) return path;
  }
  return {};
}

// Runs chromium headless on `url` with `mode` (`--dump-dom` or `--screenshot=PATH`); returns its
// standard output. The profile is a fresh directory; no network but 127.0.0.1 is touched (the page
// loads nothing from elsewhere and background networking is off).
std::string RunChromium(const std::string& chromium, const std::filesystem::path& dir,
                        const std::string& mode, const std::string& url) {
  const std::filesystem::path profile = dir / ("profile-" + std::to_string(std::rand()));
  std::filesystem::create_directories(profile);
  const std::string command =
      chromium + " --headless --no-sandbox --disable-gpu --disable-background-networking" +
      " --no-first-run --disable-extensions --disable-sync --disable-component-update" +
      " --user-data-dir=" + profile.string() + " --window-size=1400,2400" +
      " --virtual-time-budget=15000 --timeout=60000 " + mode + " '" + url + "' 2>" +
      (dir / "chromium.log").string();
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[65536];
  size_t n = 0;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  pclose(pipe);
  std::filesystem::remove_all(profile);
  return out;
}

// The value of attribute `name` in the first tag at or after `from`, or "".
std::string AttrAfter(const std::string& dom, size_t from, const std::string& name) {
  const size_t at = dom.find(" " + name + "=\"", from);
  if (at == std::string::npos) return "";
  const size_t begin = at + name.size() + 3;
  return dom.substr(begin, dom.find('"', begin) - begin);
}

// A PNG of some substance: the signature, and more bytes than an empty page compresses to.
void ExpectScreenshot(const std::filesystem::path& png) {
  ASSERT_TRUE(std::filesystem::exists(png)) << "no screenshot at " << png;
  std::ifstream in(png, std::ios::binary);
  char signature[8] = {};
  in.read(signature, 8);
  EXPECT_EQ(std::string(signature, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(std::filesystem::file_size(png), 20'000u) << "the screenshot looks empty";
  std::cout << "screenshot: " << png << "\n";
}

TEST(DashboardBrowser, ShowsEveryJobAndSavesAScreenshot) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) {
    GTEST_SKIP() << "no headless browser: /usr/bin/chromium is not installed (or $ORDO_CHROMIUM "
                    "is not executable); scripts/install-deps.sh installs Debian's chromium";
  }
  const std::filesystem::path dir = ArtifactDir("dashboard-browser");
  ServerProcess server =
      ServerProcess::Start(TestConfig(4, 16), {"--manual-clock", "--full-every", "0"}, dir);
  ASSERT_TRUE(server.running());

  // A service with a daily-looking curve, and jobs of both tenants; two steps committed so the
  // chart has history, running jobs and planned ones.
  json service = {{"id", "chat"},
                  {"priority", 10},
                  {"min_gpus", 2},
                  {"max_gpus", 16},
                  {"max_change_per_step", 4},
                  {"demand", {4, 4, 6, 8, 12, 14, 14, 12, 10, 8, 6, 4, 4, 4, 4, 4}}};
  ASSERT_EQ(server.Post("/v1/services", kAdminToken, service.dump()).status, 201);
  std::set<std::string> ids;
  std::map<std::string, JobKind> kind_of;
  const char* kinds[] = {"training", "batch_inference", "quantization"};
  for (int k = 0; k < 14; ++k) {
    const std::string id = std::string(k % 2 == 0 ? "vision-" : "speech-") + std::to_string(k);
    json job = {{"id", id},
                {"kind", kinds[k % 3]},
                {"priority", 1 + k % 5},
                {"gpus", 1 << (k % 4)},
                {"duration_steps", 1 + k % 4}};
    Response r = server.Post("/v1/jobs", k % 2 == 0 ? kTokenA : kTokenB, job.dump());
    ASSERT_EQ(r.status, 201) << r.body;
    ids.insert(id);
    kind_of[id] = static_cast<JobKind>(k % 3);
    if (k == 7) {
      ASSERT_EQ(server.Post("/v1/clock/advance", kAdminToken, R"({"steps": 2})").status, 200);
    }
  }
  // GET /v1/plan waits for the plan of the current state: after it no re-plan is due (no change
  // follows, full mode is off), so the list below and the page read the same plan.
  ASSERT_EQ(server.Get("/v1/plan", kAdminToken).status, 200);
  Response list = server.Get("/v1/jobs", kAdminToken);
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.json()["jobs"].size(), ids.size());

  const std::string base = "http://127.0.0.1:" + std::to_string(server.port()) + "/";
  const std::string dom = RunChromium(chromium, dir, "--dump-dom", base + "#token=" + kAdminToken);
  std::ofstream(dir / "dashboard-admin.html") << dom;
  ASSERT_NE(dom.find("data-ready=\"1\""), std::string::npos)
      << "the page did not render its data; chromium log in " << (dir / "chromium.log");
  // The admin's page names each job by its qualified id, `tenant/id`.
  for (const std::string& id : ids) {
    const std::string qualified = (id.rfind("vision-", 0) == 0 ? "a/" : "b/") + id;
    EXPECT_NE(dom.find("data-job-id=\"" + qualified + "\""), std::string::npos)
        << "job " << id << " is not in the page";
  }
  EXPECT_NE(dom.find("data-service-id=\"chat\""), std::string::npos);
  EXPECT_NE(dom.find("GPU by time chart"), std::string::npos);

  // One palette: each job's first block is drawn in its kind's colour, and no colour on the page
  // is outside the palette.
  for (const auto& [id, kind] : kind_of) {
    const std::string qualified = (id.rfind("vision-", 0) == 0 ? "a/" : "b/") + id;
    const size_t block = dom.find("<g data-job-id=\"" + qualified + "\"><rect");
    if (block == std::string::npos) continue;  // not in the chart's window (finished long ago)
    EXPECT_EQ(AttrAfter(dom, block, "fill"), KindColor(kind)) << qualified;
  }
  for (JobKind kind : {JobKind::kTraining, JobKind::kBatchInference, JobKind::kQuantization}) {
    EXPECT_NE(dom.find("--swatch: " + std::string(KindColor(kind)) + ";\">" +
                       [&] {
                         std::string label(JobKindName(kind));
                         std::replace(label.begin(), label.end(), '_', ' ');
                         return label;
                       }()),
              std::string::npos)
        << "legend of " << JobKindName(kind);
  }
  for (const std::string& color : HexColors(dom)) EXPECT_TRUE(InPalette(color)) << color;

  // The GPU axis: the four nodes by name with their GPU ranges, and every GPU's number.
  for (int n = 0; n < 4; ++n) {
    EXPECT_NE(dom.find(">h100-" + std::to_string(n) + "</text>"), std::string::npos) << n;
    EXPECT_NE(
        dom.find(">GPUs " + std::to_string(8 * n) + "–" + std::to_string(8 * n + 7) + "</text>"),
        std::string::npos)
        << n;
  }
  for (int g = 0; g < 32; ++g) {
    EXPECT_NE(dom.find("data-gpu=\"" + std::to_string(g) + "\">" + std::to_string(g) + "<"),
              std::string::npos)
        << "GPU " << g;
  }
  // The time axis: each of the API's ticks with its absolute step and its UTC clock time.
  Response dashboard = server.Get("/v1/dashboard?history=48", kAdminToken);
  ASSERT_EQ(dashboard.status, 200);
  const json& ticks = dashboard.json()["time_axis"]["ticks"];
  ASSERT_GE(ticks.size(), 4u);
  for (const json& tick : ticks) {
    const std::string step = std::to_string(tick["step"].get<int64_t>());
    const std::string time = tick["time"].get<std::string>();  // 2026-12-01T15:00:00Z
    const std::string clock = time.substr(11, 5) + "Z";
    EXPECT_NE(dom.find("data-step=\"" + step + "\">" + step + "</text>"), std::string::npos)
        << step;
    EXPECT_NE(dom.find("data-step=\"" + step + "\">" + clock + "</text>"), std::string::npos)
        << step << " at " << clock;
  }

  // One clock: each pending job's row shows the absolute step the API gives (after the advance,
  // absolute and relative differ by 2), with its UTC time; "in N steps" only beside it.
  int pending_rows = 0;
  for (const json& job : list.json()["jobs"]) {
    if (job["state"] != "pending" || job["planned_start_step"].is_null()) continue;
    const size_t at =
        dom.find("<tr class=\"pending\" data-job-id=\"" + job["id"].get<std::string>() + "\"");
    ASSERT_NE(at, std::string::npos) << job["id"];
    const std::string row = dom.substr(at, dom.find("</tr>", at) - at);
    const int64_t step = job["planned_start_step"].get<int64_t>();
    const int64_t in = job["planned_start_in_steps"].get<int64_t>();
    EXPECT_EQ(step - in, 2) << "planned_start_step must be absolute: " << job.dump();
    EXPECT_NE(row.find("step " + std::to_string(step) + " · "), std::string::npos) << row;
    if (in > 0) {
      EXPECT_NE(row.find("(in " + std::to_string(in) + (in == 1 ? " step)" : " steps)")),
                std::string::npos)
          << row;
    }
    ++pending_rows;
  }
  EXPECT_GT(pending_rows, 0) << "no pending job to check the clock on";

  // A tenant's view holds its own jobs and none of the other tenant's, which are drawn in the
  // palette's colour for another tenant's job.
  const std::string tenant_dom =
      RunChromium(chromium, dir, "--dump-dom", base + "#token=" + kTokenB);
  std::ofstream(dir / "dashboard-tenant-b.html") << tenant_dom;
  ASSERT_NE(tenant_dom.find("data-ready=\"1\""), std::string::npos);
  for (const std::string& id : ids) {
    const bool mine = id.rfind("speech-", 0) == 0;
    EXPECT_EQ(tenant_dom.find("data-job-id=\"" + id + "\"") != std::string::npos, mine) << id;
    // Nowhere in the page: not in a row, a title, a reason or a message.
    if (!mine) {
      EXPECT_EQ(tenant_dom.find(id), std::string::npos) << id << " leaks to tenant b";
    }
  }
  const size_t hidden = tenant_dom.find("<g data-job-id=\"\"><rect");
  ASSERT_NE(hidden, std::string::npos) << "no block of tenant a in tenant b's chart";
  EXPECT_EQ(AttrAfter(tenant_dom, hidden, "fill"), Color(Swatch::kHidden));
  const std::filesystem::path tenant_png = dir / "dashboard-tenant-b.png";
  RunChromium(chromium, dir, "--screenshot=" + tenant_png.string(), base + "#token=" + kTokenB);
  ExpectScreenshot(tenant_png);

  // The admin's screenshot, kept as the test's artifact.
  const std::filesystem::path png = dir / "dashboard-admin.png";
  RunChromium(chromium, dir, "--screenshot=" + png.string(), base + "#token=" + kAdminToken);
  ExpectScreenshot(png);
}

// `ordo compare --report-dir` on two of the study's scenarios, report.html opened in the browser:
// the charts render with their node and time labels, only the palette's colours, and a screenshot.
TEST(ReportBrowser, RendersTheChartsAndSavesAScreenshot) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) GTEST_SKIP() << "no headless browser: /usr/bin/chromium is not installed";
  const std::filesystem::path dir = ArtifactDir("report-browser");
  const std::filesystem::path scenarios = ordo::testing::SourceDir() / "scenarios";
  const ordo::testing::CliResult compare = ordo::testing::RunOrdo(
      {"compare", (scenarios / "01-mixed-control.json").string(),
       (scenarios / "04-large-mixed.json").string(), "--policies", "fifo,ordo", "--no-bound",
       "--report-dir", (dir / "report").string()});
  ASSERT_EQ(compare.exit_code, 0) << compare.err;
  const std::string url = "file://" + (dir / "report" / "report.html").string();
  const std::string dom = RunChromium(chromium, dir, "--dump-dom", url);
  ASSERT_NE(dom.find("<svg class=\"chart\""), std::string::npos) << "no chart rendered";
  // 01: 2 nodes of 8 H100; 04: 4 nodes. Both 24 one-hour steps.
  EXPECT_NE(dom.find(">h100-3</text>"), std::string::npos);
  EXPECT_NE(dom.find(">GPU 24–31</text>"), std::string::npos);
  EXPECT_NE(dom.find(">+12h</text>"), std::string::npos);
  for (const std::string& color : HexColors(dom)) EXPECT_TRUE(InPalette(color)) << color;
  const std::filesystem::path png = dir / "report.png";
  RunChromium(chromium, dir, "--screenshot=" + png.string(), url);
  ExpectScreenshot(png);
}

}  // namespace
}  // namespace ordo::testing::e2e
