#pragma once
// Strings that came from input (file names, driver and GPU names, package metadata, log
// lines, command lines) are printed through shown(): a terminal must never receive an
// escape sequence or a line break from them. See escape.cpp. In util/ so that the progress
// line on stderr (util/term) escapes the file names it shows, like every renderer does.
#include <string>
#include <string_view>
#include <vector>

namespace cd {

// `s` with every C0/C1 control, DEL and byte that is not valid UTF-8 written as a visible
// escape (\n, \t, \x1b, \u009b, \xff); printable text, including non-ASCII, is unchanged.
std::string shown(std::string_view s);
std::vector<std::string> shown(const std::vector<std::string>& v);

}  // namespace cd
