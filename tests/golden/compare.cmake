# One golden case: run attn with ARGS, require exit 0 and an empty stderr, then compare stdout
# with GOLDEN byte for byte. On a difference, print `diff -u GOLDEN ACTUAL` and fail.
execute_process(COMMAND ${ATTN} ${ARGS}
  OUTPUT_FILE ${ACTUAL}
  ERROR_VARIABLE stderr
  RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "attn ${ARGS} exited with ${status}: ${stderr}")
endif()
if(NOT stderr STREQUAL "")
  message(FATAL_ERROR "attn ${ARGS} wrote to stderr: ${stderr}")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${GOLDEN} ${ACTUAL} RESULT_VARIABLE differs)
if(differs)
  execute_process(COMMAND diff -u ${GOLDEN} ${ACTUAL})
  message(FATAL_ERROR "attn ${ARGS}: output differs from ${GOLDEN} (diff above). "
                      "If the change is intended, read the diff, then run tests/golden/refresh.sh.")
endif()
