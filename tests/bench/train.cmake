# bench_train (tests/bench/bench_train.cpp): one learn-heads training step, timed against
# PyTorch by tests/bench/run_train.sh. Included from the top-level CMakeLists.txt under ATTN_BENCH.
add_executable(bench_train ${CMAKE_CURRENT_LIST_DIR}/bench_train.cpp)
target_link_libraries(bench_train PRIVATE attn_lesson_kit attn_core)
