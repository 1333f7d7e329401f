// SPDX-License-Identifier: MIT
// The process-wide pool of free network-namespace holders (see net_holders.h). Spawns run on the
// JavaScript thread and on the spawn threads, hence the lock.
#include "linux/net_holders.h"

#include <unistd.h>

#include <mutex>
#include <vector>

namespace net_holders {
namespace {

// Enough for the prewarmed sandboxes of a few policies; more are closed when they come back.
constexpr size_t kMaxFree = 8;

std::mutex& Lock() {
  static std::mutex* lock = new std::mutex();
  return *lock;
}

std::vector<Holder>& Free() {
  static std::vector<Holder>* free = new std::vector<Holder>();
  return *free;
}

}  // namespace

Holder Acquire() {
  std::lock_guard<std::mutex> guard(Lock());
  std::vector<Holder>& free = Free();
  if (free.empty()) return Holder();
  Holder holder = free.back();
  free.pop_back();
  return holder;
}

void Release(Holder holder) {
  if (!holder.valid()) {
    Discard(holder);
    return;
  }
  {
    std::lock_guard<std::mutex> guard(Lock());
    if (Free().size() < kMaxFree) {
      Free().push_back(holder);
      return;
    }
  }
  Discard(holder);
}

void Discard(Holder holder) {
  if (holder.userns_fd >= 0) close(holder.userns_fd);
  if (holder.netns_fd >= 0) close(holder.netns_fd);
}

}  // namespace net_holders
