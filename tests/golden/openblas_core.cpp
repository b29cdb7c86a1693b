// openblas_core: prints the kernel OpenBLAS chose ("Haswell", "Prescott", ...) and its thread
// count, one line, "<core> <threads>". The golden outputs are re-run under another kernel in
// .ci/run; tests/cli checks with this program that OpenBLAS really honours the
// OPENBLAS_CORETYPE and OPENBLAS_NUM_THREADS that .ci/run sets, so that the second run cannot
// quietly become the first one again. No header: <cblas.h> clashes with xtensor-blas
// (docs/architecture.md, trap 8), and these two functions are all this program needs.
#include <cstdio>

extern "C" {
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
}

int main() {
  std::printf("%s %d\n", openblas_get_corename(), openblas_get_num_threads());
  return 0;
}
