// SPDX-License-Identifier: MIT
// The napi glue of the file verbs both walks offer (binding/fs_beneath.h: native/posix/ and
// native/windows/): fsInspect, fsInspectMany, fsRead, fsList, fsRemove, fsReplace and fsMake; on
// Linux fsInspectManyWatched and the watch-set verbs too.
#include <string>
#include <utility>
#include <vector>

#include "binding/byte_strings.h"
#include "binding/fs_beneath.h"
#include "binding/fs_glue.h"
#if defined(__linux__)
#include "linux/watched_looks.h"
#endif

namespace fs_glue {

using byte_strings::Bytes;
using byte_strings::FromBytes;

// Every fs verb answers with a value and never throws: failures are { errno } results, so a call
// made while a sandbox's exit is delivered cannot escape into V8 (catch-all included).
Napi::Value FsCall(const Napi::CallbackInfo& info,
                   Napi::Value (*body)(const Napi::CallbackInfo&, const std::string&,
                                       const std::string&)) {
  Napi::Env env = info.Env();
  try {
    std::string root;
    std::string rel;
    if (info.Length() < 2 || !Bytes(info[0], &root) || !Bytes(info[1], &rel)) {
      Napi::Object bad = Napi::Object::New(env);
      bad.Set("kind", "e");
      bad.Set("errno", Napi::Number::New(env, 22));
      return bad;
    }
    return body(info, root, rel);
  } catch (...) {
    return env.Null();
  }
}

Napi::Object RemoveAnswer(Napi::Env env, const fs_beneath::RemoveResult& r) {
  Napi::Object out = Napi::Object::New(env);
  out.Set("ok", r.ok);
  out.Set("errno", Napi::Number::New(env, r.err));
  out.Set("removed", Napi::Number::New(env, static_cast<double>(r.removed)));
  return out;
}

namespace {

Napi::Value FsInspectBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& rel) {
  fs_beneath::Info r = fs_beneath::Inspect(root, rel);
  Napi::Object out = Napi::Object::New(info.Env());
  out.Set("kind", std::string(1, static_cast<char>(r.kind)));
  out.Set("errno", Napi::Number::New(info.Env(), r.err));
  out.Set("size", Napi::Number::New(info.Env(), static_cast<double>(r.size)));
  out.Set("stamp", r.stamp);
  return out;
}

// fsInspectMany(paths): for each absolute path, its kind letter followed by its stamp ("m" when
// missing); null when the argument is not an array of byte strings. Never throws.
// fsInspectManyWatched(paths) (Linux): the same answers, some kept from earlier calls while
// inotify reports no change that could alter them (linux/watched_looks.h), and after them how
// many were kept ones.
template <bool kWatched>
Napi::Value FsInspectMany(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  try {
    if (info.Length() < 1 || !info[0].IsArray()) return env.Null();
    Napi::Array in = info[0].As<Napi::Array>();
    std::vector<std::string> paths(in.Length());
    for (uint32_t i = 0; i < in.Length(); ++i) {
      if (!Bytes(in.Get(i), &paths[i])) return env.Null();
    }
    size_t answered = 0;
#if defined(__linux__)
    std::vector<fs_beneath::Info> found =
        kWatched ? watched_looks::InspectMany(paths, &answered) : fs_beneath::InspectMany(paths);
#else
    std::vector<fs_beneath::Info> found = fs_beneath::InspectMany(paths);
#endif
    Napi::Array out = Napi::Array::New(env, found.size() + (kWatched ? 1 : 0));
    for (size_t i = 0; i < found.size(); ++i) {
      out.Set(static_cast<uint32_t>(i),
              std::string(1, static_cast<char>(found[i].kind)) + found[i].stamp);
    }
    if (kWatched)
      out.Set(static_cast<uint32_t>(found.size()),
              Napi::Number::New(env, static_cast<double>(answered)));
    return out;
  } catch (...) {
    return env.Null();
  }
}

#if defined(__linux__)
// Byte strings of an array argument; false when it is not one.
bool ByteStrings(const Napi::Value& value, std::vector<std::string>* out) {
  if (!value.IsArray()) return false;
  Napi::Array in = value.As<Napi::Array>();
  out->resize(in.Length());
  for (uint32_t i = 0; i < in.Length(); ++i) {
    if (!Bytes(in.Get(i), &(*out)[i])) return false;
  }
  return true;
}

// fsWatchSet(dirs, entries?) (linux/watch_sets.h): a set id, or -1 (bad arguments included).
Napi::Value FsWatchSet(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  try {
    std::vector<std::string> dirs;
    std::vector<std::string> entries;
    bool with_entries = info.Length() > 1 && !info[1].IsUndefined();
    if (info.Length() < 1 || !ByteStrings(info[0], &dirs) ||
        (with_entries && !ByteStrings(info[1], &entries)))
      return Napi::Number::New(env, -1);
    return Napi::Number::New(env, watched_looks::MakeSet(dirs, entries));
  } catch (...) {
    return Napi::Number::New(env, -1);
  }
}

// The set id of the first argument, else -1 (an id no set has).
int SetId(const Napi::CallbackInfo& info) {
  if (info.Length() < 1 || !info[0].IsNumber()) return -1;
  double id = info[0].As<Napi::Number>().DoubleValue();
  return id >= 0 && id <= 2147483647.0 && id == static_cast<int>(id) ? static_cast<int>(id) : -1;
}

// fsWatchSetAgain(id): a new set like the quiet set `id`, else -1.
Napi::Value FsWatchSetAgain(const Napi::CallbackInfo& info) {
  try {
    return Napi::Number::New(info.Env(), watched_looks::SetAgain(SetId(info)));
  } catch (...) {
    return Napi::Number::New(info.Env(), -1);
  }
}

Napi::Value FsWatchSetQuiet(const Napi::CallbackInfo& info) {
  try {
    return Napi::Boolean::New(info.Env(), watched_looks::SetQuiet(SetId(info)));
  } catch (...) {
    return Napi::Boolean::New(info.Env(), false);
  }
}

Napi::Value FsWatchSetRelease(const Napi::CallbackInfo& info) {
  try {
    watched_looks::ReleaseSet(SetId(info));
  } catch (...) {
  }
  return info.Env().Undefined();
}
#endif

Napi::Value FsReadBody(const Napi::CallbackInfo& info, const std::string& root,
                       const std::string& rel) {
  double max =
      info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
  std::string data;
  int err = 0;
  if (max < 0 || !fs_beneath::ReadFile(root, rel, static_cast<size_t>(max), &data, &err)) {
    Napi::Object out = Napi::Object::New(info.Env());
    out.Set("errno", Napi::Number::New(info.Env(), err));
    return out;
  }
  return Napi::Buffer<char>::Copy(info.Env(), data.data(), data.size());
}

Napi::Value FsListBody(const Napi::CallbackInfo& info, const std::string& root,
                       const std::string& rel) {
  double max =
      info.Length() > 2 && info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : 0;
  std::vector<std::pair<std::string, fs_beneath::Kind>> entries;
  int err = 0;
  Napi::Env env = info.Env();
  if (max < 0 || !fs_beneath::List(root, rel, static_cast<size_t>(max), &entries, &err)) {
    Napi::Object out = Napi::Object::New(env);
    out.Set("errno", Napi::Number::New(env, err));
    return out;
  }
  Napi::Array out = Napi::Array::New(env, entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    Napi::Array pair = Napi::Array::New(env, 2);
    pair.Set(0u, FromBytes(env, entries[i].first));
    pair.Set(1u, std::string(1, static_cast<char>(entries[i].second)));
    out.Set(static_cast<uint32_t>(i), pair);
  }
  return out;
}

Napi::Value FsRemoveBody(const Napi::CallbackInfo& info, const std::string& root,
                         const std::string& rel) {
  return RemoveAnswer(info.Env(), fs_beneath::Remove(root, rel));
}

// fsReplace(root, rel, data, mode): a new regular file in place of whatever is at rel.
Napi::Value FsReplaceBody(const Napi::CallbackInfo& info, const std::string& root,
                          const std::string& rel) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  if (info.Length() < 4 || !info[2].IsBuffer() || !info[3].IsNumber()) {
    out.Set("ok", false);
    out.Set("errno", Napi::Number::New(env, 22));
    return out;
  }
  Napi::Buffer<char> data = info[2].As<Napi::Buffer<char>>();
  int err = 0;
  bool ok = fs_beneath::Replace(root, rel, std::string(data.Data(), data.Length()),
                                info[3].As<Napi::Number>().Uint32Value(), &err);
  out.Set("ok", ok);
  out.Set("errno", Napi::Number::New(env, err));
  return out;
}

