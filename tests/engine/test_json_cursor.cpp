// The streaming JSON reader (engine/io/json_cursor.hpp) against nlohmann-json as the oracle: a
// document walked with the cursor is the document nlohmann parses, text nlohmann refuses the
// cursor refuses, and tokens that straddle its 1 MiB buffer read as well as any other.
#include <gtest/gtest.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/io/json_cursor.hpp"

namespace clustersim::engine {
namespace {

using nlohmann::json;
using Type = JsonCursor::Type;

json walk(JsonCursor& c) {
  switch (c.peek()) {
    case Type::object: {
      json o = json::object();
      c.begin_object();
      while (const auto key = c.next_key()) {
        const std::string k(*key);
        o[k] = walk(c);
      }
      return o;
    }
    case Type::array: {
      json a = json::array();
      c.begin_array();
      while (c.next_element())
        a.push_back(walk(c));
      return a;
    }
    case Type::string:
      return std::string(c.string());
    case Type::number: {
      const JsonCursor::Number n = c.number();
      if (n.is_count) return n.count;
      return n.value;
    }
    case Type::boolean:
      return c.boolean();
    case Type::null:
      c.null();
      return nullptr;
  }
  return nullptr;
}

json read(const std::string& text) {
  std::istringstream in(text);
  JsonCursor c(in);
  json j = walk(c);
  c.end();
  return j;
}

// What the cursor says about text it refuses, or "" when it reads it.
std::string error_of(const std::string& text) {
  try {
    read(text);
  } catch (const JsonSyntaxError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonCursor, ReadsWhatNlohmannReads) {
  const std::vector<std::string> texts = {
      "{}",
      "[]",
      " \t\r\n{ \"a\" : [ 1 , 2 , { \"b\" : null } ] , \"c\" : true , \"d\" : false } \n",
      R"([0, -0, 1.5e3, -2E-2, 3e+2, 0.25, 1e-400, 18446744073709551615, 18446744073709551616,
          123456789012345678901234, 9007199254740993, -7])",
      R"(["", "plain", "\"\\\/\b\f\n\r\t", "\u0041\u00e9\u20ac", "\ud83d\ude00", "a\u0000b"])",
      "[\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"]",  // é € 😀 as UTF-8
      "\xEF\xBB\xBF{\"bom\":1}",
      R"({"dup":1,"dup":2})",
      "[[[[[[[[[[[]]]]]]]]]]]",
      "\"top\"",
      "42",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    ASSERT_TRUE(json::accept(text));
    EXPECT_EQ(read(text), json::parse(text));
  }
}

TEST(JsonCursor, RefusesWhatNlohmannRefuses) {
  const std::vector<std::string> texts = {
      "",
      " ",
      "{",
      "[1,]",
      "{\"a\":1,}",
      "{\"a\" 1}",
      "{1:2}",
      "[01]",
      "[1.]",
      "[.5]",
      "[-]",
      "[1e]",
      "[+1]",
      "[tru]",
      "[nul]",
      "[\"abc",
      "[\"\x01\"]",
      "[\"\\u12\"]",
      "[\"\\q\"]",
      "[\"\xFF\"]",
      "[\"\xC0\xAF\"]",
      "[\"\xED\xA0\x80\"]",
      "[\"\xE2\x82\"]",
      "[1] 2",
      "[1e400]",
      "[\"\\ud800\"]",
      "[\"\\udc00\"]",
      "[\"\\ud800\\u0041\"]",
      "{\"a\":}",
      "[1 2]",
      "{,}",
      "[,1]",
      "NaN",
      "[Infinity]",
  };
  for (const std::string& text : texts) {
    SCOPED_TRACE(text);
    EXPECT_FALSE(json::accept(text));
    EXPECT_NE(error_of(text), "");
  }
}

// Times in a trace are decimals (microseconds with six places), read on a fast path: each must be
// the double strtod makes of the same text.
TEST(JsonCursor, DecimalsRoundAsStrtodDoes) {
  std::mt19937_64 rng(3);
  std::string text = "[";
  std::vector<std::string> numbers = {"0.1",
                                      "0.000001",
                                      "9007199254740.993",
                                      "999999999.999999",
                                      "123456789012345.6",
                                      "0.30000000000000004",
                                      "1.0",
                                      "10.25"};
  for (int k = 0; k < 20'000; ++k) {
    const std::string whole = std::to_string(rng() % 10'000'000'000ull);
    std::string fraction = std::to_string(rng() % 1'000'000);
    fraction.insert(0, 6 - fraction.size(), '0');
    numbers.push_back(whole + "." + fraction);
  }
  for (const std::string& n : numbers)
    text += n + ",";
  text.back() = ']';
  const json read_back = read(text);
  for (std::size_t k = 0; k < numbers.size(); ++k)
    ASSERT_EQ(read_back[k].get<double>(), std::strtod(numbers[k].c_str(), nullptr)) << numbers[k];
}

TEST(JsonCursor, SkipsAValueWithoutKeepingIt) {
  std::istringstream in(R"({"skip":[1,{"x":"y","z":[[],{}]},"s"],"keep":3,"also":{"a":[true]}})");
  JsonCursor c(in);
  c.begin_object();
  std::vector<std::string> keys;
  double kept = 0;
  while (const auto key = c.next_key()) {
    keys.emplace_back(*key);
    if (*key == "keep")
      kept = c.number().value;
    else
      c.skip();
  }
  c.end();
  EXPECT_EQ(keys, (std::vector<std::string>{"skip", "keep", "also"}));
  EXPECT_EQ(kept, 3);
}

// Strings with escapes and multi-byte characters placed across the 1 MiB buffer's end at every
// offset, and one string three times the buffer.
TEST(JsonCursor, TokensAcrossTheBufferReadWhole) {
  constexpr std::size_t kBuffer = std::size_t{1} << 20;
  for (std::size_t shift = 0; shift < 12; ++shift) {
    SCOPED_TRACE(shift);
    const std::string pad(kBuffer - 8 + shift, 'p');
    const std::string text =
        "[\"" + pad + "\",\"a\\u00e9\\ud83d\\ude00\xE2\x82\xAC\\n\",12345.678e-2]";
    EXPECT_EQ(read(text), json::parse(text));
  }
  const std::string big(3 * kBuffer, 'x');
  EXPECT_EQ(read("{\"big\":\"" + big + "\"}")["big"], big);
}

TEST(JsonCursor, SaysWhereTheTextGoesWrong) {
  const std::string message = error_of("{\n  \"a\": 1,\n  \"b\": tru\n}");
  EXPECT_NE(message.find("line 3, column 8"), std::string::npos) << message;
  EXPECT_NE(error_of("[\"" + std::string(17 << 20, 'x') + "\"]").find("longer than 16 MiB"),
            std::string::npos);
  // skip() nests without recursion, and stops at its limit.
  std::istringstream deep(std::string(20'000, '[') + std::string(20'000, ']'));
  JsonCursor c(deep);
  try {
    c.skip();
    ADD_FAILURE() << "20,000 nested arrays were read";
  } catch (const JsonSyntaxError& e) {
    EXPECT_NE(std::string(e.what()).find("nested too deep"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace clustersim::engine
