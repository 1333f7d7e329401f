// SPDX-License-Identifier: MIT
// Kernel constants and structs newer than the distro headers (Debian 12 ships 6.1 headers; the
// kernels we run on are newer). Only this header may hold #ifdef fallbacks.
#pragma once

#include <linux/landlock.h>
#include <stdint.h>
#include <sys/syscall.h>

// Landlock syscalls: 5.13.
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif
#ifndef SYS_landlock_add_rule
#define SYS_landlock_add_rule 445
#endif
#ifndef SYS_landlock_restrict_self
#define SYS_landlock_restrict_self 446
#endif

// Landlock access rights by ABI. ABI 1 rights come from the headers; later ones are defined here.
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)  // ABI 2 (5.19)
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)  // ABI 3 (6.2)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  // ABI 5 (6.10)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)  // ABI 4 (6.7)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)  // ABI 6 (6.12)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

// The ruleset attribute as of ABI 6; the size passed to the kernel selects the fields it reads.
struct landlock_ruleset_attr_compat {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct landlock_path_beneath_attr_compat {
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

// mount_setattr(2): 5.12. open_tree/move_mount: 5.2.
#ifndef SYS_mount_setattr
#define SYS_mount_setattr_compat 442
#else
#define SYS_mount_setattr_compat SYS_mount_setattr
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000  // 5.12, with mount_setattr
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#define OPEN_TREE_CLOEXEC 02000000
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif

struct mount_attr_compat {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

// The new mount API (5.2): fsopen/fsconfig/fsmount.
#ifndef SYS_fsopen
#define SYS_fsopen_compat 430
#define SYS_fsconfig_compat 431
#define SYS_fsmount_compat 432
#else
#define SYS_fsopen_compat SYS_fsopen
#define SYS_fsconfig_compat SYS_fsconfig
#define SYS_fsmount_compat SYS_fsmount
#endif
#define FSOPEN_CLOEXEC_COMPAT 0x00000001
#define FSMOUNT_CLOEXEC_COMPAT 0x00000001
#define FSCONFIG_SET_STRING_COMPAT 1
#define FSCONFIG_CMD_CREATE_COMPAT 6

// close_range(2): 5.9; CLOSE_RANGE_CLOEXEC: 5.11.
#ifndef SYS_close_range
#define SYS_close_range_compat 436
#else
#define SYS_close_range_compat SYS_close_range
#endif
#define CLOSE_RANGE_CLOEXEC_COMPAT (1U << 2)

// pidfd_open(2): 5.3; pidfd_send_signal(2): 5.1.
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef P_PIDFD
#define P_PIDFD 3
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

#ifndef LANDLOCK_RULE_PATH_BENEATH
#define LANDLOCK_RULE_PATH_BENEATH 1
#endif
