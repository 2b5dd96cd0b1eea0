# Fuzz target for the data frame header weft::collectives decodes from
# the wire.
weft_fuzzer(frame_header frame_header_fuzz.cc weft::collectives)
set_target_properties(fuzz_frame_header PROPERTIES WEFT_WHITEBOX weft_collectives)
