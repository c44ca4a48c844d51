// Precompiled header shared by every target (parsing json/fmt dominated build time).
// Not CLI11: its header defines const validator objects (ExistingFile, IPV4, …) with
// internal linkage, so every translation unit that includes it constructs its own copies
// at start-up — with 190 TUs that was half of `cuda-doctor --version`'s 7 ms. Only
// src/cli includes it (cli/options.hpp).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
