// Socket closes its descriptor exactly once, moves hand it over, release()
// gives it up; errno_text names the error and its number.
#include "net/socket.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "absl/strings/str_format.h"
#include "fabric/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace weft {
namespace {

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1; }

TEST(Socket, ClosesOnceAndMovesOwnership) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[1]);
  const int fd = fds[0];
  {
    net::Socket a(fd);
    net::Socket b(std::move(a));
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): checked
    EXPECT_EQ(b.fd(), fd);
    net::Socket c;
    c = std::move(b);
    EXPECT_TRUE(is_open(fd));
  }
  EXPECT_FALSE(is_open(fd));
}

TEST(Socket, ReleaseGivesUpTheDescriptor) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[1]);
  { EXPECT_EQ(net::Socket(fds[0]).release(), fds[0]); }
  EXPECT_TRUE(is_open(fds[0]));
  ::close(fds[0]);
}

TEST(ErrnoText, NamesTheErrorAndItsNumber) {
  EXPECT_THAT(errno_text(ECONNREFUSED),
              ::testing::EndsWith(absl::StrFormat("(errno %d)", ECONNREFUSED)));
  EXPECT_EQ(errno_text(0), "no errno");
}

}  // namespace
}  // namespace weft
