# Fuzz targets for what weft::rendezvous decodes from outside: the side
# channel's messages, the JACCL configuration, the ring hostfile.
weft_fuzzer(wire wire_fuzz.cc weft::rendezvous weft::net)
weft_fuzzer(config config_fuzz.cc weft::rendezvous)
weft_fuzzer(tcp_hosts tcp_hosts_fuzz.cc weft::rendezvous)

# Seed inputs for the wire and frame-header fuzzers.
add_executable(weft-fuzz-seeds seed_writer.cc)
target_link_libraries(weft-fuzz-seeds PRIVATE weft::rendezvous weft::net
                      weft::collectives)
set_target_properties(fuzz_wire PROPERTIES WEFT_WHITEBOX weft_rendezvous)
set_target_properties(weft-fuzz-seeds PROPERTIES
                      WEFT_WHITEBOX "weft_rendezvous;weft_collectives")
