// SPDX-License-Identifier: MIT
// Repository discovery inside write roots (see git_scan.h).
#include "posix/git_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <mutex>
#include <unordered_map>

#include "linux/dir_watch.h"
#include "posix/fs_walk.h"

namespace git_scan {
namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#ifdef O_PATH
// A remembered directory is only looked through (fstatat of its entries), not listed: a path-only
// descriptor is cheaper to open; a readable one is opened from it when a listing is needed.
constexpr int kLookFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
constexpr int kLookFlags = kDirFlags;
#endif
// Deeper trees are reported as truncated (each level holds one descriptor while it is walked).
constexpr size_t kMaxDepth = 400;
// Remembered directories, at most; beyond it the memory starts over.
constexpr size_t kMaxRemembered = 1 << 21;
// Directory times come from a coarse clock: a listing taken less than this after the directory's
// last change may have missed a second change in the same tick, so it is not remembered.
constexpr int64_t kRacyNanos = 2000000000;

struct Stamp {
  uint64_t dev = 0, ino = 0;
  int64_t mtime = 0, ctime = 0;
  bool operator==(const Stamp& o) const {
    return dev == o.dev && ino == o.ino && mtime == o.mtime && ctime == o.ctime;
  }
};

using Names = std::shared_ptr<const std::vector<std::string>>;

struct Listing {
  Stamp stamp;
  // Shared with the memory: a remembered listing is walked without copying its names.
  Names subdirs = std::make_shared<const std::vector<std::string>>();
  // Its entries the caller asked for (Wanted): usually none, so usually not allocated.
  Names named;
  bool has_git = false;
  // HEAD, and objects/ and refs/ as real directories: a git dir, whose insides the caller guards.
  bool is_git_dir = false;
  // HEAD, objects and refs present but not both real directories: git still takes it for a git
  // dir when they are links to directories (it tests them with access(), which follows links) or
  // executable files, so it is reported as one; it is walked too, in case git does not.
  bool may_be_git_dir = false;
  // The inotify watch taken before the stamp was read (-1: none), and whether it has reported
  // nothing since the stamp was last found unchanged: then the listing is exact without a stat.
  int wd = -1;
  bool fresh = false;
};

std::unordered_map<std::string, Listing>& Memory() {
  static auto* memory = new std::unordered_map<std::string, Listing>();
  return *memory;
}

// The remembered path of each watch.
std::unordered_map<int, std::string>& Watched() {
  static auto* watched = new std::unordered_map<int, std::string>();
  return *watched;
}

void Forget() {
  Memory().clear();
  Watched().clear();
  dir_watch::Reset();
}

// Before a walk: listings whose directory reported a change (or all, when changes may have gone
// unreported) are stat'ed again before they are used.
void TakeChanges() {
  std::vector<int> changed;
  bool complete = dir_watch::Drain(&changed);
  if (!complete && !Watched().empty()) {
    for (auto& [path, listing] : Memory()) listing.fresh = false;
  }
  for (int wd : changed) {
    auto watched = Watched().find(wd);
    if (watched == Watched().end()) continue;
    auto known = Memory().find(watched->second);
    if (known != Memory().end() && known->second.wd == wd) known->second.fresh = false;
  }
}

int64_t Nanos(const struct timespec& ts) {
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

Stamp StampOf(const struct stat& st) {
#if defined(__APPLE__)
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino),
          Nanos(st.st_mtimespec), Nanos(st.st_ctimespec)};
#else
  return {static_cast<uint64_t>(st.st_dev), static_cast<uint64_t>(st.st_ino), Nanos(st.st_mtim),
          Nanos(st.st_ctim)};
#endif
}

int64_t Now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return Nanos(ts);
}

// Names git looks up: on macOS volumes are case-insensitive by default, so `OBJECTS` or `.GIT`
// is what git finds there too (a false match elsewhere only guards more).
bool NameIs(const char* name, const char* wanted) {
#if defined(__APPLE__)
  return strcasecmp(name, wanted) == 0;
#else
  return strcmp(name, wanted) == 0;
#endif
}

