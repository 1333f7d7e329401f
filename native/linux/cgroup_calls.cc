// SPDX-License-Identifier: MIT
#include "linux/cgroup_calls.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

namespace cgroup_calls {
namespace {

class CgroupJob : public job_threads::Job {
 public:
  // `max` < 0: remove `dir`; else make it with that cap.
  CgroupJob(Napi::Env env, std::string dir, long long max)
      : dir_(std::move(dir)), max_(max), promise_(env) {}
  napi_value Promise() const { return promise_.promise; }

  void Run() override {
    if (max_ < 0) {
      error_ = rmdir(dir_.c_str()) == 0 ? 0 : errno;
      return;
    }
    if (mkdir(dir_.c_str(), 0755) != 0) {
      error_ = errno;
      return;
    }
    const std::string path = dir_ + "/pids.max";
    const std::string text = std::to_string(max_) + "\n";
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
    int err = 0;
    if (fd < 0) {
      err = errno;
    } else {
      ssize_t n;
      do {
        n = write(fd, text.data(), text.size());
      } while (n < 0 && errno == EINTR);
      if (n != static_cast<ssize_t>(text.size())) err = n < 0 ? errno : EIO;
      if (close(fd) != 0 && err == 0 && errno != EINTR) err = errno;
    }
    if (err != 0) rmdir(dir_.c_str());
    error_ = err;
  }

  void Deliver(Napi::Env env) override {
    napi_value answer = nullptr;
    napi_create_int32(env, error_, &answer);
    promise_.Settle(env, answer);
  }

  // A cgroup made for an environment gone meanwhile stays empty; the next process's first run
  // removes it with the other orphans of dead processes.
  void Orphan() override {}

 private:
  std::string dir_;
  long long max_;
  int error_ = 0;
  job_threads::JobPromise promise_;
};

Napi::Value Call(const Napi::CallbackInfo& info, bool make) {
  Napi::Env env = info.Env();
  if (info.Length() < (make ? 2u : 1u) || !info[0].IsString() || (make && !info[1].IsNumber())) {
    throw Napi::TypeError::New(env, make ? "cgroupMake(dir, max) expects a string and a number"
                                         : "cgroupRemove(dir) expects a string");
  }
  const long long max = make ? info[1].As<Napi::Number>().Int64Value() : -1;
  if (make && max < 0) throw Napi::RangeError::New(env, "cgroupMake: max must not be negative");
  auto* job = new CgroupJob(env, info[0].As<Napi::String>().Utf8Value(), max);
  napi_value promise = job->Promise();
  job_threads::Queue(env, static_cast<job_threads::Mailbox*>(info.Data()), job_threads::SpawnLane(),
                     job);
  return Napi::Value(env, promise);
}

}  // namespace

void Export(Napi::Env env, Napi::Object exports, job_threads::Mailbox* mailbox) {
  exports.Set("cgroupMake",
              Napi::Function::New(
                  env, [](const Napi::CallbackInfo& info) { return Call(info, true); },
                  "cgroupMake", mailbox));
  exports.Set("cgroupRemove",
              Napi::Function::New(
                  env, [](const Napi::CallbackInfo& info) { return Call(info, false); },
                  "cgroupRemove", mailbox));
}

}  // namespace cgroup_calls
