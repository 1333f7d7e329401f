// SPDX-License-Identifier: MIT
// The file verbs on POSIX (see binding/fs_glue.h): the shared ones (binding/fs_verbs_glue.cc) and
// fsScanGit, fsScanGitAsync and fsListRoots, the napi glue over git_scan.h and root_walk.h.
#include <cerrno>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "binding/byte_strings.h"
#include "binding/fs_glue.h"
#include "posix/git_scan.h"
#include "posix/job_threads.h"
#include "posix/root_walk.h"
#if defined(__linux__)
#include "linux/watched_looks.h"
#endif

namespace fs_glue {
namespace {

using byte_strings::Bytes;
using byte_strings::FromBytes;

Napi::Array ToArray(Napi::Env env, const std::vector<std::string>& items) {
  Napi::Array out = Napi::Array::New(env, items.size());
  for (size_t i = 0; i < items.size(); ++i)
    out.Set(static_cast<uint32_t>(i), FromBytes(env, items[i]));
  return out;
}

// A JS array of byte strings (absent: empty); false when it is something else.
bool BytesArray(const Napi::CallbackInfo& info, size_t index, std::vector<std::string>* out) {
  if (info.Length() <= index || info[index].IsUndefined()) return true;
  if (!info[index].IsArray()) return false;
  Napi::Array items = info[index].As<Napi::Array>();
  for (uint32_t i = 0; i < items.Length(); ++i) {
    std::string item;
    if (!Bytes(items.Get(i), &item)) return false;
    out->push_back(std::move(item));
  }
  return true;
}

// The arguments of fsScanGit after the (root, rel) pair: false when one has the wrong type.
struct ScanArgs {
  uint64_t max_dirs = 0;
  uint64_t max_repos = 0;
  git_scan::Wanted wanted;
};

bool ParseScanArgs(const Napi::CallbackInfo& info, ScanArgs* out) {
  auto number = [&](size_t i) {
    return info.Length() > i && info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue() : 0;
  };
  double max_dirs = number(2), max_repos = number(3), max_named = number(7);
  if (max_dirs < 0 || max_repos < 0 || max_named < 0) max_dirs = max_repos = max_named = 0;
  out->max_dirs = static_cast<uint64_t>(max_dirs);
  out->max_repos = static_cast<uint64_t>(max_repos);
  out->wanted.max = static_cast<uint64_t>(max_named);
  return BytesArray(info, 4, &out->wanted.exact) && BytesArray(info, 5, &out->wanted.suffixes) &&
         BytesArray(info, 6, &out->wanted.skip);
}

// A scan that did not walk: {kind: 'e', errno}.
Napi::Object NotScanned(Napi::Env env, int err) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("kind", "e");
  out.Set("errno", Napi::Number::New(env, err));
  return out;
}

Napi::Object BadArgs(Napi::Env env) { return NotScanned(env, EINVAL); }

Napi::Object ScanResult(Napi::Env env, const git_scan::Result& r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("worktrees", ToArray(env, r.worktrees));
  out.Set("gitDirs", ToArray(env, r.git_dirs));
  out.Set("named", ToArray(env, r.named));
  out.Set("dirs", Napi::Number::New(env, static_cast<double>(r.dirs)));
  out.Set("summarised", Napi::Number::New(env, static_cast<double>(r.summarised)));
  out.Set("truncated", r.truncated);
  out.Set("errno", Napi::Number::New(env, r.err));
  return out;
}

// fsScanGit(root, '', maxDirs, maxRepos[, names, suffixes, skip, maxNamed, ifFree]): every
// repository under root, and the entries so named (see git_scan.h). ifFree: when another thread
// (the scan thread below) is walking, answer {kind: 'e', errno: EBUSY} at once instead of waiting
// for it, so that the caller's thread never waits on a walk it did not ask for.
Napi::Value FsScanGitBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& /*rel*/) {
  ScanArgs a;
  if (!ParseScanArgs(info, &a)) return BadArgs(info.Env());
  bool if_free = info.Length() > 8 && info[8].IsBoolean() && info[8].As<Napi::Boolean>().Value();
  bool busy = false;
  git_scan::Result r =
      git_scan::Scan(root, a.max_dirs, a.max_repos, a.wanted, if_free ? &busy : nullptr);
  return busy ? NotScanned(info.Env(), EBUSY) : ScanResult(info.Env(), r);
}

Napi::Value ScanGit(const Napi::CallbackInfo& info) { return FsCall(info, FsScanGitBody); }

// A walk on one of the addon's lanes (posix/job_threads.h), answered on the JavaScript thread. Not
// the libuv pool: whatever else is queued there (a caller's file work, clones when the spawn lane
// is unavailable) would delay the walk, and a hand-over there can hold the caller's thread in a
// condition variable. Its pending answer keeps the event loop (and the process) alive. The
// promise never rejects: null for a fault; a walk whose environment went away is dropped.
struct Job : job_threads::Job {
  explicit Job(Napi::Env env) : promise(env) {}
  virtual Napi::Value Answer(Napi::Env env) = 0;  // on the JavaScript thread
  void Deliver(Napi::Env env) override {
    napi_value value = nullptr;
    try {
      value = Answer(env);
    } catch (...) {
      value = nullptr;  // nothing may escape into V8 from here
    }
    if (value == nullptr) napi_get_null(env, &value);
    promise.Settle(env, value);
  }
  void Orphan() override {}
  job_threads::JobPromise promise;
};

// Hands `job` to `lane` (or else the libuv pool) and returns its promise.
Napi::Value Post(const Napi::CallbackInfo& info, job_threads::Lane* lane, Job* job) {
  napi_value promise = job->promise.promise;
  job_threads::Queue(info.Env(), static_cast<job_threads::Mailbox*>(info.Data()), lane, job);
  return Napi::Value(info.Env(), promise);
}

