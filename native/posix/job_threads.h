// SPDX-License-Identifier: MIT
// Threads of the addon's own for work the JavaScript thread hands off (spawnAsync's and
// spawnWarm's clones, pids cgroups, repository scans, tree removals), so that handing work over
// never waits for another thread. The libuv thread pool wakes its threads through a condition
// variable, and glibc's pthread_cond_signal waits there, with the event loop's thread blocked in
// it, until the thread woken before has got a CPU: during a burst of starts on a busy machine that
// held the caller's thread for milliseconds per spawn. Here work goes to a lane of threads by a
// non-blocking pipe write (one reader woken, none waited for) and comes back through its
// environment's mailbox: a lock-free push and a uv_async. A mailbox outlives nothing it serves:
// work that ends after its environment was torn down (a worker terminated) is orphaned, never
// delivered into the dead environment.
#pragma once

#include <napi.h>
#include <uv.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>

namespace job_threads {

// A piece of work: Run on a lane's thread (or the libuv pool's, as a fallback), then either
// Deliver on its environment's JavaScript thread or, when that environment was torn down
// meanwhile, Orphan on whichever thread found it gone.
class Job {
 public:
  virtual ~Job() = default;
  virtual void Run() = 0;
  // Inside a handle scope and a callback scope (the promise's reactions run as it closes). Must
  // not throw.
  virtual void Deliver(Napi::Env env) = 0;
  // Undoes what Run made (kills and reaps a sandbox it started, closes its descriptors) without a
  // JavaScript call: the handles it holds died with the environment.
  virtual void Orphan() = 0;

 private:
  friend class Mailbox;
  Job* next_done_ = nullptr;  // the mailbox's list of jobs run and not yet delivered
};

// The promise a job settles when it is delivered, made with the job on the JavaScript thread. Raw
// handles: an orphaned job is dropped on whichever thread found its environment gone, and nothing
// here has a destructor that would call into that environment (which frees them itself).
struct JobPromise {
  explicit JobPromise(Napi::Env env) {
    NAPI_THROW_IF_FAILED_VOID(env, napi_create_promise(env, &deferred, &promise));
  }
  // Settles it with `value` (rejects when `fulfilled` is false); nothing when `value` is null.
  void Settle(napi_env env, napi_value value, bool fulfilled = true) const {
    if (value == nullptr) return;
    if (fulfilled)
      napi_resolve_deferred(env, deferred, value);
    else
      napi_reject_deferred(env, deferred, value);
  }
  napi_deferred deferred = nullptr;
  napi_value promise = nullptr;
};

// One environment's return path. Made and closed on that environment's JavaScript thread.
class Mailbox : public std::enable_shared_from_this<Mailbox> {
 public:
  // Null when the environment's loop gives no uv_async (then every job takes the fallback).
  static std::shared_ptr<Mailbox> Open(Napi::Env env);
  // At the environment's teardown: jobs still running or waiting to be delivered are orphaned.
  void Close();
  // On a lane's thread, once `job` has run: queued for delivery, or orphaned once closed.
  void Return(Job* job);

  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

 private:
  friend class Lane;
  static void OnAsync(uv_async_t* handle);

  Napi::Env env_ = nullptr;
  uv_async_t* async_ = nullptr;            // freed by its close callback
  Napi::AsyncContext* context_ = nullptr;  // left to the environment's teardown
  size_t in_flight_ = 0;  // JavaScript thread only: the uv_async keeps the loop alive while > 0
  // The lanes' threads push and the JavaScript thread takes, without a lock: a thread preempted
  // while holding one would hold the event loop's thread with it.
  std::atomic<Job*> done_{nullptr};
  std::atomic<bool> closed_{false};
  std::atomic<int> returning_{0};  // threads between their look at closed_ and their send
};

// Threads fed through one pipe, started on first use and kept for the life of the process (never
// destroyed: they may outlive main()). A lane of one thread runs its jobs in order.
class Lane {
 public:
  // `threads` < 1: as many as the libuv pool has (UV_THREADPOOL_SIZE, default 4, at most 1,024).
  Lane(int threads, size_t stack_size) : threads_(threads), stack_size_(stack_size) {}
  // Hands `job` (ownership taken) to a thread of the lane, to come back through `mailbox`. False,
  // with the job still the caller's, when `mailbox` is null or no thread can take it (none could be
  // started, or the pipe is full): the caller runs it another way. On the JavaScript thread.
  bool Post(Mailbox* mailbox, Job* job);

 private:
  int threads_;
  size_t stack_size_;
  std::once_flag started_;
  int queue_fd_ = -1;  // the pipe's write end once started; -1 when unavailable
};

// The addon's lanes: spawns and pids cgroups (as many threads as the libuv pool), repository scans
// (one thread: the walks take git_scan.cc's one lock and would not run side by side anyway), and
// tree removals (one thread).
Lane* SpawnLane();
Lane* ScanLane();
Lane* RemoveLane();

// Runs `job` (ownership taken) on `lane` through `mailbox`, or else on the libuv pool, which has
// the condition variable but runs it the same way. On the JavaScript thread.
void Queue(Napi::Env env, Mailbox* mailbox, Lane* lane, Job* job);

}  // namespace job_threads
