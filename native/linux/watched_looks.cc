// SPDX-License-Identifier: MIT
// The watched looks (see watched_looks.h).
//
// Why an answer kept here is the answer a look would give now. An answer is kept only when every
// directory from "/" down to the path's parent was watched before the look (added from the
// descriptor the no-follow walk opened, so the watch is on the inode the path led to), and, for a
// directory, the directory itself too. From then on, every creation, removal, rename or attribute
// change of an entry of a watched directory queues an event on that directory's inode, inside the
// system call that makes it, whatever mount, bind mount, namespace or hard link it goes through
// (the sandboxed command writes through bind mounts of the same inodes). Each call first takes
// every queued event: one naming an entry drops what is kept at and below that entry, every name
// kept missing in the directory (see ForgetMissing) and the directory's own stamp; one on the
// directory itself (moved, deleted, attributes, unmounted, watch removed) drops what is kept at and
// below it. What a path leads to can change in only two other ways, and both drop everything: a
// file system mounted or unmounted on the way (this process's mount table, polled at every call),
// and events lost (queue overflow, a read error). A watch the budget refuses, or a file system
// whose changes may bypass this kernel (network, FUSE, overlay), leaves the path unkept: it is
// looked at every time. File contents are never kept (a write through a shared mapping queues no
// event). The caller takes the events after every process of a sandbox is gone (the system calls
// that changed something have returned, so their events are queued), which is when its after-run
// check calls this.
#include "linux/watched_looks.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <unordered_map>

#include "linux/dir_watch.h"
#include "linux/watch_sets.h"
#include "posix/fs_walk.h"

