// SPDX-License-Identifier: MIT
// Watch sets' bookkeeping (see watch_sets.h). Each set notes, per watch it holds, what it asks of
// that directory; an event is matched against the uses of its watch only (a cost per event, not
// per set), and a set's answer is one flag.
#include "linux/watch_sets.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <utility>

namespace watch_sets {

// A case-insensitive directory (ext4, f2fs or tmpfs casefolding, set per directory) finds an entry
// by a name compared after Unicode case folding, so the name an event carries need not be the name
// a path uses. For names of ASCII bytes only, folding is ASCII lower-casing; any other byte may
// fold to ASCII (KELVIN SIGN to "k"), so such a name is taken as matching every name.
std::string Registry::Fold(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x80) return std::string();
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

int Registry::Make(std::unordered_map<int, Interest> watched) {
  for (auto& [wd, interest] : watched) {
    // A name that folds to nothing certain matches every name (see Fold).
    if (interest.names.count(std::string()) != 0) interest.every = true;
    if (interest.every) interest.names.clear();
  }
  return Add(std::make_shared<const Watched>(std::move(watched)));
}

int Registry::Again(int id) {
  if (!Quiet(id)) return -1;
  return Add(sets_.at(id).watched);
}

int Registry::Add(std::shared_ptr<const Watched> watched) {
  if (sets_.size() >= kMaxSets) return -1;
  do {
    next_ = next_ == INT_MAX ? 0 : next_ + 1;
  } while (sets_.count(next_) != 0);
  int id = next_;
  for (const auto& [wd, interest] : *watched) uses_[wd].push_back(Use{id, &interest});
  sets_[id].watched = std::move(watched);
  return id;
}

bool Registry::Quiet(int id) const {
  auto found = sets_.find(id);
  return found != sets_.end() && !found->second.changed;
}

void Registry::Release(int id) {
  auto found = sets_.find(id);
  if (found == sets_.end()) return;
  for (const auto& [wd, interest] : *found->second.watched) {
    auto uses = uses_.find(wd);
    if (uses == uses_.end()) continue;
    std::vector<Use>& list = uses->second;
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].set != id) continue;
      list[i] = list.back();
      list.pop_back();
      break;
    }
    if (list.empty()) uses_.erase(uses);
  }
  sets_.erase(found);
}

void Registry::OnEvent(int wd, uint32_t mask, const char* name) {
  auto uses = uses_.find(wd);
  if (uses == uses_.end()) return;
  // An event on the directory itself (moved, removed, attributes, unmounted, watch removed)
  // touches every set holding it; one naming an entry, the sets asking about that name.
  bool self = *name == '\0' || (mask & (IN_IGNORED | IN_UNMOUNT)) != 0;
  std::string folded = self ? std::string() : Fold(name);
  for (const Use& use : uses->second) {
    if (self || use.interest->every || folded.empty() || use.interest->names.count(folded) != 0) {
      auto set = sets_.find(use.set);
      if (set != sets_.end()) set->second.changed = true;
    }
  }
  // A removed watch reports nothing more (and its id may be given again): its sets have changed.
  if ((mask & IN_IGNORED) != 0) uses_.erase(uses);
}

void Registry::StartOver() {
  uses_.clear();
  for (auto& [id, set] : sets_) set.changed = true;
}

}  // namespace watch_sets

namespace watch_sets {
namespace {

// "/" followed by the components of `path`, "." and empty ones dropped; false for a relative
// path or one with "..".
bool CleanComponents(const std::string& path, std::vector<std::string>* parts) {
  if (path.empty() || path[0] != '/') return false;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "..") return false;
    if (!part.empty() && part != ".") parts->push_back(std::move(part));
    start = end + 1;
  }
  return true;
}

// What one Collect has found: the watch of each directory already met (paths share most of their
// directories: each is looked up in the memo once), and the interests.
struct Collector {
  Watches& w;
  std::unordered_map<int, Interest>* out;
  std::unordered_map<std::string, int> seen;

  // The watch of the directory `dir`, else -1.
  int WatchOf(const std::string& dir) {
    auto found = seen.find(dir);
    if (found != seen.end()) return found->second;
    int wd = w.WatchOf(dir);
    if (wd >= 0) seen.emplace(dir, wd);
    return wd;
  }

  // One path of a set (see Collect); `follow`: a link at the entry may be followed once.
  bool Chain(const std::string& path, bool dir, bool follow) {
    std::vector<std::string> parts;
    if (!CleanComponents(path, &parts)) return false;
    // Level k: the directory of the first k components, prefix(k) its path.
    std::string clean;
    std::vector<size_t> ends(1, 1);
    for (const std::string& part : parts) {
      clean += "/" + part;
      ends.push_back(clean.size());
    }
    if (clean.empty()) clean = "/";
    auto prefix = [&](size_t k) { return clean.substr(0, ends[k]); };
    // An entry needs the directories above it only; a directory itself too.
    size_t deepest = dir || parts.empty() ? parts.size() : parts.size() - 1;
    // A directory watched has every directory above it watched (see WatchDown).
    if (WatchOf(prefix(deepest)) < 0) w.WatchDown(prefix(deepest));
    size_t k = 0;
    for (; k <= deepest; ++k) {
      int wd = WatchOf(prefix(k));
      if (wd < 0) break;
      Interest& interest = (*out)[wd];
      if (k < parts.size())
        interest.names.insert(Registry::Fold(parts[k]));
      else if (dir)
        interest.every = true;
    }
    if (k == 0) return false;
    if (k > deepest) {
      if (dir || parts.empty()) return true;
    } else if (dir) {
      return false;
    }
    bool last = k == parts.size();
    // An entry: what is at level k, looked at by path. Every directory on the way is watched, so
    // if the way changed since it was watched an event names it and the set is not quiet anyway.
    std::string at = prefix(k);
    struct stat st;
    if (fstatat(AT_FDCWD, at.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
    if (S_ISDIR(st.st_mode)) return last;   // not watched: a filesystem or budget refused it
    if (!S_ISLNK(st.st_mode)) return true;  // a file: nothing below it (ENOTDIR)
    if (!last || !follow) return false;
    // The link's text, read after its directory was watched: changing the link is an event there.
    char text[4096];
    ssize_t n = readlinkat(AT_FDCWD, at.c_str(), text, sizeof text);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof text) return false;
    std::string target(text, static_cast<size_t>(n));
    if (target[0] != '/') target = prefix(k - 1) + "/" + target;
    return Chain(target, false, false);
  }
};

}  // namespace

bool Collect(Watches& watches, const std::vector<std::string>& dirs,
             const std::vector<std::string>& entries, std::unordered_map<int, Interest>* out) {
  Collector collector{watches, out, {}};
  for (const std::string& dir : dirs) {
    if (!collector.Chain(dir, true, false)) return false;
  }
  for (const std::string& entry : entries) {
    if (!collector.Chain(entry, false, true)) return false;
  }
  return true;
}

}  // namespace watch_sets
