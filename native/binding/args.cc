// SPDX-License-Identifier: MIT
// JS spec object -> backend::SpawnSpec. TypeScript validated the values; this checks types only.
#include "binding/args.h"

#include <string.h>

#include <string>
#include <vector>

namespace args {
namespace {

Napi::Value Field(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = obj.Get(name);
  if (v.IsUndefined()) {
    throw Napi::TypeError::New(obj.Env(), where + "." + name + " is required");
  }
  return v;
}

std::string String(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsString())
    throw Napi::TypeError::New(obj.Env(), where + "." + name + " must be a string");
  return v.As<Napi::String>().Utf8Value();
}

double Number(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsNumber())
    throw Napi::TypeError::New(obj.Env(), where + "." + name + " must be a number");
  return v.As<Napi::Number>().DoubleValue();
}

bool Bool(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsBoolean())
    throw Napi::TypeError::New(obj.Env(), where + "." + name + " must be a boolean");
  return v.As<Napi::Boolean>().Value();
}

Napi::Array Array(const Napi::Object& obj, const char* name, const std::string& where) {
  Napi::Value v = Field(obj, name, where);
  if (!v.IsArray()) throw Napi::TypeError::New(obj.Env(), where + "." + name + " must be an array");
  return v.As<Napi::Array>();
}

Napi::Object ObjectAt(const Napi::Array& arr, uint32_t i, const std::string& where) {
  Napi::Value v = arr.Get(i);
  if (!v.IsObject()) {
    throw Napi::TypeError::New(arr.Env(), where + "[" + std::to_string(i) + "] must be an object");
  }
  return v.As<Napi::Object>();
}

// Appends the JS string `v` and its NUL to `out`, copied once from V8 into `out`'s own storage (a
// reused buffer's pages are already faulted in). Throws if the string holds a NUL.
void AppendString(const Napi::Value& v, const std::string& what, std::string* out) {
  napi_env env = v.Env();
  size_t len = 0;
  NAPI_THROW_IF_FAILED_VOID(env, napi_get_value_string_utf8(env, v, nullptr, 0, &len));
  size_t at = out->size();
  out->resize(at + len + 1);
  size_t copied = 0;
  NAPI_THROW_IF_FAILED_VOID(env,
                            napi_get_value_string_utf8(env, v, out->data() + at, len + 1, &copied));
  out->resize(at + copied + 1);
  if (memchr(out->data() + at, '\0', copied) != nullptr)
    throw Napi::TypeError::New(env, what + " must not contain NUL bytes");
}

// Element `i` of the array `what`, which must be a string.
Napi::Value StringAt(const Napi::Array& arr, uint32_t i, const std::string& what) {
  Napi::Value v = arr.Get(i);
  if (!v.IsString())
    throw Napi::TypeError::New(arr.Env(), what + "[" + std::to_string(i) + "] must be a string");
  return v;
}

std::vector<std::string> Strings(const Napi::Object& obj, const char* name,
                                 const std::string& where) {
  Napi::Array arr = Array(obj, name, where);
  const std::string what = where + "." + name;
  std::vector<std::string> out;
  out.reserve(arr.Length());
  for (uint32_t i = 0; i < arr.Length(); ++i) {
    std::string s;
    AppendString(StringAt(arr, i, what), what, &s);
    s.pop_back();  // its NUL
    out.push_back(std::move(s));
  }
  return out;
}

// Appends each string of the array obj[name], NUL-terminated, to `out`; returns how many.
uint32_t AppendStrings(const Napi::Object& obj, const char* name, const std::string& where,
                       std::string* out) {
  Napi::Array arr = Array(obj, name, where);
  const std::string what = where + "." + name;
  uint32_t count = arr.Length();
  for (uint32_t i = 0; i < count; ++i) AppendString(StringAt(arr, i, what), what, out);
  return count;
}

