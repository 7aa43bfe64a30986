// Built by scripts/check-install.sh against an installed dl4cpp with its "ui" component: proves
// that dl4cpp::dl4cpp_ui links from outside (cpp-httplib found by the package config) and that
// the training page's server starts and stops, and the report is written.
#include <dl4cpp/dl4cpp.h>
#include <dl4cpp/ui/UIServer.h>

#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>

int main() {
  try {
    auto storage = std::make_shared<dl4cpp::StatsStorage>();
    storage->addValidation(1, 0, 0.5);
    dl4cpp::UIServer server(storage);
    const std::filesystem::path report =
        std::filesystem::temp_directory_path() / "dl4cpp-ui-consumer-report.html";
    dl4cpp::HtmlReport::write(*storage, report);
    const auto bytes = std::filesystem::file_size(report);
    std::filesystem::remove(report);
    std::printf("dl4cpp ui consumer: page at %s, report of %llu bytes\n", server.url().c_str(),
                static_cast<unsigned long long>(bytes));
    server.stop();
    return server.port() > 0 && bytes > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ui consumer: %s\n", e.what());
    return 1;
  }
}
