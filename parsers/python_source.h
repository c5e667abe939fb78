// Reading Python source as the gap attribution needs it (parsers/gap_attribution.h): the whole
// statement at a line, the CUDA-only branch a line runs in, and the line shapes both look for.
// Line-based: indentation and brackets decide, strings and comments are not parsed.
#pragma once

#include <string>
#include <string_view>

namespace devshim {

/// Whether a (trimmed) source line opens a function: `def ` or `async def `.
bool opens_def(std::string_view source);

/// 1 for a bracket the character opens ((, [, {), -1 for one it closes, 0 otherwise.
int bracket_step(char c);

/// Brackets ((, [, {) a line opens minus those it closes.
int bracket_depth(std::string_view text);

/// Whether a line of code opens a `with pytest.raises(...)` or `pytest.warns(...)` statement
/// (whole, or its first line of several), whose block (which no log prints) holds the calls
/// expected to raise.
bool opens_expectation_block(std::string_view code);

/// The Python statement that starts at 1-based `line` of `source`: that line and the next ones
/// until its brackets close, and for a `with pytest.raises(...)`/`pytest.warns(...)` header the
/// lines of its block too (those indented deeper than it), at most 40 lines in all, each trimmed
/// and joined by one space; empty when the file has no such line. (Brackets inside strings and
/// comments are counted too: a statement cut short or run long only changes what rule 4 of
/// attribute_failure reads.)
std::string statement_at(std::string_view source, int line);

/// Where 1-based `line` of Python `source` runs only where CUDA is there: the line of the
/// enclosing `if`/`elif` whose condition asks for CUDA (`torch.cuda.is_available()`,
/// `torch.cuda.device_count() > 1`, a flag named TEST_CUDA, HAS_CUDA, USE_CUDA or CUDA_AVAILABLE)
/// with no `not` or `or` in it, up to the enclosing `def` or `class`; or, in the same block, the
/// line of an earlier `if not torch.cuda.is_available():` whose body ends the block (its last
/// statement returns, continues, raises or skips the test). 0 when neither:
/// the line runs without CUDA too, as far as the source tells. (Indentation decides; a
/// statement's continuation lines indented less than it may end the search early.)
int cuda_branch_at(std::string_view source, int line);

}  // namespace devshim
