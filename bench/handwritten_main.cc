// The hand-written reference as a whole process, for bench/whole_process.sh:
// integrates B1 or B3 (bench/handwritten.h) over 10 s with 1001 output rows
// and writes them as CSV, as `paynter simulate` does.
//
// Usage: handwritten b1|b3 RTOL ATOL OUT.csv
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "handwritten.h"

namespace {

template <class Model>
int Run(double rtol, double atol, const char* path) {
  double x[Model::kStates];
  Model::Initial(x);
  std::vector<char> text(1024 + 1001 * 32 * (Model::kOutputs + 1));
  char* p = text.data();
  const size_t header = std::strlen(Model::kHeader);
  std::memcpy(p, Model::kHeader, header);
  p += header;
  *p++ = '\n';
  double o[Model::kOutputs];
  const handwritten::Stats st =
      handwritten::Dopri5<Model::kStates>(Model::Rhs, x, 0.0, 10.0, rtol, atol, 0.01, [&](double t, const double* y) {
        Model::Outputs(t, y, o);
        p = handwritten::FormatRow(p, t, o, Model::kOutputs);
      });
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (fd < 0 || ::write(fd, text.data(), p - text.data()) != p - text.data() || ::close(fd) != 0) {
    std::perror(path);
    return 1;
  }
  std::fprintf(stderr, "%ld steps, %ld rejected, %ld rhs evaluations\n", st.steps, st.rejected, st.rhs_evals);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: handwritten b1|b3 RTOL ATOL OUT.csv\n");
    return 2;
  }
  const std::string model = argv[1];
  const double rtol = std::atof(argv[2]), atol = std::atof(argv[3]);
  if (model == "b1") return Run<handwritten::B1>(rtol, atol, argv[4]);
  if (model == "b3") return Run<handwritten::B3>(rtol, atol, argv[4]);
  std::fprintf(stderr, "unknown model '%s'\n", argv[1]);
  return 2;
}
