// Checks a malformed scenario's message: "FILE:LINE:COL: KEY.PATH: ..." naming the file, the line
// where the culprit is written and the key path, and saying what is allowed.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/scenario.hpp"

namespace clustersim::models {

// Parses `text` as "bad.yaml" and checks the message: `where` is "FILE:LINE" (or "--set ..."),
// then the key path, then `fragment` anywhere after it.
inline void expect_error(const std::string& text, const std::string& where, const std::string& key,
                         const std::string& fragment,
                         const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, "bad.yaml", overrides);
    ADD_FAILURE() << "accepted; expected an error at " << where << " on " << key;
  } catch (const ScenarioError& e) {
    const std::string message = e.what();
    EXPECT_TRUE(message.starts_with(where + ":")) << message;
    EXPECT_NE(message.find(": " + key + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

}  // namespace clustersim::models
