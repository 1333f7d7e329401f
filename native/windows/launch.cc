// SPDX-License-Identifier: MIT
// CreateProcessW with STARTUPINFOEX: security capabilities plus an explicit inheritable-handle
// list.
#include "windows/launch.h"

#include "windows/wide.h"
#include "windows/win_error.h"

namespace launch {
namespace {

// Closes every handle it holds when it goes out of scope (failure paths stay short).
class HandleList {
 public:
  ~HandleList() {
    for (HANDLE h : handles_) CloseHandle(h);
  }
  void Add(HANDLE h) { handles_.push_back(h); }
  HANDLE* data() { return handles_.data(); }
  size_t size() const { return handles_.size(); }

 private:
  std::vector<HANDLE> handles_;
};

// Returns an inheritable duplicate of `value`, or an inheritable NUL handle for -1.
status::Status InheritableStdio(long long value, int index, HANDLE* out) {
  SECURITY_ATTRIBUTES sa{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  if (value == -1) {
    HANDLE h = CreateFileW(L"NUL", GENERIC_READ | GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_WRITE,
                           &sa, OPEN_EXISTING, 0, nullptr);
    if (h == INVALID_HANDLE_VALUE) {
      DWORD err = GetLastError();
      return win_error::Win32("spawn_failed", err, "CreateFileW(NUL)", "", "stdio");
    }
    *out = h;
    return status::Ok();
  }
  HANDLE source = reinterpret_cast<HANDLE>(static_cast<intptr_t>(value));
  if (!DuplicateHandle(GetCurrentProcess(), source, GetCurrentProcess(), out, 0, TRUE,
                       DUPLICATE_SAME_ACCESS)) {
    DWORD err = GetLastError();
    return win_error::Win32("spawn_failed", err,
                            "DuplicateHandle(stdio[" + std::to_string(index) + "])", "", "stdio");
  }
  return status::Ok();
}

// "K=V\0K=V\0\0" as CREATE_UNICODE_ENVIRONMENT expects.
bool BuildEnvironmentBlock(const std::vector<std::string>& envp, std::wstring* out) {
  out->clear();
  for (const std::string& entry : envp) {
    bool ok = true;
    std::wstring w = wide::FromUtf8(entry, &ok);
    if (!ok || w.find(L'\0') != std::wstring::npos) return false;
    out->append(w);
    out->push_back(L'\0');
  }
  if (out->empty()) out->push_back(L'\0');
  out->push_back(L'\0');
  return true;
}

}  // namespace

status::Status CreateKillOnCloseJob(uint64_t memory_bytes, uint32_t process_limit, HANDLE* out) {
  HANDLE job = CreateJobObjectW(nullptr, nullptr);
  if (job == nullptr) {
    DWORD err = GetLastError();
    return win_error::Win32("sandbox_unavailable", err, "CreateJobObjectW", "", "job");
  }
  JOBOBJECT_EXTENDED_LIMIT_INFORMATION limits{};
  limits.BasicLimitInformation.LimitFlags =
      JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
  if (memory_bytes > 0) {
    limits.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_JOB_MEMORY;
    limits.JobMemoryLimit = static_cast<SIZE_T>(memory_bytes);
  }
  if (process_limit > 0) {
    limits.BasicLimitInformation.LimitFlags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS;
    limits.BasicLimitInformation.ActiveProcessLimit = process_limit;
  }
  if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation, &limits, sizeof(limits))) {
    DWORD err = GetLastError();
    CloseHandle(job);
    return win_error::Win32("sandbox_unavailable", err,
                            "SetInformationJobObject(KILL_ON_JOB_CLOSE)", "", "job");
  }
  // No clipboard, desktop switching, global atoms or handles of windows outside the job: the
  // command cannot inject input into the caller's console.
  JOBOBJECT_BASIC_UI_RESTRICTIONS ui{};
  ui.UIRestrictionsClass = JOB_OBJECT_UILIMIT_HANDLES | JOB_OBJECT_UILIMIT_READCLIPBOARD |
                           JOB_OBJECT_UILIMIT_WRITECLIPBOARD | JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS |
                           JOB_OBJECT_UILIMIT_DISPLAYSETTINGS | JOB_OBJECT_UILIMIT_GLOBALATOMS |
                           JOB_OBJECT_UILIMIT_DESKTOP | JOB_OBJECT_UILIMIT_EXITWINDOWS;
  if (!SetInformationJobObject(job, JobObjectBasicUIRestrictions, &ui, sizeof(ui))) {
    DWORD err = GetLastError();
    CloseHandle(job);
    return win_error::Win32("sandbox_unavailable", err, "SetInformationJobObject(UI restrictions)",
                            "", "job");
  }
  *out = job;
  return status::Ok();
}

namespace {

// Owns a PROC_THREAD_ATTRIBUTE_LIST with the security capabilities and the handle list.
class AttributeList {
 public:
  ~AttributeList() {
    if (initialized_) DeleteProcThreadAttributeList(get());
  }
  LPPROC_THREAD_ATTRIBUTE_LIST get() {
    return reinterpret_cast<LPPROC_THREAD_ATTRIBUTE_LIST>(buffer_.data());
  }

