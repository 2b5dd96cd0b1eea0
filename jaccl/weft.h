// jaccl/weft.h: weft's own calls for a program written for MLX's JACCL.
// JACCL's API ends a job at the first failure; weft's groups can revoke,
// agree and shrink (docs/fault-tolerance.md). A jaccl::Group made by weft's
// jaccl::init() is a weft::ProcessGroup behind JACCL's interface, and this
// hands it out:
//
//   std::shared_ptr<jaccl::Group> group = jaccl::init();
//   weft::ProcessGroup* pg = jaccl::weft_process_group(*group);
//   ...
//   if (pg != nullptr && pg->shrink().ok()) { /* group->rank(), size() are
//                                                 the survivors' now */ }
//
// Only this header needs weft's; JACCL's own headers stay as JACCL's are.
#ifndef WEFT_JACCL_WEFT_H_
#define WEFT_JACCL_WEFT_H_

#include "jaccl/group.h"
#include "startup/process_group.h"

namespace jaccl {

// The weft::ProcessGroup behind `group`, or nullptr when `group` is not
// one of weft's (a program's own Group subclass). It lives as long as
// `group`; every call of `group` goes to its group(), so after
// ProcessGroup::shrink() JACCL's calls run over the shrunk group.
weft::ProcessGroup* weft_process_group(Group& group);

}  // namespace jaccl

#endif  // WEFT_JACCL_WEFT_H_
