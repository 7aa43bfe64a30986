#include "nn/listeners/HtmlReport.h"

#include <cstddef>
#include <span>
#include <string>

#include "nn/listeners/StatsCharts.h"
#include "nn/util/AtomicFile.h"
#include "nn/util/OutputPath.h"

namespace dl4cpp {

void HtmlReport::write(const StatsStorage& storage, const std::filesystem::path& path,
                       std::string_view title) {
  constexpr std::string_view kWhat = "an HTML report";
  checkOutputPath(path, kWhat);
  const std::string html = statsDocumentHtml(storage.snapshot(), title);
  writeFileAtomically(path, std::as_bytes(std::span(html.data(), html.size())), kWhat);
}

}  // namespace dl4cpp
