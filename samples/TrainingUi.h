#pragma once
// --ui-port, --ui-linger and --report for the training samples: a StatsListener records the run;
// the live training page (UIServer) is served while it trains; the test accuracy after each
// epoch is recorded as a validation point; the HTML report is written at the end.
#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include "SampleSupport.h"
#include "iterators/DataSetIterator.h"
#include "nn/api/Model.h"
#include "nn/eval/Evaluation.h"
#include "nn/listeners/HtmlReport.h"
#include "nn/listeners/StatsListener.h"
#include "nn/listeners/StatsStorage.h"
#include "ui/UIServer.h"

namespace samples {

// `flags` with the training page's flags added.
inline std::map<std::string, std::string> withTrainingUiFlags(
    std::map<std::string, std::string> flags) {
  flags.emplace("ui-port",
                "serve the live training page on 127.0.0.1:N while training, 0 = any free port "
                "(default: no page)");
  flags.emplace("ui-linger", "with --ui-port: keep serving N seconds after training (default 0)");
  flags.emplace("report", "write an HTML report of the run (inline SVG charts) to this file");
  return flags;
}

class TrainingUi {
 public:
  explicit TrainingUi(const SampleOptions& options)
      : reportPath_(options.getString("report", "")),
        lingerSeconds_(options.getInt("ui-linger", 0)) {
    const long port = options.getInt("ui-port", -1);
    if (port < -1 || port > 65535)
      throw std::invalid_argument("--ui-port must be in 0..65535, got " + std::to_string(port));
    if (lingerSeconds_ < 0) throw std::invalid_argument("--ui-linger must be >= 0");
    if (port < 0 && reportPath_.empty()) return;
    storage_ = std::make_shared<dl4cpp::StatsStorage>();
    listener_ = std::make_shared<dl4cpp::StatsListener>(storage_);
    if (port >= 0) {
      server_.emplace(storage_, static_cast<int>(port));
      std::cout << "training page: " << server_->url() << std::endl;
    }
  }

  bool enabled() const { return storage_ != nullptr; }
  // The listener to add to the model or wrapper (null when neither flag was given).
  std::shared_ptr<dl4cpp::TrainingListener> listener() const { return listener_; }

  // After an epoch, with the page or the report on: evaluates on `test` and records the accuracy
  // as the run's validation point.
  void afterEpoch(dl4cpp::Model& model, dl4cpp::DataSetIterator& test) {
    if (!enabled()) return;
    lastEvaluation_ = model.evaluate(test);
    storage_->addValidation(model.getIterationCount(), model.getEpochCount() - 1,
                            lastEvaluation_->accuracy());
  }
  // The trained model's evaluation on `test`: the one afterEpoch() took last, else a new one.
  dl4cpp::Evaluation evaluation(dl4cpp::Model& model, dl4cpp::DataSetIterator& test) {
    return lastEvaluation_ ? *lastEvaluation_ : model.evaluate(test);
  }

  // Writes the report, then keeps the page up for --ui-linger seconds.
  void finish() {
    if (!reportPath_.empty()) {
      dl4cpp::HtmlReport::write(*storage_, reportPath_);
      std::cout << "report: " << reportPath_ << std::endl;
    }
    if (server_ && lingerSeconds_ > 0) {
      std::cout << fmt::format("training done; serving {} for {} s more", server_->url(),
                               lingerSeconds_)
                << std::endl;
      std::this_thread::sleep_for(std::chrono::seconds(lingerSeconds_));
    }
  }

 private:
  std::string reportPath_;
  long lingerSeconds_;
  std::shared_ptr<dl4cpp::StatsStorage> storage_;
  std::shared_ptr<dl4cpp::StatsListener> listener_;
  std::optional<dl4cpp::UIServer> server_;
  std::optional<dl4cpp::Evaluation> lastEvaluation_;
};

}  // namespace samples
