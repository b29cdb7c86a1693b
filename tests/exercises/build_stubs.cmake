# CTest fixture: builds every stub's program (target all_stubs, one stub_<stem> per exercise, from
# lessons/exercises/shipped/) before the as-shipped tests run them. The stub programs are not part
# of the default build, so this is where CI compiles the // TODO files.
#
# It never fails by itself: a stub that does not compile must not stop the others from being
# checked. Each as-shipped test looks at its own program and decides (a stub that did not build
# fails there, by name).
#
# -DBUILD_DIR=<build tree> -DGENERATOR=<CMAKE_GENERATOR>

# Keep going past a file that does not compile, so the others still build.
set(keep_going)
if(GENERATOR MATCHES "Ninja")
  set(keep_going -- -k 0)
elseif(GENERATOR MATCHES "Makefiles")
  set(keep_going -- -k)
endif()

set(jobs 2)
if(DEFINED ENV{CMAKE_BUILD_PARALLEL_LEVEL})
  set(jobs $ENV{CMAKE_BUILD_PARALLEL_LEVEL})
endif()

execute_process(
  COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target all_stubs --parallel ${jobs} ${keep_going}
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
if(status EQUAL 0)
  message("every stub's program is built")
else()
  message("${output}")
  message("some stub programs did not build (status ${status}); the as-shipped tests say which")
endif()
