#pragma once
// Checks on top of RawHttp.h that the servers' tests share (doctest assertions, so apart from
// RawHttp.h, which the server request fuzz target includes too).
#include <doctest/doctest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>

#include "ui/http/RawHttp.h"

namespace testutil {

// The one answer to `request`, sent on a fresh connection to `port`; the server must close the
// connection after it when it is an error (within `closeTimeout`).
inline RawAnswer answerOnFreshConnection(int port, const std::string& request,
                                         std::chrono::milliseconds answerTimeout,
                                         std::chrono::milliseconds closeTimeout) {
  RawConnection connection(port);
  connection.send(request);
  REQUIRE(connection.readAnswers(1, answerTimeout));
  const auto answers = parseAnswers(connection.received(), connection.closedByServer());
  REQUIRE(answers.size() == 1);
  if (answers[0].status >= 400) CHECK(connection.readUntilClosed(closeTimeout));
  return answers[0];
}

// The reason of an error answer, which must be a JSON object {"error": "..."} (nlohmann's parser
// also checks the text is valid UTF-8).
inline std::string errorReasonOf(const RawAnswer& answer) {
  const auto json = nlohmann::json::parse(answer.body);
  REQUIRE(json.is_object());
  REQUIRE(json["error"].is_string());
  return json["error"].get<std::string>();
}

}  // namespace testutil