  status::Status Init(SECURITY_CAPABILITIES* capabilities, HandleList* inherited) {
    SIZE_T size = 0;
    InitializeProcThreadAttributeList(nullptr, 2, 0, &size);
    buffer_.resize(size);
    if (!InitializeProcThreadAttributeList(get(), 2, 0, &size)) {
      DWORD err = GetLastError();
      return win_error::Win32("sandbox_unavailable", err, "InitializeProcThreadAttributeList", "",
                              "appcontainer");
    }
    initialized_ = true;
    if (!UpdateProcThreadAttribute(get(), 0, PROC_THREAD_ATTRIBUTE_SECURITY_CAPABILITIES,
                                   capabilities, sizeof(*capabilities), nullptr, nullptr)) {
      DWORD err = GetLastError();
      return win_error::Win32("sandbox_unavailable", err,
                              "UpdateProcThreadAttribute(SECURITY_CAPABILITIES)", "",
                              "appcontainer");
    }
    // Only the three stdio handles are inherited, whatever else is inheritable in this process.
    if (!UpdateProcThreadAttribute(get(), 0, PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherited->data(),
                                   inherited->size() * sizeof(HANDLE), nullptr, nullptr)) {
      DWORD err = GetLastError();
      return win_error::Win32("spawn_failed", err, "UpdateProcThreadAttribute(HANDLE_LIST)", "",
                              "stdio");
    }
    return status::Ok();
  }

 private:
  std::vector<unsigned char> buffer_;
  bool initialized_ = false;
};

// CreateProcessW suspended, into the job, then resumed. On failure nothing is left running.
status::Status StartInJob(std::wstring command_line, std::wstring env_block,
                          const std::wstring& cwd, const HANDLE std_handles[3],
                          LPPROC_THREAD_ATTRIBUTE_LIST attrs, HANDLE job, PROCESS_INFORMATION* pi) {
  STARTUPINFOEXW si{};
  si.StartupInfo.cb = sizeof(si);
  si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
  si.StartupInfo.hStdInput = std_handles[0];
  si.StartupInfo.hStdOutput = std_handles[1];
  si.StartupInfo.hStdError = std_handles[2];
  si.lpAttributeList = attrs;
  DWORD flags = EXTENDED_STARTUPINFO_PRESENT | CREATE_SUSPENDED | CREATE_UNICODE_ENVIRONMENT |
                CREATE_NO_WINDOW;
  if (!CreateProcessW(nullptr, &command_line[0], nullptr, nullptr, TRUE, flags, &env_block[0],
                      cwd.empty() ? nullptr : cwd.c_str(), &si.StartupInfo, pi)) {
    DWORD err = GetLastError();
    bool exec = err == ERROR_FILE_NOT_FOUND || err == ERROR_PATH_NOT_FOUND ||
                err == ERROR_ACCESS_DENIED || err == ERROR_BAD_EXE_FORMAT;
    return win_error::Win32(exec ? "exec_failed" : "spawn_failed", err, "CreateProcessW",
                            wide::ToUtf8(command_line));
  }
  status::Status result = status::Ok();
  if (!AssignProcessToJobObject(job, pi->hProcess)) {
    DWORD err = GetLastError();
    TerminateProcess(pi->hProcess, 1);
    result = win_error::Win32("sandbox_unavailable", err, "AssignProcessToJobObject",
                              "the process was terminated before it ran", "job");
  } else if (ResumeThread(pi->hThread) == static_cast<DWORD>(-1)) {
    DWORD err = GetLastError();
    TerminateJobObject(job, 1);
    result = win_error::Win32("spawn_failed", err, "ResumeThread");
  }
  CloseHandle(pi->hThread);
  pi->hThread = nullptr;
  if (!result.ok()) {
    CloseHandle(pi->hProcess);
    pi->hProcess = nullptr;
  }
  return result;
}

}  // namespace

status::Status Launch(const Request& request, SECURITY_CAPABILITIES* capabilities, Launched* out) {
  HandleList stdio;
  HANDLE std_handles[3];
  for (int i = 0; i < 3; ++i) {
    status::Status s = InheritableStdio(request.stdio[i], i, &std_handles[i]);
    if (!s.ok()) return s;
    stdio.Add(std_handles[i]);
  }
  std::wstring env_block;
  if (!BuildEnvironmentBlock(request.envp, &env_block)) {
    return status::Fail("invalid_argument", 0, "BuildEnvironmentBlock", "an entry is not UTF-8");
  }
  bool ok = true;
  std::wstring command_line = wide::FromUtf8(request.command_line, &ok);
  if (!ok) return status::Fail("invalid_argument", 0, "MultiByteToWideChar", "command line");
  std::wstring cwd = wide::FromUtf8(request.cwd, &ok);
  if (!ok) return status::Fail("invalid_argument", 0, "MultiByteToWideChar", "cwd");

  AttributeList attrs;
  status::Status s = attrs.Init(capabilities, &stdio);
  if (!s.ok()) return s;
  HANDLE job = nullptr;
  s = CreateKillOnCloseJob(request.job_memory_bytes, request.job_process_limit, &job);
  if (!s.ok()) return s;
  PROCESS_INFORMATION pi{};
  s = StartInJob(command_line, env_block, cwd, std_handles, attrs.get(), job, &pi);
  if (!s.ok()) {
    CloseHandle(job);
    return s;
  }
  out->pid = pi.dwProcessId;
  out->process = pi.hProcess;
  out->job = job;
  return status::Ok();
}

}  // namespace launch
