# Homebrew formula for weft, built from source with CMake. The repository
# is its own tap (this file is Formula/weft.rb), so from a checkout:
#
#   brew tap weft/local "$PWD"
#   brew install --HEAD weft/local/weft
#
# HEAD builds the tapped checkout's main branch. Not yet run on a Mac: the
# CMake arguments below are the ones weft's CI installs with on Linux.
class Weft < Formula
  desc "Collective communication over RDMA (Thunderbolt 5), built simulation-first"
  # No homepage yet: weft has no public home to point to.
  license "MIT"
  # The tap's own clone of the repository (Formula/..).
  head "file://#{File.expand_path("..", __dir__)}", using: :git, branch: "main"

  depends_on "cmake" => [:build, :test]
  depends_on "ninja" => :build
  depends_on "pkgconf" => :test
  depends_on "abseil"
  # weft::testing and weft::collectives_testing, the installed gMock mocks.
  depends_on "googletest"
  depends_on "nlohmann-json"

  def install
    args = %w[
      -DWEFT_BUILD_TESTS=OFF
      -DWEFT_BUILD_BENCH=OFF
      -DWEFT_BUILD_MOCKS=ON
      -DWEFT_CCACHE=OFF
    ]
    system "cmake", "-S", ".", "-B", "build", "-G", "Ninja", *args, *std_cmake_args
    system "cmake", "--build", "build"
    system "cmake", "--install", "build"
  end

  test do
    (testpath/"app.cc").write <<~CPP
      #include <cstdio>
      #include "rendezvous/config.h"
      #include "fabric/topology.h"
      #include "sim/world.h"
      int main() {
        weft::sim::WorldOptions options;
        options.topology = *weft::Topology::mesh(4);
        auto world = weft::sim::World::create(options);
        if (!world.ok() || (*world)->ranks() != 4) return 1;
        if (!weft::Config{}.validate().ok()) return 1;
        std::puts("weft: ok");
        return 0;
      }
    CPP
    (testpath/"CMakeLists.txt").write <<~CMAKE
      cmake_minimum_required(VERSION 3.25)
      project(weft_formula_test LANGUAGES CXX)
      set(CMAKE_CXX_STANDARD 20)
      find_package(weft REQUIRED COMPONENTS sim collectives testing)
      add_executable(app app.cc)
      target_link_libraries(app PRIVATE weft::sim weft::collectives)
    CMAKE
    system "cmake", "-S", ".", "-B", "build", *std_cmake_args
    system "cmake", "--build", "build"
    assert_equal "weft: ok", shell_output("./build/app").strip

    flags = shell_output("pkgconf --cflags --libs weft").split
    system ENV.cxx, "-std=c++20", "app.cc", "-o", "app_pc", *flags
    assert_equal "weft: ok", shell_output("./app_pc").strip

    assert_match(/^weft-sim \d+\.\d+\.\d+ /, shell_output("#{bin}/weft-sim --version"))
  end
end