namespace watched_looks {
namespace {

using fs_beneath::Info;
using fs_beneath::Kind;
namespace walk = fs_beneath::walk;

// Paths kept at most; beyond it the memo starts over.
constexpr size_t kMaxEntries = 1 << 18;

struct Entry {
  // The directory at this path, watched (and every directory above it): its watch, else -1.
  int wd = -1;
  // An answer kept for this path.
  bool answered = false;
  Info info;
  // A listing kept for this directory (root_walk.h), taken with `max_looks`.
  bool listed = false;
  size_t max_looks = 0;
  std::string listing;
};

struct Memo {
  std::mutex lock;
  dir_watch::Queue queue;
  // By byte: the paths below a directory ("dir/...") sort together.
  std::map<std::string, Entry> entries;
  // The paths each watch was taken at (a directory bind-mounted on the host has more than one).
  std::unordered_map<int, std::vector<std::string>> paths_of;
  // Per watched directory, the paths directly in it answered missing (see OnEvent).
  std::unordered_map<std::string, std::vector<std::string>> missing_in;
  // Watch sets (watch_sets.h) over the same watches: every event reaches them first.
  watch_sets::Registry sets;
};

Memo& Get() {
  static auto* memo = new Memo();
  return *memo;
}

void StartOver(Memo& m) {
  m.entries.clear();
  m.paths_of.clear();
  m.missing_in.clear();
  m.queue.Reset();
  m.sets.StartOver();
}

// Forgets that the watch `wd` was taken at `path`; a watch taken nowhere else is removed.
void Unwatch(Memo& m, int wd, const std::string& path) {
  auto found = m.paths_of.find(wd);
  if (found == m.paths_of.end()) return;
  std::vector<std::string>& paths = found->second;
  for (size_t i = 0; i < paths.size(); ++i) {
    if (paths[i] != path) continue;
    paths.erase(paths.begin() + static_cast<long>(i));
    break;
  }
  if (!paths.empty()) return;
  m.paths_of.erase(found);
  m.queue.Remove(wd);
}

// Drops what is kept at `path` and below it, watches included.
void DropFrom(Memo& m, const std::string& path) {
  auto drop = [&m](std::map<std::string, Entry>::iterator it) {
    if (it->second.wd >= 0) Unwatch(m, it->second.wd, it->first);
    m.missing_in.erase(it->first);
    return m.entries.erase(it);
  };
  auto own = m.entries.find(path);
  if (own != m.entries.end()) drop(own);
  std::string below = path == "/" ? "/" : path + "/";
  auto it = m.entries.lower_bound(below);
  while (it != m.entries.end() && it->first.compare(0, below.size(), below) == 0) it = drop(it);
}

std::string ParentOf(const std::string& path) {
  size_t at = path.rfind('/');
  return at == 0 ? "/" : path.substr(0, at);
}

// Forgets every missing answer kept directly in the directory `dir`. An event naming any entry of
// a directory drops them all, not only the one of its name: in a case-insensitive directory (ext4,
// f2fs or tmpfs casefolding, set per directory) ".GIT" made there is found by a look at ".git",
// and a name is compared after Unicode folding, so the event's name need not be the name looked at.
void ForgetMissing(Memo& m, const std::string& dir) {
  auto found = m.missing_in.find(dir);
  if (found == m.missing_in.end()) return;
  for (const std::string& path : found->second) {
    auto it = m.entries.find(path);
    if (it != m.entries.end() && it->second.answered && it->second.info.kind == Kind::kMissing)
      it->second.answered = false;
  }
  m.missing_in.erase(found);
}

void Unlist(Memo& m, const std::string& path) {
  auto it = m.entries.find(path);
  if (it != m.entries.end()) it->second.listed = false;
}

void OnEvent(Memo& m, int wd, uint32_t mask, const char* name) {
  m.sets.OnEvent(wd, mask, name);
  auto found = m.paths_of.find(wd);
  if (found == m.paths_of.end()) return;
  std::vector<std::string> paths = found->second;
  // A removed watch has no id any more: its paths are dropped below without removing it again.
  if ((mask & IN_IGNORED) != 0) m.paths_of.erase(found);
  for (const std::string& path : paths) {
    // A listing holds the kind of its subdirectories' .git: a change in one drops it too.
    if (path != "/") Unlist(m, ParentOf(path));
    if (*name == '\0') {
      DropFrom(m, path);
      continue;
    }
    auto own = m.entries.find(path);
    if (own != m.entries.end()) own->second.answered = own->second.listed = false;
    ForgetMissing(m, path);
    DropFrom(m, path == "/" ? "/" + std::string(name) : path + "/" + name);
  }
}

bool Watched(Memo& m, const std::string& path) {
  auto it = m.entries.find(path);
  return it != m.entries.end() && it->second.wd >= 0;
}

void NoteWatch(Memo& m, const std::string& path, int wd) {
  m.entries[path].wd = wd;
  std::vector<std::string>& paths = m.paths_of[wd];
  for (const std::string& p : paths) {
    if (p == path) return;
  }
  paths.push_back(path);
}

// Watches every directory from "/" down to `path` (itself included when it is one) that is not
// watched yet, top down, each opened without following a link from the one above it; stops at the
// first that cannot be opened or watched. A directory watched has every directory above it
// watched (an event dropping one drops all below it), so the search starts at the parent.
void WatchDown(Memo& m, const std::string& path) {
  std::vector<size_t> ends;
  if (!walk::CleanAbsolute(path, &ends)) return;
  // levels: "/" then path[0, ends[k]); the deepest watched one.
  size_t level = ends.size();  // the path itself
  while (level > 0 && !Watched(m, level == 1 ? "/" : path.substr(0, ends[level - 2]))) --level;
  // level 0: "/" not watched; else levels 0 .. level-1 (the prefixes up to ends[level-2]) are.
  walk::Fd dir;
  int err = 0;
  if (level == 0) {
    dir.Reset(open("/", walk::kWalkFlags));
    if (dir.get() < 0) return;
    int wd = m.queue.Add(dir.get());
    if (wd < 0) return;
    NoteWatch(m, "/", wd);
    level = 1;
  } else {
    dir.Reset(fs_beneath::OpenDirectory(level == 1 ? "/" : path.substr(0, ends[level - 2]), &err));
    if (dir.get() < 0) return;
  }
  for (size_t k = level - 1; k < ends.size(); ++k) {
    size_t start = k == 0 ? 1 : ends[k - 1] + 1;
    std::string name(path, start, ends[k] - start);
    int next = openat(dir.get(), name.c_str(), walk::kWalkFlags);
    if (next < 0) return;
    dir.Reset(next);
    int wd = m.queue.Add(dir.get());
    if (wd < 0) return;
    NoteWatch(m, path.substr(0, ends[k]), wd);
  }
}

// Takes the queued events (or starts over when some may be lost) and bounds the memo.
void Begin(Memo& m) {
  if (!m.queue.Drain([&m](int wd, uint32_t mask, const char* name) { OnEvent(m, wd, mask, name); }))
    StartOver(m);
  if (m.entries.size() > kMaxEntries) StartOver(m);
}

// The letter root_walk gives a subdirectory's .git of this kind.
char GitLetter(const Info& info) {
  switch (info.kind) {
    case Kind::kMissing:
      return 'm';
    case Kind::kDir:
      return 'd';
    case Kind::kFile:
      return 'f';
    case Kind::kError:
      return 'x';
    default:
      return 'o';
  }
}

std::string Child(const std::string& dir, const std::string& name) {
  return dir == "/" ? "/" + name : dir + "/" + name;
}

// Whether the listing of `path`, just taken below a watch of it, may be kept: every subdirectory
// whose .git it holds is watched now and that .git, looked at again after the watch, is as listed.
bool Keepable(Memo& m, const std::string& path, const std::string& listing) {
  if (!Watched(m, path)) return false;
  std::vector<std::string> again;
  std::string expected;
  for (size_t start = 0; start + 2 < listing.size();) {
    size_t end = listing.find('/', start + 2);
    if (end == std::string::npos) return false;
    char git = listing[start + 1];
    if (git != '-') {
      if (git == 'x') return false;
      std::string sub = Child(path, listing.substr(start + 2, end - start - 2));
      WatchDown(m, sub);
      if (!Watched(m, sub)) return false;
      again.push_back(sub + "/.git");
      expected.push_back(git);
    }
    start = end + 1;
  }
  std::vector<Info> looked = fs_beneath::InspectMany(again);
  for (size_t i = 0; i < looked.size(); ++i) {
    if (GitLetter(looked[i]) != expected[i]) return false;
  }
  return true;
}

}  // namespace

std::vector<Info> InspectMany(const std::vector<std::string>& paths, size_t* answered) {
  *answered = 0;
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  Begin(m);
  std::vector<Info> out(paths.size());
  std::vector<size_t> missed;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto it = m.entries.find(paths[i]);
    if (it != m.entries.end() && it->second.answered) {
      out[i] = it->second.info;
      ++*answered;
    } else {
      missed.push_back(i);
    }
  }
  if (missed.empty()) return out;
  // The watches first, then the looks: a change after them queues an event.
  std::vector<std::string> asked;
  asked.reserve(missed.size());
  for (size_t i : missed) {
    WatchDown(m, paths[i]);
    asked.push_back(paths[i]);
  }
  std::vector<Info> found = fs_beneath::InspectMany(asked);
  for (size_t k = 0; k < missed.size(); ++k) {
    const std::string& path = paths[missed[k]];
    const Info& info = found[k];
    out[missed[k]] = info;
    bool keep =
        (info.kind == Kind::kMissing && walk::CleanAbsolute(path) && Watched(m, ParentOf(path))) ||
        (info.kind == Kind::kDir && Watched(m, path));
    if (!keep) continue;
    Entry& entry = m.entries[path];
    entry.answered = true;
    entry.info = info;
    if (info.kind == Kind::kMissing) m.missing_in[ParentOf(path)].push_back(path);
  }
  return out;
}

