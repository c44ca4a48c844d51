# Dependencies come from Debian packages only (scripts/bootstrap.sh installs them).
# Link so the binary runs on other glibc>=2.36 machines without these packages
# (Debian 12's libre2-dev, libelf-dev, libzstd-dev, liblz4-dev and zlib1g-dev ship the .a
# archives; libfmt-dev ships only a shared libfmt.so, libtomlplusplus-dev is usable header-only
# with TOML_HEADER_ONLY): fmt's library compiled once into a static cd_fmt (cmake/fmt_impl.cpp),
# header-only toml++, static archives for re2/elf/zstd/lz4/z, static libstdc++.
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)

function(cd_static_lib var name)
  find_library(${var} NAMES lib${name}.a ${name} REQUIRED)
endfunction()
cd_static_lib(CD_RE2_A re2)
cd_static_lib(CD_ELF_A elf)
cd_static_lib(CD_ZSTD_A zstd)
cd_static_lib(CD_LZ4_A lz4)
cd_static_lib(CD_Z_A z)

# fmt: header-only fmt compiles the formatting engine into every translation unit (a third of
# the build's time); fmt 9.1's library source is one file, compiled here once. Other fmt
# versions (whose format.cc differs) fall back to header-only.
if(fmt_VERSION VERSION_GREATER_EQUAL 9.1 AND fmt_VERSION VERSION_LESS 9.2)
  get_target_property(CD_FMT_INCLUDE fmt::fmt-header-only INTERFACE_INCLUDE_DIRECTORIES)
  add_library(cd_fmt STATIC ${PROJECT_SOURCE_DIR}/cmake/fmt_impl.cpp)
  target_include_directories(cd_fmt SYSTEM PUBLIC ${CD_FMT_INCLUDE})
else()
  add_library(cd_fmt INTERFACE)
  target_link_libraries(cd_fmt INTERFACE fmt::fmt-header-only)
endif()

add_library(cd_deps_common INTERFACE)
target_link_libraries(cd_deps_common INTERFACE cd_fmt nlohmann_json::nlohmann_json)
target_link_options(cd_deps_common INTERFACE -static-libstdc++ -static-libgcc)

add_library(cd_deps_toml INTERFACE)
find_path(CD_TOML_INCLUDE toml++/toml.h REQUIRED)
target_include_directories(cd_deps_toml INTERFACE ${CD_TOML_INCLUDE})
target_compile_definitions(cd_deps_toml INTERFACE TOML_HEADER_ONLY=1 TOML_EXCEPTIONS=1)

add_library(cd_deps_re2 INTERFACE)
target_link_libraries(cd_deps_re2 INTERFACE ${CD_RE2_A} Threads::Threads)

add_library(cd_deps_elf INTERFACE)
target_link_libraries(cd_deps_elf INTERFACE ${CD_ELF_A} ${CD_ZSTD_A} ${CD_LZ4_A} ${CD_Z_A})

add_library(cd_deps_cli INTERFACE)
target_link_libraries(cd_deps_cli INTERFACE CLI11::CLI11)
