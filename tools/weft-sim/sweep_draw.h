// The parts of a sweep seed's draw (sweep_case.h), each from the seed's
// draw stream in a fixed order: the world (topology, link model, group
// options), then the program, then the faults; which operations run on
// registered buffers comes from a stream of its own (sweep_case.cc).
// Shared by sweep_case.cc and the files that draw each part.
#ifndef WEFT_TOOLS_WEFT_SIM_SWEEP_DRAW_H_
#define WEFT_TOOLS_WEFT_SIM_SWEEP_DRAW_H_

#include <cstdint>

#include "sim/prng.h"
#include "tools/weft-sim/sweep_case.h"

namespace weft::tools::weft_sim {

// Uniform in [low, high).
double draw_between(sim::Prng& prng, double low, double high);

// c->topology_name, c->world.topology and .link, c->group.
void draw_world(sim::Prng& prng, SweepCase* c);

// c->program and c->expected_ns. REQUIRES: draw_world(c) first.
void draw_program(sim::Prng& prng, SweepCase* c);

// c->world.faults: rates stopping at a drawn time, timed faults up to it.
// REQUIRES: draw_program(c) first.
void draw_faults(sim::Prng& prng, SweepCase* c);

// Virtual time one operation of `bytes` on a group of `members` ranks
// takes on c's link with no fault: the scale of a program's duration.
TimeNs expected_op_ns(const SweepCase& c, uint64_t bytes, uint32_t members);

}  // namespace weft::tools::weft_sim

#endif  // WEFT_TOOLS_WEFT_SIM_SWEEP_DRAW_H_
