# Where the AddressSanitizer runtime lives, for builds whose flags ask for it
# (the asan preset). Sets WEFT_ASAN_RUNTIME: the shared runtime's path, or ""
# when the build has no ASan.
#
# gcc links libasan.so into every executable and shared library, and the
# loader finds it on the default search path. clang links its runtime
# statically into executables unless asked for the shared one
# (-shared-libasan, which the asan preset passes): a shared library built
# with -Wl,--no-undefined (the simulated verbs provider) then links, and
# every binary loads the one runtime. That runtime lives in clang's resource
# directory, off the loader's path, so binaries carry an rpath to it.
#
# Programs built without ASan (rdma-core's tools, JACCL's examples) can load
# an instrumented provider only with the runtime preloaded: tests that run
# them set LD_PRELOAD to WEFT_ASAN_RUNTIME (tests/CMakeLists.txt).
set(WEFT_ASAN_RUNTIME "")
if(CMAKE_CXX_FLAGS MATCHES "fsanitize=[^ ]*address")
  set(runtime_name libasan.so)
  if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT APPLE)
    set(runtime_name libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so)
    if(NOT CMAKE_EXE_LINKER_FLAGS MATCHES "shared-libasan")
      # Linked statically into each executable (the fuzz preset, which
      # builds only the fuzzers): no shared runtime to preload or find.
      message(STATUS "weft: clang links ASan statically (no -shared-libasan): "
                     "the simulated verbs provider and the programs that "
                     "load it need the asan preset's -shared-libasan")
      set(runtime_name "")
    endif()
  endif()
  if(runtime_name)
    execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=${runtime_name}
                    OUTPUT_VARIABLE WEFT_ASAN_RUNTIME
                    OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT IS_ABSOLUTE "${WEFT_ASAN_RUNTIME}" OR NOT EXISTS "${WEFT_ASAN_RUNTIME}")
      message(FATAL_ERROR
        "${CMAKE_CXX_COMPILER} -print-file-name=${runtime_name} found no ASan "
        "runtime (it printed '${WEFT_ASAN_RUNTIME}'): install the compiler's "
        "sanitizer runtime (Debian: libclang-rt-dev for clang, libasan for gcc).")
    endif()
  endif()
  if(WEFT_ASAN_RUNTIME AND CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND NOT APPLE)
    # In the linker flags rather than add_link_options, so the projects the
    # install tests build against an installed weft get them too.
    get_filename_component(runtime_dir "${WEFT_ASAN_RUNTIME}" DIRECTORY)
    foreach(kind EXE SHARED MODULE)
      string(APPEND CMAKE_${kind}_LINKER_FLAGS " -Wl,-rpath,${runtime_dir}")
    endforeach()
  endif()
endif()

# WEFT_NO_FUNCTION_SANITIZER: the flag that turns off clang's UBSan check of
# calls through a function pointer of another type (-fsanitize=function,
# part of "undefined" in clang, not in gcc), for the code that calls the
# verbs library. weft loads Apple's librdma.dylib and rdma-core's
# libibverbs.so.1 with dlsym and calls them through pointers declared with
# its own copy of their C ABI (verbs/abi.h): the same layout and calling
# convention, but other C++ types, which that check compares. Empty for gcc
# and for builds without UBSan.
set(WEFT_NO_FUNCTION_SANITIZER "")
if(CMAKE_CXX_COMPILER_ID MATCHES "Clang" AND
   CMAKE_CXX_FLAGS MATCHES "fsanitize=[^ ]*undefined")
  set(WEFT_NO_FUNCTION_SANITIZER -fno-sanitize=function)
endif()