// fsMake(root, rel, mode[, linkTarget]): a directory at rel, or a symlink when linkTarget is given.
Napi::Value FsMakeBody(const Napi::CallbackInfo& info, const std::string& root,
                       const std::string& rel) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
  std::string target;
  bool link = info.Length() > 3 && !info[3].IsUndefined();
  if (info.Length() < 3 || !info[2].IsNumber() || (link && !Bytes(info[3], &target))) {
    out.Set("ok", false);
    out.Set("errno", Napi::Number::New(env, 22));
    return out;
  }
  int err = 0;
  bool ok = fs_beneath::Make(root, rel, link ? &target : nullptr,
                             info[2].As<Napi::Number>().Uint32Value(), &err);
  out.Set("ok", ok);
  out.Set("errno", Napi::Number::New(env, err));
  return out;
}

// A verb as a plain function: FsCall's body with its arguments checked.
template <Napi::Value (*Body)(const Napi::CallbackInfo&, const std::string&, const std::string&)>
Napi::Value Verb(const Napi::CallbackInfo& info) {
  return FsCall(info, Body);
}

}  // namespace

void ExportVerbs(Napi::Env env, Napi::Object exports) {
  // Read-only and not enumerable, like the addon's other verbs (napi_default).
  auto verb = [&](const char* name, Napi::Function fn) {
    exports.DefineProperty(Napi::PropertyDescriptor::Value(name, fn, napi_default));
  };
  verb("fsInspect", Napi::Function::New<Verb<FsInspectBody>>(env, "fsInspect"));
  verb("fsInspectMany", Napi::Function::New<FsInspectMany<false>>(env, "fsInspectMany"));
#if defined(__linux__)
  verb("fsInspectManyWatched",
       Napi::Function::New<FsInspectMany<true>>(env, "fsInspectManyWatched"));
  verb("fsWatchSet", Napi::Function::New<FsWatchSet>(env, "fsWatchSet"));
  verb("fsWatchSetAgain", Napi::Function::New<FsWatchSetAgain>(env, "fsWatchSetAgain"));
  verb("fsWatchSetQuiet", Napi::Function::New<FsWatchSetQuiet>(env, "fsWatchSetQuiet"));
  verb("fsWatchSetRelease", Napi::Function::New<FsWatchSetRelease>(env, "fsWatchSetRelease"));
#endif
  verb("fsRead", Napi::Function::New<Verb<FsReadBody>>(env, "fsRead"));
  verb("fsList", Napi::Function::New<Verb<FsListBody>>(env, "fsList"));
  verb("fsRemove", Napi::Function::New<Verb<FsRemoveBody>>(env, "fsRemove"));
  verb("fsReplace", Napi::Function::New<Verb<FsReplaceBody>>(env, "fsReplace"));
  verb("fsMake", Napi::Function::New<Verb<FsMakeBody>>(env, "fsMake"));
}

}  // namespace fs_glue
