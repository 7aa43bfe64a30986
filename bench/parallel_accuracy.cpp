// Test accuracy against training time on real MNIST, LeNet: a single model on all cores against
// ParallelWrapper (one thread per worker) as DL4J's tutorial sets it up (128 examples per worker,
// averaging every 3), and with the recipe of docs/parallel.md (the global minibatch of 128 split
// over the workers, the learning rate scaled by the worker count with a gradual warm-up, averaging
// every iteration during a warm-up, then every 3). The test set is evaluated every --eval-every
// training examples; the clock stops while it is, so the times are training time only. Each
// configuration runs --repeats times, interleaved; accuracies are the same every repeat (the runs
// are deterministic), times are medians.
//   bench_parallel_accuracy [--epochs 4] [--eval-every 7680] [--repeats 3] [--target 0.985]
//                           [--json results.json] [--svg curves.svg]
//                           [--configs single,tutorial,recipe]
//                           [--recipe-batch 64] [--averaging-warmup 100] [--scaling linear]
//                           [--scaling-warmup 100]
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "LenetConfiguration.h"
#include "Median.h"
#include "SampleSupport.h"
#include "nn/listeners/SvgLineChart.h"

using bench::median;

using namespace dl4cpp;
using namespace dl4cpp::parallel;

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  std::string name;
  int workers = 0;  // 0: a single model on all cores
  int batch = 128;  // per worker
  int frequency = 1;
  int64_t averagingWarmup = 0;
  LearningRateScaling scaling = LearningRateScaling::NONE;
  int64_t scalingWarmup = 0;
};

struct Point {
  int64_t examples = 0;  // training examples seen
  double seconds = 0;    // training time
  double accuracy = 0;
};

// Evaluates the model every `every` training examples, with the clock stopped.
class AccuracyTrace : public TrainingListener {
 public:
  AccuracyTrace(DataSetIterator& test, int64_t every) : test_(test), every_(every) {}
  void start() { start_ = Clock::now(); }
  void iterationDone(const Model& model, const IterationInfo& info) override {
    seen_ += info.examples;
    if (seen_ < next_) return;
    next_ += every_;
    evaluate(model);
  }
  // The last point, when the run did not end on one.
  void finish(const MultiLayerNetwork& model) {
    if (points_.empty() || points_.back().examples != seen_) evaluate(model);
  }
  const std::vector<Point>& points() const { return points_; }

 private:
  void evaluate(const Model& model) {
    const auto paused = Clock::now();
    test_.reset();
    // evaluate() is not const: it sizes the network's buffers; evaluating changes no parameter.
    const double accuracy = const_cast<Model&>(model).evaluate(test_).accuracy();
    const double trained =
        std::chrono::duration<double>(paused - start_).count() - evaluationSeconds_;
    points_.push_back({seen_, trained, accuracy});
    evaluationSeconds_ += std::chrono::duration<double>(Clock::now() - paused).count();
  }

  DataSetIterator& test_;
  int64_t every_, next_ = every_ == 0 ? 0 : every_, seen_ = 0;
  Clock::time_point start_;
  double evaluationSeconds_ = 0;
  std::vector<Point> points_;
};

std::vector<Point> trainAndTrace(const Config& c, int epochs, int64_t evalEvery,
                                 const std::string& dir) {
  MnistDataSetIterator train(c.batch, 0, false, true, true, 123, dir);
  MnistDataSetIterator test(1000, 0, false, false, false, 123, dir);
  MultiLayerNetwork model(samples::lenetConfiguration());
  model.init();
  auto trace = std::make_shared<AccuracyTrace>(test, evalEvery);
  if (c.workers == 0) {
    model.setListeners({trace});
    trace->start();
    model.fit(train, epochs);
  } else {
    auto wrapper = ParallelWrapper::Builder(model)
                       .devices({Device::cpu()})
                       .workers(c.workers)
                       .threadsPerWorker(1)
                       .prefetchBuffer(24)
                       .averagingFrequency(c.frequency)
                       .averagingWarmup(c.averagingWarmup)
                       .learningRateScaling(c.scaling, c.scalingWarmup)
                       .setListeners({trace})
                       .build();
    trace->start();
    wrapper.fit(train, epochs);
  }
  trace->finish(model);
  return trace->points();
}

