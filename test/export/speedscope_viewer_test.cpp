// speedscope (the npm package, scripts/install-deps.sh puts it under
// build-deps/npm) opened in headless Chromium (Debian's chromium) on the
// exports of a bundled example with several threads (quicksort_threads):
// the evented JSON and the folded stacks, both served from a local HTTP
// server. The page must name the profile in its title and show no import
// error; a screenshot must show the flame chart. No skip: CI installs both.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "e2e_support.h"
#include "local_http_server.h"

#if PARLOT_HAVE_PNG
#include <png.h>
#endif

namespace parlot::e2e {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

const fs::path kSpeedscope = PARLOT_SPEEDSCOPE_DIR;  // speedscope's dist/release
constexpr int kWidth = 1280;
constexpr int kHeight = 720;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint32_t big_endian(const std::string& s, std::size_t at) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < 4; ++i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

class SpeedscopeViewer : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir;
    // With clock samples (the default): speedscope shows nanoseconds.
    const RunResult r = run_traced({examples_dir() + "/quicksort_threads"}, dir_->path() / "trace");
    ASSERT_EQ(r.exit_status, 0) << r.err;
    // The served tree: speedscope's files and the two profiles beside them.
    fs::create_directory_symlink(kSpeedscope, dir_->path() / "speedscope");
    for (const auto& [format, name] : {std::pair{"speedscope", "quicksort.speedscope.json"},
                                       std::pair{"folded", "quicksort.folded.txt"}}) {
      const RunResult e =
          parlot_read({"export", "--format", format, (dir_->path() / "trace").string(), "-o",
                       (dir_->path() / name).string()});
      ASSERT_EQ(e.exit_status, 0) << e.err;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }

  /// Runs headless Chromium on speedscope with `profile` (a file of the
  /// served tree) and `action` (--dump-dom, --screenshot=...).
  static RunResult chromium(const std::string& profile, const std::string& action) {
    const parlot::test::LocalHttpServer server(dir_->path());
    const std::string url = "http://127.0.0.1:" + std::to_string(server.port()) +
                            "/speedscope/index.html#profileURL=/" + profile;
    const TempDir profile_dir;
    // Flags: root needs --no-sandbox; the network is closed, so Chromium's
    // own background connections are turned off. The virtual-time budget
    // lets speedscope fetch, import and draw before the dump.
    return run({"chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--hide-scrollbars",
                "--user-data-dir=" + profile_dir.path().string(),
                "--window-size=" + std::to_string(kWidth) + "," + std::to_string(kHeight),
                "--virtual-time-budget=15000", action, url});
  }
  static TempDir* dir_;
};
TempDir* SpeedscopeViewer::dir_ = nullptr;

TEST_F(SpeedscopeViewer, ChromiumAndSpeedscopeAreInstalled) {
  EXPECT_EQ(run({"/bin/sh", "-c", "command -v chromium"}).exit_status, 0)
      << "Debian's chromium is missing: run scripts/install-deps.sh";
  EXPECT_TRUE(fs::exists(kSpeedscope / "index.html"))
      << kSpeedscope << ": speedscope is missing: run scripts/install-deps.sh";
}

TEST_F(SpeedscopeViewer, LoadsTheEventedProfileOfEveryThread) {
  // The sandwich view: a table of the functions (HTML, where the flame
  // charts are canvas pixels).
  const RunResult r = chromium("quicksort.speedscope.json&view=sandwich", "--dump-dom");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  // speedscope titles the page "<profile name> - speedscope" once the import
  // succeeded; the first profile is the main thread's.
  EXPECT_THAT(r.out, HasSubstr("<title>pid "));
  EXPECT_THAT(r.out, HasSubstr("thread #0 (tid "));
  EXPECT_THAT(r.out, HasSubstr(" - speedscope</title>"));
  EXPECT_THAT(r.out, Not(HasSubstr("Something went wrong")));
  EXPECT_THAT(r.out, Not(HasSubstr("Unrecognized format")));
  // The thread switcher names the profile as "1/5" (main and 4 workers).
  EXPECT_THAT(r.out, HasSubstr("1/5"));
  // The main thread's functions, named as the file names them.
  EXPECT_THAT(r.out, HasSubstr("merge_chunks"));
  EXPECT_THAT(r.out, HasSubstr("fill_random"));
}

TEST_F(SpeedscopeViewer, LoadsTheFoldedStacks) {
  const RunResult r = chromium("quicksort.folded.txt", "--dump-dom");
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<title>quicksort.folded.txt - speedscope</title>"));
  EXPECT_THAT(r.out, Not(HasSubstr("Something went wrong")));
}

TEST_F(SpeedscopeViewer, ScreenshotIsAPictureOfTheFlameChart) {
  const fs::path png = dir_->path() / "speedscope.png";
  const RunResult r = chromium("quicksort.speedscope.json", "--screenshot=" + png.string());
  ASSERT_EQ(r.exit_status, 0) << r.err;
  const std::string data = slurp(png);
  ASSERT_GT(data.size(), 24u) << png;
  EXPECT_EQ(data.substr(0, 8), "\x89PNG\r\n\x1a\n");
  EXPECT_EQ(data.substr(12, 4), "IHDR");
  EXPECT_EQ(big_endian(data, 16), static_cast<std::uint32_t>(kWidth));
  EXPECT_EQ(big_endian(data, 20), static_cast<std::uint32_t>(kHeight));
#if PARLOT_HAVE_PNG
  // The flame chart and its minimap paint frames in colour over much of
  // the page (7-8% for the main thread, which spends much of its time
  // waiting for its workers with few frames open); speedscope's welcome
  // page (a profile not loaded) has about 3% coloured pixels (its button
  // and links), an error page none.
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&image, png.c_str())) << image.message;
  image.format = PNG_FORMAT_RGB;
  std::vector<unsigned char> rgb(PNG_IMAGE_SIZE(image));
  ASSERT_TRUE(png_image_finish_read(&image, nullptr, rgb.data(), 0, nullptr)) << image.message;
  std::size_t coloured = 0;
  for (std::size_t i = 0; i + 2 < rgb.size(); i += 3) {
    const auto [lo, hi] = std::minmax({rgb[i], rgb[i + 1], rgb[i + 2]});
    if (hi - lo > 24) ++coloured;  // saturated: not white, grey or black
  }
  const double fraction = static_cast<double>(coloured) / static_cast<double>(rgb.size() / 3);
  EXPECT_GT(fraction, 0.05) << png;
#else
  ADD_FAILURE() << "built without libpng (scripts/install-deps.sh installs libpng-dev)";
#endif
  if (const char* keep = std::getenv("PARLOT_KEEP_SCREENSHOT"))
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace parlot::e2e
