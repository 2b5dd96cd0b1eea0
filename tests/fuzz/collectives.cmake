# Fuzz targets for what weft::collectives decodes from outside: the TCP
# bootstrap's messages, the JACCL configuration, the ring hostfile, the
# data frame header.
weft_fuzzer(wire wire_fuzz.cc weft::collectives)
weft_fuzzer(config config_fuzz.cc weft::collectives)
weft_fuzzer(tcp_hosts tcp_hosts_fuzz.cc weft::collectives)
weft_fuzzer(frame_header frame_header_fuzz.cc weft::collectives)

# weft-fuzz-seeds <dir>: writes the binary seeds of corpus/wire and
# corpus/frame_header by encoding real values. Not part of `fuzzers`: run it
# again only when a format changes.
add_executable(weft-fuzz-seeds seed_writer.cc)
target_link_libraries(weft-fuzz-seeds PRIVATE weft::collectives)
# Each decodes the private formats it fuzzes (collectives/engine/,
# collectives/bootstrap/): white-box for weft-include-check.
set_target_properties(fuzz_wire fuzz_frame_header weft-fuzz-seeds PROPERTIES
                      WEFT_WHITEBOX weft_collectives)
