# The declared include graph, for weft-include-check (tools/include-check):
# every target of the project with its home folder, sources, direct links,
# include path and the two properties the checker reads, written with
# file(GENERATE) to <build>/weft_include_graph.txt. Included once, at the end
# of the top CMakeLists.txt, so every target exists by then.
#
# Target properties read here (set them where a target is declared):
#   WEFT_WHITEBOX    project targets whose private headers this target may
#                    include (white-box tests and benchmarks of internals).
#   WEFT_LINUX_ONLY  ON for targets the macOS build leaves out; the Darwin
#                    portability check skips their files.
#   WEFT_NAMESPACE, WEFT_PRIVATE_NAMESPACE
#                    the namespaces of the target's public names and of its
#                    private code (weft_namespace() in WeftComponent.cmake);
#                    the namespace check holds its folder's files to them.
#
# File format, one record per line, fields separated by tabs, lists by ';':
#   root<TAB><source dir>            build<TAB><binary dir>
#   system_include<TAB><dir>         a compiler's built-in include folder
#   alias<TAB><alias><TAB><target>   e.g. weft::sim -> weft_sim
#   target<TAB>name=..<TAB>type=..<TAB>home=..<TAB>linux_only=0|1
#         <TAB>links=..<TAB>interface_links=..<TAB>whitebox=..
#         <TAB>include_dirs=..<TAB>sources=..<TAB>namespace=..
#         <TAB>private_namespace=..
# home is the target's SOURCE_DIR relative to the root ("." for the root).
# links: the project targets in LINK_LIBRARIES; interface_links: those in
# INTERFACE_LINK_LIBRARIES that are usage requirements (not $<LINK_ONLY:>),
# what an interface library links and what a library passes on to its
# users; whitebox: WEFT_WHITEBOX. ALIAS names are resolved (weft::sim is
# weft_sim) and libraries from outside the project left out.

# All build-system targets of `dir` and of its sub-directories, recursively.
function(_weft_targets_under dir out)
  get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    _weft_targets_under("${sub}" sub_targets)
    list(APPEND targets ${sub_targets})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# Appends to the list `out` one "<alias>=<target>" entry for every ALIAS
# named by `items` (link items or WEFT_WHITEBOX entries).
function(_weft_collect_aliases items out)
  set(aliases ${${out}})
  foreach(item IN LISTS items)
    # $<LINK_ONLY:weft::x> names weft::x too.
    string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" item "${item}")
    if(item MATCHES "[$<>]" OR NOT TARGET "${item}")
      continue()
    endif()
    get_target_property(real "${item}" ALIASED_TARGET)
    if(real)
      list(APPEND aliases "${item}=${real}")
    endif()
  endforeach()
  set(${out} ${aliases} PARENT_SCOPE)
endfunction()

# The project targets named by property `property` of `target` (a link
# list or WEFT_WHITEBOX), ALIAS names resolved, other libraries dropped.
# With USAGE_ONLY, $<LINK_ONLY:x> entries (linked, but not usage
# requirements) are dropped too. Other generator expressions are kept as
# written: file(GENERATE) evaluates them and the checker resolves the rest.
# WEFT_WHITEBOX entries that name no target are kept for the checker to
# report.
function(_weft_project_items target property mode out)
  get_target_property(items ${target} ${property})
  set(result "")
  foreach(item IN LISTS items)
    if(item MATCHES "^\\$<LINK_ONLY:(.*)>$")
      if(mode STREQUAL "USAGE_ONLY")
        continue()
      endif()
      set(item "${CMAKE_MATCH_1}")
    endif()
    if(item MATCHES "^::@" OR item STREQUAL "items-NOTFOUND")
      continue()
    elseif(item MATCHES "^\\$<")
      list(APPEND result "${item}")
    elseif(TARGET "${item}")
      get_target_property(real "${item}" ALIASED_TARGET)
      if(real)
        set(item "${real}")
      endif()
      if(item IN_LIST _weft_project_targets)
        list(APPEND result "${item}")
      endif()
    elseif(property STREQUAL "WEFT_WHITEBOX")
      list(APPEND result "${item}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES result)
  list(JOIN result ";" result)
  set(${out} "${result}" PARENT_SCOPE)
endfunction()

# The record of one target (see the format above).
function(_weft_target_line target out)
  get_target_property(type ${target} TYPE)
  get_target_property(source_dir ${target} SOURCE_DIR)
  file(RELATIVE_PATH home "${PROJECT_SOURCE_DIR}" "${source_dir}")
  if(home STREQUAL "")
    set(home ".")
  endif()
  _weft_project_items(${target} LINK_LIBRARIES ALL links)
  _weft_project_items(${target} INTERFACE_LINK_LIBRARIES USAGE_ONLY
                      interface_links)
  _weft_project_items(${target} WEFT_WHITEBOX ALL whitebox)
  set(p "$<TARGET_PROPERTY:${target},")
  set(include_dirs "")
  if(NOT type STREQUAL "UTILITY")
    set(include_dirs
        "$<JOIN:$<REMOVE_DUPLICATES:${p}INCLUDE_DIRECTORIES>>,;>")
  endif()
  set(${out}
      "target\tname=${target}\ttype=${type}\thome=${home}\
\tlinux_only=$<BOOL:${p}WEFT_LINUX_ONLY>>\
\tlinks=${links}\tinterface_links=${interface_links}\twhitebox=${whitebox}\
\tinclude_dirs=${include_dirs}\
\tsources=$<JOIN:${p}SOURCES>,;>\
\tnamespace=${p}WEFT_NAMESPACE>\tprivate_namespace=${p}WEFT_PRIVATE_NAMESPACE>\n"
      PARENT_SCOPE)
endfunction()

function(weft_write_include_graph)
  _weft_targets_under("${PROJECT_SOURCE_DIR}" _weft_project_targets)
  set(content "# weft include graph (cmake/WeftIncludeGraph.cmake)\n")
  string(APPEND content "root\t${PROJECT_SOURCE_DIR}\n")
  string(APPEND content "build\t${PROJECT_BINARY_DIR}\n")
  foreach(dir IN LISTS CMAKE_CXX_IMPLICIT_INCLUDE_DIRECTORIES)
    string(APPEND content "system_include\t${dir}\n")
  endforeach()
  set(aliases "")
  foreach(target IN LISTS _weft_project_targets)
    _weft_target_line(${target} line)
    string(APPEND content "${line}")
    foreach(property LINK_LIBRARIES INTERFACE_LINK_LIBRARIES WEFT_WHITEBOX)
      get_target_property(items ${target} ${property})
      if(items)
        _weft_collect_aliases("${items}" aliases)
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES aliases)
  foreach(alias IN LISTS aliases)
    string(REPLACE "=" "\t" alias "${alias}")
    string(APPEND content "alias\t${alias}\n")
  endforeach()
  file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/weft_include_graph.txt"
       CONTENT "${content}")
endfunction()

weft_write_include_graph()
