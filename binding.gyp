# SPDX-License-Identifier: MIT
# One loadable module: the shared binding (native/binding/: addon entry, argument parsing, error
# conversion) always; each OS adds its own folder (native/<os>/, with its spawn glue), and the
# POSIX hosts the descriptor-relative file walks (native/posix/; Windows has its own handle-relative
# walks in native/windows/, behind the same binding/fs_beneath.h), so a build compiles only what its
# platform runs.
{
  "targets": [
    {
      "target_name": "zero_sandbox",
      "type": "loadable_module",
      "sources": [
        "native/binding/addon.cc",
        "native/binding/args.cc",
        "native/binding/fs_verbs_glue.cc",
        "native/binding/hangup_watch.cc",
        "native/binding/js_errors.cc"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "native"
      ],
      "dependencies": [
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"
      ],
      "defines": [
        "NAPI_VERSION=9",
        "NODE_ADDON_API_DISABLE_DEPRECATED",
        "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"
      ],
      "conditions": [
        ["OS=='linux'", {
          "sources": [
            "native/posix/fs_beneath.cc",
            "native/posix/fs_glue_posix.cc",
            "native/posix/fs_inspect_many.cc",
            "native/posix/fs_remove.cc",
            "native/posix/git_scan.cc",
            "native/posix/git_scan_listing.cc",
            "native/posix/git_scan_memory.cc",
            "native/posix/job_threads.cc",
            "native/posix/pipe_threads.cc",
            "native/posix/root_walk.cc",
            "native/linux/capture_buffer.cc",
            "native/linux/cgroup_calls.cc",
            "native/linux/child_setup.cc",
            "native/linux/masks.cc",
            "native/linux/launch_send.cc",
            "native/linux/link_window.cc",
            "native/linux/mount_steps.cc",
            "native/linux/mount_templates.cc",
            "native/linux/template_steps.cc",
            "native/linux/dir_watch.cc",
            "native/linux/environ_read.cc",
            "native/linux/exit_watcher.cc",
            "native/linux/exit_capture.cc",
            "native/linux/namespace_release.cc",
            "native/linux/net_holders.cc",
            "native/linux/probe_linux.cc",
            "native/linux/spawn_glue_linux.cc",
            "native/linux/spawn_linux.cc",
            "native/linux/spawn_pipes.cc",
            "native/linux/spawn_plan.cc",
            "native/linux/link_window_plan.cc",
            "native/linux/watch_sets.cc",
            "native/linux/watched_looks.cc"
          ],
          "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-fstack-protector-strong", "-Wall", "-Wextra", "-D_FORTIFY_SOURCE=2"]
        }],
        ["OS=='mac'", {
          "sources": [
            "native/posix/fs_beneath.cc",
            "native/posix/fs_glue_posix.cc",
            "native/posix/fs_inspect_many.cc",
            "native/posix/fs_remove.cc",
            "native/posix/git_scan.cc",
            "native/posix/git_scan_listing.cc",
            "native/posix/git_scan_memory.cc",
            "native/posix/job_threads.cc",
            "native/posix/pipe_threads.cc",
            "native/posix/root_walk.cc",
            "native/macos/probe_macos.cc",
            "native/macos/run_members.cc",
            "native/macos/spawn_glue_macos.cc"
          ],
          "xcode_settings": {
            "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
            "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
            "OTHER_CPLUSPLUSFLAGS": ["-fstack-protector-strong"],
            "MACOSX_DEPLOYMENT_TARGET": "11.0"
          }
        }],
        ["OS=='win'", {
          "sources": [
            "native/windows/app_container.cc",
            "native/windows/fs_glue_windows.cc",
            "native/windows/fs_remove_windows.cc",
            "native/windows/fs_walk_windows.cc",
            "native/windows/nt_walk.cc",
            "native/windows/launch.cc",
            "native/windows/probe_windows.cc",
            "native/windows/spawn_glue_windows.cc",
            "native/windows/win_acl.cc",
            "native/windows/win_error.cc",
            "native/windows/windows_backend.cc"
          ],
          "defines": ["UNICODE", "_UNICODE", "_WIN32_WINNT=0x0A00", "WINVER=0x0A00"],
          "libraries": ["advapi32.lib"],
          "msvs_settings": {
            "VCCLCompilerTool": {
              "AdditionalOptions": ["/std:c++17", "/guard:cf", "/sdl", "/W3", "/Qspectre"]
            },
            "VCLinkerTool": {
              "AdditionalOptions": ["/guard:cf"]
            }
          }
        }]
      ]
    },
    {
      "target_name": "zero_sandbox_init",
      "conditions": [
        ["OS=='linux'", {
          "type": "executable",
          "sources": ["native/linux/init_main.cc", "native/linux/init_command.cc"],
          "include_dirs": ["native"],
          "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"],
          "conditions": [
            ["target_arch=='x64' or target_arch=='arm64'", {
              # Freestanding: no C library to start up, once per sandbox (see init_sys.h).
              "defines": ["ZS_FREESTANDING"],
              "cflags!": ["-pthread"],
              "cflags_cc": ["-ffreestanding", "-fno-builtin", "-fno-stack-protector", "-fno-tree-loop-distribute-patterns",
                            "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-U_FORTIFY_SOURCE"],
              "ldflags!": ["-pthread", "-rdynamic"],
              "ldflags": ["-static", "-nostdlib", "-no-pie"]
            }, {
              "cflags_cc": ["-fstack-protector-strong", "-D_FORTIFY_SOURCE=2"]
            }]
          ]
        }, {
          "type": "none"
        }]
      ]
    }
  ]
}
