#include "ui/UIServer.h"

#include <fmt/format.h>
#include <httplib.h>

#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "nn/core/Error.h"
#include "nn/listeners/StatsCharts.h"
#include "ui/StatsJson.h"
#include "ui/TrainingPage.h"
#include "ui/http/BoundedHttpServer.h"
#include "ui/http/ErrorAnswer.h"

namespace dl4cpp {

namespace {

void answerError(httplib::Response& response, int status, std::string_view reason) {
  response.status = status;
  response.set_content(http::errorJson(reason), "application/json");
}

// Why the page refuses a request before routing it, or nothing. Checked before any byte of a body
// is read, so that a refused body is never read.
std::optional<std::pair<int, std::string>> refusal(const httplib::Request& request) {
  if (request.method != "GET" && request.method != "HEAD")
    return std::pair{405, "the training page answers GET and HEAD only"};
  const std::string length = request.get_header_value("Content-Length");
  if (request.has_header("Transfer-Encoding") || (!length.empty() && length != "0"))
    return std::pair{413, "the training page reads no request body"};
  return std::nullopt;
}

// httplib sets the Content-Length of the answers of handlers, but not of those it writes when it
// refuses a request itself (without one, the client reads the body up to the connection's close).
void setContentLength(httplib::Response& response) {
  response.set_header("Content-Length", std::to_string(response.body.size()));
}

}  // namespace

struct UIServer::Impl {
  explicit Impl(const ServerLimits& limits) : server(limits) {}

  std::shared_ptr<const StatsStorage> storage;
  std::string host;
  int port = 0;
  http::BoundedHttpServer server;
  std::thread thread;
};

ServerLimits UIServer::defaultLimits() {
  ServerLimits limits;
  limits.maxHeadBytes = size_t{16} * 1024;
  limits.maxHeaderLines = 100;
  limits.maxBodyBytes = 0;
  limits.maxFramingBytes = 0;
  // The page's script asks for /charts every second: its connection is reused, never idle 5 s.
  limits.idleTimeout = std::chrono::seconds(5);
  limits.requestTimeout = std::chrono::seconds(5);
  limits.writeTimeout = std::chrono::seconds(5);
  // Far below any RLIMIT_NOFILE (1024 by default): the page can never take the descriptors the
  // training needs to read data and save the model. A browser opens at most 6 per page.
  limits.maxConnections = 64;
  limits.httpThreads = 1;  // requests with a body: refused before it is read
  limits.bodilessHttpThreads = 2;
  return limits;
}

UIServer::UIServer(std::shared_ptr<const StatsStorage> storage, int port, std::string host,
                   const ServerLimits& limits) {
  if (!storage) throw ConfigError("UIServer: the storage is null");
  if (port < 0 || port > 65535)
    throw ConfigError(
        fmt::format("UIServer: port must be in 0..65535 (0: any free port), got {}", port));
  impl_ = std::make_unique<Impl>(limits);
  Impl& impl = *impl_;
  impl.storage = std::move(storage);
  impl.host = std::move(host);

  http::BoundedHttpServer& server = impl.server;
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

  server.set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    const auto refused = refusal(request);
    if (!refused) return httplib::Server::HandlerResponse::Unhandled;
    if (refused->first == 405) response.set_header("Allow", "GET, HEAD");
    answerError(response, refused->first, refused->second);
    return httplib::Server::HandlerResponse::Handled;
  });
  // "Expect: 100-continue" gets the refusal at once instead of an invitation to send the body.
  server.set_expect_100_continue_handler(
      [](const httplib::Request& request, httplib::Response& response) {
        const auto refused = refusal(request);
        if (!refused) return 100;
        if (refused->first == 405) response.set_header("Allow", "GET, HEAD");
        answerError(response, refused->first, refused->second);
        setContentLength(response);  // httplib writes this answer as it writes its own refusals
        return refused->first;
      });
  // Unknown paths and httplib's own refusals (malformed request line, ...) get a JSON reason too.
  server.set_error_handler(httplib::Server::HandlerWithResponse(
      [](const httplib::Request&, httplib::Response& response) {
        if (response.body.empty()) {
          answerError(response, response.status,
                      response.status == 404
                          ? "no such page; the training page serves /, /charts and /stats.json"
                          : fmt::format("request refused ({})", response.status));
          setContentLength(response);
        }
        return httplib::Server::HandlerResponse::Unhandled;
      }));
  // After any error answer the connection closes: whatever of the request was not read (a refused
  // body) must not be taken for the next request.
  server.set_post_routing_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.status < 400 || response.get_header_value("Connection") == "close") return;
    response.headers.erase("Keep-Alive");
    response.set_header("Connection", "close");
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
        answerError(response, 500, "UIServer: " + what);
      });

  impl.port = server.bind(impl.host, port);
  if (impl.port <= 0)
    throw IoError(fmt::format(
        "UIServer: cannot listen on {}:{} (the port is taken or needs privileges, or the host is "
        "no address of this machine)",
        impl.host, port));
  // stop() before serve() has started makes serve() return at once: no start-up wait needed.
  impl.thread = std::thread([&server] { server.serve(); });
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