StdioMode ParseStdio(const Napi::Value& v, int index) {
  StdioMode mode;
  const std::string where = "spec.stdio[" + std::to_string(index) + "]";
  if (v.IsString()) {
    std::string s = v.As<Napi::String>().Utf8Value();
    if (s == "pipe")
      mode.kind = StdioMode::kPipe;
    else if (s == "ignore")
      mode.kind = StdioMode::kIgnore;
    else if (s == "capture" && index > 0)
      mode.kind = StdioMode::kCapture;
    else
      throw Napi::TypeError::New(v.Env(),
                                 where +
                                     " must be 'pipe', 'ignore', 'capture' (stdout/stderr), input "
                                     "bytes (stdin) or a descriptor");
  } else if (v.IsNumber()) {
    mode.kind = StdioMode::kFd;
    mode.fd = v.As<Napi::Number>().Int32Value();
  } else if (v.IsTypedArray() && index == 0 &&
             v.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array bytes = v.As<Napi::Uint8Array>();
    if (bytes.ByteLength() > kMaxDirectInput) {
      throw Napi::TypeError::New(
          v.Env(), where + " input bytes must be at most " + std::to_string(kMaxDirectInput));
    }
    mode.kind = StdioMode::kInput;
    mode.input.assign(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength());
  } else {
    throw Napi::TypeError::New(v.Env(), where +
                                            " must be 'pipe', 'ignore', 'capture' (stdout/stderr), "
                                            "input bytes (stdin) or a descriptor");
  }
  return mode;
}

int SpillFd(const Napi::Object& obj, const std::string& w) {
  Napi::Value v = obj.Get("spill");
  if (v.IsUndefined()) return -1;
  if (!v.IsNumber() || v.As<Napi::Number>().Int32Value() < 0)
    throw Napi::TypeError::New(obj.Env(), w + ".spill must be a descriptor");
  return v.As<Napi::Number>().Int32Value();
}

double MaxBuffer(const Napi::Object& obj, const std::string& w) {
  Napi::Value v = obj.Get("maxBuffer");
  if (v.IsUndefined()) return 0;
  if (!v.IsNumber() || v.As<Napi::Number>().DoubleValue() <= 0) {
    throw Napi::TypeError::New(obj.Env(), w + ".maxBuffer must be a positive number");
  }
  return v.As<Napi::Number>().DoubleValue();
}

uint64_t Limit(double value) { return value < 0 ? ~0ULL : static_cast<uint64_t>(value); }

std::vector<backend::ResourceLimit> ParseRlimits(const Napi::Object& obj, const std::string& w) {
  std::vector<backend::ResourceLimit> out;
  Napi::Array limits = Array(obj, "rlimits", w);
  for (uint32_t i = 0; i < limits.Length(); ++i) {
    Napi::Object l = ObjectAt(limits, i, w + ".rlimits");
    backend::ResourceLimit limit;
    limit.resource = static_cast<int>(Number(l, "resource", w + ".rlimits[]"));
    limit.soft = Limit(Number(l, "soft", w + ".rlimits[]"));
    limit.hard = Limit(Number(l, "hard", w + ".rlimits[]"));
    out.push_back(limit);
  }
  return out;
}

using SharedPolicy = std::shared_ptr<const PreparedPolicy>;
// Tells the handles of preparePolicy from any other External.
const napi_type_tag kPolicyTag = {0x7a65726f73616e64ULL, 0x706f6c6963793031ULL};

