// SPDX-License-Identifier: MIT
// What runSandboxed keeps of one output stream: the whole stream up to a cap; past it, the first
// half of the cap (frozen) and the last half (a ring), plus the total byte count. A command is
// never killed for its output volume and memory stays bounded by the cap.
#pragma once

#include <stddef.h>

#include <string>

namespace capture_buffer {

class BoundedBuffer {
 public:
  // `cap` bytes are kept in all; 0 keeps everything (no bound).
  void SetCap(size_t cap) { cap_ = cap; }
  // Also writes every byte, as it arrives, to `fd` (owned from now on; closed by Clear()).
  void SetSpill(int fd) {
    spill_fd_ = fd;
    spill_failed_ = fd < 0;
  }
  // A write to the spill file failed: from then on it holds only part of the stream.
  bool spill_failed() const { return spill_failed_; }
  void Append(const char* data, size_t n);
  // Bytes the stream produced.
  double total() const { return total_; }
  bool truncated() const { return truncated_; }
  // The kept start of the stream (everything when not truncated): HeadSize() bytes at
  // head_data(), cut back to a UTF-8 character boundary when truncated, so decoding never splits
  // a character.
  const char* head_data() const { return head_.data(); }
  size_t HeadSize() const;
  // The kept end of the stream (empty when not truncated), starting on a UTF-8 character boundary.
  std::string Tail() const;
  // Frees the memory and closes the spill file.
  void Clear();

 private:
  void WriteRing(const char* data, size_t n);

  size_t cap_ = 0;
  double total_ = 0;
  bool truncated_ = false;
  std::string head_;     // the whole stream until truncated, then the frozen first half
  std::string ring_;     // the last cap_ - head_.size() bytes, once truncated
  size_t ring_pos_ = 0;  // next write position in ring_
  size_t ring_fill_ = 0;
  int spill_fd_ = -1;
  bool spill_failed_ = false;
};

}  // namespace capture_buffer
