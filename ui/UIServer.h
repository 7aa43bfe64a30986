#pragma once
// UIServer: the live training page (DL4J's UIServer), served over HTTP while training runs.
//
//   auto storage = std::make_shared<dl4cpp::StatsStorage>();
//   model.setListeners({std::make_shared<dl4cpp::StatsListener>(storage)});
//   dl4cpp::UIServer server(storage, 9000);   // http://127.0.0.1:9000/
//   model.fit(train, 5);
//
// It lives in its own library, dl4cpp_ui (CMake: dl4cpp::dl4cpp_ui, find_package(dl4cpp COMPONENTS
// ui)), built on cpp-httplib, so that the core library has no HTTP dependency.
//
// Routes (GET and HEAD):
//   /            the page: the charts (StatsCharts.h), an inline stylesheet and an inline script
//                that fetches /charts every second and swaps it in; no external script, font or
//                file
//   /charts      the summary line and charts (statsBodyHtml) at this moment
//   /stats.json  every record of the storage (StatsJson.h)
// Other paths answer 404, other methods 405 and a request with a body 413, without reading the
// body; every error answer is a JSON object {"error": reason} and closes the connection. Each
// request reads one snapshot of the storage, so a page never mixes two moments of the run.
//
// Binds 127.0.0.1 by default: the page shows the run to anyone who can connect. Pass "0.0.0.0"
// (or an address of this machine) to serve other machines.
//
// What a client may cost (defaultLimits(), docs/security.md): the page is served by the same
// bounded connection layer as mnist_inference_server, so that no client (idle, trickling,
// flooding connections or sending a body of any size) can hold the training's file descriptors,
// memory or time: at most 64 connections are open (a new one replaces the longest idle), a
// request must arrive within 5 s, and no body is read.
//
// Threads: the server answers on threads of its own (a poller and three HTTP threads), beside
// fit(); the destructor stops it.
#include <memory>
#include <string>

#include "nn/listeners/StatsStorage.h"
#include "ui/ServerLimits.h"

namespace dl4cpp {

class UIServer {
 public:
  static constexpr const char* kDefaultHost = "127.0.0.1";

  // Listening when the constructor returns. port 0: a free port the system picks (port() says
  // which). ConfigError for a null storage, a port outside 0..65535 or limits that cannot work
  // (no thread, no connection, a timeout <= 0); IoError when the address cannot be bound (the port
  // is taken or privileged, or the host is no address of this machine). `limits`: the page reads
  // no request body, so their maxBodyBytes and maxFramingBytes are not used.
  explicit UIServer(std::shared_ptr<const StatsStorage> storage, int port = 0,
                    std::string host = kDefaultHost, const ServerLimits& limits = defaultLimits());
  ~UIServer();  // stop()
  UIServer(const UIServer&) = delete;
  UIServer& operator=(const UIServer&) = delete;

  // The page's bounds: 64 connections, 16 KiB and 100 lines of request head, a request whole
  // within 5 s, idle connections closed after 5 s, answers taken within 5 s, one thread for the
  // requests with a body (all refused at once) and two for the others.
  static ServerLimits defaultLimits();

  int port() const;
  const std::string& host() const;
  // "http://<host>:<port>/"
  std::string url() const;
  // Stops listening, ends open connections and joins the server's threads. Idempotent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dl4cpp