// A spec's mounts and Landlock rules (under `w`).
void ParsePolicy(const Napi::Object& obj, const std::string& w, std::vector<backend::MountOp>* ops,
                 std::vector<backend::LandlockRule>* rule_list) {
  Napi::Array mounts = Array(obj, "mounts", w);
  for (uint32_t i = 0; i < mounts.Length(); ++i) {
    Napi::Object m = ObjectAt(mounts, i, w + ".mounts");
    backend::MountOp op;
    op.kind = String(m, "kind", w + ".mounts[]");
    op.path = String(m, "path", w + ".mounts[]");
    Napi::Value slot = m.Get("slot");
    if (slot.IsNumber()) op.source = std::to_string(slot.As<Napi::Number>().Int32Value());
    Napi::Value size = m.Get("size");
    if (size.IsNumber()) {
      // A tmpfs size cap in bytes: a whole positive number, else the spec is refused.
      double bytes = size.As<Napi::Number>().DoubleValue();
      if (!(bytes >= 1 && bytes <= 9007199254740991.0) ||
          bytes != static_cast<double>(static_cast<int64_t>(bytes))) {
        throw Napi::TypeError::New(m.Env(), w + ".mounts[].size must be a positive integer");
      }
      op.data = "mode=1777,size=" + std::to_string(static_cast<int64_t>(bytes));
    }
    Napi::Value from = m.Get("from");
    if (from.IsString()) op.data = from.As<Napi::String>().Utf8Value();
    // mask_file of a denyWrite entry: any data marks it (masks.cc refuses a link at its path).
    Napi::Value real = m.Get("real");
    if (op.kind == "mask_file" && real.IsBoolean() && real.As<Napi::Boolean>().Value())
      op.data = "real";
    Napi::Value names = m.Get("names");
    if (names.IsArray()) {
      // mask_dir: the regular files it shows as empty stand-ins, '/'-separated (a name never
      // holds one); a name that is empty, '.', '..' or holds a '/' is refused.
      Napi::Array list = names.As<Napi::Array>();
      for (uint32_t j = 0; j < list.Length(); ++j) {
        Napi::Value v = list.Get(j);
        std::string name = v.IsString() ? v.As<Napi::String>().Utf8Value() : std::string();
        if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
            name.size() > 255) {
          throw Napi::TypeError::New(m.Env(), w + ".mounts[].names must hold file names");
        }
        if (j > 0) op.data += '/';
        op.data += name;
      }
    }
    ops->push_back(op);
  }
  Napi::Array rules = Array(obj, "landlockRules", w);
  for (uint32_t i = 0; i < rules.Length(); ++i) {
    Napi::Object r = ObjectAt(rules, i, w + ".landlockRules");
    backend::LandlockRule rule;
    rule.path = String(r, "path", w + ".landlockRules[]");
    rule.access = static_cast<uint64_t>(Number(r, "access", w + ".landlockRules[]"));
    rule.after_mounts = Bool(r, "afterMounts", w + ".landlockRules[]");
    rule_list->push_back(rule);
  }
}

void ParseLinux(const Napi::Object& obj, backend::LinuxSpec* out, SharedPolicy* policy) {
  const std::string w = "spec.linux";
  out->init_path = String(obj, "initPath", w);
  out->new_network = Bool(obj, "newNetwork", w);
  out->landlock_abi = static_cast<int>(Number(obj, "landlockAbi", w));
  out->landlock_handled_fs = static_cast<uint64_t>(Number(obj, "landlockHandledFs", w));
  out->landlock_scoped = static_cast<uint64_t>(Number(obj, "landlockScoped", w));
  Napi::Value prepared = obj.Get("prepared");
  if (prepared.IsUndefined()) {
    ParsePolicy(obj, w, &out->mounts, &out->landlock_rules);
  } else {
    // A handle of preparePolicy (checked by its tag) stands for both fields, which are then absent.
    if (!prepared.IsExternal() ||
        !prepared.As<Napi::External<SharedPolicy>>().CheckTypeTag(&kPolicyTag))
      throw Napi::TypeError::New(obj.Env(), w + ".prepared must be a preparePolicy handle");
    if (!obj.Get("mounts").IsUndefined() || !obj.Get("landlockRules").IsUndefined())
      throw Napi::TypeError::New(obj.Env(), w + ".prepared replaces mounts and landlockRules");
    *policy = *prepared.As<Napi::External<SharedPolicy>>().Data();
  }
  Napi::Value prog = Field(obj, "seccomp", w);
  if (!prog.IsTypedArray() ||
      prog.As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array) {
    throw Napi::TypeError::New(obj.Env(), "spec.linux.seccomp must be a BigUint64Array");
  }
  Napi::TypedArrayOf<uint64_t> words = prog.As<Napi::TypedArrayOf<uint64_t>>();
  out->seccomp_program.assign(words.Data(), words.Data() + words.ElementLength());
  out->rlimits = ParseRlimits(obj, w);
  Napi::Value cgroup = obj.Get("cgroupProcsFd");
  if (!cgroup.IsUndefined()) {
    if (!cgroup.IsNumber())
      throw Napi::TypeError::New(obj.Env(), "spec.linux.cgroupProcsFd must be a number");
    out->cgroup_procs_fd = cgroup.As<Napi::Number>().Int32Value();
  }
  Napi::Value pid_max = obj.Get("pidMax");
  if (!pid_max.IsUndefined()) {
    if (!pid_max.IsNumber())
      throw Napi::TypeError::New(obj.Env(), "spec.linux.pidMax must be a number");
    out->pid_max = pid_max.As<Napi::Number>().Int32Value();
    if (out->pid_max < 301)
      throw Napi::RangeError::New(obj.Env(),
                                  "spec.linux.pidMax must be at least 301 (the kernel's minimum)");
  }
}

