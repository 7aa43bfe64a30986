#pragma once
// TrainingPage: the HTML document UIServer serves at "/": the charts as they are now
// (statsDocumentHtml) and an inline script that fetches /charts every second and swaps the
// charts in (sets data-polls on <main id="live"> to the number of updates, and says in
// <p id="status"> when the server stops answering).
#include <string>

#include "nn/listeners/StatsStorage.h"

namespace dl4cpp {

std::string trainingPageHtml(const StatsSnapshot& stats);

}  // namespace dl4cpp
