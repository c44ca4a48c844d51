// data/library_status.toml: the cuBLAS and NCCL status tables verify names failures with.
#include <gtest/gtest.h>

#include "kb/kb.hpp"
#include "kb/library_status.hpp"

TEST(LibraryStatus, NamesAndFindingsFromTheHeaders) {
  const cd::Kb& kb = cd::Kb::get();
  const cd::LibraryStatus* arch = cd::find_library_status(kb, "cublas", 8);
  ASSERT_NE(arch, nullptr);
  EXPECT_EQ(arch->name, "CUBLAS_STATUS_ARCH_MISMATCH");
  EXPECT_NE(arch->source.find("cublas_api.h"), std::string::npos);
  const cd::LibraryStatus* cuda = cd::find_library_status(kb, "nccl", 1);
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ(cuda->name, "ncclUnhandledCudaError");
  EXPECT_EQ(cuda->finding, "nccl.unhandled_cuda_error");
  EXPECT_EQ(cd::find_library_status(kb, "nccl", 99), nullptr);
  EXPECT_EQ(cd::find_library_status(kb, "cublas", 2), nullptr);  // 2 is not a cublasStatus_t value
  EXPECT_EQ(cd::library_statuses(kb, "nccl").size(), 9u);
}
