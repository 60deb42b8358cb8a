// Boost.Process v2 as shipped in Boost 1.81 needs two names its own headers
// forget to bring in (boost::optional, and an unqualified is_constructible in
// environment.hpp). Include Boost.Process v2 only through this header.
#pragma once

#include <boost/optional.hpp>
#include <type_traits>

namespace boost::process::v2::environment {
using std::is_constructible;
using std::remove_pointer;
}

#include <boost/process/v2.hpp>
