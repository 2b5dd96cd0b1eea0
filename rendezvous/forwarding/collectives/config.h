// Forwarding header, kept for one release: the TCP side channel moved from
// collectives/ to its own library. Include "weft/rendezvous/config.h" and link
// weft::rendezvous instead (CHANGELOG.md, "Unreleased").
#ifndef WEFT_COLLECTIVES_CONFIG_FORWARDING_H_
#define WEFT_COLLECTIVES_CONFIG_FORWARDING_H_

#include "rendezvous/config.h"  // IWYU pragma: export

#endif  // WEFT_COLLECTIVES_CONFIG_FORWARDING_H_