void ParseStdioModes(const Napi::Object& obj, const std::string& w, StdioMode* stdio) {
  Napi::Array modes = Array(obj, "stdio", w);
  if (modes.Length() != 3)
    throw Napi::TypeError::New(obj.Env(), w + ".stdio must have three entries");
  for (uint32_t i = 0; i < 3; ++i) stdio[i] = ParseStdio(modes.Get(i), static_cast<int>(i));
}

void ParseCommon(const Napi::Object& obj, const std::string& w, std::vector<std::string>* argv,
                 std::vector<std::string>* envp, std::string* cwd, StdioMode* stdio) {
  *argv = Strings(obj, "argv", w);
  if (argv->empty()) throw Napi::TypeError::New(obj.Env(), w + ".argv must not be empty");
  *envp = Strings(obj, "env", w);
  *cwd = String(obj, "cwd", w);
  ParseStdioModes(obj, w, stdio);
}

}  // namespace

ParsedSpawn ParseSpawnSpec(const Napi::Object& obj) {
  ParsedSpawn parsed;
  ParseCommon(obj, "spec", &parsed.spec.argv, &parsed.spec.envp, &parsed.spec.cwd, parsed.stdio);
  parsed.max_buffer = MaxBuffer(obj, "spec");
  parsed.overflow_kill = obj.Get("overflowKill").ToBoolean().Value();
  parsed.spill_fd = SpillFd(obj, "spec");
  Napi::Value script = obj.Get("script");
  if (!script.IsUndefined()) {
    if (!script.IsTypedArray() ||
        script.As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      throw Napi::TypeError::New(obj.Env(), "spec.script must be a Uint8Array");
    }
    Napi::Uint8Array bytes = script.As<Napi::Uint8Array>();
    parsed.has_script = true;
    parsed.script.assign(reinterpret_cast<const char*>(bytes.Data()), bytes.ByteLength());
  }
  Napi::Value linux_spec = obj.Get("linux");
  if (linux_spec.IsObject())
    ParseLinux(linux_spec.As<Napi::Object>(), &parsed.spec.linux_spec, &parsed.prepared);
  return parsed;
}

ParsedLaunch ParseLaunchSpec(const Napi::Object& obj, std::string buffer) {
  ParsedLaunch parsed;
  parsed.strings = std::move(buffer);
  parsed.strings.clear();
  parsed.argc = AppendStrings(obj, "argv", "launch", &parsed.strings);
  if (parsed.argc == 0) throw Napi::TypeError::New(obj.Env(), "launch.argv must not be empty");
  parsed.envc = AppendStrings(obj, "env", "launch", &parsed.strings);
  Napi::Value cwd = Field(obj, "cwd", "launch");
  if (!cwd.IsString()) throw Napi::TypeError::New(obj.Env(), "launch.cwd must be a string");
  AppendString(cwd, "launch.cwd", &parsed.strings);
  ParseStdioModes(obj, "launch", parsed.stdio);
  parsed.max_buffer = MaxBuffer(obj, "launch");
  parsed.overflow_kill = obj.Get("overflowKill").ToBoolean().Value();
  parsed.spill_fd = SpillFd(obj, "launch");
  parsed.rlimits = ParseRlimits(obj, "launch");
  if (parsed.rlimits.size() > 8)
    throw Napi::TypeError::New(obj.Env(), "launch.rlimits has more than 8 entries");
  return parsed;
}

Napi::Value PreparePolicy(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsObject())
    throw Napi::TypeError::New(env, "preparePolicy(policy) expects an object");
  auto policy = std::make_shared<PreparedPolicy>();
  ParsePolicy(info[0].As<Napi::Object>(), "policy", &policy->mounts, &policy->landlock_rules);
  auto* held = new SharedPolicy(std::move(policy));
  Napi::External<SharedPolicy> handle =
      Napi::External<SharedPolicy>::New(env, held, [](Napi::Env, SharedPolicy* p) { delete p; });
  handle.TypeTag(&kPolicyTag);
  return handle;
}

void TakePrepared(ParsedSpawn* parsed) {
  if (parsed->prepared == nullptr) return;
  parsed->spec.linux_spec.mounts = parsed->prepared->mounts;
  parsed->spec.linux_spec.landlock_rules = parsed->prepared->landlock_rules;
  parsed->prepared = nullptr;
}

}  // namespace args