// fsScanGitAsync: fsScanGit's walk on the scan lane (one thread: the walks take the one lock of
// git_scan.cc, whose memory of listings is shared by every thread, and would not run side by side
// anyway), so that the caller's thread does not wait for it. The same walk, so the same answer as
// fsScanGit made at the moment the walk runs (null for a fault).
struct ScanJob : Job {
  ScanJob(Napi::Env env, std::string r, ScanArgs a) : Job(env), root(std::move(r)), args(a) {}
  void Run() override {
    result = git_scan::Scan(root, args.max_dirs, args.max_repos, args.wanted);
    done = true;
  }
  Napi::Value Answer(Napi::Env env) override {
    return done ? Napi::Value(ScanResult(env, result)) : env.Null();
  }
  std::string root;
  ScanArgs args;
  git_scan::Result result;
  bool done = false;
};

Napi::Value FsScanGitAsyncBody(const Napi::CallbackInfo& info, const std::string& root,
                               const std::string& /*rel*/) {
  Napi::Env env = info.Env();
  ScanArgs a;
  if (!ParseScanArgs(info, &a)) {
    Napi::Promise::Deferred bad = Napi::Promise::Deferred::New(env);
    bad.Resolve(BadArgs(env));
    return bad.Promise();
  }
  return Post(info, job_threads::ScanLane(), new ScanJob(env, root, std::move(a)));
}

Napi::Value ScanGitAsync(const Napi::CallbackInfo& info) {
  return FsCall(info, FsScanGitAsyncBody);
}

// fsRemoveAsync(root, rel): fsRemove's descriptor walk (no link followed, any depth) on the removal
// lane, for trees of any size the caller's thread must not wait for (a workspace's managed
// caches when they are pruned). Its pending answer keeps the process alive, as the removal on the
// caller's thread did. Resolves with fsRemove's answer.
struct RemoveJob : Job {
  RemoveJob(Napi::Env env, std::string r, std::string p)
      : Job(env), root(std::move(r)), rel(std::move(p)) {}
  void Run() override {
    result = fs_beneath::Remove(root, rel);
    done = true;
  }
  Napi::Value Answer(Napi::Env env) override {
    return done ? Napi::Value(RemoveAnswer(env, result)) : env.Null();
  }
  std::string root;
  std::string rel;
  fs_beneath::RemoveResult result;
  bool done = false;
};

Napi::Value FsRemoveAsyncBody(const Napi::CallbackInfo& info, const std::string& root,
                              const std::string& rel) {
  return Post(info, job_threads::RemoveLane(), new RemoveJob(info.Env(), root, rel));
}

Napi::Value RemoveAsync(const Napi::CallbackInfo& info) { return FsCall(info, FsRemoveAsyncBody); }

// fsListRoots(paths, maxLooks, watched): per absolute path its listing (root_walk.h) as a byte
// string, or the errno why it is not a directory reached without a link; null for bad arguments
// or an internal fault. `watched`: some listings may be kept ones (Linux, linux/watched_looks.h),
// and how many follows the listings. Never throws.
Napi::Value ListRoots(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  try {
    std::vector<std::string> paths;
    if (info.Length() < 2 || !info[0].IsArray() || !info[1].IsNumber() ||
        !BytesArray(info, 0, &paths))
      return env.Null();
    double max_looks = info[1].As<Napi::Number>().DoubleValue();
    if (!(max_looks >= 0)) return env.Null();
    bool watched = info.Length() > 2 && info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
    size_t answered = 0;
#if defined(__linux__)
    std::vector<root_walk::Listing> found =
        watched ? watched_looks::ListRoots(paths, static_cast<size_t>(max_looks), &answered)
                : root_walk::ListRoots(paths, static_cast<size_t>(max_looks));
#else
    std::vector<root_walk::Listing> found =
        root_walk::ListRoots(paths, static_cast<size_t>(max_looks));
#endif
    Napi::Array out = Napi::Array::New(env, found.size() + (watched ? 1 : 0));
    if (watched)
      out.Set(static_cast<uint32_t>(found.size()),
              Napi::Number::New(env, static_cast<double>(answered)));
    for (size_t i = 0; i < found.size(); ++i) {
      if (found[i].err != 0)
        out.Set(static_cast<uint32_t>(i), Napi::Number::New(env, found[i].err));
      else
        out.Set(static_cast<uint32_t>(i), FromBytes(env, found[i].entries));
    }
    return out;
  } catch (...) {
    return env.Null();
  }
}

// fsScanWatching(on): whether the scan's new listings take a watch (git_scan::SetWatching). Never
// throws; a non-boolean argument changes nothing.
Napi::Value ScanWatching(const Napi::CallbackInfo& info) {
  if (info.Length() >= 1 && info[0].IsBoolean()) git_scan::SetWatching(info[0].As<Napi::Boolean>());
  return info.Env().Undefined();
}

}  // namespace

void Export(Napi::Env env, Napi::Object exports, job_threads::Mailbox* mailbox) {
  ExportVerbs(env, exports);
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsScanGit", Napi::Function::New<ScanGit>(env, "fsScanGit"), napi_default));
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsScanGitAsync", Napi::Function::New<ScanGitAsync>(env, "fsScanGitAsync", mailbox),
      napi_default));
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsScanWatching", Napi::Function::New<ScanWatching>(env, "fsScanWatching"), napi_default));
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsListRoots", Napi::Function::New<ListRoots>(env, "fsListRoots"), napi_default));
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsRemoveAsync", Napi::Function::New<RemoveAsync>(env, "fsRemoveAsync", mailbox),
      napi_default));
}

}  // namespace fs_glue
