// SPDX-License-Identifier: MIT
// The process's mount templates (see mount_templates.h): their registry, their builds, and the
// process's own user namespace that owns them (which steps a template holds: template_steps.cc).
// Spawns run on the JavaScript thread and on the spawn threads, hence the lock.
#include "linux/mount_templates.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "linux/child_setup.h"
#include "linux/spawn_plan.h"
#include "linux/template_steps.h"

namespace mount_templates {
namespace {

using backend::MountOp;

// Idle ones kept, least recently used going first: as many policies as the memos under a plan keep
// (lib/sandbox/kept-bounds.ts), for a caller alternating between the policies of several agents;
// and at most kMaxIdleSteps mount steps in all (each step is a mount held in the kernel).
constexpr size_t kMaxTemplates = 16;
constexpr size_t kMaxIdleSteps = 32768;
// Per policy at once: its prewarmed sandboxes and the run using one hold a template each; a start
// beyond that (a burst) sets its mounts up without one instead of building one more.
constexpr size_t kMaxPerPolicy = 4;
constexpr size_t kMaxSeen = 32;  // policies seen once, remembered for their second run
// A policy whose template was dropped before a second run took it (more policies in turn than
// kMaxTemplates, each template built and dropped unused, a wasted build and a mount namespace
// each time) rests: its next runs set their mounts up without one, kRestRuns doubling to
// kMaxRestRuns for each time in a row. Back from rest, it does not take the room of a template
// taken within the last two rounds of the kept ones: it rests longer. The memos' rule as well
// (lib/sandbox/kept-bounds.ts).
constexpr int kRestRuns = 4;
constexpr int kMaxRestRuns = 64;
constexpr size_t kMaxRests = 64;
constexpr size_t kStackSize = 256 * 1024;

struct Template {
  int id = -1;
  size_t hash = 0;
  std::vector<MountOp> ops;
  int set = -1;
  int mntns_fd = -1;
  int file_fd = -1;
  int staging_fd = -1;
  std::vector<int> dir_fds;
  // Its write roots inside the private /tmp: their paths and mount slots, the detached tree of
  // each (cloned in tmp_mntns_fd, the template's locked copy; see TakeOutTmpRoots).
  std::vector<std::string> tmp_paths;
  std::vector<int> tmp_slots;
  std::vector<int> tmp_fds;
  int tmp_mntns_fd = -1;
  bool busy = false;
  bool discarded = false;
  uint64_t used = 0;
  int lends = 0;
  // Every descriptor it holds.
  std::vector<int> Fds() const {
    std::vector<int> out(dir_fds);
    for (int fd : {mntns_fd, file_fd, staging_fd, tmp_mntns_fd})
      if (fd >= 0) out.push_back(fd);
    for (int fd : tmp_fds)
      if (fd >= 0) out.push_back(fd);
    return out;
  }
  ~Template() {
    for (int fd : Fds()) close(fd);
    if (set >= 0) watched_looks::ReleaseSet(set);
  }
};

struct Rest {
  int runs_left = 0;
  int times = 0;
};

struct State {
  std::mutex lock;
  int userns_fd = -2;  // -2: not made yet; -1: cannot be
  std::vector<std::unique_ptr<Template>> all;
  std::vector<size_t> seen;
  std::unordered_map<size_t, Rest> rests;  // by policy key
  int next_id = 0;
  uint64_t clock = 0;  // templatable starts so far
  Stats stats;
};

State& Get() {
  static auto* state = new State();
  return *state;
}

// A stack for a child on our memory (MAP_FAILED: none).
struct Stack {
  void* base = mmap(nullptr, kStackSize, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  Stack() = default;
  Stack(const Stack&) = delete;
  Stack& operator=(const Stack&) = delete;
  ~Stack() {
    if (base != MAP_FAILED) munmap(base, kStackSize);
  }
  char* top() const { return static_cast<char*>(base) + kStackSize; }
};

// Runs `entry` on a stack of its own, on our memory and descriptor table, every signal blocked;
// true when it exited 0.
bool RunChild(int (*entry)(void*), child_setup::ChildPlan* plan) {
  Stack stack;
  if (stack.base == MAP_FAILED) return false;
  sigset_t all;
  sigset_t previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = clone(entry, stack.top(), CLONE_VM | CLONE_VFORK | CLONE_FILES | SIGCHLD, plan);
  int st = 0;
  if (pid > 0) {
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

// The process's own user namespace (made once, with the caller's IDs mapped to themselves), or
// -1. Under the state's lock.
int OwnUserNamespace(State& s) {
  if (s.userns_fd != -2) return s.userns_fd;
  child_setup::ChildPlan plan;
  memset(&plan, 0, sizeof plan);
  spawn_plan::IdMaps maps;
  plan.uid_map = maps.uid;
  plan.gid_map = maps.gid;
  plan.error_fd = -1;
  plan.proc_fd = -1;
  plan.created_userns_fd = -1;
  bool ok = RunChild(child_setup::MakeUserNamespace, &plan);
  if (!ok && plan.created_userns_fd >= 0) close(plan.created_userns_fd);
  s.userns_fd = ok ? plan.created_userns_fd : -1;
  return s.userns_fd;
}

// Applies the template's steps in a new mount namespace of `userns`; false when any fails (then
// nothing of it is left open).
bool Build(Template* t, int userns, int dir_masks) {
  spawn_plan::Plan plan;
  if (!spawn_plan::BuildTemplate(t->ops, dir_masks, &plan).ok()) return false;
  child_setup::NetEntry net = child_setup::EmptyNetEntry();
  net.own_userns_fd = userns;
  plan.child.net = &net;
  // Its /tmp write roots, taken out into its locked copy by a child of the build on this stack.
  std::unique_ptr<Stack> copy_stack;
  if (!t->tmp_paths.empty()) {
    copy_stack = std::make_unique<Stack>();
    if (copy_stack->base == MAP_FAILED) return false;
    net.stack_top = copy_stack->top();
  }
  std::vector<const char*> tmp_paths;
  for (const std::string& path : t->tmp_paths) tmp_paths.push_back(path.c_str());
  t->tmp_fds.assign(tmp_paths.size(), -1);
  plan.child.template_tmp_paths = tmp_paths.data();
  plan.child.template_tmp_count = static_cast<int>(tmp_paths.size());
  plan.child.template_tmp_fds = t->tmp_fds.data();
  plan.child.template_tmp_mntns_fd = -1;
  bool ok = RunChild(child_setup::BuildTemplate, &plan.child);
  const child_setup::ChildPlan& c = plan.child;
  t->tmp_mntns_fd = c.template_tmp_mntns_fd;
  // The build shared our descriptor table: the write roots' clones it opened are ours to close
  // (attached, or never), whether it finished or not.
  for (int fd : c.mount_slots)
    if (fd >= 0) close(fd);
  for (int i = 0; i < c.template_dir_used; ++i) t->dir_fds.push_back(c.template_dir_fds[i]);
  t->mntns_fd = c.template_mntns_fd;
  t->file_fd = c.template_file_fd;
  t->staging_fd = c.template_staging_fd;
  if (!ok || t->mntns_fd < 0) return false;
  for (int fd : t->tmp_fds)
    if (fd < 0) return false;
  return t->tmp_fds.empty() || t->tmp_mntns_fd >= 0;
}

void Lend(Template* t, int userns, Lease* out) {
  State& s = Get();
  t->busy = true;
  t->used = s.clock;
  if (++t->lends == 2) s.rests.erase(t->hash);  // taken again: its rests start over
  out->id = t->id;
  out->userns_fd = userns;
  out->mntns_fd = t->mntns_fd;
  out->file_fd = t->file_fd;
  out->staging_fd = t->staging_fd;
  out->dir_fds = t->dir_fds;
  out->tmp_mntns_fd = t->tmp_mntns_fd;
  out->tmp_slots = t->tmp_slots;
  out->tmp_fds = t->tmp_fds;
}

// The policy `key` rests (once more in a row).
void Rested(State& s, size_t key) {
  Rest& rest = s.rests[key];
  rest.times++;
  rest.runs_left = std::min(kRestRuns << std::min(rest.times - 1, 4), kMaxRestRuns);
  if (s.rests.size() <= kMaxRests) return;
  for (auto it = s.rests.begin(); it != s.rests.end(); ++it) {
    if (it->first == key) continue;
    s.rests.erase(it);
    return;
  }
}

// The idle templates (busy ones belong to live sandboxes): how many, their mount steps, and the
// index of the least recently used (s.all.size() when none is idle).
struct Idle {
  size_t count = 0;
  size_t steps = 0;
  size_t oldest = 0;
};

Idle IdleOf(const State& s) {
  Idle idle;
  idle.oldest = s.all.size();
  for (size_t i = 0; i < s.all.size(); ++i) {
    if (s.all[i]->busy) continue;
    ++idle.count;
    idle.steps += s.all[i]->ops.size();
    if (idle.oldest == s.all.size() || s.all[i]->used < s.all[idle.oldest]->used) idle.oldest = i;
  }
  return idle;
}

// Whether a new template may be kept without dropping one taken within the last two rounds of
// the kept ones.
bool RoomWithoutRecent(const State& s) {
  const Idle idle = IdleOf(s);
  return idle.count < kMaxTemplates || s.clock - s.all[idle.oldest]->used > 2 * kMaxTemplates;
}

// Drops idle templates beyond kMaxTemplates or kMaxIdleSteps, least recently used first (all of
// them with `max` 0, when a run needs their namespaces: not a rest). Busy ones do not count: each
// belongs to a live sandbox (at most kMaxPerPolicy per policy), and counting them dropped a
// template as soon as it came back whenever two policies had prewarmed sandboxes.
void Trim(State& s, size_t max = kMaxTemplates) {
  for (;;) {
    const Idle idle = IdleOf(s);
    if (idle.count <= max && (idle.count <= 1 || idle.steps <= kMaxIdleSteps)) return;
    if (max > 0 && s.all[idle.oldest]->lends <= 1) Rested(s, s.all[idle.oldest]->hash);
    s.all.erase(s.all.begin() + static_cast<long>(idle.oldest));
  }
}

}  // namespace

int UserNamespace() {
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  return OwnUserNamespace(s);
}

bool Take(const backend::LinuxSpec& spec, Lease* out) {
  std::vector<MountOp> ops;
  int dir_masks = 0;
  std::vector<std::pair<std::string, int>> tmp_roots;
  if (!TemplateOps(spec.mounts, &ops, &dir_masks, &tmp_roots)) return false;
  size_t hash = Hash(ops) ^ tmp_roots.size();
  out->key = hash;
  out->templatable = true;
  State& s = Get();
  std::unique_lock<std::mutex> hold(s.lock);
  ++s.clock;
  bool known = false;
  size_t busy = 0;
  for (size_t i = 0; i < s.all.size();) {
    Template* t = s.all[i].get();
    if (t->hash != hash || t->discarded || !SameOps(t->ops, ops) ||
        t->tmp_paths.size() != tmp_roots.size()) {
      ++i;
      continue;
    }
    known = true;
    if (t->busy) {
      ++busy;
      ++i;
      continue;
    }
    if (watched_looks::SetQuietMarked(t->set, &out->mark)) {
      Lend(t, s.userns_fd, out);
      return true;
    }
    s.all.erase(s.all.begin() + static_cast<long>(i));  // the host changed since its build
  }
  bool seen = false;
  for (size_t h : s.seen) seen = seen || h == hash;
  if ((!known && !seen) || busy >= kMaxPerPolicy) return false;
  auto rest = s.rests.find(hash);
  if (rest != s.rests.end() && rest->second.runs_left > 0) {
    --rest->second.runs_left;
    s.stats.rested++;
    return false;
  }
  if (rest != s.rests.end() && !RoomWithoutRecent(s)) {
    Rested(s, hash);
    s.stats.rested++;
    return false;
  }
  int userns = OwnUserNamespace(s);
  if (userns < 0) return false;
  auto t = std::make_unique<Template>();
  t->id = s.next_id++;
  t->hash = hash;
  t->ops = std::move(ops);
  for (auto& [path, slot] : tmp_roots) {
    t->tmp_paths.push_back(std::move(path));
    t->tmp_slots.push_back(slot);
  }
  hold.unlock();
  // The set before the build: a path changed after the build took it is an event.
  std::vector<std::string> entries;
  std::unordered_set<std::string_view> added;
  for (const MountOp& op : t->ops) {
    if (Within("/proc", op.path) || Within("/dev", op.path) || !added.insert(op.path).second)
      continue;
    entries.push_back(op.path);
  }
  t->set = watched_looks::MakeSet({}, entries);
  if (t->set < 0 || !Build(t.get(), userns, dir_masks)) return false;
  {
    std::lock_guard<std::mutex> count(s.lock);
    s.stats.built++;
  }
  if (!watched_looks::SetQuietMarked(t->set, &out->mark)) return false;
  hold.lock();
  Lend(t.get(), userns, out);
  s.all.push_back(std::move(t));
  Trim(s);
  return true;
}

void Started(const Lease& declined) {
  if (!declined.templatable) return;
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  for (size_t h : s.seen)
    if (h == declined.key) return;
  s.seen.push_back(declined.key);
  if (s.seen.size() > kMaxSeen) s.seen.erase(s.seen.begin());
}

void Return(int id) {
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  for (size_t i = 0; i < s.all.size(); ++i) {
    if (s.all[i]->id != id) continue;
    s.all[i]->busy = false;
    if (s.all[i]->discarded) s.all.erase(s.all.begin() + static_cast<long>(i));
    break;
  }
  Trim(s);
}

void Discard(int id) {
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  for (auto& t : s.all)
    if (t->id == id) t->discarded = true;
}

void DropIdle() {
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  Trim(s, 0);
}

int Count() {
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  return static_cast<int>(s.all.size());
}

Stats Counts() {
  State& s = Get();
  std::lock_guard<std::mutex> hold(s.lock);
  Stats out = s.stats;
  out.held = s.all.size();
  for (const auto& t : s.all) {
    out.fds += t->Fds().size();
    out.busy += t->busy ? 1 : 0;
  }
  return out;
}

}  // namespace mount_templates
