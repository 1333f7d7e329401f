// SPDX-License-Identifier: MIT
// Threads of the addon's own for the clones of spawnAsync and spawnWarm, so that handing a spawn
// over never waits for another thread. The libuv thread pool wakes its threads through a
// condition variable, and glibc's pthread_cond_signal waits there, with the event loop's thread
// blocked in it, until the thread woken before has got a CPU: during a burst of starts on a busy
// machine that held the caller's thread for milliseconds per spawn. Here a spawn is handed over by
// a non-blocking pipe write (one reader woken, none waited for) and handed back through a uv_async
// of its environment: a lock-free push and an eventfd write.
#pragma once

#include <napi.h>
#include <uv.h>

#include <atomic>
#include <memory>

namespace spawn_threads {

// A spawn's work: Run on a spawn thread (or the libuv pool's, as a fallback), then either Deliver
// on its environment's JavaScript thread or, when that environment was torn down meanwhile,
// Orphan on whichever thread found it gone.
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

// One environment's return path. Made and closed on that environment's JavaScript thread.
class Mailbox : public std::enable_shared_from_this<Mailbox> {
 public:
  // Null when the environment's loop gives no uv_async (then every job takes the fallback).
  static std::shared_ptr<Mailbox> Open(Napi::Env env);
  // At the environment's teardown: jobs still running or waiting to be delivered are orphaned.
  void Close();
  // Hands `job` (ownership taken) to a spawn thread. False, with the job still the caller's, when
  // no spawn thread can take it (threads or their pipe unavailable, or the pipe full): the caller
  // runs it another way.
  static bool Post(Mailbox* mailbox, Job* job);

  // On a spawn thread, once `job` has run: queued for delivery, or orphaned once closed.
  void Return(Job* job);

  Mailbox() = default;
  Mailbox(const Mailbox&) = delete;
  Mailbox& operator=(const Mailbox&) = delete;

 private:
  static void OnAsync(uv_async_t* handle);

  Napi::Env env_ = nullptr;
  uv_async_t* async_ = nullptr;            // freed by its close callback
  Napi::AsyncContext* context_ = nullptr;  // left to the environment's teardown
  size_t in_flight_ = 0;  // JavaScript thread only: the uv_async keeps the loop alive while > 0
  // The spawn threads push and the JavaScript thread takes, without a lock: a spawn thread
  // preempted while holding one would hold the event loop's thread with it.
  std::atomic<Job*> done_{nullptr};
  std::atomic<bool> closed_{false};
  std::atomic<int> returning_{0};  // spawn threads between their look at closed_ and their send
};

// Runs `job` (ownership taken) on a spawn thread through `mailbox` (null: none), or else on the
// libuv pool, which has the condition variable but runs it the same way. On the JavaScript thread.
void Queue(Napi::Env env, Mailbox* mailbox, Job* job);

}  // namespace spawn_threads
