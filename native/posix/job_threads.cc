// SPDX-License-Identifier: MIT
#include "posix/job_threads.h"

#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "posix/pipe_threads.h"

namespace job_threads {

// What goes through the pipe: one pointer (a pipe write of up to PIPE_BUF bytes is atomic, so
// each read of one pointer's size takes one whole hand-over).
struct Posted {
  Job* job;
  std::shared_ptr<Mailbox> mailbox;
};

namespace {

// As many threads as the libuv pool has (UV_THREADPOOL_SIZE, default 4, at most 1,024): as many
// clones at once as when they ran there.
int PoolSize() {
  const char* size = getenv("UV_THREADPOOL_SIZE");
  long n = size != nullptr ? strtol(size, nullptr, 10) : 4;
  if (n < 1) n = 1;
  if (n > 1024) n = 1024;
  return static_cast<int>(n);
}

// Takes hand-overs from the pipe one at a time, for the life of the process. The kernel wakes
// one reader per write to an empty pipe, and a reader that leaves data behind wakes the next.
void* LaneLoop(void* arg) {
  const int read_fd = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  for (;;) {
    Posted* posted = nullptr;
    ssize_t n = read(read_fd, &posted, sizeof(posted));
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof(posted))) return nullptr;
    std::unique_ptr<Posted> owned(posted);
    try {
      owned->job->Run();
    } catch (...) {
      // Run reports its failures in the job; memory running out leaves it not done
    }
    std::shared_ptr<Mailbox> mailbox = std::move(owned->mailbox);
    mailbox->Return(owned->job);
  }
}

}  // namespace

std::shared_ptr<Mailbox> Mailbox::Open(Napi::Env env) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) return nullptr;
  auto mailbox = std::make_shared<Mailbox>();
  // Made first: if it throws, no handle is left on the loop.
  mailbox->context_ = new Napi::AsyncContext(env, "zero-sandbox:job");
  auto* async = new uv_async_t;
  if (uv_async_init(loop, async, OnAsync) != 0) {
    delete async;
    return nullptr;
  }
  uv_unref(reinterpret_cast<uv_handle_t*>(async));
  async->data = mailbox.get();
  mailbox->env_ = env;
  mailbox->async_ = async;
  return mailbox;
}

void Mailbox::Close() {
  closed_.store(true);
  // A thread that saw the mailbox open is between that check and its uv_async_send: the
  // handle stays until it is done (a teardown with a start finishing at that instant, so rare and
  // short).
  while (returning_.load() > 0) sched_yield();
  uv_close(reinterpret_cast<uv_handle_t*>(async_),
           [](uv_handle_t* handle) { delete reinterpret_cast<uv_async_t*>(handle); });
  async_ = nullptr;
  // The context belongs to an environment being torn down: left to it, as the exit watcher does.
  context_ = nullptr;
  for (Job* job = done_.exchange(nullptr); job != nullptr;) {
    Job* next = job->next_done_;
    job->Orphan();
    delete job;
    job = next;
  }
}

bool Lane::Post(Mailbox* mailbox, Job* job) {
  if (mailbox == nullptr) return false;
  std::call_once(started_, [this] {
    queue_fd_ = pipe_threads::Start(LaneLoop, threads_ < 1 ? PoolSize() : threads_, stack_size_);
  });
  if (queue_fd_ < 0) return false;
  auto* posted = new Posted{job, mailbox->shared_from_this()};
  ssize_t n;
  do {
    n = write(queue_fd_, &posted, sizeof(posted));
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof(posted))) {
    delete posted;
    return false;
  }
  if (mailbox->in_flight_++ == 0) uv_ref(reinterpret_cast<uv_handle_t*>(mailbox->async_));
  return true;
}

void Mailbox::Return(Job* job) {
  // Counted before closed_ is read, as Close sets closed_ before it reads the count (both
  // sequentially consistent): either Close waits for this send, or this sees the mailbox closed.
  returning_.fetch_add(1);
  if (!closed_.load()) {
    job->next_done_ = done_.load(std::memory_order_relaxed);
    while (!done_.compare_exchange_weak(job->next_done_, job, std::memory_order_release,
                                        std::memory_order_relaxed)) {
    }
    uv_async_send(async_);
    returning_.fetch_sub(1);
    return;
  }
  returning_.fetch_sub(1);
  job->Orphan();
  delete job;
}

void Mailbox::OnAsync(uv_async_t* handle) {
  auto* mailbox = static_cast<Mailbox*>(handle->data);
  // Taken all at once (so no job is popped twice), newest first: put back in the order they ended.
  std::vector<Job*> jobs;
  for (Job* job = mailbox->done_.exchange(nullptr, std::memory_order_acquire); job != nullptr;
       job = job->next_done_)
    jobs.push_back(job);
  std::reverse(jobs.begin(), jobs.end());
  const size_t count = jobs.size();
  if (count == 0) return;
  // A libuv callback has no JavaScript frame above it: nothing may escape it. Deliver catches
  // its own errors; this catches the scopes' (the environment going away, memory running out),
  // and the jobs not delivered then are orphaned.
  size_t next = 0;
  try {
    Napi::Env env = mailbox->env_;
    Napi::HandleScope scope(env);
    Napi::CallbackScope callback_scope(env, *mailbox->context_);
    for (; next < count; ++next) {
      std::unique_ptr<Job> job(jobs[next]);
      jobs[next] = nullptr;
      job->Deliver(env);
    }
  } catch (...) {
    // handled below
  }
  for (; next < count; ++next) {
    if (jobs[next] == nullptr) continue;
    jobs[next]->Orphan();
    delete jobs[next];
  }
  mailbox->in_flight_ -= count < mailbox->in_flight_ ? count : mailbox->in_flight_;
  if (mailbox->in_flight_ == 0 && mailbox->async_ != nullptr)
    uv_unref(reinterpret_cast<uv_handle_t*>(mailbox->async_));
}

namespace {

class PoolWorker : public Napi::AsyncWorker {
 public:
  PoolWorker(Napi::Env env, Job* job) : Napi::AsyncWorker(env), job_(job) {}
  void Execute() override { job_->Run(); }
  void OnOK() override { job_->Deliver(Env()); }

 private:
  std::unique_ptr<Job> job_;
};

}  // namespace

// The clones run on stacks of their own (spawn_linux.cc), not on these threads' stacks.
Lane* SpawnLane() {
  static auto* lane = new Lane(0, 1024 * 1024);
  return lane;
}

Lane* ScanLane() {
  static auto* lane = new Lane(1, 1024 * 1024);
  return lane;
}

Lane* RemoveLane() {
  static auto* lane = new Lane(1, 1024 * 1024);
  return lane;
}

void Queue(Napi::Env env, Mailbox* mailbox, Lane* lane, Job* job) {
  if (!lane->Post(mailbox, job)) (new PoolWorker(env, job))->Queue();
}

}  // namespace job_threads
