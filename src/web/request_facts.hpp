#pragma once

#include <gpusched/web_access.hpp>

namespace httplib {
struct Request;
}

namespace gpusched::web {

// What a request says of itself, as decide_web_access and page_may_hold_data read it.
WebRequestFacts request_facts(const httplib::Request& request);

} // namespace gpusched::web