std::optional<double> timeTo(const std::vector<Point>& points, double target) {
  for (const Point& p : points)
    if (p.accuracy >= target) return p.seconds;
  return std::nullopt;
}

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"epochs", "epochs per run (default 4)"},
       {"eval-every", "training examples between evaluations (default 7680)"},
       {"repeats", "runs per configuration, interleaved (default 3)"},
       {"target", "test accuracy to time (default 0.985)"},
       {"json", "also write the results as JSON to this file"},
       {"svg", "also draw test error against training time to this SVG file"},
       {"recipe-batch", "the recipe's minibatch per worker (default 64: 128 in all)"},
       {"averaging-warmup", "the recipe's averaging warm-up, iterations (default 100)"},
       {"scaling", "the recipe's learning-rate scaling: linear, sqrt or none (default linear)"},
       {"scaling-warmup", "the recipe's scaling warm-up, iterations (default 100)"},
       {"configs", "which to run, comma-separated: single,tutorial,recipe (default all)"},
       {"data-dir", "MNIST directory (default: ~/.dl4cpp/data/MNIST)"}});
  const int epochs = static_cast<int>(options.getInt("epochs", 4));
  const int64_t evalEvery = options.getInt("eval-every", 7680);
  const int repeats = static_cast<int>(options.getInt("repeats", 3));
  const double target = options.getDouble("target", 0.985);
  const std::string dir = options.getString("data-dir", "");
  if (epochs < 1 || evalEvery < 1 || repeats < 1)
    throw std::invalid_argument("--epochs, --eval-every and --repeats must be >= 1");

  const std::vector<std::pair<std::string, Config>> known{
      {"single", {"single model, 2 threads", 0, 128}},
      {"tutorial", {"2 workers, tutorial", 2, 128, 3}},
      {"recipe",
       {"2 workers, recipe", 2, static_cast<int>(options.getInt("recipe-batch", 64)), 3,
        options.getInt("averaging-warmup", 100),
        samples::learningRateScalingFromOption(options.getString("scaling", "linear")),
        options.getInt("scaling-warmup", 100)}}};
  const std::string wanted = "," + options.getString("configs", "single,tutorial,recipe") + ",";
  std::vector<Config> configs;
  for (const auto& [key, config] : known)
    if (wanted.find("," + key + ",") != std::string::npos) configs.push_back(config);
  if (configs.empty())
    throw std::invalid_argument("--configs names none of single, tutorial, recipe");
  std::cout << samples::cpuIsaLine()
            << fmt::format("LeNet on MNIST, {} epochs, evaluated every {} examples, {} repeats\n",
                           epochs, evalEvery, repeats);

  std::vector<std::vector<std::vector<Point>>> traces(configs.size());
  for (int r = 0; r < repeats; ++r)
    for (size_t c = 0; c < configs.size(); ++c) {
      traces[c].push_back(trainAndTrace(configs[c], epochs, evalEvery, dir));
      std::cerr << fmt::format("repeat {} {}: {:.2f}% after {:.1f} s\n", r + 1, configs[c].name,
                               100 * traces[c].back().back().accuracy,
                               traces[c].back().back().seconds);
    }

  nlohmann::json out = nlohmann::json::array();
  // Test error on a log axis, so the last points, where the configurations differ, are not flat.
  LineChart chart{"test-error", "LeNet on MNIST: test error (%) against training time",
                  "training seconds (median of the repeats)", ChartScale::Log10};
  std::cout << fmt::format("{:<26} {:>8} {:>10} {:>12} {:>14}\n", "configuration", "epochs",
                           "accuracy", "train s", fmt::format("s to {:.1f}%", 100 * target));
  for (size_t c = 0; c < configs.size(); ++c) {
    const auto& first = traces[c].front();
    std::vector<double> total, toTarget;
    bool reached = true;
    for (const auto& t : traces[c]) {
      total.push_back(t.back().seconds);
      const auto s = timeTo(t, target);
      reached = reached && s.has_value();
      if (s) toTarget.push_back(*s);
    }
    std::cout << fmt::format("{:<26} {:>8} {:>9.2f}% {:>12.1f} {:>14}\n", configs[c].name, epochs,
                             100 * first.back().accuracy, median(total),
                             reached ? fmt::format("{:.1f}", median(toTarget)) : "not reached");
    nlohmann::json curve = nlohmann::json::array();
    std::vector<ChartPoint> points;
    for (size_t i = 0; i < first.size(); ++i) {
      std::vector<double> seconds;
      for (const auto& t : traces[c]) seconds.push_back(t[i].seconds);
      curve.push_back({{"examples", first[i].examples},
                       {"seconds", median(seconds)},
                       {"accuracy", first[i].accuracy}});
      points.push_back({median(seconds), 100 * (1 - first[i].accuracy)});
    }
    chart.series.push_back({fmt::format("config-{}", c), configs[c].name, std::move(points)});
    out.push_back(
        {{"name", configs[c].name},
         {"workers", configs[c].workers},
         {"batchPerWorker", configs[c].batch},
         {"averagingFrequency", configs[c].frequency},
         {"averagingWarmup", configs[c].averagingWarmup},
         {"scaling", learningRateScalingName(configs[c].scaling)},
         {"scalingWarmup", configs[c].scalingWarmup},
         {"secondsToTarget", reached ? nlohmann::json(median(toTarget)) : nlohmann::json()},
         {"curve", curve}});
  }
  const std::string json = options.getString("json", "");
  if (!json.empty())
    samples::writeTextFile(
        json,
        nlohmann::json{{"target", target}, {"epochs", epochs}, {"configurations", out}}.dump(1) +
            "\n",
        samples::kOutputFileFlags.at("json"));
  const std::string svg = options.getString("svg", "");
  if (!svg.empty())
    samples::writeTextFile(svg, renderSvg(chart) + "\n", samples::kOutputFileFlags.at("svg"));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return samples::runSample("bench_parallel_accuracy", [&] { return run(argc, argv); });
}
