#include <gpusched/web_access.hpp>

#include <gtest/gtest.h>

using namespace gpusched;

namespace {

const std::string k_token = "0123456789abcdef";

WebRequestFacts page(std::string host = "127.0.0.1:8787", std::string path = "/api/status")
{
    WebRequestFacts request;
    request.method = "GET";
    request.path = std::move(path);
    request.host = std::move(host);
    return request;
}

WebRequestFacts action(const std::string& token = k_token)
{
    WebRequestFacts request;
    request.method = "POST";
    request.path = "/api/jobs/1/cancel";
    request.action = true;
    request.host = "127.0.0.1:8787";
    request.origin = "http://127.0.0.1:8787";
    request.fetch_site = "same-origin";
    request.authorization = token.empty() ? "" : "Bearer " + token;
    return request;
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
    request.authorization = "Bearer 0123456789abcdeX";
    EXPECT_EQ(decide_web_access({false, false, k_token}, request).status, 401);
    request.authorization = "Bearer " + k_token;
    EXPECT_TRUE(decide_web_access({false, false, k_token}, request).allowed());
    request.authorization = "bearer " + k_token; // the scheme's name is in any case
    EXPECT_TRUE(decide_web_access({false, false, k_token}, request).allowed());
    request.authorization = "Basic " + k_token;
    EXPECT_EQ(decide_web_access({false, false, k_token}, request).status, 401);
}

// The page is opened from an address whose token is in its fragment, which no browser sends:
// its own files hold no data and are served to anyone, and its script sends the token.
TEST(WebAccess, BeyondLoopbackThePagesOwnFilesNeedNoTokenButItsApiDoes)
{
    for (const auto* path : {"/", "/jobs/12", "/assets/app.js"}) {
        EXPECT_TRUE(
            decide_web_access({false, false, k_token}, page("10.0.0.5:8787", path)).allowed())
            << path;
    }
    for (const auto* path : {"/api/status", "/api/events", "/api/jobs/12/output"}) {
        EXPECT_EQ(decide_web_access({false, false, k_token}, page("10.0.0.5:8787", path)).status,
                  401)
            << path;
    }
}

// The page holds the server's last look for its first paint only where its API would answer
// the same request: on loopback, and beyond it never to a browser's request, which carries no
// token (it is in the fragment); neither a cookie nor ?token= makes it one that may.
TEST(WebAccess, ThePageHoldsDataOnlyWhereItsApiWouldAnswerTheSameRequest)
{
    EXPECT_TRUE(page_may_hold_data({true, false, k_token}, page("127.0.0.1:8787", "/")));
    EXPECT_TRUE(page_may_hold_data({true, false, k_token}, page("localhost:8787", "/jobs/12")));
    EXPECT_FALSE(page_may_hold_data({true, false, k_token}, page("evil.example:8787", "/")));
    auto remote = page("10.0.0.5:8787", "/");
    EXPECT_FALSE(page_may_hold_data({false, false, k_token}, remote));
    remote.cookie = "gpusched_token_8787=" + k_token;
    remote.query_token = k_token;
    EXPECT_FALSE(page_may_hold_data({false, false, k_token}, remote));
    remote.authorization = "Bearer " + k_token;
    EXPECT_TRUE(page_may_hold_data({false, false, k_token}, remote));
}

// Browsers keep cookies per host, not per port: every server on 127.0.0.1 receives this one's
// cookies, so that none may authorize anything. Nor may an address's ?token=.
TEST(WebAccess, OnlyTheAuthorizationHeaderPresentsTheTokenNeverACookieNorTheAddress)
{
    const WebAccessPolicy policy{true, true, k_token};
    auto request = action("");
    request.cookie = "gpusched_token_8787=" + k_token;
    auto decision = decide_web_access(policy, request);
    EXPECT_EQ(decision.status, 401);
    EXPECT_NE(decision.why.find("a cookie or ?token= authorizes nothing"), std::string::npos)
        << decision.why;
    request.cookie = "";
    request.query_token = k_token;
    EXPECT_EQ(decide_web_access(policy, request).status, 401);
    request.cookie = "gpusched_token_8787=" + k_token;
    request.authorization = "Bearer " + k_token;
    EXPECT_TRUE(decide_web_access(policy, request).allowed());

    auto read = page("10.0.0.5:8787");
    read.cookie = "gpusched_token_8787=" + k_token;
    read.query_token = k_token;
    EXPECT_EQ(decide_web_access({false, false, k_token}, read).status, 401);
}

// Every local user reads the page on loopback, as they may run `ps`; a job's output is its
// submitter's: it takes the token, unless the server shares it.
TEST(WebAccess, AJobsOutputNeedsTheTokenUnlessShared)
{
    auto output = page("127.0.0.1:8787", "/api/jobs/7/output");
    output.reads_output = true;
    const auto refused = decide_web_access({true, false, k_token}, output);
    EXPECT_EQ(refused.status, 403);
    EXPECT_NE(refused.why.find("--share-output"), std::string::npos) << refused.why;
    EXPECT_TRUE(decide_web_access({true, false, k_token, true}, output).allowed());
    output.authorization = "Bearer " + k_token;
    EXPECT_TRUE(decide_web_access({true, false, k_token}, output).allowed());
    output.authorization = "";
    output.cookie = "gpusched_token_8787=" + k_token;
    EXPECT_EQ(decide_web_access({true, false, k_token}, output).status, 403) << "no cookie";
    // The job's record, without its output, is the page's like the rest.
    EXPECT_TRUE(
        decide_web_access({true, false, k_token}, page("127.0.0.1:8787", "/api/jobs/7")).allowed());
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
