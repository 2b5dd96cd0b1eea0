# weft_find_dependency(<package> <minimum version> [what to install]):
# find_package(<package> REQUIRED) accepting whichever version is found, then
# refuse one older than the minimum weft needs, saying what to do. A version
# is not passed to find_package itself: Abseil's package accepts only its
# exact version, so asking for a minimum would refuse every newer Abseil.
macro(weft_find_dependency package minimum)
  find_package(${package} REQUIRED)
  if(DEFINED ${package}_VERSION AND NOT "${${package}_VERSION}" STREQUAL ""
     AND ${package}_VERSION VERSION_LESS ${minimum})
    message(FATAL_ERROR
      "weft needs ${package} ${minimum} or newer; found ${${package}_VERSION} "
      "at ${${package}_DIR}. ${ARGN}")
  endif()
  message(STATUS "weft: ${package} ${${package}_VERSION} (needs >= ${minimum})")
endmacro()
