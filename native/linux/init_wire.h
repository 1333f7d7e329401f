// SPDX-License-Identifier: MIT
// What the sandbox's init helper (init_main.cc) and the addon agree on: the descriptors the init
// finds when it starts (installed by child_setup.cc) and the records it writes on its report pipe
// (read by exit_watcher.cc once every process of the sandbox is gone). The init is built
// freestanding, so this header needs nothing beyond <stdint.h>.
#pragma once

#include <stdint.h>

namespace init_wire {

constexpr int kReportFd = 3;   // the write end of the report pipe
constexpr int kControlFd = 4;  // a prewarmed init's launch socket (launch_message.h)
// The roots of the capped tmpfs mounts the init checks for full after the run: kWatchFd + slot,
// slot 0 the private /tmp, slot 1 the private /dev/shm.
constexpr int kWatchFd = 5;
constexpr int kWatchSlots = 2;

// One report record is {type, value}, in the host's byte order. The pipe is written by a process
// inside the sandbox, so the reader treats records as data: a torn or unknown one is skipped.
enum ReportType : int32_t {
  kReportExecFailed = 1,    // value: errno of the exec of the command
  kReportExited = 2,        // value: the command's wait status
  kReportLaunchFailed = 3,  // value: errno of receiving or applying a prewarmed launch
  kReportNoRoute = 4,       // value: packets the sandbox had no route for (net_counters.h)
  kReportFull = 5,          // value: the watch slot found full
  kReportProcessCap = 6,    // value: 1, a probe fork was refused at the PID namespace's pid_max
};

struct ReportRecord {
  int32_t type;
  int32_t value;
};
static_assert(sizeof(ReportRecord) == 8, "a report record is two 32-bit words");

}  // namespace init_wire
