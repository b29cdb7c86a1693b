# CTest: an exercise as shipped must fail its own checks. A stub that passes would mean the
# tests cannot tell a solution from a // TODO, so a learner could "pass" without writing a line.
#
# Passes when the learner program exits non-zero AND doctest reported the failures (its
# "Status: FAILURE!" line, no "CRASHED") with an expected-vs-actual report: a crash or an abort
# is not a failing check. A learner's working copy is not the shipped file: when git says the file has
# been edited, a passing or unbuilt program is reported as skipped ("attn-skip:"), not failed.
#
# -DNAME=<exercise> -DPROGRAM=<exercise executable> -DLEARNER_FILE=<.cpp> -DSOURCE_DIR=<repository>

# "edited" when git knows the file and it differs from HEAD. Without git, or outside a
# repository, the file is taken as shipped: the strict reading, right for CI and for a tarball.
set(edited FALSE)
find_program(GIT git)
if(GIT)
  execute_process(COMMAND ${GIT} -C ${SOURCE_DIR} diff --quiet HEAD -- ${LEARNER_FILE}
                  RESULT_VARIABLE diff_status OUTPUT_QUIET ERROR_QUIET)
  if(diff_status EQUAL 1)
    set(edited TRUE)
  endif()
endif()

set(built FALSE)
if(EXISTS ${PROGRAM} AND NOT ${LEARNER_FILE} IS_NEWER_THAN ${PROGRAM})
  set(built TRUE)
endif()
if(NOT built)
  if(edited)
    message("attn-skip: ${LEARNER_FILE} has your edits and does not build yet (attn check ${NAME} shows why)")
    return()
  endif()
  message(FATAL_ERROR "${NAME}: the shipped ${LEARNER_FILE} did not build into ${PROGRAM}; "
                      "a shipped exercise must compile (see exercise/build-learner-files)")
endif()

execute_process(COMMAND ${PROGRAM} --no-colors=true
                RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output TIMEOUT 120)

if(status EQUAL 0)
  if(edited)
    message("attn-skip: ${NAME} passes with your edits to ${LEARNER_FILE}: solved")
    return()
  endif()
  message(FATAL_ERROR "${NAME}: the shipped ${LEARNER_FILE} PASSES its checks; "
                      "they cannot tell a stub from a solution.\n${output}")
endif()

if(edited)
  message("${NAME}: fails with your edits (status ${status}); nothing to say about the shipped file")
  return()
endif()

# Failed, as it should: now make sure it failed the way a learner will see it.
if(NOT output MATCHES "Status: FAILURE!" OR output MATCHES "CRASHED")
  message(FATAL_ERROR "${NAME}: the shipped program ended with '${status}' without doctest's "
                      "summary (a crash?), so the learner would see no expected/actual report.\n${output}")
endif()
if(NOT output MATCHES "expected" OR NOT output MATCHES "actual")
  message(FATAL_ERROR "${NAME}: the failures do not show expected and actual values.\n${output}")
endif()
string(REGEX MATCH "test cases: *[0-9]+ *\\| *[0-9]+ passed *\\| *[0-9]+ failed" summary "${output}")
message("${NAME}: fails as shipped, as it should (${summary})")
