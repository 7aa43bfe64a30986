#include <dl4cpp/nn/listeners/HtmlReport.h>
#include <dl4cpp/nn/listeners/StatsCharts.h>
#include <dl4cpp/nn/util/AtomicFile.h>

#include <cstddef>
#include <span>
#include <string>

namespace dl4cpp {

void HtmlReport::write(const StatsStorage& storage, const std::filesystem::path& path,
                       std::string_view title) {
  const std::string html = statsDocumentHtml(storage.snapshot(), title);
  writeFileAtomically(path, std::as_bytes(std::span(html.data(), html.size())));
}

}  // namespace dl4cpp
