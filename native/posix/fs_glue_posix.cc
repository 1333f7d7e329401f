// SPDX-License-Identifier: MIT
// The file verbs on POSIX (see binding/fs_glue.h): the shared ones (binding/fs_verbs_glue.cc) and
// fsScanGit and fsListRoots, the napi glue over git_scan.h and root_walk.h.
#include <string>
#include <utility>
#include <vector>

#include "binding/byte_strings.h"
#include "binding/fs_glue.h"
#include "posix/git_scan.h"
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

// fsScanGit(root, '', maxDirs, maxRepos[, names, suffixes, skip, maxNamed]): every repository
// under root, and the entries so named (see git_scan.h).
Napi::Value FsScanGitBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& /*rel*/) {
  Napi::Env env = info.Env();
  auto number = [&](size_t i) {
    return info.Length() > i && info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue() : 0;
  };
  double max_dirs = number(2), max_repos = number(3), max_named = number(7);
  if (max_dirs < 0 || max_repos < 0 || max_named < 0) max_dirs = max_repos = max_named = 0;
  git_scan::Wanted wanted;
  wanted.max = static_cast<uint64_t>(max_named);
  if (!BytesArray(info, 4, &wanted.exact) || !BytesArray(info, 5, &wanted.suffixes) ||
      !BytesArray(info, 6, &wanted.skip)) {
    Napi::Object bad = Napi::Object::New(env);
    bad.Set("kind", "e");
    bad.Set("errno", Napi::Number::New(env, 22));
    return bad;
  }
  git_scan::Result r = git_scan::Scan(root, static_cast<uint64_t>(max_dirs),
                                      static_cast<uint64_t>(max_repos), wanted);
  Napi::Object out = Napi::Object::New(env);
  out.Set("worktrees", ToArray(env, r.worktrees));
  out.Set("gitDirs", ToArray(env, r.git_dirs));
  out.Set("named", ToArray(env, r.named));
  out.Set("dirs", Napi::Number::New(env, static_cast<double>(r.dirs)));
  out.Set("truncated", r.truncated);
  out.Set("errno", Napi::Number::New(env, r.err));
  return out;
}

Napi::Value ScanGit(const Napi::CallbackInfo& info) { return FsCall(info, FsScanGitBody); }

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

}  // namespace

void Export(Napi::Env env, Napi::Object exports) {
  ExportVerbs(env, exports);
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsScanGit", Napi::Function::New<ScanGit>(env, "fsScanGit"), napi_default));
  exports.DefineProperty(Napi::PropertyDescriptor::Value(
      "fsListRoots", Napi::Function::New<ListRoots>(env, "fsListRoots"), napi_default));
}

}  // namespace fs_glue
