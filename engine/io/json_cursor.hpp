// A strict, streaming reader of JSON (RFC 8259) for files too large to hold as a document: the
// caller walks the text value by value and skips what it does not want, and nothing is built that
// it does not ask for. Only the token being read must be in memory (a 1 MiB buffer that grows
// for a longer token, up to kMaxToken), so memory stays flat whatever the file's size.
//
// It is the Chrome trace reader's (engine/trace_reader.cpp): nlohmann-json, even through its SAX
// interface, reads such a trace at about 150 MB/s, a 1,024-GPU run's 3.8 GB in 25 s, where this
// cursor reads several times faster (docs/performance.md "Reading traces back").
//
//   JsonCursor json(in);
//   json.begin_object();
//   while (const auto key = json.next_key()) {
//     if (*key == "n" && json.peek() == JsonCursor::Type::number) n = json.number().value;
//     else json.skip();
//   }
//   json.end();
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace clustersim::engine {

// Text that is not JSON: "line 3, column 17: expected ',' or '}'".
class JsonSyntaxError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class JsonCursor {
 public:
  enum class Type : std::uint8_t { object, array, string, number, boolean, null };
  struct Number {
    double value = 0.0;
    // A non-negative integer written without fraction or exponent that fits 64 bits: `count`
    // holds it exactly.
    bool is_count = false;
    std::uint64_t count = 0;
  };
  // The longest string or number it holds; a longer one is an error, not gigabytes of memory.
  static constexpr std::size_t kMaxToken = std::size_t{16} << 20;
  // Arrays and objects nested deeper than this are an error.
  static constexpr std::size_t kMaxDepth = 10'000;

  // `buffer`: the bytes read at a time (a smaller text needs no more).
  explicit JsonCursor(std::istream& in, std::size_t buffer = std::size_t{1} << 20);

  // The type of the next value, after whitespace. JsonSyntaxError if no value starts there.
  Type peek();
  // An object: begin_object(), then next_key() before each member's value (read or skipped);
  // next_key() gives nullopt at the closing brace. The key is valid until the next call.
  void begin_object();
  std::optional<std::string_view> next_key();
  // An array: begin_array(), then next_element() before each element; false at the bracket.
  void begin_array();
  bool next_element();
  // The next value, which must be of that type. A string is valid until the next call.
  std::string_view string();
  Number number();
  bool boolean();
  void null();
  // The next value, whatever it is, checked but not kept.
  void skip();
  // Nothing but whitespace is left.
  void end();
  // Bytes read so far, for progress.
  std::uint64_t offset() const { return consumed_ + pos_; }

 private:
  [[noreturn]] void fail(std::string_view what, std::size_t at) const;
  [[noreturn]] void fail(std::string_view what) const { fail(what, pos_); }
  // Moves buf_[from, end_) to the front, reads more after it and shifts `from` and `i` with it;
  // false when the input has nothing more.
  bool more(std::size_t& from, std::size_t& i);
  // The next byte after whitespace, left at pos_; -1 at the end of the input.
  int next_char() {
    if (pos_ < end_ && !is_space(buf_[pos_])) return static_cast<unsigned char>(buf_[pos_]);
    return skip_space();
  }
  int skip_space();
  static bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  void expect(char c, std::string_view what);
  void literal(std::string_view word);
  // The index of the first byte from i that ends a string's plain text (or end_).
  std::size_t plain_run(std::size_t i) const;
  std::string_view string_slow(std::size_t begin, std::size_t i);
  std::size_t utf8(std::size_t from, std::size_t& i);
  std::uint32_t hex4(std::size_t& from, std::size_t& i);
  void open(char bracket);
  bool close_or_comma(char bracket);

  std::istream& in_;
  std::vector<char> buf_;
  std::size_t pos_ = 0;  // the next byte to read
  std::size_t end_ = 0;  // the end of the bytes in buf_
  bool eof_ = false;
  std::uint64_t consumed_ = 0;  // bytes dropped from the front of buf_
  // For messages: the line breaks skipped so far (JSON has them only between tokens), and the
  // offset where the last line began.
  std::uint64_t lines_ = 0;
  std::uint64_t line_begin_ = 0;
  std::string scratch_;        // a string with escapes, decoded
  std::string key_;            // the last key next_key() read
  std::vector<char> closers_;  // skip(): the brackets that close what it is inside
  // The containers begin_object()/begin_array() opened: their bracket, and whether a member has
  // been read (a comma comes before the next).
  std::vector<std::pair<char, bool>> open_;
};

}  // namespace clustersim::engine
