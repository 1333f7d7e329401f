// SPDX-License-Identifier: MIT
// Network namespaces for network-deny sandboxes, reused one sandbox at a time. Creating a network
// namespace is most of a sandbox's set-up cost (the kernel registers its sysctls and devices, and
// tears them down again on a worker). A holder is a user namespace of ours and a network namespace
// it owns, with only loopback, up; sandboxes join it and nest their own user namespace inside.
// A holder goes back to the pool only once every process of the sandbox that used it is dead, so
// two sandboxes never share one at the same time.
#pragma once

namespace net_holders {

struct Holder {
  int userns_fd = -1;  // nsfs descriptors, close-on-exec
  int netns_fd = -1;
  bool valid() const { return userns_fd >= 0 && netns_fd >= 0; }
};

// A free holder, or an empty one when none is left (the spawn then creates the namespaces).
Holder Acquire();
// Returns the holder of a sandbox whose every process is gone; beyond a few free ones, closes it.
void Release(Holder holder);
// Closes the holder's descriptors (its namespaces go away with their last user).
void Discard(Holder holder);

}  // namespace net_holders
