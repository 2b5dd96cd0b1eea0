# Fuzz targets for the simulator's text inputs: fault plans and link models.
weft_fuzzer(fault_plan fault_plan_fuzz.cc weft::sim)
weft_fuzzer(link_model link_model_fuzz.cc weft::sim)
