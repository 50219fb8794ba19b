#include <gpusched/web_access.hpp>

#include <gtest/gtest.h>

using namespace gpusched;

namespace {

const std::string k_token = "0123456789abcdef";

WebRequestFacts page(std::string host = "127.0.0.1:8787")
{
    return {"GET", false, std::move(host), "", "", ""};
}

WebRequestFacts action(std::string token = k_token)
{
    return {"POST",          true, "127.0.0.1:8787", "http://127.0.0.1:8787", "same-origin",
            std::move(token)};
}

} // namespace

TEST(WebAccess, OnLoopbackPagesNeedNoToken)
{
    EXPECT_TRUE(decide_web_access({true, false, k_token}, page()).allowed());
    EXPECT_TRUE(decide_web_access({true, false, k_token}, page("localhost:8787")).allowed());
    EXPECT_TRUE(decide_web_access({true, false, k_token}, page("[::1]:8787")).allowed());
}

TEST(WebAccess, OnLoopbackAHostHeaderOfAnotherNameIsRefusedAgainstDnsRebinding)
{
    const auto decision = decide_web_access({true, false, k_token}, page("evil.example:8787"));
    EXPECT_EQ(decision.status, 403);
    EXPECT_EQ(decide_web_access({true, false, k_token}, page("127.0.0.1.evil.example")).status,
              403);
    EXPECT_EQ(decide_web_access({true, false, k_token}, page("")).status, 403);
}

TEST(WebAccess, BeyondLoopbackEveryPageNeedsTheToken)
{
    auto request = page("10.0.0.5:8787");
    EXPECT_EQ(decide_web_access({false, false, k_token}, request).status, 401);
    request.presented_token = "0123456789abcdeX";
    EXPECT_EQ(decide_web_access({false, false, k_token}, request).status, 401);
    request.presented_token = k_token;
    EXPECT_TRUE(decide_web_access({false, false, k_token}, request).allowed());
}

TEST(WebAccess, ActionsAreRefusedWithoutAllowActionsEvenWithTheToken)
{
    EXPECT_EQ(decide_web_access({true, false, k_token}, action()).status, 403);
}

TEST(WebAccess, AnActionNeedsThePostTheTokenAndTheServersOwnPage)
{
    const WebAccessPolicy policy{true, true, k_token};
    EXPECT_TRUE(decide_web_access(policy, action()).allowed());
    EXPECT_EQ(decide_web_access(policy, action("")).status, 401);
    auto request = action();
    request.method = "GET";
    EXPECT_EQ(decide_web_access(policy, request).status, 405);
    request = action();
    request.origin = "http://evil.example";
    EXPECT_EQ(decide_web_access(policy, request).status, 403);
    request = action();
    request.origin = "";
    request.fetch_site = "cross-site";
    EXPECT_EQ(decide_web_access(policy, request).status, 403);
    request.fetch_site = "same-site"; // another port of the same host is another program
    EXPECT_EQ(decide_web_access(policy, request).status, 403);
}

TEST(WebAccess, AnEmptyTokenNeverMatches)
{
    EXPECT_FALSE(same_token("", ""));
    EXPECT_TRUE(same_token("abc", "abc"));
    EXPECT_FALSE(same_token("abd", "abc"));
    EXPECT_FALSE(same_token("ab", "abc"));
}

TEST(WebAccess, LoopbackHostsAreAddressesNotNames)
{
    EXPECT_TRUE(is_loopback_host("127.0.0.1"));
    EXPECT_TRUE(is_loopback_host("127.1.2.3:80"));
    EXPECT_FALSE(is_loopback_host("127.0.0.256"));
    EXPECT_FALSE(is_loopback_host("128.0.0.1"));
    EXPECT_FALSE(is_loopback_host("127.0.0.1:80:80"));
    EXPECT_FALSE(is_loopback_host("[::2]:80"));
    EXPECT_FALSE(is_loopback_host("[::1].evil.example"));
    EXPECT_TRUE(is_loopback_host("[::1]"));
}
