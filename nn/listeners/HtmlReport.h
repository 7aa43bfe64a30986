#pragma once
// HtmlReport: a training run's charts (StatsCharts.h) as one self-contained HTML file: inline SVG
// and an inline stylesheet, no script, font, image or other file, so it can be archived, mailed or
// opened offline. Write it at the end of training (the samples' --report does), or at any point:
// it shows what the storage holds then.
//
//   dl4cpp::HtmlReport::write(*storage, "training.html");
#include <filesystem>
#include <string_view>

#include "nn/listeners/StatsStorage.h"

namespace dl4cpp {

class HtmlReport {
 public:
  static constexpr std::string_view kDefaultTitle = "dl4cpp training report";

  // Writes atomically (writeFileAtomically: a reader sees the old file or the whole new one),
  // under the output-path rule (nn/core/OutputPath.h: links written through, a target that is
  // not a regular file refused with OutputPathError before the report is drawn); IoError naming
  // the file and the reason when it cannot be written.
  static void write(const StatsStorage& storage, const std::filesystem::path& path,
                    std::string_view title = kDefaultTitle);
};

}  // namespace dl4cpp
