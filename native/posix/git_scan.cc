// SPDX-License-Identifier: MIT
// Repository discovery inside write roots (see git_scan.h).
#include "posix/git_scan.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "linux/dir_watch.h"
#include "posix/fs_walk.h"
#include "posix/git_scan_listing.h"
#include "posix/git_scan_memory.h"

namespace git_scan {
namespace {

using listing::IsSkipped;
using listing::kDirFlags;
using listing::kLookFlags;
using listing::kMaxRelative;
using listing::LastWanted;
using listing::List;
using listing::OpenRelative;
using memory::DropSummaries;
using memory::Forget;
using memory::kMaxSummaryBytes;
using memory::kMaxSummaryFinds;
using memory::kMinSummaryDirs;
using memory::Listing;
using memory::Memory;
using memory::Names;
using memory::Stamp;
using memory::StampOf;
using memory::Summary;
using memory::TakeChanges;
using memory::Watched;

// Deeper trees are reported as truncated (each level holds one descriptor while it is walked).
constexpr size_t kMaxDepth = 400;
// Remembered directories, at most; beyond it the memory starts over.
constexpr size_t kMaxRemembered = 1 << 21;
// Directory times come from a coarse clock: a listing taken less than this after the directory's
// last change may have missed a second change in the same tick, so it is not remembered.
constexpr int64_t kRacyNanos = 2000000000;

int64_t Now() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return memory::Nanos(ts);
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
  // Every listing of its tree walked so far was remembered, watched and unchanged (a summary of
  // the tree can be kept once it is walked), and where its finds and count began.
  bool clean = false;
  uint64_t start_dirs = 0;
  size_t start_worktrees = 0, start_git_dirs = 0, start_named = 0;
  // Its index in the stack, and the deepest frame pushed below it so far.
  size_t index = 0, deepest = 0;
};

std::atomic<bool>& Watching() {
  static std::atomic<bool> on{true};
  return on;
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
        Pop();
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

  // The directory being looked at below the top frame gives no summary of that frame's tree.
  void Unclean() {
    if (!stack_.empty()) stack_.back().clean = false;
  }

  // A walked tree: its summary kept when every listing in it held, and its state handed up.
  void Pop() {
    Frame done = std::move(stack_.back());
    stack_.pop_back();
    if (done.fd >= 0) close(done.fd);
    if (!stack_.empty()) {
      Frame& parent = stack_.back();
      parent.clean = parent.clean && done.clean;
      parent.deepest = std::max(parent.deepest, done.deepest);
    }
    if (done.clean && !result.truncated) Remember(done);
  }

  void Remember(const Frame& done) {
    uint64_t below = result.dirs - done.start_dirs;
    size_t finds = result.worktrees.size() - done.start_worktrees + result.git_dirs.size() -
                   done.start_git_dirs + result.named.size() - done.start_named;
    if (below < kMinSummaryDirs || finds > kMaxSummaryFinds) return;
    auto bytes = [](const std::vector<std::string>& finds, size_t from) {
      size_t sum = 0;
      for (size_t i = from; i < finds.size(); ++i) sum += finds[i].size();
      return sum;
    };
    if (bytes(result.worktrees, done.start_worktrees) +
            bytes(result.git_dirs, done.start_git_dirs) + bytes(result.named, done.start_named) >
        kMaxSummaryBytes)
      return;
    auto known = Memory().find(done.path);
    if (known == Memory().end() || !known->second.fresh) return;
    auto summary = std::make_shared<Summary>();
    summary->dirs_below = below;
    summary->depth = done.deepest - done.index;
    summary->skip = done.skip;
    summary->report_named = report_named_;
    summary->worktrees.assign(result.worktrees.begin() + done.start_worktrees,
                              result.worktrees.end());
    summary->git_dirs.assign(result.git_dirs.begin() + done.start_git_dirs, result.git_dirs.end());
    summary->named.assign(result.named.begin() + done.start_named, result.named.end());
    known->second.summary = std::move(summary);
  }

  // Whether the summary answers the tree here exactly as its walk would (same context, and its
  // frames, directories and finds within the limits from where the walk stands).
  bool Fits(const Summary& summary, bool skip, size_t index) const {
    return summary.skip == skip && summary.report_named == report_named_ &&
           index + summary.depth < kMaxDepth && result.dirs + summary.dirs_below <= max_dirs_ &&
           result.worktrees.size() + result.git_dirs.size() + summary.worktrees.size() +
                   summary.git_dirs.size() <=
               max_repos_ &&
           result.named.size() + summary.named.size() <= max_named_;
  }

  void Apply(const Summary& summary, size_t index) {
    result.dirs += summary.dirs_below;
    result.summarised += summary.dirs_below + 1;
    result.worktrees.insert(result.worktrees.end(), summary.worktrees.begin(),
                            summary.worktrees.end());
    result.git_dirs.insert(result.git_dirs.end(), summary.git_dirs.begin(), summary.git_dirs.end());
    result.named.insert(result.named.end(), summary.named.begin(), summary.named.end());
    if (!stack_.empty())
      stack_.back().deepest = std::max(stack_.back().deepest, index + summary.depth);
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
        if (errno == ENOENT || errno == ENOTDIR) return Unclean();  // gone
      } else if (!S_ISDIR(st.st_mode)) {
        return Unclean();  // a link or a file now: host git does not enter it there
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
    // Unreadable, gone, or a link now: host git cannot enter it there either.
    if (fd < 0) return Unclean();
    Enter(fd, path, readable, skip);
  }

  // Takes `fd` (`readable`, or path-only): lists the directory unless its listing is remembered.
  void Enter(int fd, const std::string& path, bool readable, bool skip) {
    struct stat st;
    if (!Count() || fstat(fd, &st) != 0) {
      close(fd);
      return Unclean();
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
      // Listed anew: no summary of a tree holding it holds.
      DropSummaries(path);
      int wd = Watching().load() ? dir_watch::Add(fd) : -1;
      if (wd >= 0 && fstat(fd, &st) != 0) {
        close(fd);
        return Unclean();
      }
      stamp = StampOf(st);
      int64_t now = Now();
      int list_fd = readable ? fd : openat(fd, ".", kDirFlags);
      bool listed = list_fd >= 0 && List(list_fd, &listing);
      if (list_fd >= 0 && list_fd != fd) close(list_fd);
      if (!listed) {
        close(fd);
        return Unclean();
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
    size_t index = stack_.size();
    bool clean = same && listing.fresh;
    if (clean && listing.summary != nullptr && Fits(*listing.summary, skip, index)) {
      Apply(*listing.summary, index);
      if (fd >= 0) close(fd);
      return;
    }
    if (!clean) Unclean();
    size_t start_worktrees = result.worktrees.size(), start_git_dirs = result.git_dirs.size(),
           start_named = result.named.size();
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
    stack_.push_back(Frame{fd, base, std::move(rel), path, listing.subdirs, 0, same, skip, clean,
                           result.dirs, start_worktrees, start_git_dirs, start_named, index,
                           index});
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

void SetWatching(bool on) { Watching().store(on); }

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
