#pragma once
// A minimal JSON reader for tests that check the output of `vnnx info --json`.
// Accepts the JSON grammar (objects, arrays, strings with escapes, numbers, true/false/null).
#include <cctype>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace vnnx::test::json {

struct value {
    enum class kind { null, boolean, number, string, array, object } k = kind::null;
    bool b = false;
    double num = 0;
    std::string str;
    std::vector<value> arr;
    std::map<std::string, value> obj;

    [[nodiscard]] const value& operator[](const std::string& key) const {
        auto it = obj.find(key);
        if (k != kind::object || it == obj.end()) throw std::runtime_error("json: no key '" + key + "'");
        return it->second;
    }
    [[nodiscard]] const value& operator[](std::size_t i) const {
        if (k != kind::array || i >= arr.size()) throw std::runtime_error("json: no element " + std::to_string(i));
        return arr[i];
    }
    [[nodiscard]] bool has(const std::string& key) const { return k == kind::object && obj.count(key) != 0; }
};

class parser {
public:
    explicit parser(std::string_view text) : s_(text) {}
    value parse() {
        value v = parse_value();
        skip();
        if (i_ != s_.size()) error("trailing characters");
        return v;
    }

private:
    [[noreturn]] void error(const std::string& what) const {
        throw std::runtime_error("json: " + what + " at offset " + std::to_string(i_));
    }
    void skip() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool eat(char c) {
        skip();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) error(std::string("expected '") + c + "'");
    }
    std::string parse_string() {
        expect('"');
        std::string out;
        while (i_ < s_.size() && s_[i_] != '"') {
            char c = s_[i_++];
            if (c == '\\') {
                if (i_ >= s_.size()) error("bad escape");
                const char e = s_[i_++];
                switch (e) {
                    case 'n': out += '\n'; break;
                    case 't': out += '\t'; break;
                    case 'r': out += '\r'; break;
                    case 'b': out += '\b'; break;
                    case 'f': out += '\f'; break;
                    case 'u': {
                        if (i_ + 4 > s_.size()) error("bad \\u escape");
                        const auto cp = std::stoul(std::string(s_.substr(i_, 4)), nullptr, 16);
                        i_ += 4;
                        out += cp < 0x80 ? static_cast<char>(cp) : '?';
                        break;
                    }
                    default: out += e;
                }
            } else {
                out += c;
            }
        }
        expect('"');
        return out;
    }
    value parse_value() {
        skip();
        if (i_ >= s_.size()) error("unexpected end");
        value v;
        const char c = s_[i_];
        if (c == '{') {
            ++i_;
            v.k = value::kind::object;
            if (eat('}')) return v;
            do {
                skip();
                std::string key = parse_string();
                expect(':');
                v.obj[key] = parse_value();
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.k = value::kind::array;
            if (eat(']')) return v;
            do v.arr.push_back(parse_value());
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.k = value::kind::string;
            v.str = parse_string();
        } else if (s_.substr(i_, 4) == "true") {
            i_ += 4, v.k = value::kind::boolean, v.b = true;
        } else if (s_.substr(i_, 5) == "false") {
            i_ += 5, v.k = value::kind::boolean;
        } else if (s_.substr(i_, 4) == "null") {
            i_ += 4;
        } else {
            const std::string rest(s_.substr(i_, 64));
            char* end = nullptr;
            v.num = std::strtod(rest.c_str(), &end);
            if (end == rest.c_str()) error("bad value");
            i_ += static_cast<std::size_t>(end - rest.c_str());
            v.k = value::kind::number;
        }
        return v;
    }

    std::string_view s_;
    std::size_t i_ = 0;
};

inline value parse(std::string_view text) { return parser(text).parse(); }

}  // namespace vnnx::test::json
