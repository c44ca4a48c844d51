#include <gtest/gtest.h>

#include "util/version.hpp"

using cd::Version;

TEST(Version, ParsesDriverVersions) {
  auto v = Version::parse("580.159.04");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->major(), 580);
  EXPECT_EQ(v->minor(), 159);
  EXPECT_EQ(v->patch(), 4);
  EXPECT_LT(*Version::parse("535.54.03"), *Version::parse("535.104.05"));
  EXPECT_EQ(*Version::parse("12.4"), *Version::parse("12.4.0"));
}

TEST(Version, KeepsLocalTag) {
  auto v = Version::parse("2.11.0+cu130");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->local, "cu130");
  EXPECT_EQ(v->major_minor(), "2.11");
}

TEST(Version, CudaIntegers) {
  EXPECT_EQ(Version::from_cuda_int(13000).major_minor(), "13.0");
  EXPECT_EQ(Version::from_cuda_int(12040).major_minor(), "12.4");
  EXPECT_EQ(Version::parse("12.8")->cuda_int(), 12080);
}

TEST(Version, CudaTags) {
  EXPECT_EQ(cd::cuda_from_tag("cu118")->major_minor(), "11.8");
  EXPECT_EQ(cd::cuda_from_tag("cu130")->major_minor(), "13.0");
  EXPECT_FALSE(cd::cuda_from_tag("cpu"));
  EXPECT_FALSE(cd::cuda_from_tag("cu12x"));
}

TEST(Version, RejectsGarbage) {
  EXPECT_FALSE(Version::parse(""));
  EXPECT_FALSE(Version::parse("abc"));
}
