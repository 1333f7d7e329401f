// SPDX-License-Identifier: MIT
// The marker that stands for the dropped middle of a stream that went over its output cap.

/**
 * The marker between the kept head and tail of a stream: says how many bytes were dropped and
 * how to get all of them. Clients that know stream-json's bash tool recognize its first words.
 */
export function truncationMarker(omittedBytes: number): string {
  return `\n[zero] output truncated: ${omittedBytes} bytes omitted from the middle — redirect the output to a file to keep all of it\n`;
}

/** Whether `text` holds a truncation marker. */
export function hasTruncationMarker(text: string): boolean {
  return /\n\[zero\] output truncated: \d+ bytes omitted from the middle — /.test(text);
}
