// read_text_file: the whole file when it fits; a typed error naming the
// file otherwise, without reading more than the bound (a device that never
// ends, a directory, a missing path).
#include "base/text_file.h"

#include <unistd.h>

#include <cstdio>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

using ::testing::HasSubstr;

std::string write_temp(const std::string& text) {
  std::string path = ::testing::TempDir() + "text_file_test_XXXXXX";
  const int fd = mkstemp(path.data());
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, text.data(), text.size()),
            static_cast<ssize_t>(text.size()));
  close(fd);
  return path;
}

TEST(ReadTextFile, ReturnsTheWholeFileUpToTheBound) {
  // Larger than one piece read at a time, and exactly the bound.
  std::string text(200'000, 'x');
  text[0] = 'a';
  text.back() = 'z';
  const std::string path = write_temp(text);
  absl::StatusOr<std::string> read =
      base::read_text_file(path, text.size(), "test");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, text);
  EXPECT_EQ(*base::read_text_file(write_temp(""), 10, "test"), "");
  std::remove(path.c_str());
}

TEST(ReadTextFile, RefusesWhatIsLargerThanTheBound) {
  const std::string path = write_temp(std::string(101, 'x'));
  absl::StatusOr<std::string> read =
      base::read_text_file(path, 100, "fault plan");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(),
              HasSubstr("fault plan " + path + " is over 100 bytes"));
  std::remove(path.c_str());
  // A device has no size: reading stops at the bound.
  read = base::read_text_file("/dev/zero", 1 << 20, "device JSON");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(), HasSubstr("is over 1048576 bytes"));
}

TEST(ReadTextFile, MissingFilesAndDirectoriesAreNamed) {
  absl::StatusOr<std::string> read =
      base::read_text_file("/nonexistent/plan.txt", 100, "fault plan");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(read.status().message(),
              HasSubstr("fault plan /nonexistent/plan.txt cannot be opened"));
  // Refused by name on every standard library (libc++ reads a directory
  // as an empty file).
  read = base::read_text_file("/tmp", 100, "timeline");
  EXPECT_EQ(read.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(read.status().message(),
              HasSubstr("timeline /tmp cannot be read (it is a directory)"));
}

}  // namespace
}  // namespace weft
