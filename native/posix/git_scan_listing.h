// SPDX-License-Identifier: MIT
// How the repository scan (git_scan.h) reads one directory: its entries straight from the kernel,
// which of them git would take for a repository or a git dir, which the caller asked to be named,
// and how a directory below an opened one is reached without following a link. No napi here.
#pragma once

#include <fcntl.h>

#include <string>

#include "posix/git_scan.h"
#include "posix/git_scan_memory.h"

namespace git_scan {
namespace listing {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#ifdef O_PATH
// A remembered directory is only looked through (fstatat of its entries), not listed: a path-only
// descriptor is cheaper to open; a readable one is opened from it when a listing is needed.
constexpr int kLookFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
#else
constexpr int kLookFlags = kDirFlags;
#endif

// Longest path looked up from an ancestor in one call (longer ones are opened step by step).
constexpr size_t kMaxRelative = 1024;

// The Wanted of the last scan that asked for names: listings remember which entries matched it, so
// a scan that asks for other names starts over (one that asks for none keeps them, unreported).
Wanted& LastWanted();

// Whether a directory of this name is one below which the last Wanted reports no entry.
bool IsSkipped(const std::string& name);

// Lists an open directory (read from its start: `fd` is fresh): its subdirectories, whether it
// has a `.git`, whether it is a git dir, and the entries the last Wanted names. False on a read
// error.
bool List(int fd, memory::Listing* out);

// Opens `rel` below `base` one component at a time, never following a link.
int OpenRelative(int base, const std::string& rel, int flags);

}  // namespace listing
}  // namespace git_scan
