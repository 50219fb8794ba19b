#pragma once

#include <string>
#include <string_view>

namespace gpusched {

// Where the page of `gpusched serve` takes the server's last look: a comment that the server
// replaces, so that the page's first paint already shows it (docs/serve.md).
inline constexpr std::string_view k_page_state_marker = "<!-- initial state -->";

// `html` with its k_page_state_marker replaced by a data block (a script element of type
// application/json, which no browser runs and no Content-Security-Policy concerns) whose
// text is `state_json`, a JSON document; `html` as it is where `state_json` is empty (the
// request may not read the data: its page's script asks for it with the token).
std::string page_with_state(std::string_view html, std::string_view state_json);

// A JSON document as the text of a data block: every `<`, `>` and `&` as a \u escape (in a
// JSON document they are in strings only, where the escape means the same), so that no text
// of a user's (a command such as `</script><script>...`) can end the block or start markup.
std::string script_safe_json(std::string_view json);

} // namespace gpusched
