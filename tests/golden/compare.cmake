# One golden case: run attn with ARGS and require exit status EXIT (0 unless cases.txt says
# `exit=N`); with status 0, stderr must also be empty. Then compare stdout with GOLDEN through
# GOLDEN_DIFF (text exactly, numbers within a tolerance: golden_compare.hpp). On a difference,
# golden_diff has printed each differing line; add `diff -u GOLDEN ACTUAL` and fail.
execute_process(COMMAND ${ATTN} ${ARGS}
  OUTPUT_FILE ${ACTUAL}
  ERROR_VARIABLE stderr
  RESULT_VARIABLE status)
if(NOT status STREQUAL "${EXIT}")
  message(FATAL_ERROR "attn ${ARGS} exited with ${status}, expected ${EXIT}: ${stderr}")
endif()
if(EXIT EQUAL 0 AND NOT stderr STREQUAL "")
  message(FATAL_ERROR "attn ${ARGS} wrote to stderr: ${stderr}")
endif()
if(NOT stderr STREQUAL "")
  message(STATUS "attn ${ARGS} wrote to stderr (exit ${status}, as expected):\n${stderr}")
endif()
execute_process(COMMAND ${GOLDEN_DIFF} ${GOLDEN} ${ACTUAL} RESULT_VARIABLE differs)
if(NOT differs EQUAL 0)
  execute_process(COMMAND diff -u ${GOLDEN} ${ACTUAL})
  message(FATAL_ERROR "attn ${ARGS}: output differs from ${GOLDEN} (differing lines and diff above). "
                      "If the change is intended, read the diff, then run tests/golden/refresh.sh.")
endif()
