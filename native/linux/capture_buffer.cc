// SPDX-License-Identifier: MIT
// Head-and-tail capture of one output stream (see capture_buffer.h).
#include "linux/capture_buffer.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>

namespace capture_buffer {
namespace {

bool IsContinuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// Length of the UTF-8 sequence a lead byte starts (1 for ASCII and for invalid bytes, which
// decode to one replacement character each).
size_t SequenceLength(unsigned char lead) {
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  if (lead >= 0xE0) return lead <= 0xEF ? 3 : 1;
  if (lead >= 0xC2) return 2;
  return 1;
}

}  // namespace

void BoundedBuffer::Append(const char* data, size_t n) {
  total_ += static_cast<double>(n);
  for (size_t done = 0; spill_fd_ >= 0 && done < n;) {
    ssize_t w = write(spill_fd_, data + done, n - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(spill_fd_);
      spill_fd_ = -1;
      spill_failed_ = true;
      break;
    }
    done += static_cast<size_t>(w);
  }
  if (!truncated_) {
    if (cap_ == 0 || head_.size() + n <= cap_) {
      head_.append(data, n);
      return;
    }
    // Over the cap for the first time: the first half is frozen; what was kept past it, then the
    // rest of this chunk, feed the ring.
    truncated_ = true;
    size_t head_cap = cap_ / 2;
    ring_.assign(cap_ - head_cap, '\0');
    std::string spill;
    if (head_.size() > head_cap) {
      spill = head_.substr(head_cap);
      head_.resize(head_cap);
    } else {
      size_t take = std::min(n, head_cap - head_.size());
      head_.append(data, take);
      data += take;
      n -= take;
    }
    head_.shrink_to_fit();
    WriteRing(spill.data(), spill.size());
  }
  WriteRing(data, n);
}

void BoundedBuffer::WriteRing(const char* data, size_t n) {
  // Only the last ring_.size() bytes can survive.
  if (n > ring_.size()) {
    data += n - ring_.size();
    n = ring_.size();
  }
  while (n > 0) {
    size_t take = std::min(n, ring_.size() - ring_pos_);
    ring_.replace(ring_pos_, take, data, take);
    ring_pos_ = (ring_pos_ + take) % ring_.size();
    ring_fill_ = std::min(ring_.size(), ring_fill_ + take);
    data += take;
    n -= take;
  }
}

size_t BoundedBuffer::HeadSize() const {
  if (!truncated_) return head_.size();
  // Drop a trailing sequence the cut left incomplete.
  size_t end = head_.size();
  for (size_t back = 1; back <= 4 && back <= end; ++back) {
    unsigned char byte = static_cast<unsigned char>(head_[end - back]);
    if (IsContinuation(byte)) continue;
    if (SequenceLength(byte) > back) end -= back;
    break;
  }
  return end;
}

std::string BoundedBuffer::Tail() const {
  if (!truncated_) return std::string();
  std::string tail;
  tail.reserve(ring_fill_);
  size_t start = (ring_pos_ + ring_.size() - ring_fill_) % ring_.size();
  size_t first = std::min(ring_fill_, ring_.size() - start);
  tail.append(ring_, start, first);
  tail.append(ring_, 0, ring_fill_ - first);
  // Skip the continuation bytes of a character whose start was dropped.
  size_t skip = 0;
  while (skip < 3 && skip < tail.size() && IsContinuation(static_cast<unsigned char>(tail[skip])))
    ++skip;
  return tail.substr(skip);
}

void BoundedBuffer::Clear() {
  if (spill_fd_ >= 0) close(spill_fd_);
  spill_fd_ = -1;
  std::string().swap(head_);
  std::string().swap(ring_);
  ring_pos_ = ring_fill_ = 0;
}

}  // namespace capture_buffer
