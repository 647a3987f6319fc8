#include "engine/io/json_cursor.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace clustersim::engine {

namespace {

// Bytes a string holds as they are: not '"', '\\', a control character or a byte of a UTF-8
// sequence (checked apart).
constexpr std::array<bool, 256> plain_bytes() {
  std::array<bool, 256> t{};
  for (int c = 0x20; c < 0x80; ++c)
    t[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
  return t;
}
constexpr std::array<bool, 256> kPlain = plain_bytes();

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
constexpr std::array<bool, 256> number_bytes() {
  std::array<bool, 256> t{};
  for (const char c : std::string_view("0123456789+-.eE"))
    t[static_cast<unsigned char>(c)] = true;
  return t;
}
constexpr std::array<bool, 256> kInNumber = number_bytes();

constexpr std::array<double, 16> kPow10 = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                           1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
unsigned char byte(char c) {
  return static_cast<unsigned char>(c);
}

// Whether [p, e) is a JSON number (RFC 8259 section 6).
bool is_number(const char* p, const char* e) {
  auto digits = [&] {
    const char* begin = p;
    while (p < e && is_digit(*p))
      ++p;
    return p > begin;
  };
  if (p < e && *p == '-') ++p;
  if (p < e && *p == '0') {
    ++p;
  } else if (!digits()) {
    return false;
  }
  if (p < e && *p == '.') {
    ++p;
    if (!digits()) return false;
  }
  if (p < e && (*p == 'e' || *p == 'E')) {
    ++p;
    if (p < e && (*p == '+' || *p == '-')) ++p;
    if (!digits()) return false;
  }
  return p == e;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

JsonCursor::JsonCursor(std::istream& in, std::size_t buffer)
    : in_(in), buf_(std::clamp<std::size_t>(buffer, 64, kMaxToken)) {
  // A UTF-8 byte order mark may come first, as nlohmann-json allows.
  std::size_t from = 0;
  std::size_t i = 0;
  while (end_ < 3 && more(from, i)) {
  }
  if (end_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) pos_ = 3;
}

void JsonCursor::fail(std::string_view what, std::size_t at) const {
  throw JsonSyntaxError("line " + std::to_string(lines_ + 1) + ", column " +
                        std::to_string(consumed_ + at - line_begin_ + 1) + ": " +
                        std::string(what));
}

bool JsonCursor::more(std::size_t& from, std::size_t& i) {
  if (eof_) return false;
  if (from > 0) {
    std::memmove(buf_.data(), buf_.data() + from, end_ - from);
    consumed_ += from;
    end_ -= from;
    i -= from;
    pos_ -= std::min(pos_, from);
    from = 0;
  }
  if (end_ == buf_.size()) {  // one token fills the buffer
    if (buf_.size() >= kMaxToken)
      fail("a string or number longer than " + std::to_string(kMaxToken >> 20) + " MiB", i);
    buf_.resize(buf_.size() * 2);
  }
  in_.read(buf_.data() + end_, static_cast<std::streamsize>(buf_.size() - end_));
  const auto got = static_cast<std::size_t>(in_.gcount());
  end_ += got;
  eof_ = got == 0;
  return !eof_;
}

int JsonCursor::skip_space() {
  std::size_t i = pos_;
  for (;;) {
    for (; i < end_ && is_space(buf_[i]); ++i)
      if (buf_[i] == '\n') {
        ++lines_;
        line_begin_ = consumed_ + i + 1;
      }
    pos_ = i;
    if (i < end_) return byte(buf_[i]);
    std::size_t from = i;
    if (!more(from, i)) return -1;
  }
}

JsonCursor::Type JsonCursor::peek() {
  const int c = next_char();
  switch (c) {
    case '{':
      return Type::object;
    case '[':
      return Type::array;
    case '"':
      return Type::string;
    case 't':
    case 'f':
      return Type::boolean;
    case 'n':
      return Type::null;
    case -1:
      fail("unexpected end of input; expected a value");
    default:
      if (c == '-' || is_digit(static_cast<char>(c))) return Type::number;
      fail("unexpected '" + std::string(1, static_cast<char>(c)) + "'; expected a value");
  }
}

void JsonCursor::expect(char c, std::string_view what) {
  if (next_char() != byte(c)) fail(what);
  ++pos_;
}

void JsonCursor::open(char bracket) {
  if (open_.size() >= kMaxDepth) fail("arrays and objects nested too deep");
  expect(bracket == '}' ? '{' : '[', bracket == '}' ? "expected '{'" : "expected '['");
  open_.emplace_back(bracket, false);
}

// Before a member or an element: false (and the container closed) at its closing bracket, else
// past the comma that separates it from the one before.
bool JsonCursor::close_or_comma(char bracket) {
  auto& [closing, seen] = open_.back();
  const int c = next_char();
  if (c == byte(bracket)) {
    ++pos_;
    open_.pop_back();
    return false;
  }
  if (seen) {
    if (c != ',') fail(bracket == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
    ++pos_;
  }
  seen = true;
  return true;
}

void JsonCursor::begin_object() {
  open('}');
}

std::optional<std::string_view> JsonCursor::next_key() {
  if (open_.empty() || open_.back().first != '}') fail("a key outside an object");
  if (!close_or_comma('}')) return std::nullopt;
  if (next_char() != '"') fail("expected a key (a string)");
  const std::string_view key = string();
  if (pos_ < end_ && buf_[pos_] == ':') {
    ++pos_;
    return key;
  }
  key_.assign(key);  // the search for ':' may move the buffer
  expect(':', "expected ':'");
  return key_;
}

void JsonCursor::begin_array() {
  open(']');
}

bool JsonCursor::next_element() {
  if (open_.empty() || open_.back().first != ']') fail("an element outside an array");
  return close_or_comma(']');
}

std::string_view JsonCursor::string() {
  if (next_char() != '"') fail("expected a string");
  std::size_t from = pos_ + 1;
  std::size_t i = from;
  for (;;) {
    i = plain_run(i);
    if (i == end_) {
      if (!more(from, i)) fail("unexpected end of input in a string", i);
      continue;
    }
    const unsigned char c = byte(buf_[i]);
    if (c == '"') {
      pos_ = i + 1;
      return {buf_.data() + from, i - from};
    }
    if (c == '\\') return string_slow(from, i);
    if (c < 0x20) fail("a control character in a string (write it as an escape)", i);
    i = utf8(from, i);
  }
}

std::size_t JsonCursor::plain_run(std::size_t i) const {
  const char* b = buf_.data();
#ifdef __SSE2__
  // 16 bytes at a time: '"', '\\', a control character or a non-ASCII byte (negative as a signed
  // char, so below 0x20 too) ends the run.
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i space = _mm_set1_epi8(0x20);
  for (; i + 16 <= end_; i += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
    const __m128i stop =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmplt_epi8(v, space));
    if (const int mask = _mm_movemask_epi8(stop); mask != 0)
      return i + static_cast<std::size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  while (i < end_ && kPlain[byte(b[i])])
    ++i;
  return i;
}

// The rest of a string from its first escape at buf_[i]; [from, i) is plain text.
std::string_view JsonCursor::string_slow(std::size_t from, std::size_t i) {
  scratch_.assign(buf_.data() + from, i - from);
  for (;;) {
    from = i;
    i = plain_run(i);
    scratch_.append(buf_.data() + from, i - from);
    if (i == end_) {
      from = i;
      if (!more(from, i)) fail("unexpected end of input in a string", i);
      continue;
    }
    const unsigned char c = byte(buf_[i]);
    from = i;
    if (c == '"') {
      pos_ = i + 1;
      return scratch_;
    }
    if (c < 0x20) fail("a control character in a string (write it as an escape)", i);
    if (c >= 0x80) {
      i = utf8(from, i);
      scratch_.append(buf_.data() + from, i - from);
      continue;
    }
    while (end_ - i < 2)
      if (!more(from, i)) fail("unexpected end of input in a string", i);
    const char e = buf_[i + 1];
    i += 2;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        scratch_ += e;
        break;
      case 'b':
        scratch_ += '\b';
        break;
      case 'f':
        scratch_ += '\f';
        break;
      case 'n':
        scratch_ += '\n';
        break;
      case 'r':
        scratch_ += '\r';
        break;
      case 't':
        scratch_ += '\t';
        break;
      case 'u': {
        std::uint32_t cp = hex4(from, i);
        if (cp >= 0xDC00 && cp <= 0xDFFF)
          fail("a low surrogate \\u escape without its high one", i);
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          while (end_ - i < 2)
            if (!more(from, i)) fail("unexpected end of input in a string", i);
          if (buf_[i] != '\\' || buf_[i + 1] != 'u')
            fail("a high surrogate \\u escape without its low one", i);
          i += 2;
          const std::uint32_t low = hex4(from, i);
          if (low < 0xDC00 || low > 0xDFFF)
            fail("a high surrogate \\u escape without its low one", i);
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        append_utf8(scratch_, cp);
        break;
      }
      default:
        fail("an invalid escape in a string", i - 1);
    }
  }
}

std::uint32_t JsonCursor::hex4(std::size_t& from, std::size_t& i) {
  while (end_ - i < 4)
    if (!more(from, i)) fail("unexpected end of input in a \\u escape", i);
  std::uint32_t v = 0;
  const auto [end, ec] = std::from_chars(buf_.data() + i, buf_.data() + i + 4, v, 16);
  if (ec != std::errc() || end != buf_.data() + i + 4 || buf_[i] == '+' || buf_[i] == '-')
    fail("expected four hexadecimal digits after \\u", i);
  i += 4;
  return v;
}

// Checks the UTF-8 sequence that starts at buf_[i] (RFC 3629: no overlong forms, no surrogates,
// at most U+10FFFF); returns the index after it.
std::size_t JsonCursor::utf8(std::size_t from, std::size_t& i) {
  const unsigned char lead = byte(buf_[i]);
  std::size_t n = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    n = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    n = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    n = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    fail("a byte that is not UTF-8 in a string", i);
  }
  while (end_ - i < n)
    if (!more(from, i)) fail("unexpected end of input in a string", i);
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char c = byte(buf_[i + k]);
    const unsigned char lo = k == 1 ? low : 0x80;
    const unsigned char hi = k == 1 ? high : 0xBF;
    if (c < lo || c > hi) fail("a byte that is not UTF-8 in a string", i + k);
  }
  return i + n;
}

JsonCursor::Number JsonCursor::number() {
  const int c = next_char();
  if (c != '-' && !is_digit(static_cast<char>(c))) fail("expected a number");
  std::size_t from = pos_;
  std::size_t i = from;
  Number n;
  // Most numbers of a trace are counts (pids, ids, bytes), read as they are scanned.
  std::uint64_t count = 0;
  for (;;) {
    for (; i < end_ && is_digit(buf_[i]); ++i)
      count = count * 10 + static_cast<std::uint64_t>(buf_[i] - '0');
    if (i < end_ || !more(from, i)) break;
  }
  const std::size_t digits = i - from;
  // 19 digits fit 64 bits; a leading zero is allowed only alone.
  if (digits > 0 && digits <= 19 && (i == end_ || !kInNumber[byte(buf_[i])]) &&
      (buf_[from] != '0' || digits == 1)) {
    pos_ = i;
    n.is_count = true;
    n.count = count;
    n.value = static_cast<double>(count);
    return n;
  }
  // Then times, in microseconds with six decimals: at most 15 digits make a mantissa below
  // 2^53, and one division by an exact power of ten rounds correctly (as from_chars would).
  if (digits > 0 && digits <= 15 && (buf_[from] != '0' || digits == 1) && i < end_ &&
      buf_[i] == '.') {
    std::size_t decimals = 0;
    for (++i;;) {
      for (; i < end_ && is_digit(buf_[i]); ++i, ++decimals)
        count = count * 10 + static_cast<std::uint64_t>(buf_[i] - '0');
      if (i < end_ || !more(from, i)) break;
    }
    if (decimals > 0 && digits + decimals <= 15 && (i == end_ || !kInNumber[byte(buf_[i])])) {
      pos_ = i;
      n.value = static_cast<double>(count) / kPow10[decimals];
      return n;
    }
  }
  for (;;) {
    while (i < end_ && kInNumber[byte(buf_[i])])
      ++i;
    if (i < end_ || !more(from, i)) break;
  }
  const char* b = buf_.data() + from;
  const char* e = buf_.data() + i;
  pos_ = i;
  if (!is_number(b, e)) fail("not a number", from);
  if (std::all_of(b, e, is_digit)) {
    const auto [p, ec] = std::from_chars(b, e, n.count);
    if (ec == std::errc()) {
      n.is_count = true;
      n.value = static_cast<double>(n.count);
      return n;
    }
  }
  const auto [p, ec] = std::from_chars(b, e, n.value);
  if (ec == std::errc::result_out_of_range) {
    // Past a double (1e400) is an error; below the smallest one (1e-400) rounds to zero.
    n.value = std::strtod(std::string(b, e).c_str(), nullptr);
    if (std::isinf(n.value)) fail("a number past a double", from);
  } else if (ec != std::errc()) {
    fail("not a number", from);
  }
  return n;
}

void JsonCursor::literal(std::string_view word) {
  std::size_t from = pos_;
  std::size_t i = from;
  while (end_ - i < word.size())
    if (!more(from, i)) fail("unexpected end of input; expected " + std::string(word), i);
  if (std::string_view(buf_.data() + i, word.size()) != word)
    fail("expected " + std::string(word), i);
  pos_ = i + word.size();
}

bool JsonCursor::boolean() {
  const int c = next_char();
  if (c != 't' && c != 'f') fail("expected true or false");
  literal(c == 't' ? "true" : "false");
  return c == 't';
}

void JsonCursor::null() {
  if (next_char() != 'n') fail("expected null");
  literal("null");
}

void JsonCursor::skip() {
  closers_.clear();
  for (;;) {
    bool opened = false;
    switch (peek()) {
      case Type::string:
        string();
        break;
      case Type::number:
        number();
        break;
      case Type::boolean:
        boolean();
        break;
      case Type::null:
        null();
        break;
      case Type::object:
      case Type::array: {
        const char closer = buf_[pos_] == '{' ? '}' : ']';
        ++pos_;
        if (next_char() == byte(closer)) {
          ++pos_;
          break;
        }
        if (open_.size() + closers_.size() >= kMaxDepth) fail("arrays and objects nested too deep");
        closers_.push_back(closer);
        opened = true;
        break;
      }
    }
    if (!opened) {  // a value ended: close what it ended, or step to the next member or element
      for (;;) {
        if (closers_.empty()) return;
        const int c = next_char();
        if (c == ',') {
          ++pos_;
          break;
        }
        if (c != byte(closers_.back()))
          fail(closers_.back() == '}' ? "expected ',' or '}'" : "expected ',' or ']'");
        ++pos_;
        closers_.pop_back();
      }
    }
    if (closers_.back() == '}') {  // a member's key before its value
      if (next_char() != '"') fail("expected a key (a string)");
      string();
      expect(':', "expected ':'");
    }
  }
}

void JsonCursor::end() {
  if (next_char() != -1) fail("unexpected text after the JSON value");
}

}  // namespace clustersim::engine
