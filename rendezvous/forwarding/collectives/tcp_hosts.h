// Forwarding header, kept for one release: the TCP side channel moved from
// collectives/ to its own library. Include "weft/rendezvous/tcp_hosts.h" and
// link weft::rendezvous instead (CHANGELOG.md, "Unreleased").
#ifndef WEFT_COLLECTIVES_TCP_HOSTS_FORWARDING_H_
#define WEFT_COLLECTIVES_TCP_HOSTS_FORWARDING_H_

#include "rendezvous/tcp_hosts.h"  // IWYU pragma: export

#endif  // WEFT_COLLECTIVES_TCP_HOSTS_FORWARDING_H_
