// Failure signatures: one key for failures that are "the same problem".
#pragma once

#include <string>
#include <string_view>

namespace devshim {

/// The message with its volatile parts abstracted, so that thirty
/// "0.79 not less than or equal to 1e-05" become one:
///   hex addresses → <hex>; device indices (cuda:1, mps:0) → cuda:<i>; integer lists and tensor
///   shapes ([2, 3], torch.Size([2, 3])) → [<shape>]; paths → <path>; quoted strings longer than
///   40 characters → '<str>'; numbers (int, float, scientific, negative; with units: 16GB →
///   <n>GB, 3s → <n>s; dimensions: 2x3 → <n>x<n>) → <n>; whitespace runs → one space. Digits
///   inside identifiers (aten::conv2d, float16, _cuda_getDevice) are kept.
std::string normalize_message(std::string_view message);

/// A stable 16-hex-digit hash (FNV-1a 64) of exception + normalized message. Equal inputs give
/// equal signatures on every platform and in every release (the database keeps them).
std::string failure_signature(std::string_view exception, std::string_view message);

}  // namespace devshim
