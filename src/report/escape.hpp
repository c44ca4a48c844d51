#pragma once
// Renderers escape every string that came from input with shown() (util/escape.hpp).
#include "util/escape.hpp"
