// SPDX-License-Identifier: MIT
// Change notification for directories the repository scan remembers (git_scan.cc), Linux only
// (inotify): a remembered listing whose directory has had no event since its stamp was checked
// is still exact, so a repeated scan need not stat it. Events are queued by the kernel inside the
// call that changes the directory, on whatever mount or namespace it came through, so once every
// process of a sandbox is gone its changes are in the queue; a full queue or a changed mount table
// counts as every directory changed. Elsewhere (and when inotify is unavailable) nothing is
// watched and every remembered directory is stat'ed as before. No napi here.
#pragma once

#include <vector>

namespace dir_watch {

#if defined(__linux__)
// Watches the directory open as `fd` (any kind of descriptor) if its filesystem reports every
// change through inotify and the watch budget allows: the watch id, else -1. Add the watch before
// reading the directory's stamp and listing, so that no change after them goes unreported.
int Add(int fd);
// Stops watching `wd` (its directory was replaced or forgotten).
void Remove(int wd);
// Takes every queued event: appends the ids of watches that saw a change (or were removed) to
// `changed`; returns false when anything may have changed unreported (a full queue, a mount table
// change, a read error): then no listing may be trusted without a stat.
bool Drain(std::vector<int>* changed);
// Drops every watch (the scan's memory starts over).
void Reset();
#else
inline int Add(int) { return -1; }
inline void Remove(int) {}
inline bool Drain(std::vector<int>*) { return false; }
inline void Reset() {}
#endif

}  // namespace dir_watch
