#include "nn/listeners/HtmlReport.h"

#include <cstddef>
#include <span>
#include <string>

#include "nn/core/AtomicFile.h"
#include "nn/core/OutputPath.h"
#include "nn/listeners/StatsCharts.h"

namespace dl4cpp {

void HtmlReport::write(const StatsStorage& storage, const std::filesystem::path& path,
                       std::string_view title) {
  constexpr std::string_view kWhat = "an HTML report";
  checkOutputPath(path, kWhat);
  const std::string html = statsDocumentHtml(storage.snapshot(), title);
  writeFileAtomically(path, std::as_bytes(std::span(html.data(), html.size())), kWhat);
}

}  // namespace dl4cpp
