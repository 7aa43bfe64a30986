#include "ui/TrainingPage.h"

#include "nn/listeners/StatsCharts.h"

namespace dl4cpp {

namespace {

constexpr const char* kPollingScript = R"js((function () {
  var live = document.getElementById('live');
  var status = document.getElementById('status');
  var polls = 0, shown = '';
  function poll() {
    fetch('charts', {cache: 'no-store'})
      .then(function (response) {
        if (!response.ok) throw new Error('HTTP ' + response.status);
        return response.text();
      })
      .then(function (html) {
        if (html !== shown) { live.innerHTML = html; shown = html; }
        polls += 1;
        live.setAttribute('data-polls', String(polls));
        status.textContent = 'Live: updated ' + new Date().toLocaleTimeString() + '.';
      })
      .catch(function (error) {
        status.textContent = 'Not updating: the training process does not answer (' +
                             error.message + ').';
      })
      .then(function () { setTimeout(poll, 1000); });
  }
  poll();
})();)js";

}  // namespace

std::string trainingPageHtml(const StatsSnapshot& stats) {
  return statsDocumentHtml(stats, "dl4cpp training", kPollingScript);
}

}  // namespace dl4cpp
