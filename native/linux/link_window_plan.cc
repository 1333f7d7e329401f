// SPDX-License-Identifier: MIT
// The link window of a spawn's mount steps (see link_window_plan.h).
#include "linux/link_window_plan.h"

#include <string.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "linux/child_setup.h"

namespace spawn_plan {
namespace {

using backend::MountOp;

// From this many pins and denyWrite entries in one write root on, they are made in a link window
// (link_window.h): one call each instead of two, for a read of the mount table and six calls.
constexpr int kWindowSteps = 32;

// Whether `path` is `root` or lies beneath it.
bool Within(std::string_view root, std::string_view path) {
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/');
}

// Clears `readonly[i]` for each denyWrite entry of the window (index i, path in `entries`) beneath
// which a step before it mounts, or on which a step other than a pin (the same directory with the
// same mounts beneath it) mounts. A bind from the read-only snapshot, which holds only the mounts
// the root had before the pins, would hide that mount, where a bind of the path in place carries
// it along: such an entry keeps the bind in place.
void KeepMountsBeneath(const Plan& plan, std::string_view root,
                       const std::unordered_map<std::string_view, size_t>& entries,
                       std::vector<bool>* readonly) {
  using namespace child_setup;
  auto clear_after = [&](std::string_view path, size_t index) {
    auto it = entries.find(path);
    if (it != entries.end() && it->second > index) (*readonly)[it->second] = false;
  };
  // Directories whose ancestors were all looked at for an earlier step (so with a smaller index):
  // 1,000 entries of a workspace share their upper directories.
  std::unordered_set<std::string_view> walked;
  for (size_t j = 0; j < plan.mounts.size(); ++j) {
    int32_t kind = plan.mounts[j].kind;
    // Steps that mount nothing onto the tree the entries lie in.
    if (kind == kMountDetachClone || kind == kMountAttach || kind == kMountMkdirs ||
        kind == kMountSnapshot) {
      continue;
    }
    std::string_view path = plan.mounts[j].path;
    if (!Within(root, path)) continue;
    if (kind != kMountPin) clear_after(path, j);
    for (size_t end = path.rfind('/'); end != std::string_view::npos && end >= root.size();
         end = path.rfind('/', end - 1)) {
      std::string_view dir = path.substr(0, end);
      if (!walked.insert(dir).second) break;
      clear_after(dir, j);
    }
  }
}

}  // namespace

// Chooses the write root of the link window, the one with most pins and denyWrite entries, and
// flags its steps: its pin snapshot and pins run in the window, its denyWrite entries too, bound
// from the read-only snapshot unless a mount made before lies beneath them.
void PlanLinkWindow(const std::vector<MountOp>& ops, Plan* plan) {
  using namespace child_setup;
  std::vector<child_setup::MountStep>& steps = plan->mounts;
  std::vector<std::string_view> roots;
  for (const MountStep& step : steps) {
    // The root "/" (the whole tree writable) gets no window: its snapshot would copy every mount.
    if (step.kind == kMountDetachClone && strcmp(step.path, "/") != 0) roots.push_back(step.path);
  }
  // Separate roots never nest: a path lies in one at most. Many roots is rare, and each step
  // would be compared with each.
  if (roots.empty() || roots.size() > 16) return;
  std::vector<int> holder(steps.size(), -1);
  std::vector<int> count(roots.size(), 0);
  for (size_t i = 0; i < steps.size(); ++i) {
    int32_t kind = steps[i].kind;
    if (kind != kMountPin && kind != kMountSnapshot && kind != kMountReadonlyReal) continue;
    std::string_view path = ops[i].path;
    for (size_t r = 0; r < roots.size(); ++r) {
      if (!Within(roots[r], path)) continue;
      holder[i] = static_cast<int>(r);
      if (kind != kMountSnapshot) count[r] += 1;
      break;
    }
  }
  int best = static_cast<int>(std::max_element(count.begin(), count.end()) - count.begin());
  if (count[best] < kWindowSteps) return;
  std::string_view root = roots[best];
  std::unordered_map<std::string_view, size_t> entries;
  entries.reserve(static_cast<size_t>(count[best]));
  std::vector<bool> readonly(steps.size(), false);
  for (size_t i = 0; i < steps.size(); ++i) {
    if (holder[i] != best) continue;
    steps[i].flags = kStepInWindow;
    // The same path again has the first one's mount on it.
    if (steps[i].kind == kMountReadonlyReal && entries.emplace(ops[i].path, i).second)
      readonly[i] = true;
  }
  KeepMountsBeneath(*plan, root, entries, &readonly);
  // Each bound from its path relative to the root, resolved from the snapshot's root.
  int last = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!readonly[i]) continue;
    steps[i].flags |= kStepFromReadonly;
    steps[i].data = ops[i].path.size() == root.size() ? "." : ops[i].path.c_str() + root.size() + 1;
    last = static_cast<int>(i);
  }
  plan->child.window_root = root.data();  // a whole std::string of `ops`: NUL-terminated
  plan->child.readonly_snapshot_last = last;
}

}  // namespace spawn_plan