// The Wanted of the last scan that asked for names: listings remember which entries matched it, so
// a scan that asks for other names starts over (one that asks for none keeps them, unreported).
Wanted& LastWanted() {
  static auto* wanted = new Wanted();
  return *wanted;
}

bool EndsWith(const char* name, const std::string& suffix) {
  size_t len = strlen(name);
  if (len <= suffix.size()) return false;
  return NameIs(name + len - suffix.size(), suffix.c_str());
}

bool IsWanted(const char* name) {
  const Wanted& wanted = LastWanted();
  for (const std::string& exact : wanted.exact)
    if (NameIs(name, exact.c_str())) return true;
  for (const std::string& suffix : wanted.suffixes)
    if (EndsWith(name, suffix)) return true;
  return false;
}

bool IsSkipped(const std::string& name) {
  for (const std::string& skip : LastWanted().skip)
    if (NameIs(name.c_str(), skip.c_str())) return true;
  return false;
}

bool IsDir(int dirfd, const char* name, unsigned char type) {
  if (type == DT_DIR) return true;
  if (type != DT_UNKNOWN) return false;
  struct stat st;
  return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

// Lists an open directory: its subdirectories, whether it has a `.git`, whether it is a git dir.
bool List(int fd, Listing* out) {
  int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return false;
  DIR* dir = fdopendir(dup_fd);
  if (dir == nullptr) {
    close(dup_fd);
    return false;
  }
  bool head = false, objects = false, refs = false, objects_dir = false, refs_dir = false;
  bool ok = true;
  auto subdirs = std::make_shared<std::vector<std::string>>();
  std::shared_ptr<std::vector<std::string>> named;
  for (;;) {
    errno = 0;
    struct dirent* entry = readdir(dir);
    if (entry == nullptr) {
      ok = errno == 0;
      break;
    }
    const char* name = entry->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    if (NameIs(name, ".git")) {
      out->has_git = true;
      continue;
    }
    if (IsWanted(name)) {
      if (named == nullptr) named = std::make_shared<std::vector<std::string>>();
      named->emplace_back(name);
    }
    bool is_dir = IsDir(fd, name, entry->d_type);
    if (NameIs(name, "HEAD")) head = true;
    if (NameIs(name, "objects")) {
      objects = true;
      objects_dir = objects_dir || is_dir;
    }
    if (NameIs(name, "refs")) {
      refs = true;
      refs_dir = refs_dir || is_dir;
    }
    if (is_dir) subdirs->emplace_back(name);
  }
  closedir(dir);
  out->subdirs = std::move(subdirs);
  out->named = std::move(named);
  out->is_git_dir = head && objects_dir && refs_dir;
  out->may_be_git_dir = head && objects && refs && !out->is_git_dir;
  return ok;
}

// A directory being walked. One whose listing was remembered and whose stamp still matches is not
// opened: its subdirectories are looked at by path from the nearest opened ancestor (`base`, with
// `rel` from there). Each component of that path was itself found unchanged just before, and a
// directory replaced by a link changes its parent's times, so such a path follows no link unless
// a concurrent process swaps one in between two lookups; then only a stamp is read through it, and
// a directory is only ever opened component by component with O_NOFOLLOW.
struct Frame {
  int fd;  // owned, or -1 when not opened
  int base;
  std::string rel;
  std::string path;
  Names subdirs;
  size_t next = 0;
  // Its listing is the remembered one, unchanged: each name in it still leads where it did.
  bool same = false;
  // It or a directory above it (below the root) has a name the caller skips: no entry reported.
  bool skip = false;
};

// Longest path looked up from an ancestor in one call (longer ones are opened step by step).
constexpr size_t kMaxRelative = 1024;

// Opens `rel` below `base` one component at a time, never following a link.
int OpenRelative(int base, const std::string& rel, int flags) {
  int fd = base;
  size_t start = 0;
  for (;;) {
    size_t slash = rel.find('/', start);
    bool last = slash == std::string::npos;
    std::string part = rel.substr(start, last ? std::string::npos : slash - start);
    int next = openat(fd, part.c_str(), last ? flags : kLookFlags);
    if (fd != base) close(fd);
    if (next < 0 || last) return next;
    fd = next;
    start = slash + 1;
  }
}

class Walker {
 public:
  Walker(uint64_t max_dirs, uint64_t max_repos, uint64_t max_named, bool report_named)
      : max_dirs_(max_dirs),
        max_repos_(max_repos),
        max_named_(max_named),
        report_named_(report_named) {}
  ~Walker() {
    for (Frame& f : stack_)
      if (f.fd >= 0) close(f.fd);
  }

  void Run(int root_fd, const std::string& root) {
    TakeChanges();
    Enter(root_fd, root, false, false);
    while (!stack_.empty() && !result.truncated) {
      Frame& top = stack_.back();
      if (top.next >= top.subdirs->size()) {
        if (top.fd >= 0) close(top.fd);
        stack_.pop_back();
        continue;
      }
      Names names = top.subdirs;  // kept alive while Child pushes (which moves `top`)
      Child(stack_.size() - 1, (*names)[top.next++]);
    }
  }

  Result result;

 private:
  bool Count() {
    if (++result.dirs > max_dirs_) result.truncated = true;
    return !result.truncated;
  }

  // A subdirectory: a remembered one whose stamp is unchanged is settled by one fstatat; others
  // are opened (with O_NOFOLLOW: a link is never entered) and looked at through the descriptor.
  void Child(size_t index, const std::string& name) {
    const Frame& parent = stack_[index];
    std::string path = parent.path + "/" + name;
    std::string rel = parent.fd >= 0 ? name : parent.rel + "/" + name;
    int base = parent.fd >= 0 ? parent.fd : parent.base;
    bool skip = parent.skip || IsSkipped(name);
    auto known = Memory().find(path);
    // Unchanged parent, and no event from the directory this name led to: no stat needed. A
    // directory moved, removed or replaced reports it itself or through its parent.
    if (known != Memory().end() && parent.same && known->second.fresh) {
      if (Count()) Note(-1, base, std::move(rel), path, known->second, true, skip);
      return;
    }
    if (known != Memory().end()) known->second.fresh = false;
    if (known != Memory().end() && rel.size() <= kMaxRelative) {
      struct stat st;
      if (fstatat(base, rel.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return;  // gone
      } else if (!S_ISDIR(st.st_mode)) {
        return;  // a link or a file now: host git does not enter it there
      } else if (known->second.stamp == StampOf(st)) {
        // Unchanged since the watch was taken: its events from now on are in the queue.
        known->second.fresh = known->second.wd >= 0;
        if (Count()) Note(-1, base, std::move(rel), path, known->second, true, skip);
        return;
      }
    }
    bool readable = known == Memory().end();
    int flags = readable ? kDirFlags : kLookFlags;
    int fd = rel == name ? openat(base, name.c_str(), flags) : OpenRelative(base, rel, flags);
    if (fd < 0) return;  // unreadable, gone, or a link now: host git cannot enter it there either
    Enter(fd, path, readable, skip);
  }

  // Takes `fd` (`readable`, or path-only): lists the directory unless its listing is remembered.
  void Enter(int fd, const std::string& path, bool readable, bool skip) {
    struct stat st;
    if (!Count() || fstat(fd, &st) != 0) {
      close(fd);
      return;
    }
    Stamp stamp = StampOf(st);
    auto known = Memory().find(path);
    Listing listing;
    bool same = known != Memory().end() && known->second.stamp == stamp;
    if (same) {
      known->second.fresh = known->second.wd >= 0;
      listing = known->second;
    } else {
      // The watch first, then the stamp and the listing: a change after them is reported.
      int wd = dir_watch::Add(fd);
      if (wd >= 0 && fstat(fd, &st) != 0) {
        close(fd);
        return;
      }
      stamp = StampOf(st);
      int64_t now = Now();
      int list_fd = readable ? fd : openat(fd, ".", kDirFlags);
      bool listed = list_fd >= 0 && List(list_fd, &listing);
      if (list_fd >= 0 && list_fd != fd) close(list_fd);
      if (!listed) {
        close(fd);
        return;
      }
      listing.stamp = stamp;
      if (known != Memory().end() && known->second.wd >= 0 && known->second.wd != wd) {
        dir_watch::Remove(known->second.wd);
        Watched().erase(known->second.wd);
      }
      if (now - stamp.mtime > kRacyNanos && now - stamp.ctime > kRacyNanos) {
        if (Memory().size() >= kMaxRemembered) {
          Forget();  // the watches too: the one just taken is gone
          wd = -1;
        }
        listing.wd = wd;
        listing.fresh = wd >= 0;
        // One path per watch: a directory reached by two paths (a bind mount) is stat'ed.
        auto other = wd < 0 ? Watched().end() : Watched().find(wd);
        if (other != Watched().end() && other->second != path)
          listing.wd = -1, listing.fresh = false;
        else if (wd >= 0)
          Watched()[wd] = path;
        Memory()[path] = listing;
      } else if (known != Memory().end()) {
        Memory().erase(known);
      }
    }
    Note(fd, fd, std::string(), path, listing, same, skip);
  }

  // Notes what the directory is and pushes it to be walked (takes `fd` when it is not -1).
  void Note(int fd, int base, std::string rel, const std::string& path, const Listing& listing,
            bool same, bool skip) {
    if (listing.has_git) Found(&result.worktrees, path);
    if (listing.named != nullptr && !skip && report_named_) {
      for (const std::string& name : *listing.named) {
        if (result.named.size() >= max_named_) {
          result.truncated = true;
          break;
        }
        result.named.push_back(path + "/" + name);
      }
    }
    if (listing.may_be_git_dir) Found(&result.git_dirs, path);
    if (listing.is_git_dir) Found(&result.git_dirs, path);
    bool leaf = listing.subdirs->empty();
    if (listing.is_git_dir || leaf || stack_.size() >= kMaxDepth) {
      if (!listing.is_git_dir && !leaf) result.truncated = true;
      if (fd >= 0) close(fd);
      return;
    }
    stack_.push_back(Frame{fd, base, std::move(rel), path, listing.subdirs, 0, same, skip});
  }

  void Found(std::vector<std::string>* list, const std::string& path) {
    if (result.worktrees.size() + result.git_dirs.size() >= max_repos_)
      result.truncated = true;
    else
      list->push_back(path);
  }

  uint64_t max_dirs_;
  uint64_t max_repos_;
  uint64_t max_named_;
  bool report_named_;
  std::vector<Frame> stack_;
};

}  // namespace

Result Scan(const std::string& root, uint64_t max_dirs, uint64_t max_repos, const Wanted& wanted,
            bool* busy) {
  // The memory and the watches are shared by every thread that loads the addon.
  static std::mutex* lock = new std::mutex();
  std::unique_lock<std::mutex> hold(*lock, std::defer_lock);
  if (busy == nullptr) {
    hold.lock();
  } else if (!hold.try_lock()) {
    *busy = true;
    return Result();
  }
  bool asks = !wanted.exact.empty() || !wanted.suffixes.empty();
  if (asks && !(wanted == LastWanted())) {
    Forget();
    LastWanted() = wanted;
  }
  Result failed;
  int walk_fd = fs_beneath::OpenDirectory(root, &failed.err);
  if (walk_fd < 0) return failed;
  std::string base = root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  Walker walker(max_dirs, max_repos, wanted.max, asks);
  walker.Run(walk_fd, base == "/" ? "" : base);
  return walker.result;
}

}  // namespace git_scan
