#include <dl4cpp/nn/listeners/HtmlReport.h>
#include <dl4cpp/nn/listeners/StatsCharts.h>
#include <dl4cpp/nn/util/AtomicFile.h>
#include <dl4cpp/nn/util/OutputPath.h>

#include <cstddef>
#include <span>
#include <string>

namespace dl4cpp {

void HtmlReport::write(const StatsStorage& storage, const std::filesystem::path& path,
                       std::string_view title) {
  constexpr std::string_view kWhat = "an HTML report";
  checkOutputPath(path, kWhat);
  const std::string html = statsDocumentHtml(storage.snapshot(), title);
  writeFileAtomically(path, std::as_bytes(std::span(html.data(), html.size())), kWhat);
}

}  // namespace dl4cpp
