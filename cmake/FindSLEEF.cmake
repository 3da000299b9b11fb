# SPDX-License-Identifier: MIT
# SLEEF (libsleef-dev ships no CMake package): defines the imported target SLEEF::sleef.
# Installed beside strataConfig.cmake, which finds SLEEF again on the consumer's machine, so
# the exported link interface names the target, never a path of the machine strata was built on.
find_path(SLEEF_INCLUDE_DIR sleef.h)
find_library(SLEEF_LIBRARY sleef)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SLEEF REQUIRED_VARS SLEEF_LIBRARY SLEEF_INCLUDE_DIR)
if(SLEEF_FOUND AND NOT TARGET SLEEF::sleef)
  add_library(SLEEF::sleef UNKNOWN IMPORTED)
  set_target_properties(SLEEF::sleef PROPERTIES IMPORTED_LOCATION "${SLEEF_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SLEEF_INCLUDE_DIR}")
endif()
mark_as_advanced(SLEEF_INCLUDE_DIR SLEEF_LIBRARY)
