# CTest: an exercise as shipped must fail its own checks. A stub that passes would mean the
# tests cannot tell a solution from a // TODO, so a learner could "pass" without writing a line.
#
# Passes when the stub's program exits non-zero AND doctest reported the failures (its
# "Status: FAILURE!" line, no "CRASHED") with an expected-vs-actual report: a crash or an abort
# is not a failing check. The program is built from the pristine stub
# (lessons/exercises/shipped/<file>), never from the learner's working copy, so whatever the
# learner has written plays no part and no git is asked.
#
# -DNAME=<exercise> -DPROGRAM=<stub_<stem> executable> -DSTUB=<lessons/exercises/shipped/<file>>

if(NOT EXISTS ${PROGRAM} OR ${STUB} IS_NEWER_THAN ${PROGRAM})
  message(FATAL_ERROR "${NAME}: the stub ${STUB} did not build into ${PROGRAM}; "
                      "a shipped exercise must compile (see exercise/build-stubs)")
endif()

execute_process(COMMAND ${PROGRAM} --no-colors=true
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)

if(status EQUAL 0)
  message(FATAL_ERROR "${NAME}: the stub ${STUB} PASSES its checks; "
                      "they cannot tell a stub from a solution.\n${output}")
endif()

# Failed, as it should: now make sure it failed the way a learner will see it.
if(NOT output MATCHES "Status: FAILURE!" OR output MATCHES "CRASHED")
  message(FATAL_ERROR "${NAME}: the stub's program ended with '${status}' without doctest's "
                      "summary (a crash?), so the learner would see no expected/actual report.\n${output}")
endif()
if(NOT output MATCHES "expected" OR NOT output MATCHES "actual")
  message(FATAL_ERROR "${NAME}: the failures do not show expected and actual values.\n${output}")
endif()
string(REGEX MATCH "test cases: *[0-9]+ *\\| *[0-9]+ passed *\\| *[0-9]+ failed" summary "${output}")
message("${NAME}: fails as shipped, as it should (${summary})")
