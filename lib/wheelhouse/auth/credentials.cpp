#include "wheelhouse/auth/credentials.hpp"

#include <algorithm>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/base64.hpp"

namespace wheelhouse::auth {
namespace {

error unauthorized(std::string message) { return make_error(error_kind::unauthorized, std::move(message)); }

constexpr std::string_view how_to = "use the username __token__ and the API token as the password";

}  // namespace

authorization_reading read_authorization(std::string_view header_value) {
    auto refuse = [](std::string_view reason, std::string message) {
        return authorization_reading{unauthorized(std::move(message)), reason};
    };
    header_value = text::trim(header_value);
    if (header_value.empty())
        return refuse("empty Authorization header", "the Authorization header is empty: " + std::string(how_to));
    const auto space = std::find_if(header_value.begin(), header_value.end(), text::is_blank);
    const std::string_view scheme(header_value.begin(), space);
    const auto credentials = text::trim(std::string_view(space, header_value.end()));

    if (text::equals_ignoring_case(scheme, "Bearer")) {
        if (credentials.empty()) return refuse("Bearer without a token", "the Bearer token is missing");
        if (std::any_of(credentials.begin(), credentials.end(), text::is_blank)) {
            return refuse("Bearer token with whitespace in it",
                          "the Bearer token contains whitespace: send exactly one token");
        }
        return {presented_token{credential_scheme::bearer, std::string(credentials)}, {}};
    }
    if (!text::equals_ignoring_case(scheme, "Basic")) {
        // Name the scheme only when it looks like one: a bare token sent without a scheme
        // must not come back in the message.
        const bool nameable = !credentials.empty() && scheme.size() <= 20 &&
                              std::all_of(scheme.begin(), scheme.end(), [](char c) {
                                  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
                              });
        const std::string what = nameable ? "unsupported Authorization scheme '" + std::string(scheme) + "'"
                                          : std::string("the Authorization header has no Basic or Bearer scheme");
        return refuse("Authorization scheme neither Basic nor Bearer",
                      what + ": " + std::string(how_to) + " (HTTP Basic), or send Authorization: Bearer <token>");
    }
    if (credentials.empty())
        return refuse("Basic without credentials", "the Basic credentials are missing: " + std::string(how_to));
    const auto decoded = text::base64_decode(credentials);
    if (!decoded) return refuse("Basic credentials not valid base64", "the Basic credentials are not valid base64");
    const std::string_view user_pass = *decoded;
    const auto colon = user_pass.find(':');
    if (colon == std::string_view::npos) {
        return refuse("Basic credentials without ':'",
                      "the Basic credentials have no ':' between username and password: " + std::string(how_to));
    }
    if (user_pass.substr(0, colon) != token_username) {
        return refuse("Basic username other than __token__",
                      "this index takes API tokens only: " + std::string(how_to));
    }
    const auto password = user_pass.substr(colon + 1);
    if (password.empty())
        return refuse("Basic with an empty password", "the password is empty: " + std::string(how_to));
    return {presented_token{credential_scheme::basic, std::string(password)}, {}};
}

result<presented_token> parse_authorization(std::string_view header_value) {
    return read_authorization(header_value).token;
}

}  // namespace wheelhouse::auth
