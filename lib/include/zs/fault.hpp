// Fault injection, for the tests that prove a failure on one rank never hangs the others.
//
// The environment variable ZS_FAULT lists faults to inject into this process, comma separated,
// each "SITE=ACTION". At the named point, fault::point(SITE) then:
//   oom     throws std::bad_alloc (as a failed host allocation would);
//   error   throws zs::error(error_code::internal, "injected fault at SITE");
//   stop    stops this process (SIGSTOP), as a peer that stops answering would.
// Without ZS_FAULT a point costs one getenv. Sites are named where they are placed; the tests
// under tests/ list the ones they use.
//
//   mpirun -np 1 zshuffle demo : -np 1 env ZS_FAULT=shuffle.plan=oom zshuffle demo
#pragma once

#include <string_view>

namespace zs::fault {

/// Injects the fault ZS_FAULT names for `site`, if any (see above). Throws zs::error
/// (invalid_argument) when ZS_FAULT names an unknown action for this site.
void point(std::string_view site);

}  // namespace zs::fault
