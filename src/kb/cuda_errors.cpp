#include "kb/cuda_errors.hpp"

#include "kb/toml_access.hpp"

namespace cd {

const std::vector<CudaErrorInfo>& cuda_errors(const Kb& kb) {
  return kb.view<std::vector<CudaErrorInfo>>("cuda_errors", [](const Kb& k) {
    std::vector<CudaErrorInfo> out;
    for (const toml::table* row : kb_rows(k, "cuda_errors", "error")) {
      CudaErrorInfo e;
      e.code = static_cast<int>(row_int(*row, "code").value_or(-1));
      e.name = row_str(*row, "name");
      e.meaning = row_str(*row, "meaning");
      e.finding = row_str(*row, "finding");
      e.source = row_str(*row, "source");
      out.push_back(std::move(e));
    }
    return out;
  });
}

const CudaErrorInfo* find_cuda_error(const Kb& kb, int code) {
  for (const CudaErrorInfo& e : cuda_errors(kb))
    if (e.code == code) return &e;
  return nullptr;
}

}  // namespace cd
