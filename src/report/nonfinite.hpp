#pragma once
// Where a run's NaN and inf came from, said once the lesson has run.
//
// A NaN has three usual origins in an attention lesson, and each needs a different sentence:
//   - the input held it (--allow-nonfinite kept NaN or inf from a file);
//   - an overflow: finite inputs whose products pass float32's largest value (3.4e38) become inf,
//     and softmax then computes inf - inf = nan;
//   - a row with every score masked to -inf: softmax divides 0 by 0.
// The pass reads the report's tensors in stage order, finds the first that holds NaN or +inf
// (a tensor whose only non-finite values are -inf is a mask, not a fault), decides which origin
// it is from the numbers alone, writes the cause into every NaN-holding tensor (the heatmap
// legends print it) and, unless the lesson made the NaN on purpose (a fully masked row), adds a
// note to the stage where it first appeared.

#include "report/stage.hpp"

namespace attn::report {

// `input_nonfinite`: the run's inputs hold NaN or inf (kept by --allow-nonfinite).
void explain_nonfinite(Report& report, bool input_nonfinite);

}  // namespace attn::report
