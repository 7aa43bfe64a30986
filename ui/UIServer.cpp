#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/listeners/StatsCharts.h>
#include <dl4cpp/ui/StatsJson.h>
#include <dl4cpp/ui/TrainingPage.h>
#include <dl4cpp/ui/UIServer.h>
#include <fmt/format.h>
#include <httplib.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>
#include <utility>

namespace dl4cpp {

namespace {

// Two threads answer requests (a page and a poll at a time is the expected load); a kept-alive
// connection idles at most a second, so stop() never waits long for one.
constexpr size_t kServerThreads = 2;
constexpr time_t kKeepAliveSeconds = 1;

}  // namespace

struct UIServer::Impl {
  std::shared_ptr<const StatsStorage> storage;
  std::string host;
  int port = 0;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> listenReturned{false};
};

UIServer::UIServer(std::shared_ptr<const StatsStorage> storage, int port, std::string host)
    : impl_(std::make_unique<Impl>()) {
  if (!storage) throw ConfigError("UIServer: the storage is null");
  if (port < 0 || port > 65535)
    throw ConfigError(
        fmt::format("UIServer: port must be in 0..65535 (0: any free port), got {}", port));
  Impl& impl = *impl_;
  impl.storage = std::move(storage);
  impl.host = std::move(host);

  httplib::Server& server = impl.server;
  server.new_task_queue = [] { return new httplib::ThreadPool(kServerThreads); };
  server.set_keep_alive_timeout(kKeepAliveSeconds);
  // cpp-httplib's default sets SO_REUSEPORT, with which a second server binds a port already
  // serving and the kernel splits the connections between the two: a second training run started
  // with the same --ui-port would show either run's page at random. SO_REUSEADDR alone still lets
  // a restarted run take its port back from connections in TIME_WAIT.
  server.set_socket_options([](socket_t socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  const StatsStorage* stats = impl.storage.get();
  const auto answer = [](httplib::Response& response, const std::string& body, const char* type) {
    response.set_header("Cache-Control", "no-store");
    response.set_content(body, type);
  };
  server.Get("/", [stats, answer](const httplib::Request&, httplib::Response& response) {
    answer(response, trainingPageHtml(stats->snapshot()), "text/html; charset=utf-8");
  });
  server.Get("/charts", [stats, answer](const httplib::Request&, httplib::Response& response) {
    answer(response, statsBodyHtml(stats->snapshot()), "text/html; charset=utf-8");
  });
  server.Get("/stats.json", [stats, answer](const httplib::Request&, httplib::Response& response) {
    answer(response, statsJson(stats->snapshot()), "application/json");
  });
  server.set_exception_handler(
      [](const httplib::Request&, httplib::Response& response, std::exception_ptr error) {
        std::string what = "unknown error";
        try {
          std::rethrow_exception(std::move(error));
        } catch (const std::exception& e) {
          what = e.what();
        } catch (...) {
        }
        response.status = 500;
        response.set_content("UIServer: " + what + "\n", "text/plain; charset=utf-8");
      });

  const bool bound = port == 0 ? (impl.port = server.bind_to_any_port(impl.host)) > 0
                               : server.bind_to_port(impl.host, impl.port = port);
  if (!bound)
    throw IoError(fmt::format(
        "UIServer: cannot listen on {}:{} (the port is taken or needs privileges, or the host is "
        "no address of this machine)",
        impl.host, port));
  impl.thread = std::thread([&impl] {
    impl.server.listen_after_bind();
    impl.listenReturned = true;
  });
  // cpp-httplib's stop() only interrupts a server whose loop has started: wait for it, so that a
  // stop() right after construction cannot be lost (and leave the thread listening forever).
  while (!server.is_running() && !impl.listenReturned)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

UIServer::~UIServer() { stop(); }

int UIServer::port() const { return impl_->port; }

const std::string& UIServer::host() const { return impl_->host; }

std::string UIServer::url() const {
  // An IPv6 address goes in brackets (RFC 3986).
  const bool ipv6 = impl_->host.find(':') != std::string::npos;
  return ipv6 ? fmt::format("http://[{}]:{}/", impl_->host, impl_->port)
              : fmt::format("http://{}:{}/", impl_->host, impl_->port);
}

void UIServer::stop() {
  if (!impl_->thread.joinable()) return;
  impl_->server.stop();
  impl_->thread.join();
}

}  // namespace dl4cpp