std::vector<root_walk::Listing> ListRoots(const std::vector<std::string>& paths, size_t max_looks,
                                          size_t* answered) {
  *answered = 0;
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  Begin(m);
  std::vector<root_walk::Listing> out(paths.size());
  std::vector<size_t> missed;
  std::vector<std::string> asked;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto it = m.entries.find(paths[i]);
    if (it != m.entries.end() && it->second.listed && it->second.max_looks == max_looks) {
      out[i].entries = it->second.listing;
      ++*answered;
      continue;
    }
    // The watches first, then the listing: a change after them queues an event.
    WatchDown(m, paths[i]);
    missed.push_back(i);
    asked.push_back(paths[i]);
  }
  if (missed.empty()) return out;
  std::vector<root_walk::Listing> found = root_walk::ListRoots(asked, max_looks);
  for (size_t k = 0; k < missed.size(); ++k) {
    const std::string& path = asked[k];
    out[missed[k]] = found[k];
    if (found[k].err != 0 || !Keepable(m, path, found[k].entries)) continue;
    Entry& entry = m.entries[path];
    entry.listed = true;
    entry.max_looks = max_looks;
    entry.listing = found[k].entries;
  }
  return out;
}

namespace {

class MemoWatches : public watch_sets::Watches {
 public:
  explicit MemoWatches(Memo& m) : m_(m) {}
  void WatchDown(const std::string& dir) override { watched_looks::WatchDown(m_, dir); }
  int WatchOf(const std::string& path) override {
    auto it = m_.entries.find(path);
    return it == m_.entries.end() ? -1 : it->second.wd;
  }

 private:
  Memo& m_;
};

}  // namespace

// The events queued so far are taken first: a watch the memo holds is then known to be on the
// directory its path leads to (a change since queued an event, which dropped it), and any change
// after the set's watches were taken queues an event the set sees.
int MakeSet(const std::vector<std::string>& dirs, const std::vector<std::string>& entries) {
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  Begin(m);
  MemoWatches watches(m);
  std::unordered_map<int, watch_sets::Interest> watched;
  if (!watch_sets::Collect(watches, dirs, entries, &watched)) return -1;
  return m.sets.Make(std::move(watched));
}

int SetAgain(int id) {
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  Begin(m);
  return m.sets.Again(id);
}

bool SetQuiet(int id) {
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  Begin(m);
  return m.sets.Quiet(id);
}

bool SetQuietMarked(int id, QueueMark* mark) {
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  Begin(m);
  mark->fd = m.queue.fd();
  mark->takes = m.queue.takes();
  mark->seen = mark->takes->load();
  return mark->fd >= 0 && m.sets.Quiet(id);
}

void ReleaseSet(int id) {
  Memo& m = Get();
  std::lock_guard<std::mutex> hold(m.lock);
  m.sets.Release(id);
}

}  // namespace watched_looks
