// SPDX-License-Identifier: MIT
// Watch sets: "has anything that could change what these paths lead to happened since this set
// was made?", answered from the watched looks' inotify queue (linux/watched_looks.cc, which takes
// the events and hands each one here). A set names directories (their every entry counts) and
// entries (only the entry itself counts: made, removed, renamed over or away, attributes
// changed; not what is inside it), and through them every directory on the way from "/": a change
// of the entry leading down from each of those counts too. A mount-table change or lost events
// count as every set changed (StartOver). The bookkeeping only: no lock, no system call (the
// memo's lock is held around every call). Linux only; no napi here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace watch_sets {

// Sets live at once, at most (each holds a little per watched directory; callers release theirs).
// Each policy kept across runs holds up to four (its plan's, its spec's, its guard look's and its
// mount template's), for 16 policies, with room for prewarmed ones and the runs in flight.
constexpr size_t kMaxSets = 128;

// What one set asks of one watched directory: every entry, or the entries of these names.
struct Interest {
  bool every = false;
  // Names as Registry::Fold keeps them.
  std::unordered_set<std::string> names;
};

// What collecting a set's watches needs of the memo (watched_looks.cc, under its lock).
class Watches {
 public:
  virtual ~Watches() = default;
  // Watches every directory from "/" down to `dir` not watched yet (no link followed).
  virtual void WatchDown(const std::string& dir) = 0;
  // The watch held for the directory at `path` (an absolute clean path), else -1.
  virtual int WatchOf(const std::string& path) = 0;
};

// The watches a set over `dirs` and `entries` holds, and what it asks of each: false when one of
// them cannot be watched completely (then the set cannot answer). A directory in `dirs` must be
// one. An entry may be missing (the deepest directory on its way is watched for the name leading
// down), and may be a link to a path without links or ".." (that path is taken as an entry too);
// any other link on the way, or a directory on the way that cannot be watched, fails.
bool Collect(Watches& watches, const std::vector<std::string>& dirs,
             const std::vector<std::string>& entries, std::unordered_map<int, Interest>* out);

class Registry {
 public:
  // A new set over `watched` (watch id -> interest); its id, or -1 when kMaxSets are live.
  int Make(std::unordered_map<int, Interest> watched);
  // A new set over the same watches and interests as the set `id`, when that set is quiet: what
  // collecting them again would find, since nothing they depend on has changed. Else -1.
  int Again(int id);
  // Whether nothing the set asks about changed since it was made (false for an unknown id).
  bool Quiet(int id) const;
  void Release(int id);
  // An event taken from the queue (watched_looks.cc's drain), before the memo acts on it.
  void OnEvent(int wd, uint32_t mask, const char* name);
  // The queue started over (events lost, the mount table changed, the memo reset): every watch
  // is gone and every set has changed.
  void StartOver();
  // The key a name is kept and looked up under in Interest::names ("" for a name that must be
  // taken as matching every other).
  static std::string Fold(const std::string& name);

 private:
  using Watched = std::unordered_map<int, Interest>;
  struct Use {
    int set;
    const Interest* interest;
  };
  struct Set {
    std::shared_ptr<const Watched> watched;
    bool changed = false;
  };
  int Add(std::shared_ptr<const Watched> watched);
  std::unordered_map<int, std::vector<Use>> uses_;
  std::unordered_map<int, Set> sets_;
  int next_ = 0;
};

}  // namespace watch_sets
