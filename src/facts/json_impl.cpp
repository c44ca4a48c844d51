// Compiles the JSON (de)serialisers of every facts struct, once (see facts/json.hpp).
#define CD_FACTS_JSON_IMPL
#include "facts/facts.hpp"
#include "facts/finding.hpp"
#include "facts/report.hpp"
#include "facts/watch.hpp"
