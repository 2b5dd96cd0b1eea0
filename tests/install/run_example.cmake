# Script mode: runs one example (COMMAND, '|'-separated) and passes when it
# exits 0 and its output matches every regex of EXPECT ('|'-separated);
# output holding CORRUPT fails whatever the exit code.
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exited ${rc}: ${command}\n${err}")
endif()
if(out MATCHES "CORRUPT")
  message(FATAL_ERROR "an example reported wrong data as success")
endif()
string(REPLACE "|" ";" expected "${EXPECT}")
foreach(regex IN LISTS expected)
  if(NOT out MATCHES "${regex}")
    message(FATAL_ERROR "the output does not match '${regex}'")
  endif()
endforeach()
