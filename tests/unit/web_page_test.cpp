// What the server writes into its page: the last look, as a data block that no text of a
// user's can end.
#include <gpusched/web_page.hpp>

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <string>

namespace gpusched {
namespace {

const std::string k_html = "<head><title>gpusched</title></head><body>" +
                           std::string(k_page_state_marker) + "<main></main></body>";

TEST(WebPage, TheStateTakesTheMarkersPlaceAsADataBlock)
{
    EXPECT_EQ(page_with_state(k_html, R"({"status": {"gpus": []}})"),
              "<head><title>gpusched</title></head><body>"
              R"(<script type="application/json" id="initial-state">{"status": {"gpus": []}})"
              "</script><main></main></body>");
}

TEST(WebPage, WithoutStateThePageIsSentAsItIs)
{
    EXPECT_EQ(page_with_state(k_html, ""), k_html);
    EXPECT_EQ(page_with_state("<p>no marker</p>", "{}"), "<p>no marker</p>");
}

TEST(WebPage, NoCommandEndsTheBlockOrStartsMarkup)
{
    const nlohmann::json state = {{"command", "echo '</script><script>alert(1)</script><!--'"},
                                  {"name", "a&b>c"}};
    const auto page = page_with_state(k_html, state.dump());
    const auto begin = page.find("id=\"initial-state\">") + 19;
    const auto end = page.find("</script>", begin);
    const auto block = page.substr(begin, end - begin);
    EXPECT_EQ(block.find_first_of("<>&"), std::string::npos) << block;
    EXPECT_EQ(page.substr(end), "</script><main></main></body>");
    // The same document, read back as the page's script reads it.
    EXPECT_EQ(nlohmann::json::parse(block), state);
}

TEST(WebPage, OnlyTheThreeMarkupCharactersAreEscaped)
{
    EXPECT_EQ(script_safe_json(R"({"a": "x<y", "b": "\u00e9", "c": "\"q\""})"),
              R"({"a": "x\u003cy", "b": "\u00e9", "c": "\"q\""})");
}

} // namespace
} // namespace gpusched
