# Script mode: an installed weft-sim launch gives its ranks the installed
# drop-in provider (PREFIX/LIBDIR/weft/dropin), never the build tree's,
# which exists beside it here: an installation must not run what a later
# build of its checkout made. The rank makes no verbs call, so the run
# ends as "ranks missing" (exit 1); only its environment matters.
file(REAL_PATH "${PREFIX}/${LIBDIR}/weft/dropin" want_dir)
set(want "${want_dir}/libibverbs.so.1")
execute_process(
  COMMAND ${PREFIX}/bin/weft-sim launch --ranks=2 -n 1 -- /bin/sh -c
          "echo \"provider=\$WEFT_VERBS_LIBRARY\"; echo \"path=\$LD_LIBRARY_PATH\""
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
string(FIND "${out}" "provider=${want}\n" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the installed weft-sim did not give its rank "
                      "WEFT_VERBS_LIBRARY=${want}")
endif()
string(FIND "${out}" "path=${want_dir}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the installed weft-sim did not put ${want_dir} "
                      "first on its rank's LD_LIBRARY_PATH")
endif()
message("installed_launch: ok")
