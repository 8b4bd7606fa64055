#include "zs/fault.hpp"

#include <csignal>
#include <cstdlib>
#include <new>
#include <string>

#include "zs/error.hpp"

namespace zs::fault {

void point(std::string_view site) {
  const char* text = std::getenv("ZS_FAULT");
  if (text == nullptr || *text == '\0') return;
  std::string_view list(text);
  while (!list.empty()) {
    std::size_t const comma = list.find(',');
    std::string_view const item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    std::size_t const eq = item.find('=');
    if (item.substr(0, eq) != site) continue;
    std::string_view const action = eq == std::string_view::npos ? std::string_view() : item.substr(eq + 1);
    if (action == "oom") throw std::bad_alloc();
    if (action == "error") ZS_FAIL(error_code::internal, "injected fault at " + std::string(site));
    if (action == "stop") {
      std::raise(SIGSTOP);
      return;
    }
    ZS_FAIL(error_code::invalid_argument, "ZS_FAULT: unknown action '" + std::string(action) + "' for " +
                                              std::string(site) + " (oom, error or stop)");
  }
}

}  // namespace zs::fault
