// SPDX-License-Identifier: MIT
// Which mount steps of a spec a mount template holds and which each run makes itself, and what a
// run adds for the template's masks (see template_steps.h and mount_templates.h).
#include "linux/template_steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <functional>
#include <unordered_set>

#include "linux/kernel_compat.h"
#include "linux/mount_templates.h"

namespace mount_templates {

using backend::MountOp;

namespace {

constexpr int kMaxDirMasks = 64;  // each holds a descriptor while the template lives

bool SameOp(const MountOp& a, const MountOp& b) {
  return a.kind == b.kind && a.path == b.path && a.source == b.source && a.data == b.data;
}

}  // namespace

bool Within(std::string_view root, std::string_view path) {
  return path.size() >= root.size() && path.compare(0, root.size(), root) == 0 &&
         (path.size() == root.size() || path[root.size()] == '/' || root == "/");
}

bool SameOps(const std::vector<MountOp>& a, const std::vector<MountOp>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!SameOp(a[i], b[i])) return false;
  return true;
}

// The template's steps of a spec, or false when its mounts cannot be split so: a step inside the
// run's own /tmp (outside a write root made there) or /dev/shm, no /proc step, or too many
// directory masks. A write root inside the private /tmp is attached at its own path while the
// template is built (what is mounted in it is mounted there), then taken out into the template's
// locked copy (`tmp_roots_out`: its path and mount slot); each run clones it into its new /tmp.
bool TemplateOps(const std::vector<MountOp>& ops, std::vector<MountOp>* out, int* dir_masks,
                 std::vector<std::pair<std::string, int>>* tmp_roots_out) {
  if (ops.empty()) return false;
  bool private_tmp = false;
  std::vector<std::string_view> tmp_roots;
  for (const MountOp& op : ops) {
    private_tmp = private_tmp || (op.kind == "tmpfs" && op.path == "/tmp");
    if (op.kind == "mkdirs") tmp_roots.push_back(op.path);
  }
  *dir_masks = 0;
  bool has_proc = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const MountOp& op = ops[i];
    has_proc = has_proc || op.kind == "proc";
    if (has_proc || op.kind == "tmpfs" || op.kind == "mkdirs") continue;
    if (Within("/dev/shm", op.path)) return false;
    if (private_tmp && Within("/tmp", op.path)) {
      bool in_root = false;
      for (std::string_view root : tmp_roots) in_root = in_root || Within(root, op.path);
      if (!in_root) return false;
    }
    if (op.kind == "mask_dir" && ++*dir_masks > kMaxDirMasks) return false;
    if (op.kind == "detach_clone" && private_tmp) {
      for (std::string_view root : tmp_roots)
        if (root == op.path) tmp_roots_out->emplace_back(op.path, atoi(op.source.c_str()));
    }
    out->push_back(op);
  }
  return has_proc && !out->empty();
}

size_t Hash(const std::vector<MountOp>& ops) {
  size_t h = ops.size();
  std::hash<std::string> hs;
  for (const MountOp& op : ops) {
    for (const std::string* s : {&op.kind, &op.path, &op.source, &op.data})
      h = h * 1000003u ^ hs(*s);
  }
  return h;
}

std::vector<bool> RunSteps(const std::vector<MountOp>& ops) {
  std::vector<bool> run(ops.size(), false);
  std::unordered_set<std::string_view> tmp_roots;
  for (const MountOp& op : ops)
    if (op.kind == "mkdirs") tmp_roots.insert(op.path);
  bool after_proc = false;
  for (size_t i = 0; i < ops.size(); ++i) {
    const MountOp& op = ops[i];
    after_proc = after_proc || op.kind == "proc";
    // Its clone is made before the copy (EnterNetwork): attached in the new /tmp.
    bool tmp_root = op.kind == "attach" && tmp_roots.count(op.path) != 0;
    run[i] = after_proc || op.kind == "tmpfs" || op.kind == "mkdirs" || tmp_root;
  }
  return run;
}

// The masks' rules and watches are the run's own: its ruleset and the addon's watch instance.
status::Status AddMasks(const backend::LinuxSpec& ls, const Lease& lease, int ruleset,
                        std::vector<int>* mask_wds) {
  auto allow = [&](int fd) {
    struct landlock_path_beneath_attr_compat beneath;
    beneath.allowed_access = 1ULL << 2;  // LANDLOCK_ACCESS_FS_READ_FILE
    beneath.parent_fd = fd;
    return syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) == 0;
  };
  if (lease.file_fd >= 0 && !allow(lease.file_fd))
    return status::Fail("landlock_unsupported", errno, "landlock_add_rule(mask)", "", "landlock");
  for (int fd : lease.dir_fds) {
    if (!allow(fd))
      return status::Fail("landlock_unsupported", errno, "landlock_add_rule(mask)", "", "landlock");
  }
  int watch = ls.mask_watch_fd;
  if (watch < 0) return status::Ok();
  char path[4096];
  int files_wd = -1;
  if (lease.staging_fd >= 0) {
    snprintf(path, sizeof path, "/proc/self/fd/%d", lease.staging_fd);
    files_wd = inotify_add_watch(watch, path, IN_OPEN);
  }
  size_t slot = 0;
  size_t dir = 0;
  for (const MountOp& op : ls.mounts) {
    if (op.kind == "mask_file" && slot < (*mask_wds).size()) (*mask_wds)[slot++] = files_wd;
    if (op.kind != "mask_dir") continue;
    int fd = dir < lease.dir_fds.size() ? lease.dir_fds[dir] : -1;
    ++dir;
    for (size_t start = 0; !op.data.empty() && start <= op.data.size();) {
      size_t end = op.data.find('/', start);
      if (end == std::string::npos) end = op.data.size();
      std::string name = op.data.substr(start, end - start);
      start = end + 1;
      if (slot >= (*mask_wds).size() || fd < 0) continue;
      snprintf(path, sizeof path, "/proc/self/fd/%d/%s", fd, name.c_str());
      (*mask_wds)[slot++] = inotify_add_watch(watch, path, IN_OPEN);
    }
  }
  return status::Ok();
}

}  // namespace mount_templates
